"""Keyspace analysis of a 1,000,000-key keyspace: svckit's sampled and complete passes side by side
with a ``redis-cli --bigkeys / --memkeys`` style pass done with redis-py straight to Redis.

    python bench/analysis_bench.py [--keys 1000000] [--sample 10000]

The sandbox (real Redis backend: a redis-server child) runs in a child process (bench/_child.py).
The keyspace is filled with redis-py pipelining straight to the backing Redis: 40% ``user:<shard>:<id>``
strings of 10-400 bytes, 20% ``session:<id>`` strings with TTLs from 30 min to 30 days (none
expires during the run, so every pass sees the same keyspace), 20%
``cart:<shard>:<id>`` hashes of 1-40 fields, 10% ``queue:<id>`` lists, 10% ``tag:<id>`` sets, plus
five big values.

Every pass runs in a fresh Python process (so one pass's garbage cannot inflate another's peak):
its wall time, and its peak memory as the growth of the process's maximum resident set size
(``VmHWM`` over ``VmRSS`` before the pass), imports excluded.

- svckit: :func:`svckit.kv.analyze_keyspace` over HTTP through the gateway: sampled (``--sample``
  keys, seed 1) and complete (``sample=None``).
- peer (redis-py straight to Redis, no HTTP, no JSON): SCAN COUNT 5000 and, per batch, one pipeline of TYPE +
  PTTL + MEMORY USAGE per key, aggregated per prefix (what ``redis-cli --memkeys`` does, plus the
  type and TTL that the report also gives); the sampled peer SCANs every name and describes the
  same number of random keys.

The accuracy line compares the sampled pass's memory estimate per top-level prefix with the
complete pass's exact figure, in units of the stated 95% half-width.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _child import sandbox_process


def fill(r: redis.Redis, n: int) -> float:
    started = time.perf_counter()
    r.flushall()
    rng = random.Random(42)
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        kind = i % 10
        if kind < 4:
            pipe.set(f"user:{i % 50}:{i}", "u" * rng.randint(10, 400))
        elif kind < 6:
            pipe.set(f"session:{i}", "s" * 32, px=rng.choice([1_800_000, 43_200_000, 259_200_000, 2_592_000_000]))
        elif kind < 8:
            pipe.hset(f"cart:{i % 20}:{i}", mapping={f"sku{j}": "2" for j in range(rng.randint(1, 40))})
        elif kind < 9:
            pipe.rpush(f"queue:{i}", *(["job"] * rng.randint(1, 30)))
        else:
            pipe.sadd(f"tag:{i}", *(f"t{j}" for j in range(rng.randint(1, 20))))
        if i % 20_000 == 19_999:
            pipe.execute()
    for j in range(5):
        pipe.set(f"blob:{j}", "b" * (2_000_000 + j))
    pipe.execute()
    return time.perf_counter() - started


# -- one pass, in a child process -------------------------------------------------------------


def _status_kib(field: str) -> int:
    """VmHWM (peak resident set) or VmRSS of this process, in KiB. Not ru_maxrss: after fork + exec
    that can still hold the parent's peak."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _rss_kib() -> int:
    return _status_kib("VmHWM")


def _current_rss_kib() -> int:
    return _status_kib("VmRSS")


def _svckit_pass(args: argparse.Namespace) -> dict:
    import pandas  # noqa: F401 - imported by the report: loaded before the pass, like the peer's redis-py

    from svckit.kv import KV, analyze_keyspace

    kv = KV(os.environ["SVC_KV_URL"], os.environ["SVC_KV_TOKEN"], timeout=120)
    kv.ping()
    before = _current_rss_kib()
    started = time.perf_counter()
    report = analyze_keyspace(kv, sample=args.sample or None, seed=1, progress=False)
    seconds = time.perf_counter() - started
    top = report.by_prefix[report.by_prefix["level"] == 1]
    return {"seconds": seconds, "peak_mib": (_rss_kib() - before) / 1024, "described": report.sample_size,
            "total": report.total_keys, "memory": report.memory,
            "by_prefix": {p: [m, pm] for p, m, pm in zip(top["prefix"], top["memory"], top["memory ±"])}}


def _peer_pass(args: argparse.Namespace) -> dict:
    r = redis.Redis.from_url(os.environ["REDIS_URL"])
    r.ping()
    before = _current_rss_kib()
    started = time.perf_counter()
    names: Counter[bytes] = Counter()
    memory: Counter[bytes] = Counter()
    types: Counter[bytes] = Counter()
    no_ttl = 0
    sample: list[bytes] = []
    seen = 0
    rng = random.Random(1)

    def describe(keys: list[bytes]) -> None:
        nonlocal no_ttl
        pipe = r.pipeline(transaction=False)
        for key in keys:
            pipe.type(key)
            pipe.pttl(key)
            pipe.memory_usage(key)
        replies = pipe.execute()
        for i, key in enumerate(keys):
            types[replies[3 * i]] += 1
            no_ttl += replies[3 * i + 1] == -1
            memory[key.split(b":", 1)[0]] += replies[3 * i + 2] or 0

    cursor = 0
    while True:
        cursor, keys = r.scan(cursor, count=5000)
        for key in keys:
            names[key.split(b":", 1)[0]] += 1
        if args.sample:  # reservoir sample of the names
            for key in keys:
                seen += 1
                if len(sample) < args.sample:
                    sample.append(key)
                else:
                    j = rng.randrange(seen)
                    if j < args.sample:
                        sample[j] = key
        else:
            for start in range(0, len(keys), 1000):
                describe(keys[start:start + 1000])
        if cursor == 0:
            break
    for start in range(0, len(sample), 1000):
        describe(sample[start:start + 1000])
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "peak_mib": (_rss_kib() - before) / 1024,
            "described": len(sample) if args.sample else sum(types.values()), "total": sum(names.values())}


def _measure_in_child(kind: str, env: dict[str, str], sample: int) -> dict:
    # the token and the Redis URL (which carries a password) go in the environment, never on a
    # command line that any local user can read
    command = [sys.executable, __file__, "--measure", kind, "--sample", str(sample)]
    out = subprocess.run(command, check=True, capture_output=True, text=True, env={**os.environ, **env})
    return json.loads(out.stdout.strip().splitlines()[-1])


def markdown(rows: list[list[str]], head: list[str]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=10_000)
    parser.add_argument("--measure", choices=["svckit", "peer"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(_svckit_pass(args) if args.measure == "svckit" else _peer_pass(args)))
        return

    with sandbox_process(areas=["kv"], backend="redis") as env:
        r = redis.Redis.from_url(env["REDIS_URL"])
        fill_s = fill(r, args.keys)
        total = r.dbsize()
        results = {}
        for name, kind, sample in [("svckit sampled", "svckit", args.sample), ("peer sampled", "peer", args.sample),
                                   ("svckit complete", "svckit", 0), ("peer complete", "peer", 0)]:
            results[name] = _measure_in_child(kind, env, sample)
            print(f"{name}: {results[name]['seconds']:.1f} s, {results[name]['peak_mib']:.1f} MiB", file=sys.stderr)
        r.close()

    rows = []
    for what in ("sampled", "complete"):
        ours, peer = results[f"svckit {what}"], results[f"peer {what}"]
        label = f"{what} pass ({ours['described']:,} of {ours['total']:,} keys described)"
        rows.append([label + ": time", f"{ours['seconds']:.2f} s", f"{peer['seconds']:.2f} s",
                     f"{ours['seconds'] / peer['seconds']:.1f}×"])
        rows.append([label + ": peak memory (RSS growth)", f"{ours['peak_mib']:.1f} MiB", f"{peer['peak_mib']:.1f} MiB",
                     f"{ours['peak_mib'] / max(peer['peak_mib'], 0.1):.1f}×"])
    sampled, complete = results["svckit sampled"], results["svckit complete"]
    errors = []
    for prefix, (est, pm) in sampled["by_prefix"].items():
        exact = complete["by_prefix"][prefix][0]
        errors.append(f"{prefix} {abs(est - exact) / pm:.2f}" if pm else f"{prefix} exact")
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()
    print(f"analysis_bench.py, {when}, {platform.machine()} x {os.cpu_count()} cores, load {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f}, Python {platform.python_version()}; {total:,} keys filled with redis-py "
          f"in {fill_s:.1f} s")
    print(markdown(rows, ["measure", "svckit (HTTP)", "redis-py (TCP)", "ratio"]))
    print(f"\nsampled memory estimate vs exact, |error| / stated 95% half-width per prefix: {', '.join(errors)}; "
          f"total memory sampled {sampled['memory'] / 2**20:,.1f} MiB vs exact {complete['memory'] / 2**20:,.1f} MiB")


if __name__ == "__main__":
    main()
