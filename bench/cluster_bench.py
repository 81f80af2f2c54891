"""One node against three masters: the key-value mix of the load bench through the gateway in front of
one redis-server, and in front of a Redis Cluster of three masters on the same machine, side by side.

    python bench/cluster_bench.py [--seconds 20] [--clients 16 64] [--seed 7] [--procs 4]

Both sides run the same mix (bench/load_bench.py's read 40 %, write 30 %, pipeline of 10 commands
10 %, transaction 10 %, the text query left out), with the same clients in the same generator
processes, one after the other, each against a sandbox of its own in a child process (kv area, demo
data): one on a redis-server child, one on an external cluster the bench starts (tests/cluster.py:
three masters, no replicas, redis-server on loopback ports). Every acknowledged write is read back
afterwards (on the cluster, from every master) and every transaction counter checked. The table gives
each side's requests/s and latency per kind, and the ratio three masters / one node; the CPU rows
say which process ran out (the gateway, on the same two cores, before any Redis does).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.cluster: the tests' local cluster

from _child import sandbox_process  # noqa: E402
from load_bench import DEFAULT_PROCS, KINDS, WEIGHTS, drive, machine, pct, verify  # noqa: E402

from tests.cluster import LocalCluster  # noqa: E402

KV_KINDS = KINDS[:4]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="duration of each run (default 20)")
    parser.add_argument("--clients", type=int, nargs="+", default=[16, 64], help="concurrent clients (default 16 64)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--procs", type=int, default=DEFAULT_PROCS, help="load generator processes")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="svckit-cluster-bench-"))
    cluster = LocalCluster(root / "cluster").start()
    failures = 0
    try:
        pids = ",".join(str(proc.pid) for proc in cluster.procs.values())
        with sandbox_process(data_dir=str(root / "one"), areas=["kv"], backend="redis", seed="demo") as one, \
                sandbox_process(data_dir=str(root / "three"), areas=["kv"], redis_url=cluster.url, seed="demo") as three:
            three["REDIS_PIDS"] = pids
            print(f"# cluster bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}")
            print(f"# one node: the gateway on a redis-server child (Unix socket); three masters: the gateway on a "
                  f"Redis Cluster of three redis-server masters (loopback TCP). {args.seconds:.0f} s per run; mix "
                  f"{dict(zip(KV_KINDS, WEIGHTS))}; {args.procs} generator processes of svckit AsyncKV clients\n")
            print("| clients | kind | one node req/s | p50 ms | p99 ms | errors | three masters req/s | p50 ms "
                  "| p99 ms | errors | three / one |")
            print("|---|---|---|---|---|---|---|---|---|---|---|")
            for n in args.clients:
                procs = min(n, args.procs)
                runs = {}
                for side, env in (("one", one), ("three", three)):
                    run = drive("svckit", env, n, args.seconds, args.seed, f"{side}{n}c", kinds=KV_KINDS, procs=procs)
                    checked, bad, counters_bad = verify(env["REDIS_URL"], run.tally, cluster=side == "three")
                    failures += sum(run.tally.errors.values()) + bad + counters_bad
                    runs[side] = (run, checked, bad, counters_bad)
                (a, *a_check), (b, *b_check) = runs["one"], runs["three"]
                for kind in KV_KINDS:
                    la, lb = a.tally.latencies[kind], b.tally.latencies[kind]
                    ra, rb = len(la) / a.elapsed, len(lb) / b.elapsed
                    print(f"| {n} | {kind} | {ra:,.0f} | {pct(la, .5):.1f} | {pct(la, .99):.1f} | {a.tally.errors[kind]} | "
                          f"{rb:,.0f} | {pct(lb, .5):.1f} | {pct(lb, .99):.1f} | {b.tally.errors[kind]} | {rb / ra:.2f}× |")
                ta, tb = a.requests / a.elapsed, b.requests / b.elapsed
                print(f"| {n} | **all** | {ta:,.0f} | | | {sum(a.tally.errors.values())} | {tb:,.0f} | | | "
                      f"{sum(b.tally.errors.values())} | {tb / ta:.2f}× |")
                print(f"|  | verified | {a_check[0]:,} writes, {a_check[1]} wrong, {a_check[2]} counters wrong | | | | "
                      f"{b_check[0]:,} writes, {b_check[1]} wrong, {b_check[2]} counters wrong | | | | |")
                print(f"|  | CPU per request | {a.cpu_line(procs)} | | | | {b.cpu_line(procs)} | | | | |")
                for line in a.tally.first_errors + b.tally.first_errors:
                    print(f"#   error: {line}")
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f"\nresult: {'OK' if failures == 0 else f'FAILED ({failures} errors or lost writes)'}")
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
