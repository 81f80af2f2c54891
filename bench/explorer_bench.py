"""KV explorer on a 1,000,000-key keyspace, side by side with redis-py's scan_iter straight to Redis.

    python bench/explorer_bench.py [--keys 1000000] [--repeat 3]

The sandbox (real Redis backend: a redis-server child) runs in a child process so that peak-memory
figures are the explorer's own. The keyspace is filled with redis-py pipelining straight to the
backing Redis (the KV area exposes its URL), then measured:

- first page: ``KVExplorer.refresh()`` = DBSIZE + bounded SCAN steps until one page of matches
  + the visible rows' metadata (TYPE/PTTL/MEMORY USAGE in one pipeline, lengths in a second);
- metadata fill: ``describe_visible()`` alone, for the 25 visible rows;
- rare pattern: first page for a pattern matching 11 of 1,000,000 keys (bounded: it stops after
  ``max_steps`` SCAN calls and says "more to scan");
- full capped scan into a DataFrame: ``scan_all()`` with the cap above the keyspace size, then
  ``keys_frame``; peak Python memory with tracemalloc;
- peer: redis-py ``scan_iter(count=1000)`` straight to the same Redis, into a DataFrame (the
  floor: no HTTP, no JSON), and redis-py for the first page (one SCAN + one pipeline).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import textwrap
import time
import tracemalloc
from datetime import datetime, timezone

import pandas as pd
import redis

from svckit import frames
from svckit.kv import KV
from svckit.widgets import KVExplorer

CHILD = textwrap.dedent("""
    import json, sys
    from svckit.sandbox import Sandbox
    sb = Sandbox(areas=["kv"], backend="redis").start()
    print(json.dumps({"env": sb.env, "redis_url": sb.area("kv").redis_url}), flush=True)
    sys.stdin.read()
    sb.stop()
""")


def fill(r: redis.Redis, n: int) -> float:
    """n keys: 70% strings (user:/session:), 20% hashes (order:), 10% lists/sets/zsets (misc:)."""
    started = time.perf_counter()
    r.flushall()
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        kind = i % 10
        if kind < 5:
            pipe.set(f"user:{i}", "x" * 16)
        elif kind < 7:
            pipe.set(f"session:{i}", "s", ex=3600)
        elif kind < 9:
            pipe.hset(f"order:{i}", mapping={"sku": "A1", "qty": "2"})
        else:
            pipe.rpush(f"misc:list:{i}", "a", "b")
        if i % 20_000 == 19_999:
            pipe.execute()
    pipe.execute()
    return time.perf_counter() - started


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def peak_memory(fn) -> tuple[float, int, object]:
    tracemalloc.start()
    t = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak, result


def markdown(table: pd.DataFrame) -> str:
    def cell(v: object) -> str:
        if v is None or (isinstance(v, float) and pd.isna(v)):
            return "–"
        return f"{v:,.3f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(child.stdout.readline())
        r = redis.Redis.from_url(info["redis_url"], decode_responses=True)
        fill_s = fill(r, args.keys)
        assert r.dbsize() == args.keys
        kv = KV(info["env"]["SVC_KV_URL"], info["env"]["SVC_KV_TOKEN"])
        rows: list[dict[str, object]] = []

        def explorer(**opts):
            return KVExplorer(kv, autorefresh=False, **opts)

        w = explorer(pattern="*")
        first_page, _ = timed(w.refresh, args.repeat)
        meta_fill, _ = timed(w.describe_visible, args.repeat)
        assert len(w.visible_frame) == 25 and w.visible_frame["type"].notna().all()

        def peer_first_page():
            _, keys = r.scan(0, count=1000)
            keys = keys[:25]
            p = r.pipeline(transaction=False)
            for k in keys:
                p.type(k)
                p.pttl(k)
                p.memory_usage(k)
            return p.execute()

        peer_page, _ = timed(peer_first_page, args.repeat)

        rare = explorer(pattern="user:12345*", max_steps=50)
        rare_page, _ = timed(rare.refresh, args.repeat)
        rare_state = f"{len(rare.matches)} found, scanned {rare.scanned:,} of ~{rare.dbsize:,}"

        capped = explorer(pattern="*", scan_cap=10_000)
        capped.refresh()
        capped_s, _ = timed(lambda: (capped.refresh(), capped.scan_all()), 1)

        def explorer_full():
            full = explorer(pattern="*", scan_cap=args.keys + 1)
            full.refresh()
            full.scan_all()
            return frames.keys_frame(full.matches)

        ex_s, ex_frame = timed(explorer_full, 1)
        _, ex_peak, _ = peak_memory(explorer_full)  # a second run: tracemalloc slows what it traces

        def peer_full():
            return pd.DataFrame({"key": pd.array(list(r.scan_iter(count=1000)), dtype="string")})

        peer_s, peer_frame = timed(peer_full, 1)
        _, peer_peak, _ = peak_memory(peer_full)
        assert len(ex_frame) == len(peer_frame) == args.keys

        rows = [
            {"measure": "first page (DBSIZE + SCAN + metadata of 25 rows)", "svckit": first_page,
             "redis-py": peer_page, "unit": "s"},
            {"measure": "metadata fill, 25 visible rows (2 pipelines)", "svckit": meta_fill,
             "redis-py": None, "unit": "s"},
            {"measure": f"rare pattern first page ({rare_state})", "svckit": rare_page, "redis-py": None, "unit": "s"},
            {"measure": "scan all, default cap 10,000 matches", "svckit": capped_s, "redis-py": None, "unit": "s"},
            {"measure": f"full scan of {args.keys:,} keys into a DataFrame", "svckit": ex_s, "redis-py": peer_s,
             "unit": "s"},
            {"measure": "peak Python memory of the full scan", "svckit": ex_peak / 2**20, "redis-py": peer_peak / 2**20,
             "unit": "MiB"},
        ]
        table = pd.DataFrame(rows)
        table["ratio"] = table["svckit"] / table["redis-py"]
        when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        print(f"explorer_bench.py, {when}, {platform.processor() or platform.machine()}, "
              f"{platform.python_version()}, fill {args.keys:,} keys with redis-py pipelining: {fill_s:.1f} s; "
              f"median of {args.repeat} for the first-page rows")
        print(markdown(table))
        kv.close()
    finally:
        child.stdin.close()
        child.wait(timeout=60)


if __name__ == "__main__":
    main()
