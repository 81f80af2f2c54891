"""Does HTTP/2 pay for svckit's clients on the https path, far from the service? (issue 22, TLS)

svckit's clients send over their own pools (svckit/_pools.py: urllib3 sync, aiohttp async; HTTP/1.1,
keep-alive, up to 100 connections). Every client also takes an httpx ``transport=``, so httpx's HTTP/2
(``httpx.HTTPTransport(http2=True)``: httpcore + h2, pure Python) is one argument away. Should it be
the default? uvicorn speaks HTTP/1.1 only, so a child process (``--serve``) makes
``Sandbox(areas=["kv"], backend="redis", tls=True)``, takes the app and socket its ``_prepare()``
builds and serves them with hypercorn (ALPN h2, http/1.1; its HTTP/1.1 is h11, not the sandbox's
httptools) on a certificate from a local trustme CA (key files in a private temp dir). The latency
proxy (bench/_latency.py: RTT 40 ms, one more per new TCP connection, TLS end to end) is in front.
Loopback only. Each row runs three sides interleaved in one session, best of 3: ``pool`` (svckit's
default), ``h2`` (``transport=httpx.[Async]HTTPTransport(http2=True)``) and ``httpx h1`` (the same
without http2, for reference). Rows: 50 sequential GETs, warm (KV); 64 concurrent GETs (AsyncKV,
asyncio.gather), cold (HTTP/1.1: up to 64 TCP+TLS handshakes side by side; h2: one connection) and
warm; ``bulk_delete`` of 20,000 keys among 40,000 (KV; keys made again before each run);
``list(kv.scan_iter())`` over 40,000 keys. A cell: wall time, round trips (time / RTT), the client
process's CPU time; ``h2/pool`` and ``h2/h1`` are time ratios.

    pip install -e ".[sandbox,bench]"        # hypercorn and h2 are in the bench extra
    python bench/http2_bench.py [--rtt 0.04]

What to conclude: h2 can only save what HTTP/1.1 spends on connections, and svckit's pools keep them
warm and open them in parallel: sequential and chained jobs (SCAN walks, bulk runs) cost the same
round trips either way, and a cold burst's handshakes overlap. h2 adds httpcore's pure-Python framing
to every request's CPU, and a cold h2 connection sends one request until the server's SETTINGS
arrive (one more round trip). On a 2 vCPU machine at 40 ms h2 was never faster (h2/pool 1.0 on the
chained rows, 1.2-1.3 on bursts, ~3x the client CPU per request on a warm burst): the HTTP/1.1 pools
stay the default; ``transport=`` remains for those who want h2.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import ssl
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

from _child import child_env

N_KEYS, N_DELETE, SEQ_GETS, BURST, REPEAT = 40_000, 20_000, 50, 64, 3
SIDES = ("pool", "h2", "httpx h1")


# -- the server: the sandbox's app on hypercorn, in a child process --------------------------------
def serve() -> None:
    import signal

    import httpx
    import trustme
    from hypercorn.asyncio import serve as hypercorn_serve
    from hypercorn.config import Config

    from svckit.sandbox import Sandbox
    from svckit.sandbox.openapi import OPENAPI_PATH
    from svckit.sandbox.tls import LOOPBACK_NAMES

    sb = Sandbox(areas=["kv"], backend="redis", tls=True)
    app, sock = sb._prepare()  # the app and listening socket uvicorn would serve (its TLS context unused)
    with tempfile.TemporaryDirectory(prefix="svckit-h2-") as tmp:  # 0700; removed with the key on exit
        ca = trustme.CA(organization_name="svckit bench")
        cert = ca.issue_cert(*LOOPBACK_NAMES, organization_name="svckit bench")
        config = Config()
        config.certfile, config.keyfile = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        cert.cert_chain_pems[0].write_to_path(config.certfile)
        cert.private_key_pem.write_to_path(config.keyfile)
        sb.ca_file = Path(tmp, "ca.pem")  # what SVC_CA_FILE names in sb.env
        ca.cert_pem.write_to_path(str(sb.ca_file))
        config.bind = [f"fd://{sock.fileno()}"]  # ALPN: hypercorn's default, h2 then http/1.1
        config.accesslog, config.loglevel = None, "WARNING"

        async def main() -> None:
            stop = asyncio.Event()
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
            server = asyncio.create_task(hypercorn_serve(app, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
            async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(sb.ca_file))) as probe:
                while not server.done():  # ready once the lifespan (Redis) has started and TLS answers
                    try:
                        if (await probe.get(sb.url + OPENAPI_PATH)).status_code == 200:
                            break
                    except httpx.HTTPError:
                        await asyncio.sleep(0.05)
            for name, value in sb.env.items():
                print(f"{name}={value}")
            print("READY", flush=True)
            await server  # until SIGTERM: then the lifespan stops Redis

        try:
            import uvloop  # the sandbox's own loop where it imports

            uvloop.run(main())
        except ImportError:
            asyncio.run(main())
    with contextlib.suppress(OSError):
        sock.close()  # hypercorn closed its fd already
    sb.stop()


@contextmanager
def h2_server() -> Iterator[dict[str, str]]:
    """The hypercorn child's SVC_* environment (tokens included: never print it)."""
    with child_env([sys.executable, __file__, "--serve"]) as env:
        yield env


# -- the clients -----------------------------------------------------------------------------------
def _tls(ca: str) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca)  # one per transport: httpcore sets ALPN on it


def kv_client(settings: Any, side: str, ca: str, asynchronous: bool = False) -> Any:
    import httpx

    from svckit.kv import KV, AsyncKV

    cls, transport_cls = (AsyncKV, httpx.AsyncHTTPTransport) if asynchronous else (KV, httpx.HTTPTransport)
    if side == "pool":
        return cls.from_settings(settings)
    return cls.from_settings(settings, transport=transport_cls(http2=side == "h2", verify=_tls(ca)))


def h2_connections(client: Any) -> str:
    """What the h2 client's httpcore pool holds, e.g. '1 x HTTP/2' (checks h2 was negotiated)."""
    infos = [next((v for v in ("HTTP/2", "HTTP/1.1") if v in c.info()), c.info())
             for c in client._http._pool._pool.connections]
    return ", ".join(f"{infos.count(v)} x {v}" for v in sorted(set(infos))) or "none"


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, float, Any]:
    """(wall seconds, this process's CPU seconds, result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(*args, **kwargs)
    return time.perf_counter() - wall, time.process_time() - cpu, result


async def atimed(fn: Callable[..., Any], *args: Any) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = await fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu, result


def best(runs: list[tuple[float, float, Any]]) -> tuple[float, float]:
    wall, cpu, _ = min(runs, key=lambda run: run[0])  # the fastest run, with its CPU time
    return wall, cpu


def sequential(kv: Any) -> list[Any]:
    return [kv.get(f"keep:{i}") for i in range(SEQ_GETS)]


def scan_all(kv: Any) -> list[Any]:
    return list(kv.scan_iter())


async def burst(kv: Any, keys: list[str]) -> list[Any]:
    return await asyncio.gather(*map(kv.get, keys))


def mset(kv: Any, prefix: str, n: int) -> None:
    for start in range(0, n, 10_000):
        kv.mset({f"{prefix}{i}": f"value {i}" for i in range(start, min(n, start + 10_000))})


# -- the rows --------------------------------------------------------------------------------------
def sync_rows(settings: Any, direct: Any, ca: str) -> dict[str, dict[str, tuple[float, float]]]:
    from svckit.kv import bulk_delete

    clients = {side: kv_client(settings, side, ca) for side in SIDES}
    for kv in clients.values():
        kv.get("keep:0")  # warm: a connection is open
    rows: dict[str, dict[str, list[tuple[float, float, Any]]]] = {"seq": {}, "bulk": {}, "scan": {}}
    for _ in range(REPEAT):
        for side, kv in clients.items():
            rows["seq"].setdefault(side, []).append(timed(sequential, kv))
    for _ in range(REPEAT):
        for side, kv in clients.items():
            mset(direct, "del:", N_DELETE)  # straight to the server: seeding pays no latency
            rows["bulk"].setdefault(side, []).append(run := timed(bulk_delete, kv, "del:*", progress=False))
            assert run[2].done == N_DELETE, run[2]
    mset(direct, "del:", N_DELETE)
    for _ in range(REPEAT):
        for side, kv in clients.items():
            rows["scan"].setdefault(side, []).append(run := timed(scan_all, kv))
            assert len(set(run[2])) == N_KEYS, len(run[2])
    print(f"  sync h2 client's connections after the rows: {h2_connections(clients['h2'])}")
    for kv in clients.values():
        kv.close()
    return {row: {side: best(runs) for side, runs in by_side.items()} for row, by_side in rows.items()}


async def async_rows(settings: Any, ca: str) -> dict[str, dict[str, tuple[float, float]]]:
    keys = [f"keep:{i}" for i in range(BURST)]
    cold: dict[str, list[tuple[float, float, Any]]] = {}
    for rep in range(REPEAT):
        for side in SIDES:
            kv = kv_client(settings, side, ca, asynchronous=True)  # no connection yet
            cold.setdefault(side, []).append(await atimed(burst, kv, keys))
            if side == "h2" and rep == 0:
                print(f"  cold async h2 client, after {BURST} concurrent GETs: {h2_connections(kv)}")
            await kv.aclose()
    clients = {side: kv_client(settings, side, ca, asynchronous=True) for side in SIDES}
    for kv in clients.values():
        await burst(kv, keys)  # warm: as many connections as the burst needs
    warm: dict[str, list[tuple[float, float, Any]]] = {}
    for _ in range(REPEAT):
        for side, kv in clients.items():
            warm.setdefault(side, []).append(await atimed(burst, kv, keys))
    for kv in clients.values():
        await kv.aclose()
    return {"cold": {s: best(r) for s, r in cold.items()}, "warm": {s: best(r) for s, r in warm.items()}}


# -- the table -------------------------------------------------------------------------------------
LABELS = {"seq": f"{SEQ_GETS} sequential GETs, warm (KV)",
          "cold": f"{BURST} concurrent GETs, cold (AsyncKV)",
          "warm": f"{BURST} concurrent GETs, warm (AsyncKV)",
          "bulk": f"bulk_delete {N_DELETE // 1000}k of {N_KEYS // 1000}k keys (KV)",
          "scan": f"list(scan_iter()) {N_KEYS // 1000}k keys (KV)"}


def table(results: dict[str, dict[str, tuple[float, float]]], rtt: float) -> None:
    head = f"{'job':<40}" + "".join(f"| {side:^24}" for side in SIDES) + "| h2/pool | h2/h1 "
    print(head)
    print(f"{'':<40}" + "| time s    RT    cpu s   " * len(SIDES) + "|         |")
    print("-" * len(head))
    for row, label in LABELS.items():
        cells = results[row]
        line = f"{label:<40}"
        for side in SIDES:
            wall, cpu = cells[side]
            line += f"| {wall:6.3f} {wall / rtt:6.1f} {cpu:7.3f}   "
        h2, pool, h1 = cells["h2"][0], cells["pool"][0], cells["httpx h1"][0]
        print(line + f"| {h2 / pool:6.2f}  | {h2 / h1:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rtt", type=float, default=0.04, help="round trip time in seconds (default 0.04)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the server child
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    import httpx
    from _latency import latency_proxy
    from _remote import through

    from svckit.config import Settings
    from svckit.kv import KV

    with h2_server() as direct_env:
        ca = direct_env["SVC_CA_FILE"]
        target = direct_env["SVC_KV_URL"].split("://")[1].split("/")[0]
        with latency_proxy(target, args.rtt) as port:
            env = through(direct_env, port)
            settings = Settings.from_env(env)
            print(f"machine: {os.cpu_count()} vCPU, {platform.platform()}, Python {platform.python_version()}")
            print("versions: " + ", ".join(f"{p} {version(p)}" for p in
                                            ("httpx", "httpcore", "h2", "hypercorn", "urllib3", "aiohttp")))
            print(f"server: hypercorn (ALPN h2, http/1.1) on {target}, via the latency proxy on 127.0.0.1:{port},"
                  f" RTT {args.rtt * 1000:.0f} ms; CA {ca}")
            with httpx.Client(http2=True, verify=_tls(ca)) as probe:
                version_seen = probe.get(env["SVC_KV_URL"].rsplit("/kv", 1)[0] + "/openapi.json").http_version
            print(f"  plain httpx.Client(http2=True) through the proxy negotiated: {version_seen}")
            direct = KV.from_settings(Settings.from_env(direct_env))
            direct.flushdb()
            mset(direct, "keep:", N_KEYS - N_DELETE)
            results = sync_rows(settings, direct, ca)
            results.update(asyncio.run(async_rows(settings, ca)))
            direct.close()
    print()
    print(f"best of {REPEAT}; RT = time / RTT ({args.rtt * 1000:.0f} ms); cpu = this client process's CPU "
          "time; h2/pool, h2/h1: time ratios (< 1: h2 faster)")
    table(results, args.rtt)


if __name__ == "__main__":
    main()
