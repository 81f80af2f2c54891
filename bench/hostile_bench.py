"""Hostile vector filters: what a GLOB built to backtrack costs the sandbox, and everyone else.

    python bench/hostile_bench.py [--records 200] [--seconds 3]

One sandbox (key-value on a real redis-server, and the vector indexes) in a child process, so this
process's clients do not share its GIL. The model-less index holds ``--records`` vectors, each with a
5,000-character metadata value of ``a``. Then:

a. query time of the crafted filter ``s GLOB '*a*a...*a*b'`` (25 stars: a backtracking engine tries
   about 5000^25 ways to split each value; before RE2, 8 stars on 80 characters took 37 s) against a
   plain equality filter on the same records (median of ``--rounds`` queries each);
b. latency of key-value GETs, one at a time: with nothing else running, while ``--threads`` threads
   send plain-filter queries back to back, and while they send the crafted query instead.

The ratios to watch are crafted against plain: near 1, the crafted filter costs what scanning the
values costs, and GETs wait for it no more than for ordinary queries (against idle, they share two
cores with the query threads). Under a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

import httpx
from _child import sandbox_process
from kv_bench import machine

STARS = 25
HOSTILE = "s GLOB '" + "*a" * STARS + "*b'"
PLAIN = "k = 'none'"
DIM = 384


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


class Sandbox:
    def __init__(self, env: dict[str, str]) -> None:
        self.vector = env["SVC_VECTOR_NOMODEL_URL"]
        self.dense = env["SVC_VECTOR_URL"]
        self.kv_url = env["SVC_KV_URL"]
        self.vector_auth = {"Authorization": f"Bearer {env['SVC_VECTOR_TOKEN']}"}
        self.kv_auth = {"Authorization": f"Bearer {env['SVC_KV_TOKEN']}"}

    def query(self, http: httpx.Client, flt: str) -> float:
        start = time.perf_counter()
        reply = http.post(f"{self.vector}/query/bench", json={"vector": [1.0] + [0.0] * (DIM - 1), "filter": flt},
                          headers=self.vector_auth)
        reply.raise_for_status()
        return time.perf_counter() - start

    def gets(self, http: httpx.Client, seconds: float) -> list[float]:
        latencies: list[float] = []
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            http.post(f"{self.kv_url}/GET/greeting", headers=self.kv_auth).raise_for_status()
            latencies.append(time.perf_counter() - start)
        return latencies


def prepare(sb: Sandbox, http: httpx.Client, records: int) -> None:
    items = [{"id": f"r{i}", "vector": [1.0 if j == i % DIM else 0.0 for j in range(DIM)],
              "metadata": {"s": "a" * 5000, "k": f"v{i}"}} for i in range(records)]
    http.post(f"{sb.vector}/upsert/bench", json=items, headers=sb.vector_auth).raise_for_status()
    http.post(f"{sb.kv_url}/SET/greeting/hello", headers=sb.kv_auth).raise_for_status()
    # a text query waits for the embedding model, which loads in the background: measure after it
    http.post(f"{sb.dense}/query-data", json={"data": "warm up"}, headers=sb.vector_auth).raise_for_status()


def gets_during(sb: Sandbox, flt: str, seconds: float, threads: int) -> tuple[list[float], int]:
    """GET latencies while ``threads`` threads send queries with ``flt`` back to back, and how many
    queries they sent meanwhile."""
    stop = threading.Event()
    sent = [0] * threads

    def flood(n: int) -> None:
        with httpx.Client(timeout=600) as http:
            while not stop.is_set():
                sb.query(http, flt)
                sent[n] += 1

    workers = [threading.Thread(target=flood, args=(n,)) for n in range(threads)]
    for t in workers:
        t.start()
    try:
        with httpx.Client(timeout=600) as http:
            return sb.gets(http, seconds), sum(sent)
    finally:
        stop.set()
        for t in workers:
            t.join()


def measure(sb: Sandbox, rounds: int, seconds: float, threads: int) -> list[tuple[str, float, float]]:
    with httpx.Client(timeout=600) as http:
        plain = statistics.median(sb.query(http, PLAIN) for _ in range(rounds))
        crafted = statistics.median(sb.query(http, HOSTILE) for _ in range(rounds))
        idle = sb.gets(http, seconds)
    ordinary, n_plain = gets_during(sb, PLAIN, seconds, threads)
    hostile, n_crafted = gets_during(sb, HOSTILE, seconds, threads)
    ms = 1000.0
    return [
        (f"vector query: `{PLAIN}` vs the crafted GLOB (median)", plain * ms, crafted * ms),
        (f"KV GET p50: idle vs during {n_crafted} crafted queries", statistics.median(idle) * ms,
         statistics.median(hostile) * ms),
        (f"KV GET p50: during {n_plain} plain queries vs during the crafted ones",
         statistics.median(ordinary) * ms, statistics.median(hostile) * ms),
        ("KV GET p99: during plain queries vs during crafted ones", percentile(ordinary, 99) * ms,
         percentile(hostile, 99) * ms),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200, help="vectors with a 5,000-character value")
    parser.add_argument("--rounds", type=int, default=9, help="queries timed per filter")
    parser.add_argument("--seconds", type=float, default=3.0, help="time GETs are sent, idle and busy")
    parser.add_argument("--threads", type=int, default=4, help="threads sending queries while GETs are timed")
    args = parser.parse_args()
    with sandbox_process(areas=["kv", "vector"], backend="redis") as env:
        sb = Sandbox(env)
        with httpx.Client(timeout=600) as http:
            prepare(sb, http, args.records)
        rows = measure(sb, args.rounds, args.seconds, args.threads)
    print(f"machine: {machine()}")
    print(f"load average (1 min) at the end of the run: {os.getloadavg()[0]:.2f}")
    print(f"{args.records} vectors, each with a 5,000-character value; crafted filter: {STARS} stars\n")
    print("| measurement (ms) | baseline | crafted | ratio |")
    print("|---|---:|---:|---:|")
    for name, base, crafted in rows:
        print(f"| {name} | {base:.2f} | {crafted:.2f} | {crafted / base:.2f}x |")


if __name__ == "__main__":
    main()
