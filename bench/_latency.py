"""A TCP proxy on loopback that holds every byte ``rtt / 2`` in each direction: the distance between a
notebook and the hosted service, simulated on one machine.

    python bench/_latency.py --target 127.0.0.1:8765 --rtt 0.04     # prints "PORT <n>", then serves

It works below TLS and HTTP (bytes in, the same bytes out later), so an https sandbox behind it is
reached over TLS end to end and pays its handshakes at the simulated distance. A new connection also
waits one RTT before its first byte goes through, as TCP's handshake does. Bandwidth is not limited:
the bench counts round trips, not bytes. It runs in its own process (``latency_proxy``), so the
clients it carries do not share its event loop or its GIL.

SIGUSR1 resets every connection it carries, both ways (RST, as a dropped NAT entry or a restarted
load balancer would), and the proxy prints ``RESET <n>``, the number of connections reset: the soak
bench's connection fault (``proxy_process`` gives it the proxy's process to signal).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

CHUNK = 1 << 16


async def _carry(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Forward what ``reader`` gets to ``writer`` ``delay`` seconds later, in order; end with it."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def take() -> None:
        try:
            while data := await reader.read(CHUNK):
                queue.put_nowait((loop.time() + delay, data))
        except (ConnectionError, OSError):
            pass
        queue.put_nowait((loop.time() + delay, b""))

    taker = asyncio.create_task(take())
    try:
        while True:
            due, data = await queue.get()
            if (wait := due - loop.time()) > 0:
                await asyncio.sleep(wait)
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError, RuntimeError):  # the other side went away (RuntimeError: uvloop's
        pass                                          # write_eof on a transport already closed)
    finally:
        taker.cancel()
        await asyncio.gather(taker, return_exceptions=True)


Pair = tuple[asyncio.StreamWriter, asyncio.StreamWriter]


async def _connection(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter, host: str, port: int,
                      rtt: float, carried: set[Pair]) -> None:
    await asyncio.sleep(rtt)  # TCP's handshake: a round trip before the first byte
    try:
        server_r, server_w = await asyncio.open_connection(host, port)
    except OSError:
        client_w.close()
        return
    pair = (client_w, server_w)
    carried.add(pair)
    try:
        await asyncio.gather(_carry(client_r, server_w, rtt / 2), _carry(server_r, client_w, rtt / 2),
                             return_exceptions=True)
    finally:
        carried.discard(pair)
        for w in pair:
            w.close()


def _reset(carried: set[Pair]) -> None:
    """Close every carried connection's two sockets with SO_LINGER 0, so each peer gets an RST."""
    for pair in list(carried):  # each closes later, on the loop, and leaves the set then
        for w in pair:
            sock = socket.socket(fileno=w.get_extra_info("socket").fileno())  # the option is the socket's
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.detach()
            w.transport.abort()
    print(f"RESET {len(carried)}", flush=True)


async def serve(target: str, rtt: float, port: int = 0) -> None:
    host, _, target_port = target.rpartition(":")
    carried: set[Pair] = set()
    server = await asyncio.start_server(lambda r, w: _connection(r, w, host, int(target_port), rtt, carried),
                                        "127.0.0.1", port)
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, _reset, carried)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


@contextmanager
def proxy_process(target: str, rtt: float) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """Run the proxy in a child process in front of ``target`` (``host:port``, loopback); yields its
    port and the process (whose stdout has the ``RESET <n>`` lines)."""
    child = subprocess.Popen([sys.executable, __file__, "--target", target, "--rtt", str(rtt)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError("the latency proxy did not start")
        yield int(line.split()[1]), child
    finally:
        child.terminate()
        child.wait(timeout=10)


@contextmanager
def latency_proxy(target: str, rtt: float) -> Iterator[int]:
    """:func:`proxy_process`, yielding its port alone."""
    with proxy_process(target, rtt) as (port, _):
        yield port


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, help="host:port on loopback")
    parser.add_argument("--rtt", type=float, default=0.04, help="round trip time in seconds (default 0.04)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if not args.target.rpartition(":")[0] in ("127.0.0.1", "localhost", "[::1]"):
        sys.exit("the latency proxy only fronts loopback addresses")
    try:
        import uvloop
        uvloop.run(serve(args.target, args.rtt, args.port))
    except ImportError:
        asyncio.run(serve(args.target, args.rtt, args.port))
