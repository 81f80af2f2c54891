"""Key-value client throughput: svckit's KV / AsyncKV vs the peer SDK vs redis-py straight to Redis.

One run, one sandbox (real redis-server backend), everything on loopback:

* single-command ops/s: one GET or SET per request, one request at a time (latency bound);
* pipelined commands/s: batches of ``--batch`` commands per request;
* async with ``--concurrency`` requests in flight (what asyncio is for);
* redis-py straight to the same Redis (its Unix socket): the physical limit without HTTP.

Ratios are against the peer SDK ``upstash-redis`` (sync rows vs its sync client, async rows vs its
async client; ``rest_encoding=None``). Each cell runs for ``--seconds`` (about a minute in all).

    python bench/kv_bench.py [--seconds 4] [--rounds 16] [--batch 100] [--concurrency 16 64]
    python bench/kv_bench.py --before /tmp/kv-before [--repeat 2] [--seconds 2]

``--before TREE`` compares this checkout with another one (``git worktree add /tmp/kv-before
40d1c72``) in one run: the whole bench runs alternately on each side, each in its own process with
its own sandbox child (``--before-without httptools,uvloop`` runs the older side without them, as a
tree from before issue 14 ran). The table gives both sides and after/before, the median of the
per-repeat ratios.

The async rows include a bare ``httpx.AsyncClient`` posting the same path-form requests: the floor
any httpx-based client stands on, so the gap to it is what svckit itself adds.

The rows "on <pool>" run svckit's own client over another connection pool (``transport=``), in the
same run: the alternatives issue 21 weighed against svckit's pools (aiohttp for asyncio, urllib3 for
threads) — httpx's default (httpcore), httpx-aiohttp and pyreqwest (``pip install -e ".[bench]"``;
a pool that is not installed is left out).

The sandbox runs in a child process (clients must not share its GIL). The clients of one workload
run back to back in short rounds; figures are each client's best round, ratios the median of the
per-round ratios (robust on a shared, loaded machine).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import redis
import upstash_redis
import upstash_redis.asyncio
from _child import code_env, sandbox_process
from _peers import other_pools

from svckit.kv import KV, AsyncKV

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


class BareHttpx:
    """The floor: one ``httpx.AsyncClient`` posting path-form commands, reply JSON left undecoded."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"})

    async def set(self, key: str, value: str) -> bytes:
        return (await self.http.post(f"{self.url}/SET/{key}/{value}")).content

    async def get(self, key: str) -> bytes:
        return (await self.http.post(f"{self.url}/GET/{key}")).content

    async def aclose(self) -> None:
        await self.http.aclose()


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


def run(seconds: float, batch: int, concurrencies: list[int], rounds: int) -> list[Row]:
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

        def bare() -> BareHttpx:
            return BareHttpx(url, token)

        pools = other_pools()
        on_pools = {name: KV(url, token, transport=make()) for name, (make, _) in pools.items() if make}

        def async_on(make: Callable[[], Any]) -> Callable[[], AsyncKV[str]]:
            return lambda: AsyncKV(url, token, transport=make())

        def async_rows(op: Callable[[Any], Callable[[], Awaitable[int]]]) -> list[tuple[str, Measure]]:
            return [(f"AsyncKV on {name}", async_measure(async_on(make), op))
                    for name, (_, make) in pools.items() if make]

        def sync_rows(op: Callable[[Any], Callable[[], int]]) -> list[tuple[str, Measure]]:
            return [(f"KV on {name}", sync_measure(functools.partial(op, client))) for name, client in on_pools.items()]

        def concurrent(n: int) -> Callable[[Any], Callable[[], Awaitable[int]]]:
            return lambda client: async_concurrent(client, n)

        def apipe(client: Any) -> Callable[[], Awaitable[int]]:
            return async_pipelined(client, batch)

        groups: list[tuple[str, list[tuple[str, Measure]]]] = [
            ("single command, sync", [
                ("svckit KV", sync_measure(lambda: sync_single(ours))),
                ("upstash-redis Redis", sync_measure(lambda: sync_single(peer))),
                ("redis-py over its socket", sync_measure(lambda: sync_single(direct))),
                *sync_rows(sync_single),
            ]),
            ("single command, async (one in flight)", [
                ("svckit AsyncKV", async_measure(our_async, async_single)),
                ("upstash-redis asyncio.Redis", async_measure(peer_async, async_single)),
                ("bare httpx.AsyncClient (floor)", async_measure(bare, async_single)),
                *async_rows(async_single),
            ]),
            *((f"single command, async ({n} in flight)", [
                ("svckit AsyncKV", async_measure(our_async, concurrent(n))),
                ("upstash-redis asyncio.Redis", async_measure(peer_async, concurrent(n))),
                ("bare httpx.AsyncClient (floor)", async_measure(bare, concurrent(n))),
                *async_rows(concurrent(n)),
            ]) for n in concurrencies),
            (f"pipelined ({batch} commands per request), sync", [
                ("svckit KV", sync_measure(lambda: sync_pipelined(ours.pipeline, batch))),
                ("upstash-redis Redis", sync_measure(lambda: sync_pipelined(peer_pipe.pipeline, batch))),
                ("redis-py over its socket", sync_measure(
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
        for client in on_pools.values():
            client.close()
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.system()} {platform.release()}"


def print_table(rows: list[Row]) -> None:
    print(f"{'workload':<46} {'client':<30} {'ops/s':>10} {'vs peer':>8} {'CPU us/op':>10} {'vs peer':>8}")
    for workload, name, ops, ops_ratio, cpu, cpu_ratio in rows:
        print(f"{workload:<46} {name:<30} {ops:>10,.0f} {ops_ratio:>7.2f}x {cpu:>10,.1f} {cpu_ratio:>7.2f}x")


def compare(before_tree: str, before_without: list[str], repeat: int, bench_args: list[str]) -> None:
    """Run the whole bench ``repeat`` times on each side, alternating which side goes first."""
    runs: dict[str, list[list[Row]]] = {"before": [], "after": []}
    for i in range(repeat):
        for side in (("before", "after") if i % 2 == 0 else ("after", "before")):
            tree, without = (before_tree, before_without) if side == "before" else (None, ())
            with tempfile.TemporaryDirectory() as tmp, code_env(tree, without) as env:
                out = os.path.join(tmp, "rows.json")
                subprocess.run([sys.executable, __file__, *bench_args, "--json", out], env=env, check=True,
                               stdout=subprocess.DEVNULL)
                with open(out) as fh:
                    runs[side].append([tuple(row) for row in json.load(fh)])  # type: ignore[misc]
            print(f"# repeat {i + 1}: {side} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"machine: {machine()}")
    print(f"before: {before_tree}{' without ' + ', '.join(before_without) if before_without else ''}; "
          "after: this checkout")
    print("| workload | client | before ops/s | after ops/s | after / before | before CPU us/op | after CPU us/op |")
    print("|---|---|---|---|---|---|---|")
    for j, (workload, name, *_rest) in enumerate(runs["after"][0]):
        before = [run[j] for run in runs["before"]]
        after = [run[j] for run in runs["after"]]
        ratio = statistics.median(a[2] / b[2] for a, b in zip(after, before))
        print(f"| {workload} | {name} | {max(r[2] for r in before):,.0f} | {max(r[2] for r in after):,.0f} | "
              f"{ratio:.2f}× | {min(r[4] for r in before):,.0f} | {min(r[4] for r in after):,.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="time each client gets per workload")
    parser.add_argument("--rounds", type=int, default=16, help="paired rounds per workload")
    parser.add_argument("--batch", type=int, default=100, help="commands per pipeline request")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64], help="async requests in flight")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--before", help="another checkout to compare with, side by side (see above)")
    parser.add_argument("--repeat", type=int, default=2, help="with --before: runs per side")
    parser.add_argument("--before-without", default="", help="with --before: modules that side runs without "
                        "(httptools,uvloop for a tree from before issue 14)")
    args = parser.parse_args()
    if args.before:
        without = [m for m in args.before_without.split(",") if m]
        compare(args.before, without, args.repeat, ["--seconds", str(args.seconds), "--rounds", str(args.rounds),
                                           "--batch", str(args.batch), "--concurrency",
                                           *map(str, args.concurrency)])
        return
    rows = run(args.seconds, args.batch, args.concurrency, args.rounds)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh)
    print(f"machine: {machine()}")
    print(f"load average (1 min) at the end of the run: {os.getloadavg()[0]:.2f}")
    print_table(rows)


if __name__ == "__main__":
    main()
