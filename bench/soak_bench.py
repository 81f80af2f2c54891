"""Soak: the load mix for a bounded time with a fault injected every minute; for each kind of fault,
the time until requests succeed again, the errors clients saw, and the acknowledged writes lost.

    python bench/soak_bench.py [--minutes 10] [--every 60] [--clients 4] [--seed 7] [--no-peer]

The sandbox (kv on a redis-server child with ``appendonly yes``, ``appendfsync everysec``; vector with
the 200-document demo corpus) runs in a child process, as in load_bench. ``--clients`` svckit clients
(an ``AsyncKV`` and an ``AsyncVector`` each, default retry policy) run load_bench's mix (read 40 %,
write 30 %, pipeline of 5 SET + 5 GET 10 %, transaction INCR + SET 10 %, text query 10 %) in this
process, through a loopback TCP proxy with no delay (bench/_latency.py); a client pauses 10 ms after
an error, as an application would before its next request. Every ``--every`` seconds the next fault
of the cycle is injected, the last one a whole interval before the end:

    kill   SIGKILL of the redis-server child (the sandbox is to restart it on the same data directory)
    reset  every client connection reset (RST both ways) at the proxy
    slow   the redis-server child stopped for 2 s (SIGSTOP, then SIGCONT): the gateway's Redis users
           may not run DEBUG, so ``DEBUG SLEEP`` is not there to ask

Per fault: the recovery, from the fault to the end of the first request sent after it that succeeded
(a KV request: queries do not go through Redis), and until every kind of request had; the errors
clients saw from the fault to the next one, by kind and status; and, for a kill, the acknowledged
writes (SETs, alone, in pipelines and in transactions) lost. After each kill, once every kind has
recovered, the writes acknowledged since the last check are read back straight from Redis, and at
the end all of them: a lost write counts against the first kill after it was sent; within the
everysec bound when it was acknowledged less than 1 s before that kill, beyond it otherwise (a
violation, as is a lost write with no kill after it). Each client's INCR counter (one INCR a
transaction) must not exceed the INCRs it sent (none applied twice). Exits 1 on a loss beyond the bound, a fault after which some kind of request
never succeeded again, a counter above its INCRs sent, or an error with no fault before it.

Peer, in the same run (``--peer``, on by default): the same mix through the same proxy for one
interval (``--every`` seconds) without faults first, on the same sandbox: the soak's requests/s and
latencies are given against it as a ratio, what the faults cost the clients over the whole soak.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import NamedTuple
from urllib.parse import urlsplit

import redis.asyncio
from _latency import proxy_process
from _remote import through
from kill_bench import children
from load_bench import KINDS, QUERIES, WEIGHTS, SvckitOps, machine, pct, seeded_sandbox

from svckit.sandbox.kv.backends import APPENDFSYNC, redis_server_version

FAULTS = ("kill", "reset", "slow")
KV_KINDS = KINDS[:4]
SLOW_SECONDS = 2.0
#: appendfsync everysec: what a SIGKILL of redis-server may lose, at most about the last second
EVERYSEC = 1.0
ERROR_PAUSE = 0.01


class Write(NamedTuple):
    """An acknowledged write (a write, pipeline or transaction request): when it was sent, when
    acknowledged, the keys it set (each to :func:`value_of` the key)."""

    kind: str
    start: float
    ack: float
    keys: tuple[str, ...]


def value_of(key: str) -> str:
    return f"v:{key}"


@dataclass
class Fault:
    kind: str
    at: float  # time.monotonic() of the injection
    detail: str = ""
    first_ok: dict[str, float] = field(default_factory=dict)  # kind -> end of its first success sent after
    errors: Counter[str] = field(default_factory=Counter)  # "write: HTTP 503" -> count, until the next fault
    lost_within: int = 0
    lost_beyond: int = 0

    def first_kv(self) -> float | None:
        """Seconds to the first KV request sent after the fault that succeeded (None: none did)."""
        ends = [self.first_ok[k] for k in KV_KINDS if k in self.first_ok]
        return min(ends) - self.at if ends else None

    def every_kind(self) -> float | None:
        """Seconds until each kind of request had succeeded once (None: one never did)."""
        if any(k not in self.first_ok for k in KINDS):
            return None
        return max(self.first_ok.values()) - self.at


@dataclass
class Run:
    """What the clients saw in one phase: the fault-free peer or the soak."""

    label: str
    seconds: float
    faults: list[Fault] = field(default_factory=list)
    latencies: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})
    errors: Counter[str] = field(default_factory=Counter)  # before any fault
    samples: dict[str, str] = field(default_factory=dict)  # error label -> its first message
    acked: list[Write] = field(default_factory=list)
    counters: dict[str, list[int]] = field(default_factory=dict)  # counter key -> [INCRs sent, acknowledged]
    started: float = 0.0

    def fault_at(self, t: float) -> Fault | None:
        return next((f for f in reversed(self.faults) if f.at <= t), None)

    def succeeded(self, kind: str, start: float, end: float, keys: tuple[str, ...]) -> None:
        self.latencies[kind].append(end - start)
        if keys:
            self.acked.append(Write(kind, start, end, keys))
        fault = self.fault_at(start)
        if fault is not None and kind not in fault.first_ok:
            fault.first_ok[kind] = end

    def failed(self, kind: str, exc: Exception, end: float) -> None:
        status = getattr(exc, "status", None) or 0  # a pipeline's failed command came in a 200 reply
        label = f"{kind}: {f'HTTP {status}' if status >= 400 else type(exc).__name__}"
        fault = self.fault_at(end)
        (fault.errors if fault is not None else self.errors)[label] += 1
        self.samples.setdefault(label, f"{type(exc).__name__}: {exc}"[:300])

    @property
    def requests(self) -> int:
        return sum(map(len, self.latencies.values()))


async def worker(ops: SvckitOps, run: Run, name: str, rng: random.Random, until: float) -> None:
    prefix = f"{run.label}:{name}"
    counter = f"{prefix}:counter"
    run.counters[counter] = sent_acked = [0, 0]
    mine = ["greeting"]
    seq = 0
    while (start := time.monotonic()) < until:
        seq += 1
        kind = rng.choices(KINDS, WEIGHTS)[0]
        keys: tuple[str, ...] = ()
        try:
            if kind == "read":
                await ops.get(rng.choice(mine))
            elif kind == "write":
                keys = (f"{prefix}:w{seq}",)
                await ops.set(keys[0], value_of(keys[0]))
                mine.append(keys[0])
            elif kind == "pipeline":
                keys = tuple(f"{prefix}:p{seq}:{i}" for i in range(5))
                await ops.pipeline([(key, value_of(key)) for key in keys])
            elif kind == "transaction":
                keys = (f"{prefix}:t{seq}",)
                sent_acked[0] += 1
                await ops.transaction(counter, keys[0], value_of(keys[0]))
                sent_acked[1] += 1
            else:
                await ops.query(rng.choice(QUERIES))
        except Exception as exc:  # noqa: BLE001 - what the clients saw is the measurement
            run.failed(kind, exc, time.monotonic())
            await asyncio.sleep(ERROR_PAUSE)
            continue
        run.succeeded(kind, start, time.monotonic(), keys)


async def read_back(r: redis.asyncio.Redis, writes: list[Write]) -> list[Write]:
    """The acknowledged writes whose keys Redis does not hold with their values, read straight from it."""
    lost: list[Write] = []
    for i in range(0, len(writes), 200):
        chunk = writes[i : i + 200]
        keys = [key for w in chunk for key in w.keys]
        held = dict(zip(keys, await r.mget(keys)))
        lost += [w for w in chunk if any(held[key] != value_of(key) for key in w.keys)]
    return lost


def redis_child(sandbox_pid: int) -> int | None:
    return next((pid for pid, name in children(sandbox_pid) if name == "redis-server"), None)


async def answering(r: redis.asyncio.Redis, since: float, deadline: float, sandbox_pid: int) -> str:
    """When Redis answered a PING again (straight, not through the gateway), and as which child."""
    while time.monotonic() < deadline:
        try:
            await r.ping()
        except (redis.RedisError, OSError):
            await asyncio.sleep(0.01)
            continue
        return f"answering again after {time.monotonic() - since:.2f} s as pid {redis_child(sandbox_pid)}"
    return "not answering again"


def seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.2f} s"


async def inject_faults(run: Run, every: float, sandbox_pid: int, proxy: subprocess.Popen[str],
                        r: redis.asyncio.Redis) -> None:
    """Inject the next fault every ``every`` seconds (the last a whole interval before the end) and
    print a line on each once every kind of request has recovered, or the next is due."""
    checked = 0  # run.acked[:checked] was read back after a kill
    for n in range(int(run.seconds // every) - 1):
        due = run.started + (n + 1) * every
        await asyncio.sleep(due - time.monotonic())
        kind, pid = FAULTS[n % len(FAULTS)], redis_child(sandbox_pid)
        fault = Fault(kind, time.monotonic())
        run.faults.append(fault)
        if kind == "reset":
            os.kill(proxy.pid, signal.SIGUSR1)
            assert proxy.stdout is not None
            fault.detail = f"{(await asyncio.to_thread(proxy.stdout.readline)).split()[1]} connections reset"
        elif pid is None:
            fault.detail = "no redis-server child to signal"
        elif kind == "kill":
            os.kill(pid, signal.SIGKILL)
            fault.detail = f"redis-server pid {pid} killed; " + await answering(r, fault.at, due + every - 1, sandbox_pid)
        else:
            os.kill(pid, signal.SIGSTOP)
            await asyncio.sleep(SLOW_SECONDS)
            os.kill(pid, signal.SIGCONT)
            fault.detail = f"redis-server pid {pid} stopped for {SLOW_SECONDS:g} s"
        while fault.every_kind() is None and time.monotonic() < due + every - 1:
            await asyncio.sleep(0.05)
        line = (f"# {fault.at - run.started:5.0f} s {kind}: {fault.detail}; first KV success after "
                f"{seconds(fault.first_kv())}, every kind after {seconds(fault.every_kind())}; "
                f"{sum(fault.errors.values())} errors so far")
        if kind == "kill" and fault.every_kind() is not None:
            writes, checked, began = run.acked[checked:], len(run.acked), time.monotonic()
            try:
                line += (f"; {len(await read_back(r, writes)):,} of {len(writes):,} writes acknowledged since the last "
                         f"check lost (read back in {time.monotonic() - began:.1f} s)")
            except redis.RedisError as exc:
                line += f"; no read-back: {exc}"
        print(line, flush=True)


async def phase(env: dict[str, str], label: str, length: float, clients: int, seed: int,
                inject: Callable[[Run], Awaitable[None]] | None = None) -> Run:
    """``clients`` workers for ``length`` seconds; ``inject(run)`` beside them, if given."""
    run = Run(label, length)
    opses = [SvckitOps(env) for _ in range(clients)]
    run.started = time.monotonic()
    until = run.started + length
    tasks = [worker(ops, run, f"c{i}", random.Random(seed * 1000 + i), until) for i, ops in enumerate(opses)]
    await asyncio.gather(*tasks, *([inject(run)] if inject else []))
    for ops in opses:
        await ops.close()
    return run


def errors_text(errors: Counter[str]) -> str:
    if not errors:
        return "0"
    return f"{sum(errors.values()):,}: " + ", ".join(f"{label} ×{n:,}" for label, n in errors.most_common())


def p50_max(values: list[float | None]) -> str:
    done = [v for v in values if v is not None]
    text = f"{statistics.median(done):.2f} / {max(done):.2f}" if done else "–"
    return text + (f" (never: {len(values) - len(done)})" if len(done) < len(values) else "")


async def soak(env: dict[str, str], args: argparse.Namespace) -> int:
    sandbox_pid = int(env["SANDBOX_PID"])
    kv_url = urlsplit(env["SVC_KV_URL"])
    r = redis.asyncio.Redis.from_url(env["REDIS_URL"], decode_responses=True)
    binary = shutil.which("redis-server") or "redis-server"
    loop = type(asyncio.get_running_loop()).__module__.split(".")[0]
    print(f"# soak bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}")
    print(f"# redis-server {redis_server_version(binary)} child, appendonly yes, appendfsync {APPENDFSYNC}; "
          f"{args.clients} clients (AsyncKV + AsyncVector) on {loop} through a loopback proxy; mix "
          f"{dict(zip(KINDS, WEIGHTS))}; a fault every {args.every:g} s of {args.minutes:g} min, cycling "
          f"{', '.join(FAULTS)}", flush=True)
    with proxy_process(f"{kv_url.hostname}:{kv_url.port}", 0.0) as (port, proxy):
        via = through(env, port)
        peer = None
        if args.peer:
            peer = await phase(via, "soak:peer", args.every, args.clients, args.seed)
            print(f"# fault-free peer: {peer.requests:,} requests in {args.every:g} s", flush=True)

        run = await phase(via, "soak:run", args.minutes * 60, args.clients, args.seed,
                          lambda run: inject_faults(run, args.every, sandbox_pid, proxy, r))
    runs = [run] if peer is None else [peer, run]
    kills = [f for f in run.faults if f.kind == "kill"]
    orphans = 0
    try:
        lost = await read_back(r, [w for x in runs for w in x.acked])
        held = [int(v or 0) for v in await r.mget([c for x in runs for c in x.counters])]
    except redis.RedisError as exc:
        print(f"\nno read-back from Redis: {exc}\nresult: FAILED")
        return 1
    finally:
        await r.aclose()
    for w in lost:
        kill = next((f for f in kills if f.at > w.start), None)
        if kill is None:
            orphans += 1
        elif w.ack >= kill.at - EVERYSEC:
            kill.lost_within += 1
        else:
            kill.lost_beyond += 1
    sent_acked = [c for x in runs for c in x.counters.values()]
    over = sum(value > sent for value, (sent, _) in zip(held, sent_acked))
    under = sum(value < acked for value, (_, acked) in zip(held, sent_acked))

    print("\n| fault | occurrences | first KV success after, s: p50 / max | every kind again, s: p50 / max "
          "| errors clients saw | acked writes lost: within 1 s of the kill / beyond |")
    print("|---|---|---|---|---|---|")
    for kind in FAULTS:
        these = [f for f in run.faults if f.kind == kind]
        if not these:
            continue
        lost_cell = (f"{sum(f.lost_within for f in these):,} / {sum(f.lost_beyond for f in these):,}"
                     if kind == "kill" else "–")
        print(f"| {kind} | {len(these)} | {p50_max([f.first_kv() for f in these])} | "
              f"{p50_max([f.every_kind() for f in these])} | {errors_text(sum((f.errors for f in these), Counter()))} "
              f"| {lost_cell} |")

    print("\n| kind | fault-free req/s | p50 / p99 ms | soak req/s | p50 / p99 ms | soak / fault-free "
          "| soak requests ok |")
    print("|---|---|---|---|---|---|---|")
    for kind in (*KINDS, "all"):
        lat = [v for k in KINDS for v in run.latencies[k]] if kind == "all" else run.latencies[kind]
        rate = len(lat) / run.seconds
        cells = ["–", "–", "–"]
        if peer is not None:
            plat = [v for k in KINDS for v in peer.latencies[k]] if kind == "all" else peer.latencies[kind]
            prate = len(plat) / peer.seconds
            cells = [f"{prate:,.0f}", f"{pct(plat, .5):.1f} / {pct(plat, .99):.1f}", f"{rate / prate:.2f}×"]
        print(f"| {kind} | {cells[0]} | {cells[1]} | {rate:,.0f} | {pct(lat, .5):.1f} / {pct(lat, .99):.1f} | "
              f"{cells[2]} | {len(lat):,} |")

    unfaulted = sum((x.errors for x in runs), Counter())
    acked = sum(len(x.acked) for x in runs)
    by_kind = ", ".join(f"{kind} {n:,}" for kind, n in Counter(w.kind for w in lost).items()) or "none"
    print(f"\nverified straight from Redis: {acked:,} acknowledged writes "
          f"({sum(len(w.keys) for x in runs for w in x.acked):,} keys), {len(lost):,} lost: "
          f"{sum(f.lost_within for f in kills):,} within the everysec bound, {sum(f.lost_beyond for f in kills):,} "
          f"beyond it, {orphans:,} with no kill after them (by request kind: {by_kind}); INCR counters: "
          f"{len(held)}, {over} above the INCRs sent, {under} below the acknowledged; errors with no fault "
          f"before them: {errors_text(unfaulted)}")
    for label, sample in sorted({k: v for x in runs for k, v in x.samples.items()}.items()):
        print(f"#   {label}: {sample}")
    failures = {"faults after which some kind never succeeded again": sum(f.every_kind() is None for f in run.faults),
                "writes lost beyond the everysec bound": sum(f.lost_beyond for f in kills) + orphans,
                "INCR counters above the INCRs sent": over, "errors with no fault before them": sum(unfaulted.values())}
    failed = ", ".join(f"{n:,} {what}" for what, n in failures.items() if n)
    print(f"\n# load average at the end {os.getloadavg()[0]:.1f}\nresult: {f'FAILED: {failed}' if failed else 'OK'}")
    return 1 if failed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the soak (default 10)")
    parser.add_argument("--every", type=float, default=60.0, help="seconds between faults (default 60)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent svckit clients (default 4)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--peer", action=argparse.BooleanOptionalAction, default=True,
                        help="first run the mix for one interval without faults, the soak's peer (default on)")
    args = parser.parse_args()
    try:
        import uvloop
    except ImportError:
        factory = None
    else:
        factory = uvloop.new_event_loop
    with seeded_sandbox() as env, asyncio.Runner(loop_factory=factory) as runner:
        status = runner.run(soak(env, args))
    sys.exit(status)


if __name__ == "__main__":
    main()
