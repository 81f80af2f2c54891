"""Key-value client throughput: svckit's KV / AsyncKV vs the peer SDK vs redis-py over TCP.

One run, one sandbox (real redis-server backend), everything on loopback:

* single-command ops/s: one GET or SET per request, one request at a time (latency bound);
* pipelined commands/s: batches of ``--batch`` commands per request;
* async with ``--concurrency`` requests in flight (what asyncio is for);
* redis-py straight over TCP to the same Redis: the physical limit without HTTP.

Ratios are against the peer SDK ``upstash-redis`` (sync rows vs its sync client, async rows vs its
async client; ``rest_encoding=None``). Each cell runs for ``--seconds`` (about a minute in all).

    python bench/kv_bench.py [--seconds 4] [--rounds 16] [--batch 100] [--concurrency 16]

The sandbox runs in a child process (clients must not share its GIL). The clients of one workload
run back to back in short rounds; figures are each client's best round, ratios the median of the
per-round ratios (robust on a shared, loaded machine).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import redis
import upstash_redis
import upstash_redis.asyncio

from svckit.kv import KV, AsyncKV
from _child import sandbox_process

VALUE = "v" * 64


Result = tuple[float, float]  # (operations per second, client CPU microseconds per operation)


def rate(fn: Callable[[], int], seconds: float) -> Result:
    """Call ``fn`` (which returns how many operations it did) for ``seconds``. The CPU time is this
    process's only: the sandbox runs in a child, so it is what the client itself costs."""
    fn()  # warm-up: connection opened, code paths hot
    done, start, cpu = 0, time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - start) < seconds:
        done += fn()
    return done / elapsed, (time.process_time() - cpu) / done * 1e6


def sync_single(client: Any) -> Callable[[], int]:
    def op() -> int:
        client.set("bench:k", VALUE)
        client.get("bench:k")
        return 2

    return op


def sync_pipelined(make_pipe: Callable[[], Any], batch: int) -> Callable[[], int]:
    def op() -> int:
        pipe = make_pipe()
        for i in range(batch // 2):
            pipe.set(f"bench:p{i}", VALUE)
            pipe.get(f"bench:p{i}")
        pipe_exec = getattr(pipe, "exec", None) or pipe.execute
        results = pipe_exec()
        assert len(results) == batch
        return batch

    return op


def async_single(client: Any) -> Callable[[], Awaitable[int]]:
    async def op() -> int:
        await client.set("bench:k", VALUE)
        await client.get("bench:k")
        return 2

    return op


def async_concurrent(client: Any, concurrency: int) -> Callable[[], Awaitable[int]]:
    async def op() -> int:
        await asyncio.gather(*(client.get("bench:k") for _ in range(concurrency)))
        return concurrency

    return op


def async_pipelined(client: Any, batch: int) -> Callable[[], Awaitable[int]]:
    async def op() -> int:
        pipe = client.pipeline()
        for i in range(batch // 2):
            pipe.set(f"bench:p{i}", VALUE)
            pipe.get(f"bench:p{i}")
        results = await pipe.exec()
        assert len(results) == batch
        return batch

    return op


Measure = Callable[[float], Result]  # duration in seconds -> (ops/s, CPU us/op)


def sync_measure(make_op: Callable[[], Callable[[], int]]) -> Measure:
    def measure(seconds: float) -> Result:
        return rate(make_op(), seconds)

    return measure


def async_measure(make_client: Callable[[], Any], make_op: Callable[[Any], Callable[[], Awaitable[int]]]) -> Measure:
    def measure(seconds: float) -> Result:
        async def main() -> Result:
            client = make_client()
            try:
                fn = make_op(client)
                await fn()  # warm-up
                done, start, cpu = 0, time.perf_counter(), time.process_time()
                while (elapsed := time.perf_counter() - start) < seconds:
                    done += await fn()
                return done / elapsed, (time.process_time() - cpu) / done * 1e6
            finally:
                closer = getattr(client, "aclose", None) or getattr(client, "close", None)
                if closer is not None:
                    result = closer()
                    if asyncio.iscoroutine(result):
                        await result

        return asyncio.run(main())

    return measure


def paired(cells: list[tuple[str, Measure]], seconds: float, rounds: int
           ) -> list[tuple[str, Result, float, float]]:
    """Run the clients of one workload back to back in ``rounds`` short rounds (alternating who goes
    first). Each client's figures are its best round; its ratios to the peer are the medians of the
    per-round ratios (paired: background load on a shared machine hits both sides of a pair alike)."""
    per_round: dict[str, list[Result]] = {name: [] for name, _ in cells}
    for round_ in range(rounds):
        order = cells if round_ % 2 == 0 else cells[::-1]
        for name, measure in order:
            per_round[name].append(measure(seconds / rounds))
    peer = next(name for name, _ in cells if name.startswith("upstash"))
    out = []
    for name, results in per_round.items():
        best = (max(r[0] for r in results), min(r[1] for r in results))
        ops_ratio = statistics.median(r[0] / p[0] for r, p in zip(results, per_round[peer]))
        cpu_ratio = statistics.median(r[1] / p[1] for r, p in zip(results, per_round[peer]))
        out.append((name, best, ops_ratio, cpu_ratio))
    return out


Row = tuple[str, str, float, float, float, float]  # workload, client, ops/s, ratio, CPU us/op, ratio


def run(seconds: float, batch: int, concurrency: int, rounds: int) -> list[Row]:
    rows: list[Row] = []
    with sandbox_process(areas=["kv"], backend="redis") as env:
        url, token, redis_url = env["SVC_KV_URL"], env["SVC_KV_TOKEN"], env["REDIS_URL"]
        ours = KV(url, token)
        # The peer posts single commands to the bare base URL and pipelines to {url}/pipeline; the
        # sandbox answers a bare ".../kv" with a 307 to ".../kv/" (which the peer does not follow),
        # so single commands get the URL with the slash and pipelines the one without.
        peer = upstash_redis.Redis(url + "/", token, rest_encoding=None, allow_telemetry=False)
        peer_pipe = upstash_redis.Redis(url, token, rest_encoding=None, allow_telemetry=False)
        direct = redis.Redis.from_url(redis_url)

        def our_async() -> AsyncKV[str]:
            return AsyncKV(url, token)

        def peer_async() -> Any:
            return upstash_redis.asyncio.Redis(url + "/", token, rest_encoding=None, allow_telemetry=False)

        def peer_async_pipe() -> Any:
            return upstash_redis.asyncio.Redis(url, token, rest_encoding=None, allow_telemetry=False)

        def concurrent(client: Any) -> Callable[[], Awaitable[int]]:
            return async_concurrent(client, concurrency)

        def apipe(client: Any) -> Callable[[], Awaitable[int]]:
            return async_pipelined(client, batch)

        groups: list[tuple[str, list[tuple[str, Measure]]]] = [
            ("single command, sync", [
                ("svckit KV", sync_measure(lambda: sync_single(ours))),
                ("upstash-redis Redis", sync_measure(lambda: sync_single(peer))),
                ("redis-py over TCP", sync_measure(lambda: sync_single(direct))),
            ]),
            ("single command, async (one in flight)", [
                ("svckit AsyncKV", async_measure(our_async, async_single)),
                ("upstash-redis asyncio.Redis", async_measure(peer_async, async_single)),
            ]),
            (f"single command, async ({concurrency} in flight)", [
                ("svckit AsyncKV", async_measure(our_async, concurrent)),
                ("upstash-redis asyncio.Redis", async_measure(peer_async, concurrent)),
            ]),
            (f"pipelined ({batch} commands per request), sync", [
                ("svckit KV", sync_measure(lambda: sync_pipelined(ours.pipeline, batch))),
                ("upstash-redis Redis", sync_measure(lambda: sync_pipelined(peer_pipe.pipeline, batch))),
                ("redis-py over TCP", sync_measure(
                    lambda: sync_pipelined(lambda: direct.pipeline(transaction=False), batch))),
            ]),
            (f"pipelined ({batch} commands per request), async", [
                ("svckit AsyncKV", async_measure(our_async, apipe)),
                ("upstash-redis asyncio.Redis", async_measure(peer_async_pipe, apipe)),
            ]),
        ]
        for workload, cells in groups:
            for name, (ops, cpu), ops_ratio, cpu_ratio in paired(cells, seconds, rounds):
                rows.append((workload, name, ops, ops_ratio, cpu, cpu_ratio))
        ours.close()
        direct.close()
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.system()} {platform.release()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="time each client gets per workload")
    parser.add_argument("--rounds", type=int, default=16, help="paired rounds per workload")
    parser.add_argument("--batch", type=int, default=100, help="commands per pipeline request")
    parser.add_argument("--concurrency", type=int, default=16, help="async requests in flight")
    args = parser.parse_args()
    rows = run(args.seconds, args.batch, args.concurrency, args.rounds)
    print(f"machine: {machine()}")
    print(f"load average (1 min) at the end of the run: {os.getloadavg()[0]:.2f}")
    print(f"{'workload':<46} {'client':<30} {'ops/s':>10} {'vs peer':>8} {'CPU us/op':>10} {'vs peer':>8}")
    for workload, name, ops, ops_ratio, cpu, cpu_ratio in rows:
        print(f"{workload:<46} {name:<30} {ops:>10,.0f} {ops_ratio:>7.2f}x {cpu:>10,.1f} {cpu_ratio:>7.2f}x")


if __name__ == "__main__":
    main()
