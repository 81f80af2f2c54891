"""A scripted HTTP/1.1 server on loopback for the transport tests: it answers by path with exactly
the bytes each case needs (the replies HTTP/1.1 allows and the ones a broken server sends), over
plain TCP or TLS, and records what reached it: connections, request heads as sent, and whether a
request came through a proxy (an absolute-form target).

    /ok             200 {"result":"OK"}            /n             200 {"n": <request number>}
    /echo           the request body back          /close         200 and Connection: close
    /chunked        a chunked reply                /gzip          a gzip-encoded reply
    /early-hints    103 Early Hints, then 200      /continue      100 Continue, then 200
    /extra          a reply, then bytes nobody asked for
    /two            two replies in one write       /eof-body      a body ended by closing
    /cut            Content-Length 100, 5 bytes, close
    /garbage        bytes that are not HTTP        /hang          no reply
    /no-read        the body is never read, no reply
    /big?n=N        N bytes with Content-Length; /big-chunked?n=N chunked; /big-eof?n=N ended by closing
    /inflates/N/... {"result": N "x"s}, gzip-coded (about N/1000 bytes on the wire), for any path below
    /inflates-twice/N/...  the same gzip-coded twice (Content-Encoding: gzip, gzip)
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import ssl
import threading
import zlib
from urllib.parse import parse_qs, urlsplit

OK = b'{"result":"OK"}'


class Scripted:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.connections = 0
        self.heads: list[bytes] = []      # every request head as it arrived
        self.bodies: list[bytes] = []
        self.proxied = 0                  # requests whose target was absolute-form (sent to a proxy)
        self.count = 0
        self.loop = asyncio.new_event_loop()
        self.server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=tls))
        self.port = self.server.sockets[0].getsockname()[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self._writers: set[asyncio.StreamWriter] = set()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def close_idle(self) -> None:
        """Close every open connection, as a server does with idle keep-alive connections."""
        async def close() -> None:
            for writer in list(self._writers):
                writer.close()
        asyncio.run_coroutine_threadsafe(close(), self.loop).result(5)

    def stop(self) -> None:
        if not self.thread.is_alive():
            return

        async def shut() -> None:
            self.server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shut(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    # -- the server side -------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.heads.append(head)
                self.count += 1
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ")
                if target.startswith(("http://", "https://")):
                    self.proxied += 1
                    parts = urlsplit(target)
                    target = parts.path + (f"?{parts.query}" if parts.query else "")
                fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
                path, _, query = target.partition("?")
                if path == "/no-read":
                    await asyncio.sleep(3600)
                body = await _read_body(reader, fields)
                self.bodies.append(body)
                if not await self._answer(method, path, parse_qs(query), body, writer):
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, asyncio.CancelledError,
                ssl.SSLError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(self, method: str, path: str, query: dict[str, list[str]], body: bytes,
                      writer: asyncio.StreamWriter) -> bool:
        def reply(payload: bytes, head: bytes = b"", status: bytes = b"200 OK") -> bytes:
            return b"HTTP/1.1 %s\r\nContent-Length: %d\r\n%s\r\n%s" % (status, len(payload), head, payload)

        size = int(query.get("n", ["0"])[0])
        keep = True
        if path == "/n":
            out = reply(b'{"n":%d}' % self.count)
        elif path == "/echo":
            out = reply(body)
        elif path == "/close":
            out, keep = reply(OK, b"Connection: close\r\n"), False
        elif path == "/chunked":
            chunks = (b'{"result":', b'"chunked"', b"}")
            out = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                   + b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n")
        elif path.startswith("/inflates/"):
            out = reply(_inflating(int(path.split("/")[2])), b"Content-Encoding: gzip\r\n")
        elif path.startswith("/inflates-twice/"):
            out = reply(gzip.compress(_inflating(int(path.split("/")[2]))), b"Content-Encoding: gzip, gzip\r\n")
        elif path == "/gzip":
            out = reply(gzip.compress(b'{"result":"unzipped"}'), b"Content-Encoding: gzip\r\n")
        elif path == "/early-hints":
            out = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" + reply(OK)
        elif path == "/continue":
            out = b"HTTP/1.1 100 Continue\r\n\r\n" + reply(OK)
        elif path == "/extra":
            out = reply(OK) + b"HTTP/1.1 200 OK\r\nContent-Le"  # the start of a reply nobody asked for
        elif path == "/two":
            out = reply(b'{"reply":1}') + reply(b'{"reply":2}')
        elif path == "/eof-body":
            out, keep = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + OK, False
        elif path == "/cut":
            out, keep = b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"res', False
        elif path == "/garbage":
            out = b"THIS IS NOT HTTP\r\n\r\n"
        elif path == "/hang":
            await asyncio.sleep(3600)
            return False
        elif path == "/big":
            out = reply(b"x" * size)
        elif path == "/big-chunked":
            out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"".join(
                b"%x\r\n%s\r\n" % (len(part), part) for part in _parts(size)) + b"0\r\n\r\n"
        elif path == "/big-eof":
            out, keep = b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * size, False
        else:  # HEAD announces the body GET would get, and sends none
            out = reply(b"" if method == "HEAD" else OK).replace(b"Content-Length: 0", b"Content-Length: %d" % len(OK))
        writer.write(out)
        await writer.drain()
        return keep


@functools.cache
def _inflating(size: int) -> bytes:
    """gzip of ``{"result": "xx...x"}`` with ``size`` x's, made a MiB at a time (never held whole)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing
    out = [packer.compress(b'{"result":"')]
    out += [packer.compress(b"x" * min(1 << 20, size - at)) for at in range(0, size, 1 << 20)]
    return b"".join(out) + packer.compress(b'"}') + packer.flush()


def _parts(size: int, part: int = 1 << 16) -> list[bytes]:
    return [b"x" * min(part, size - at) for at in range(0, size, part)]


async def _read_body(reader: asyncio.StreamReader, fields: dict[str, str]) -> bytes:
    if fields.get("transfer-encoding", "").lower() == "chunked":
        out = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return out
            out += await reader.readexactly(size)
            await reader.readexactly(2)
    return await reader.readexactly(int(fields.get("content-length", 0)))
