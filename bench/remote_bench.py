"""Far from the service: every main job of every area, through a proxy that adds a round trip time
(default 40 ms) on loopback, over http and over https, svckit beside the peer SDK.

    python bench/remote_bench.py [--rtt 0.04] [--repeat 2] [--schemes http https]
                                 [--areas kv vector workflow account] [--only "bulk"]

For each scheme a sandbox child starts (real redis-server backend; ``tls=True`` for https, its CA
trusted by svckit through SVC_CA_FILE and by the peers through SSL_CERT_FILE), the latency proxy
(``_latency.py``) goes in front of it, each area seeds its data straight to the sandbox, and every
job runs ``--repeat`` times per side (the best is kept: the first run also opens the connections).
Each row gives the job's floor (the fewest sequential round trips the contract allows), svckit's
round trips and the peer's (what the distance added: time through the proxy minus time straight to
the sandbox, over the RTT; both times are in the table), and whether it holds issue 22's bar: within
1.5x the floor in round trips and never slower than the peer. The jobs are in ``_remote_kv.py``, ``_remote_vector.py`` and
``_remote_queue.py`` (workflow and account).
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
from urllib.parse import urlsplit

from _child import sandbox_process
from _latency import latency_proxy
from _remote import Ctx, Row, run_jobs, table, through, trust

#: area -> (the module with its seed() and JOBS, the sandbox areas it needs)
AREAS = {"kv": ("_remote_kv", ["kv"]), "vector": ("_remote_vector", ["vector"]),
         "workflow": ("_remote_queue", ["queue", "account"]), "account": ("_remote_queue", ["account", "queue", "kv"])}


def run_scheme(scheme: str, areas: list[str], rtt: float, repeat: int, only: str | None) -> list[Row]:
    modules = {area: importlib.import_module(AREAS[area][0]) for area in areas}
    needed = sorted({name for area in areas for name in AREAS[area][1]})
    # the demo seed registers the workflows the queue jobs trigger; a small demo corpus keeps the
    # vector area's background embedding short
    with sandbox_process(areas=needed, backend="redis", tls=scheme == "https", seed="demo", demo_limit=40) as env:
        env = {k: v for k, v in env.items() if k.startswith("SVC_")}
        target = urlsplit(next(v for k, v in env.items() if k.endswith("_URL")))
        with latency_proxy(f"{target.hostname}:{target.port}", rtt) as port:
            ctx = Ctx(scheme, rtt, through(env, port), env)
            local = Ctx(scheme, rtt, env, env, ctx.data)
            trust(ctx.ca_file())
            rows: list[Row] = []
            seeded: set[str] = set()
            for area, module in modules.items():
                if module.__name__ not in seeded:
                    started = time.perf_counter()
                    module.seed(ctx)
                    seeded.add(module.__name__)
                    print(f"{scheme}: seeded {module.__name__} in {time.perf_counter() - started:.1f} s", flush=True)
                jobs = [job for job in module.JOBS if job.area == area]
                rows += run_jobs(ctx, local, jobs, repeat, only=only)
            return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rtt", type=float, default=0.04, help="round trip time the proxy adds, seconds")
    parser.add_argument("--repeat", type=int, default=2, help="runs per job and side (the best is kept)")
    parser.add_argument("--schemes", nargs="+", default=["http", "https"], choices=["http", "https"])
    parser.add_argument("--areas", nargs="+", default=list(AREAS), choices=list(AREAS))
    parser.add_argument("--only", default=None, help="run only the jobs whose 'area name' contains this")
    args = parser.parse_args()
    started = time.perf_counter()
    rows: list[Row] = []
    for scheme in args.schemes:
        rows += run_scheme(scheme, args.areas, args.rtt, args.repeat, args.only)
    print()
    print(f"RTT {args.rtt * 1000:.0f} ms (latency proxy on loopback), best of {args.repeat}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"{time.perf_counter() - started:.0f} s in all")
    print(table(rows))
    return 0 if all(r.holds for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
