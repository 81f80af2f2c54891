"""One large key-value request against everyone else: what other areas wait while it runs.

    python bench/stall_bench.py [--pings 100000 300000 1000000] [--set-mib 8] [--sets 100] [--before TREE]

One sandbox (key-value on a real redis-server, account and queue) in a child process, so this
process's clients do not share its GIL. Two probe threads send requests back to back the whole time:
a queue read (``GET /queue/v2/workflows/logs``) and a key-value ``GET``. Meanwhile this process sends,
one at a time:

a. a pipeline of ``--pings`` PINGs with the Read Only token (each size in turn), and a transaction
   of the first size (Standard token);
b. one ``--set-mib`` MiB SET while a monitor stream is open and read;
c. first of all, while a monitor stream is open and *not* read: ``--sets`` SETs of 1 MiB, then 40
   pipelines of 1,000 SETs of 1 KiB; the sandbox's resident memory before and after (psutil), and
   the last event the stream holds once it is read again.

For a and b the table gives each probe's worst and median latency while the big request ran (and
the big request's own time and status); for idle, the same probes with nothing else running.
``--before TREE`` runs the same bench with the sandbox of another checkout (``git archive`` of an
older commit) first, and prints both tables. Under two minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
import psutil
from _child import code_env, sandbox_process
from kv_bench import machine

MIB = 1024 * 1024


@dataclass
class Probe:
    """A thread that sends one kind of request back to back; (start, end) of each."""

    name: str
    send: Callable[[httpx.Client], object]
    interval: float  # seconds between two requests (the queue area allows 100 a second)
    times: list[tuple[float, float]] = field(default_factory=list)

    def run(self, stop: threading.Event) -> None:
        with httpx.Client(timeout=600) as http:
            while not stop.is_set():
                start = time.perf_counter()
                self.send(http)
                self.times.append((start, time.perf_counter()))
                stop.wait(self.interval)

    def during(self, begin: float, end: float) -> list[float]:
        """Latencies (ms) of the probes that overlapped [begin, end]."""
        return [(b - a) * 1000 for a, b in self.times if b >= begin and a <= end]


class Bench:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.kv = env["SVC_KV_URL"]
        self.std = {"Authorization": f"Bearer {env['SVC_KV_TOKEN']}"}
        self.ro = {"Authorization": f"Bearer {env['SVC_KV_READONLY_TOKEN']}"}
        queue = {"Authorization": f"Bearer {env['SVC_QUEUE_TOKEN']}"}
        logs = env["SVC_QUEUE_URL"] + "/v2/workflows/logs"
        self.probes = [Probe("queue GET", lambda h: h.get(logs, headers=queue).raise_for_status(), 0.02),
                       Probe("kv GET", lambda h: h.get(self.kv + "/GET/greeting", headers=self.std).raise_for_status(), 0.005)]
        self.pid = int(env["SANDBOX_PID"])

    def measure(self, what: str, work: Callable[[httpx.Client], str]) -> list[str]:
        """Table rows: each probe's max / p50 while ``work`` ran, and what work said of itself."""
        with httpx.Client(timeout=600) as http:
            begin = time.perf_counter()
            note = work(http)
            end = time.perf_counter()
        rows = []
        for probe in self.probes:
            lat = probe.during(begin, end)
            worst, middle = (f"{max(lat):,.1f}", f"{statistics.median(lat):,.1f}") if lat else ("-", "-")
            rows.append(f"| {what} | {probe.name} | {worst} | {middle} | {len(lat)} | "
                        f"{(end - begin) * 1000:,.0f} ms, {note} |")
        return rows

    def pipeline(self, n: int, path: str = "/pipeline", readonly: bool = True) -> Callable[[httpx.Client], str]:
        body = ("[" + ",".join(['["PING"]'] * n) + "]").encode()

        def send(http: httpx.Client) -> str:
            auth = self.ro if readonly else self.std
            r = http.post(self.kv + path, content=body, headers={**auth, "Content-Type": "application/json"})
            return f"HTTP {r.status_code}"
        return send

    def big_set(self, mib: int) -> Callable[[httpx.Client], str]:
        value = os.urandom(mib * MIB)  # binary: the monitor escapes most bytes as \xNN

        def send(http: httpx.Client) -> str:
            r = http.post(self.kv + "/SET/big", content=value, headers=self.std)
            return f"HTTP {r.status_code}"
        return send

    def monitor(self, read: bool) -> tuple[threading.Thread, list[str], httpx.Client, threading.Event]:
        """A monitor stream in a thread: ``read`` each event as it comes, or stall after the first."""
        lines: list[str] = []
        opened, go_on = threading.Event(), threading.Event()
        http = httpx.Client(timeout=600)

        def reader() -> None:
            try:
                with http.stream("POST", self.kv + "/monitor", headers={**self.std, "Accept": "text/event-stream"}) as r:
                    for line in r.iter_lines():
                        if line.startswith("data:"):
                            lines.append(line[:200])
                            opened.set()
                            if not read:
                                go_on.wait()
            except httpx.HTTPError as exc:
                lines.append(f"(stream ended: {type(exc).__name__})")
            opened.set()

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        opened.wait(30)
        return thread, lines, http, go_on

    def run(self, pings: list[int], set_mib: int, sets: int, seconds: float) -> list[str]:
        with httpx.Client(timeout=600) as http:
            http.post(self.kv + "/SET/greeting/hello", headers=self.std).raise_for_status()
        stalled = self.stalled_monitor(sets)  # first: the sandbox's memory as fresh as it gets
        stop = threading.Event()
        threads = [threading.Thread(target=p.run, args=(stop,), daemon=True) for p in self.probes]
        for t in threads:
            t.start()
        try:
            rows = self.measure("idle", lambda http: (time.sleep(seconds), "nothing else")[1])
            for n in pings:
                rows += self.measure(f"pipeline of {n:,} PINGs (Read Only)", self.pipeline(n))
            rows += self.measure(f"transaction of {pings[0]:,} PINGs",
                                 self.pipeline(pings[0], "/multi-exec", readonly=False))
            _, _, client, _ = self.monitor(read=True)
            rows += self.measure(f"one {set_mib} MiB SET, monitor open", self.big_set(set_mib))
            client.close()
            rows += self.measure(f"one {set_mib} MiB SET, no monitor", self.big_set(set_mib))
        finally:
            stop.set()
            for t in threads:
                t.join()
        return [*rows, "", *stalled]

    def stalled_monitor(self, sets: int) -> list[str]:
        """RSS of the sandbox while a monitor that stopped reading is open: ``sets`` SETs of 1 MiB,
        then 40 pipelines of 1,000 SETs of 1 KiB (many lines rather than long ones)."""
        proc = psutil.Process(self.pid)
        thread, lines, client, go_on = self.monitor(read=False)
        rows = ["| monitor that stops reading | value |", "|---|---|"]
        start_rss = proc.memory_info().rss
        rows.append(f"| sandbox RSS with the monitor open | {start_rss / MIB:,.0f} MiB |")
        with httpx.Client(timeout=600) as http:
            value = os.urandom(MIB)
            start = time.perf_counter()
            statuses = {http.post(self.kv + f"/SET/stall:{i}", content=value, headers=self.std).status_code
                        for i in range(sets)}
            took = time.perf_counter() - start
            rss = proc.memory_info().rss
            rows.append(f"| {sets} SETs of 1 MiB: status, time, RSS after | {sorted(statuses)}, {took * 1000:,.0f} ms, "
                        f"{rss / MIB:,.0f} MiB (+{(rss - start_rss) / MIB:,.0f}) |")
            small = [["SET", f"small:{i}", os.urandom(512).hex()] for i in range(1000)]
            start = time.perf_counter()
            statuses = {http.post(self.kv + "/pipeline", json=small, headers=self.std).status_code for _ in range(40)}
            took = time.perf_counter() - start
            rss = proc.memory_info().rss
            rows.append(f"| then 40 pipelines of 1,000 SETs of 1 KiB: status, time, RSS after | {sorted(statuses)}, "
                        f"{took * 1000:,.0f} ms, {rss / MIB:,.0f} MiB (+{(rss - start_rss) / MIB:,.0f}) |")
        go_on.set()
        thread.join(60)
        client.close()
        last = lines[-1] if lines else "(none)"
        rows.append(f"| events the reader got once it read again; the last | {len(lines):,}; `{last[:150]}` |")
        return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pings", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--set-mib", type=int, default=8)
    parser.add_argument("--sets", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=2.0, help="idle probing time")
    parser.add_argument("--before", default=None, help="a checkout of an older commit to measure first")
    parser.add_argument("--side", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.before and args.side is None:
        for side, tree in (("before", args.before), ("after", None)):
            with code_env(tree) as env:
                argv = [sys.executable, __file__, "--side", side, "--pings", *map(str, args.pings),
                        "--set-mib", str(args.set_mib), "--sets", str(args.sets), "--seconds", str(args.seconds)]
                subprocess.run(argv, env=env, check=True)
        return
    with sandbox_process(areas=["kv", "account", "queue"], backend="redis") as env:
        rows = Bench(env).run(args.pings, args.set_mib, args.sets, args.seconds)
    print(f"\n## {args.side or 'this tree'}: {machine()}; load average (1 min) {os.getloadavg()[0]:.2f}\n")
    print("| while | probe | max ms | p50 ms | probes | the big request |")
    print("|---|---|---:|---:|---:|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
