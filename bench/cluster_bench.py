"""One node against three masters: the key-value mix of the load bench through the gateway in front of
one redis-server, and in front of a Redis Cluster of three masters on the same machine, side by side.

    python bench/cluster_bench.py [--seconds 20] [--clients 16 64] [--seed 7] [--procs 4]

Three sides run the same mix (bench/load_bench.py's read 40 %, write 30 %, pipeline of 10 commands
10 %, transaction 10 %, the text query left out), with the same clients in the same generator
processes, one after the other, each against a sandbox of its own in a child process (kv area, demo
data): on the sandbox's own redis-server child (its Unix socket, the default); on one redis-server on
loopback TCP, configured as the cluster's nodes but for cluster mode, which is the peer; and on a Redis
Cluster the bench starts (tests/cluster.py: three masters, no replicas, on loopback ports). Every
acknowledged write is read back afterwards (on the cluster, from every master) and every transaction
counter checked. The table gives each side's requests/s and latency per kind and its ratio to one node
on TCP; the CPU lines say which process ran out (the gateway, on the same two cores, before any Redis).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.cluster: the tests' local cluster

from _child import sandbox_process
from load_bench import DEFAULT_PROCS, KINDS, WEIGHTS, drive, machine, pct, verify

from tests.cluster import LocalCluster, free_ports
from tests.conftest import redis_server

KV_KINDS = KINDS[:4]


SIDES = {"socket": "one node, Unix socket", "tcp": "one node, TCP", "three": "three masters, TCP"}


def cell(run, kind: str) -> str:
    """``req/s (p50/p99 ms)`` of one kind in one run."""
    lat = run.tally.latencies[kind]
    return f"{len(lat) / run.elapsed:,.0f} ({pct(lat, .5):.1f}/{pct(lat, .99):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="duration of each run (default 20)")
    parser.add_argument("--clients", type=int, nargs="+", default=[16, 64], help="concurrent clients (default 16 64)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--procs", type=int, default=DEFAULT_PROCS, help="load generator processes")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="svckit-cluster-bench-"))
    cluster = LocalCluster(root / "cluster").start()
    port = free_ports(1)[0]
    (root / "tcp-node").mkdir()
    single = redis_server(port, root / "tcp-node")  # as the cluster's nodes are, but for cluster mode
    failures = 0
    try:
        tcp_url = f"redis://127.0.0.1:{port}"
        pids = ",".join(str(proc.pid) for proc in cluster.procs.values())
        with sandbox_process(data_dir=str(root / "socket"), areas=["kv"], backend="redis", seed="demo") as on_socket, \
                sandbox_process(data_dir=str(root / "tcp"), areas=["kv"], redis_url=tcp_url, seed="demo") as on_tcp, \
                sandbox_process(data_dir=str(root / "three"), areas=["kv"], redis_url=cluster.url, seed="demo") as three:
            on_tcp["REDIS_PIDS"], three["REDIS_PIDS"] = str(single.pid), pids
            envs = {"socket": on_socket, "tcp": on_tcp, "three": three}
            print(f"# cluster bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}")
            print(f"# the gateway in front of: one redis-server child on its Unix socket (the sandbox's default); "
                  f"one redis-server on loopback TCP; a Redis Cluster of three redis-server masters on loopback TCP. "
                  f"{args.seconds:.0f} s per run; mix {dict(zip(KV_KINDS, WEIGHTS))}; {args.procs} generator "
                  f"processes of svckit AsyncKV clients. Cells: req/s (p50/p99 ms); ratio: all req/s to one node on TCP\n")
            print(f"| clients | Redis | all req/s | {' | '.join(KV_KINDS)} | errors | writes verified | ratio |")
            print("|---" * (6 + len(KV_KINDS)) + "|")
            cpu = []
            for n in args.clients:
                procs = min(n, args.procs)
                runs = {}
                for side, env in envs.items():
                    run = drive("svckit", env, n, args.seconds, args.seed, f"{side}{n}c", kinds=KV_KINDS, procs=procs)
                    checked, bad, counters_bad = verify(env["REDIS_URL"], run.tally, cluster=side == "three")
                    errors = sum(run.tally.errors.values())
                    failures += errors + bad + counters_bad
                    runs[side] = run
                    peer = runs.get("tcp", run)
                    ratio = (run.requests / run.elapsed) / (peer.requests / peer.elapsed)
                    print(f"| {n} | {SIDES[side]} | {run.requests / run.elapsed:,.0f} | "
                          f"{' | '.join(cell(run, kind) for kind in KV_KINDS)} | {errors} | "
                          f"{checked:,} ({bad} wrong, {counters_bad} counters wrong) | "
                          f"{'' if side == 'socket' else f'{ratio:.2f}×'} |")
                    cpu.append(f"#   {n} clients, {SIDES[side]}: {run.cpu_line(procs)}")
                    for line in run.tally.first_errors:
                        print(f"#   error: {line}")
            print("\n# CPU per request")
            print("\n".join(cpu))
    finally:
        cluster.stop()
        single.terminate()
        single.wait(10)
        shutil.rmtree(root, ignore_errors=True)
    print(f"\nresult: {'OK' if failures == 0 else f'FAILED ({failures} errors or lost writes)'}")
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
