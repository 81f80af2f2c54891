"""Bulk delete of every key under a pattern: svckit's ``bulk_delete`` through the REST gateway, side by
side with redis-py's ``scan_iter`` + pipelined ``UNLINK`` straight to the backing Redis.

    python bench/bulk_bench.py [--keys 1000000] [--others 50000] [--batch 500] [--repeat 1]

The sandbox (real Redis backend, a redis-server child) runs in a child process (bench/_child.py).
Before every run the keyspace is refilled the same way with redis-py pipelining: ``--keys`` strings
``bulk:{i}`` (the pattern ``bulk:*``) and ``--others`` keys that must survive (``keep:{i}`` and a
look-alike ``bulkish:{i}``). Both sides do the same work: SCAN MATCH bulk:* COUNT 1000, one UNLINK
per key in pipelines of ``--batch`` keys for the redis-py idiom; svckit sends one UNLINK naming each
batch of ``--batch`` keys (exact counts from its reply), and so does the third row, redis-py doing the
same. Each key is acted on once (svckit de-duplicates SCAN repeats and counts exactly). Every run is checked: all pattern keys
gone, every other key still there. Time is wall clock of the delete only (not the fill).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _child import sandbox_process

from svckit.kv import KV, bulk_delete

PATTERN = "bulk:*"
SCAN_COUNT = 1000


def fill(r: redis.Redis, keys: int, others: int) -> None:
    r.flushall()
    chunk = 10_000
    pipe = r.pipeline(transaction=False)
    for start in range(0, keys, chunk):
        pipe.mset({f"bulk:{i}": "x" * 16 for i in range(start, min(keys, start + chunk))})
        pipe.execute()
    half = others // 2
    pipe.mset({f"keep:{i}": "k" for i in range(half)})
    pipe.mset({f"bulkish:{i}": "k" for i in range(others - half)})
    pipe.execute()
    assert r.dbsize() == keys + others


def check(r: redis.Redis, keys: int, others: int, deleted: int) -> None:
    assert deleted == keys, f"deleted {deleted:,}, expected {keys:,}"
    assert r.dbsize() == others, f"{r.dbsize():,} keys left, expected {others:,}"
    assert r.exists("keep:0", f"bulkish:{others - others // 2 - 1}") == 2


def run_svckit(env: dict[str, str], batch: int) -> tuple[float, int, int]:
    with KV(env["SVC_KV_URL"], env["SVC_KV_TOKEN"], timeout=60) as kv:
        started = time.perf_counter()
        summary = bulk_delete(kv, PATTERN, batch=batch, scan_count=SCAN_COUNT, progress=False)
        elapsed = time.perf_counter() - started
    assert summary.failed == 0 and summary.complete, summary.text()
    return elapsed, summary.done, summary.batches


def run_redis_py(r: redis.Redis, batch: int) -> tuple[float, int, int]:
    started = time.perf_counter()
    deleted = batches = 0
    pipe = r.pipeline(transaction=False)
    for key in r.scan_iter(match=PATTERN, count=SCAN_COUNT):
        pipe.unlink(key)
        if len(pipe) >= batch:
            deleted += sum(pipe.execute())
            batches += 1
    if len(pipe):
        deleted += sum(pipe.execute())
        batches += 1
    return time.perf_counter() - started, deleted, batches


def run_redis_py_batched(r: redis.Redis, batch: int) -> tuple[float, int, int]:
    """The same SCAN, one UNLINK naming a whole batch of keys: the command shape svckit sends."""
    started = time.perf_counter()
    deleted = batches = 0
    keys: list[bytes] = []
    for key in r.scan_iter(match=PATTERN, count=SCAN_COUNT):
        keys.append(key)
        if len(keys) >= batch:
            deleted += r.unlink(*keys)
            batches += 1
            keys = []
    if keys:
        deleted += r.unlink(*keys)
        batches += 1
    return time.perf_counter() - started, deleted, batches


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} {platform.release()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--others", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {machine()} · load average {os.getloadavg()[0]:.2f}")
    print(f"# python bench/bulk_bench.py --keys {args.keys} --others {args.others} --batch {args.batch} "
          f"--repeat {args.repeat}", flush=True)
    times: dict[str, list[float]] = {"svckit": [], "redis-py": [], "redis-py batched": []}
    batches: dict[str, int] = {}
    with sandbox_process(areas=["kv"], backend="redis") as env:
        r = redis.Redis.from_url(env["REDIS_URL"])
        for i in range(args.repeat):
            for side in ("redis-py", "redis-py batched", "svckit"):
                fill(r, args.keys, args.others)
                if side == "svckit":
                    elapsed, deleted, n = run_svckit(env, args.batch)
                elif side == "redis-py":
                    elapsed, deleted, n = run_redis_py(r, args.batch)
                else:
                    elapsed, deleted, n = run_redis_py_batched(r, args.batch)
                check(r, args.keys, args.others, deleted)
                times[side].append(elapsed)
                batches[side] = n
                print(f"# repeat {i + 1}: {side} {elapsed:.2f} s, load average {os.getloadavg()[0]:.2f}",
                      flush=True)
        r.close()
    base = statistics.median(times["redis-py"])
    print()
    batched = statistics.median(times["redis-py batched"])
    print(f"| side | keys deleted | requests (batches) | time s (median of {args.repeat}) | keys/s "
          "| time / redis-py pipelined | time / redis-py batched |")
    print("|---|---|---|---|---|---|---|")
    for side, label in (("svckit", "svckit `bulk_delete` via the REST gateway (one UNLINK per batch)"),
                        ("redis-py", "redis-py `scan_iter` + pipelined `UNLINK` per key, straight to Redis"),
                        ("redis-py batched", "redis-py `scan_iter` + one `UNLINK` per batch, straight to Redis")):
        t = statistics.median(times[side])
        print(f"| {label} | {args.keys:,} | {batches[side]:,} | {t:.2f} | {args.keys / t:,.0f} | "
              f"{t / base:.2f}× | {t / batched:.2f}× |")
    print(f"\nload average (1 min) at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
