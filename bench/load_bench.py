"""Load: N concurrent async clients against one sandbox on loopback, for a bounded time.

Each of N workers has its own ``AsyncKV`` and ``AsyncVector`` and loops until the time is up over a
mix of request kinds (seeded, so runs are comparable):

    read 40%  GET of a key this worker wrote (or a demo key)
    write 30% SET of a unique key to a unique value          (recorded once acknowledged)
    pipeline 10%  5 SET + 5 GET in one /pipeline request       (the SETs recorded)
    transaction 10%  INCR of the worker's counter + SET of a unique key in one /multi-exec
    query 10%  a text query (top 5) on the dense vector index

It reports per kind: requests/s, p50/p99 latency, and errors (must be zero). Afterwards every
acknowledged write is read back straight from the backing Redis (redis-py) and compared, and each
worker's counter must equal its number of acknowledged transactions.

Peer, in the same run: the same KV mix (query excluded) through ``redis.asyncio`` straight to the
backing Redis over TCP, with N clients: the ratio shows what the HTTP gateway costs.

    python bench/load_bench.py [--seconds 20] [--clients 16 64] [--seed 7]
    python bench/load_bench.py --before /tmp/kv-before [--repeat 1] [--seconds 10]

``--before TREE`` runs the whole bench alternately on another checkout (without httptools and
uvloop, as that code ran before uvicorn was told to use them) and on this one, each in its own
process with its own sandbox, and prints both sides per kind with after/before.

The sandbox (real redis-server backend, kv + vector areas) runs in a child process so the load
generator does not share its GIL; both share the machine's cores, as they would on a laptop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis
import redis.asyncio
from _child import C_SERVER_MODULES, code_env, sandbox_process

from svckit.kv import AsyncKV
from svckit.vector import AsyncVector

KINDS = ("read", "write", "pipeline", "transaction", "query")
WEIGHTS = (40, 30, 10, 10, 10)
QUERIES = ["read a file", "parse json", "open a socket", "sort a list", "format a date", "compress data",
           "hash a password", "spawn a process", "match a regular expression", "decode base64"]


# -- the sandbox in a child process -----------------------------------------------------------------
@contextmanager
def seeded_sandbox() -> Iterator[dict[str, str]]:
    """kv + vector areas over real Redis, 200 demo documents embedded before the load starts."""
    data_dir = tempfile.mkdtemp(prefix="svckit-load-")
    try:
        with sandbox_process(data_dir=data_dir, areas=["kv", "vector"], backend="redis", seed="demo",
                             demo_limit=200) as env:
            wait_seeded(env)
            yield env
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def wait_seeded(env: dict[str, str], timeout: float = 600) -> None:
    """The demo corpus embeds in the background: measure only once it is in the index."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = httpx.get(env["SVC_VECTOR_URL"] + "/info", headers={"Authorization": f"Bearer {env['SVC_VECTOR_TOKEN']}"},
                         timeout=10).json()["result"]
        if info["pendingVectorCount"] == 0 and info["vectorCount"] > 0:
            return
        time.sleep(0.5)
    raise RuntimeError("vector seeding did not finish")


# -- one run ------------------------------------------------------------------------------------------
@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})
    errors: dict[str, int] = field(default_factory=lambda: {k: 0 for k in KINDS})
    first_errors: list[str] = field(default_factory=list)
    written: dict[str, str] = field(default_factory=dict)  # key -> value, acknowledged writes only
    counters: dict[str, int] = field(default_factory=dict)  # counter key -> acknowledged INCRs

    def error(self, kind: str, exc: BaseException) -> None:
        self.errors[kind] += 1
        if len(self.first_errors) < 5:
            self.first_errors.append(f"{kind}: {type(exc).__name__}: {exc}")


class SvckitOps:
    """The mix through svckit's async clients (HTTP to the sandbox)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.kv = AsyncKV(env["SVC_KV_URL"], env["SVC_KV_TOKEN"], timeout=30)
        self.vector = AsyncVector(env["SVC_VECTOR_URL"], env["SVC_VECTOR_TOKEN"], timeout=60)

    async def get(self, key: str) -> Any:
        return await self.kv.get(key)

    async def set(self, key: str, value: str) -> None:
        assert await self.kv.set(key, value) in (True, "OK")

    async def pipeline(self, pairs: list[tuple[str, str]]) -> None:
        pipe = self.kv.pipeline()
        for key, value in pairs:
            pipe.set(key, value)
            pipe.get(key)
        replies = await pipe.exec()
        assert len(replies) == 2 * len(pairs)

    async def transaction(self, counter: str, key: str, value: str) -> int:
        tx = self.kv.multi_exec()
        tx.incr(counter)
        tx.set(key, value)
        replies = await tx.exec()
        return int(replies[0])

    async def query(self, text: str) -> None:
        assert len(await self.vector.query_data(text, top_k=5)) <= 5

    async def close(self) -> None:
        await self.kv.close()
        await self.vector.close()


class RedisPyOps:
    """The same KV mix through redis-py straight to the backing Redis (the peer)."""

    def __init__(self, redis_url: str) -> None:
        self.r = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)

    async def get(self, key: str) -> Any:
        return await self.r.get(key)

    async def set(self, key: str, value: str) -> None:
        assert await self.r.set(key, value)

    async def pipeline(self, pairs: list[tuple[str, str]]) -> None:
        pipe = self.r.pipeline(transaction=False)
        for key, value in pairs:
            pipe.set(key, value)
            pipe.get(key)
        assert len(await pipe.execute()) == 2 * len(pairs)

    async def transaction(self, counter: str, key: str, value: str) -> int:
        pipe = self.r.pipeline(transaction=True)
        pipe.incr(counter)
        pipe.set(key, value)
        replies = await pipe.execute()
        return int(replies[0])

    async def close(self) -> None:
        await self.r.aclose()


async def worker(ops: Any, name: str, seed: int, deadline: float, tally: Tally, kinds: tuple[str, ...],
                 weights: tuple[int, ...]) -> None:
    rng = random.Random(seed)
    mine: list[str] = ["greeting"]
    counter = f"load:{name}:counter"
    tally.counters[counter] = 0
    seq = 0
    while time.perf_counter() < deadline:
        kind = rng.choices(kinds, weights)[0]
        seq += 1
        start = time.perf_counter()
        try:
            if kind == "read":
                await ops.get(rng.choice(mine))
            elif kind == "write":
                key, value = f"load:{name}:w{seq}", f"{name}-{seq}-{rng.getrandbits(32)}"
                await ops.set(key, value)
                tally.written[key] = value
                mine.append(key)
            elif kind == "pipeline":
                pairs = [(f"load:{name}:p{seq}:{i}", f"{name}-{seq}-{i}") for i in range(5)]
                await ops.pipeline(pairs)
                tally.written.update(pairs)
            elif kind == "transaction":
                key, value = f"load:{name}:t{seq}", f"tx-{name}-{seq}"
                count = await ops.transaction(counter, key, value)
                tally.counters[counter] += 1
                assert count == tally.counters[counter], f"counter {count} != {tally.counters[counter]}"
                tally.written[key] = value
            else:
                await ops.query(rng.choice(QUERIES))
        except Exception as exc:  # noqa: BLE001 - counted, shown, and the bench fails on any
            tally.error(kind, exc)
            continue
        tally.latencies[kind].append(time.perf_counter() - start)


async def drive(make_ops: Any, clients: int, seconds: float, seed: int, label: str,
                kinds: tuple[str, ...] = KINDS) -> tuple[Tally, float]:
    weights = tuple(w for k, w in zip(KINDS, WEIGHTS) if k in kinds)
    opses = [make_ops() for _ in range(clients)]
    tally = Tally()
    start = time.perf_counter()
    deadline = start + seconds
    await asyncio.gather(*(worker(ops, f"{label}{i}", seed * 1000 + i, deadline, tally, kinds, weights)
                           for i, ops in enumerate(opses)))
    elapsed = time.perf_counter() - start
    for ops in opses:
        await ops.close()
    return tally, elapsed


def verify(redis_url: str, tally: Tally) -> tuple[int, int, int]:
    """(writes checked, values missing or wrong, counters wrong), read straight from Redis."""
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    keys = list(tally.written)
    bad = 0
    for i in range(0, len(keys), 1000):
        chunk = keys[i : i + 1000]
        for key, value in zip(chunk, r.mget(chunk)):
            bad += value != tally.written[key]
    counters_bad = sum(int(r.get(c) or 0) != n for c, n in tally.counters.items())
    r.close()
    return len(keys), bad, counters_bad


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} "
            f"{platform.release()}, load average {os.getloadavg()[0]:.1f}")


def run(seconds: float, client_counts: list[int], seed: int, summary: list[dict[str, Any]] | None = None,
        kinds: tuple[str, ...] = KINDS) -> int:
    """Print the table; ``summary`` (when given) gets one dict per (clients, kind) row."""
    failures = 0
    summary = [] if summary is None else summary
    with seeded_sandbox() as env:
        redis_url = env["REDIS_URL"]
        print(f"# load bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}")
        print(f"# sandbox: kv (redis-server child) + vector (dense, demo corpus); {seconds:.0f} s per run; "
              f"mix {dict(zip(KINDS, WEIGHTS))}; pipeline = 10 commands, transaction = 2\n")
        print("| clients | kind | svckit req/s | p50 ms | p99 ms | errors | redis-py req/s | p50 ms | p99 ms "
              "| svckit / redis-py |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for n in client_counts:
            ours, elapsed = asyncio.run(drive(lambda: SvckitOps(env), n, seconds, seed, f"s{n}c", kinds=kinds))
            checked, bad, counters_bad = verify(redis_url, ours)
            peer, peer_elapsed = asyncio.run(drive(lambda: RedisPyOps(redis_url), n, seconds, seed, f"r{n}c",
                                                   kinds=KINDS[:4]))
            peer_checked, peer_bad, peer_counters_bad = verify(redis_url, peer)
            for kind in KINDS:
                lat, plat = ours.latencies[kind], peer.latencies[kind]
                rate, prate = len(lat) / elapsed, len(plat) / peer_elapsed
                ratio = f"{rate / prate:.3f}×" if plat else "–"
                peer_cells = f"{prate:,.0f} | {pct(plat, .5):.2f} | {pct(plat, .99):.2f}" if plat else "– | – | –"
                print(f"| {n} | {kind} | {rate:,.0f} | {pct(lat, .5):.1f} | {pct(lat, .99):.1f} | "
                      f"{ours.errors[kind]} | {peer_cells} | {ratio} |")
                summary.append({"clients": n, "kind": kind, "rate": rate, "p50": pct(lat, .5),
                                "p99": pct(lat, .99), "errors": ours.errors[kind]})
            total, ptotal = sum(map(len, ours.latencies.values())), sum(map(len, peer.latencies.values()))
            kv_total = total - len(ours.latencies["query"])
            summary.append({"clients": n, "kind": "all", "rate": total / elapsed, "p50": float("nan"),
                            "p99": float("nan"), "errors": sum(ours.errors.values()), "checked": checked,
                            "lost": bad + counters_bad, "vs_redis_py": kv_total / elapsed / (ptotal / peer_elapsed)})
            print(f"| {n} | **all** | {total / elapsed:,.0f} | | | {sum(ours.errors.values())} | "
                  f"{ptotal / peer_elapsed:,.0f} | | | {kv_total / elapsed / (ptotal / peer_elapsed):.3f}× (kv only) |")
            print(f"|  | verified | {checked:,} writes, {bad} wrong, {counters_bad} counters wrong | | | | "
                  f"{peer_checked:,} writes, {peer_bad} wrong, {peer_counters_bad} counters wrong | | | |")
            for line in ours.first_errors:
                print(f"#   error: {line}")
            failures += sum(ours.errors.values()) + bad + counters_bad + peer_bad + peer_counters_bad
    print(f"\nresult: {'OK' if failures == 0 else f'FAILED ({failures} errors or lost writes)'}")
    return 1 if failures else 0


def compare(before_tree: str, repeat: int, bench_args: list[str]) -> int:
    """Run the whole bench ``repeat`` times on each side, alternating which side goes first."""
    runs: dict[str, list[list[dict[str, Any]]]] = {"before": [], "after": []}
    for i in range(repeat):
        for side in (("before", "after") if i % 2 == 0 else ("after", "before")):
            tree, without = (before_tree, C_SERVER_MODULES) if side == "before" else (None, ())
            with tempfile.TemporaryDirectory() as tmp, code_env(tree, without) as env:
                out = os.path.join(tmp, "summary.json")
                subprocess.run([sys.executable, __file__, *bench_args, "--json", out], env=env,
                               stdout=subprocess.DEVNULL, check=False)
                with open(out) as fh:
                    runs[side].append(json.load(fh))
            print(f"# repeat {i + 1}: {side} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"# {machine()}")
    print(f"# before: {before_tree} without {', '.join(C_SERVER_MODULES)}; after: this checkout\n")
    print("| clients | kind | before req/s | after req/s | after / before | before p50 / p99 ms | "
          "after p50 / p99 ms | errors before / after |")
    print("|---|---|---|---|---|---|---|---|")
    failures = 0
    for j, row in enumerate(runs["after"][0]):
        before = [r[j] for r in runs["before"]]
        after = [r[j] for r in runs["after"]]
        if not all(b["rate"] for b in before):
            continue  # a kind left out of the mix
        ratio = statistics.median(a["rate"] / b["rate"] for a, b in zip(after, before))
        def lat(rs: list[dict[str, Any]]) -> str:
            return "" if rs[0]["kind"] == "all" else f"{rs[0]['p50']:.1f} / {rs[0]['p99']:.1f}"

        errors = (sum(r["errors"] for r in before), sum(r["errors"] for r in after))
        print(f"| {row['clients']} | {row['kind']} | {max(r['rate'] for r in before):,.0f} | "
              f"{max(r['rate'] for r in after):,.0f} | {ratio:.2f}× | {lat(before)} | {lat(after)} | "
              f"{errors[0]} / {errors[1]} |")
        if row["kind"] == "all":
            lost = (sum(r["lost"] for r in before), sum(r["lost"] for r in after))
            vs = (statistics.median(r["vs_redis_py"] for r in before), statistics.median(r["vs_redis_py"] for r in after))
            print(f"|  | verified | {sum(r['checked'] for r in before):,} writes, {lost[0]} lost | "
                  f"{sum(r['checked'] for r in after):,} writes, {lost[1]} lost | | kv vs redis-py over TCP: "
                  f"{vs[0]:.3f}× | {vs[1]:.3f}× | |")
            failures += sum(errors) + sum(lost)
    print(f"\nresult: {'OK' if failures == 0 else f'FAILED ({failures} errors or lost writes)'}")
    return 1 if failures else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="duration of each run (default 20)")
    parser.add_argument("--clients", type=int, nargs="+", default=[16, 64], help="concurrent clients (default 16 64)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--kv-only", action="store_true",
                        help="leave the text queries out of svckit's mix (their embedding is most of the sandbox's CPU)")
    parser.add_argument("--json", help="also write the per-kind summary to this file")
    parser.add_argument("--before", help="another checkout to compare with, side by side (see above)")
    parser.add_argument("--repeat", type=int, default=1, help="with --before: runs per side")
    args = parser.parse_args()
    if args.before:
        raise SystemExit(compare(args.before, args.repeat, ["--seconds", str(args.seconds), "--seed", str(args.seed),
                                                            *(["--kv-only"] if args.kv_only else []),
                                                            "--clients", *map(str, args.clients)]))
    summary: list[dict[str, Any]] = []
    status = run(args.seconds, args.clients, args.seed, summary, KINDS[:4] if args.kv_only else KINDS)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(summary, fh)
    raise SystemExit(status)


if __name__ == "__main__":
    main()
