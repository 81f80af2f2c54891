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
backing Redis (its Unix socket), with N clients: the ratio shows what the HTTP gateway costs.

The load generator is several processes (``--procs``, default one per client up to 4), each with
its own event loop (uvloop where it imports, ``--gen-loop``), the N clients dealt out among them and
their tallies merged: one Python process cannot keep 64 httpx clients busy against this gateway.
The peer runs through the same generator. Each client-count row also gives the CPU time per request
of the generator, the sandbox process (and how busy its event-loop thread was) and redis-server,
from /proc, so it says which one ran out. ``--client raw`` makes each client a hand-written HTTP/1.1
connection sending the same requests as svckit's clients (a cheap instrument: it shows the gateway's
own limit when the httpx clients would need more CPU than the sandbox).

    python bench/load_bench.py [--seconds 20] [--clients 16 64] [--seed 7] [--procs 4] [--client raw]
    python bench/load_bench.py --before /tmp/kv-before [--repeat 1] [--seconds 10]

``--before TREE`` runs the whole bench alternately on another checkout and on this one, each in its
own process with its own sandbox, and prints both sides per kind with after/before
(``--before-without httptools,uvloop`` runs the older sandbox without them, as a tree from before
issue 14 ran; the generator processes run on the same loop on both sides).

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
from urllib.parse import quote, urlsplit

import httpx
import redis
import redis.asyncio
from _child import code_env, sandbox_process
from _peers import other_pools

KINDS = ("read", "write", "pipeline", "transaction", "query")
WEIGHTS = (40, 30, 10, 10, 10)
#: what the N clients can be (``--client``)
CLIENTS = {"svckit": "svckit AsyncKV + AsyncVector per client (httpx over svckit's aiohttp pool)",
           "raw": "hand-written HTTP/1.1 per client, the requests svckit sends (one keep-alive connection)",
           **{f"svckit:{name}": f"svckit AsyncKV + AsyncVector per client over {name} (transport=)"
              for name, (_, make) in other_pools().items() if make}}
#: generator processes by default (``--procs``): enough that the generator is not what runs out
DEFAULT_PROCS = 4
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

    def __init__(self, env: dict[str, str], pool: str | None = None) -> None:
        from svckit.kv import AsyncKV
        from svckit.vector import AsyncVector

        make = other_pools()[pool][1] if pool else None  # another pool under the same clients
        self.kv = AsyncKV(env["SVC_KV_URL"], env["SVC_KV_TOKEN"], timeout=30, transport=make and make())
        self.vector = AsyncVector(env["SVC_VECTOR_URL"], env["SVC_VECTOR_TOKEN"], timeout=60,
                                  transport=make and make()) if "SVC_VECTOR_URL" in env else None  # kv only

    async def get(self, key: str) -> Any:
        return await self.kv.get(key)

    async def set(self, key: str, value: str) -> None:
        assert await self.kv.set(key, value) in (True, "OK")

    async def pipeline(self, pairs: list[tuple[str, str]]) -> None:
        pipe = self.kv.pipeline()
        for key, value in pairs:
            pipe.set(key, value)
            pipe.get(key)
        replies = self.unfailed(await pipe.exec())
        assert len(replies) == 2 * len(pairs)

    async def transaction(self, counter: str, key: str, value: str) -> int:
        tx = self.kv.multi_exec()
        tx.incr(counter)
        tx.set(key, value)
        replies = self.unfailed(await tx.exec())
        return int(replies[0])

    @staticmethod
    def unfailed(replies: list[Any]) -> list[Any]:
        """A batch's replies, or its first failed command's error raised: svckit leaves the error in
        the command's slot, where RawHttpOps and redis-py raise it, and the batch counts as an error."""
        from svckit.errors import SvcError

        if failed := next((r for r in replies if isinstance(r, SvcError)), None):
            raise failed
        return replies

    async def query(self, text: str) -> None:
        assert self.vector is not None and len(await self.vector.query_data(text, top_k=5)) <= 5

    async def close(self) -> None:
        await self.kv.aclose()
        if self.vector is not None:
            await self.vector.aclose()


class RawHttpOps:
    """The same requests svckit's clients send (path-form SET/GET, JSON /pipeline and /multi-exec,
    /query-data), written by hand on one keep-alive connection per client: an instrument that costs
    little per request, so the gateway rather than the generator runs out (``--client raw``). Any
    status but 200, or an ``error`` in a reply, counts as an error."""

    def __init__(self, env: dict[str, str]) -> None:
        kv, vec = urlsplit(env["SVC_KV_URL"]), urlsplit(env["SVC_VECTOR_URL"])
        self.host, self.port = kv.hostname or "127.0.0.1", kv.port or 80
        assert (vec.hostname, vec.port) == (kv.hostname, kv.port), "kv and vector on one sandbox"
        self.kv_path, self.vector_path = kv.path.rstrip("/"), vec.path.rstrip("/")
        self.kv_head = f"Host: {kv.netloc}\r\nAuthorization: Bearer {env['SVC_KV_TOKEN']}\r\n"
        self.vector_head = f"Host: {vec.netloc}\r\nAuthorization: Bearer {env['SVC_VECTOR_TOKEN']}\r\n"
        self.stream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def _post(self, path: str, head: str, body: bytes = b"") -> Any:
        if self.stream is None:
            self.stream = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.stream
        typ = "Content-Type: application/json\r\n" if body else ""
        writer.write(f"POST {path} HTTP/1.1\r\n{head}{typ}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        try:
            head_bytes = await reader.readuntil(b"\r\n\r\n")
            lines = head_bytes.decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ", 2)[1])
            length = next(int(v) for k, _, v in (line.partition(":") for line in lines[1:])
                          if k.lower() == "content-length")
            reply = json.loads(await reader.readexactly(length))
        except BaseException:
            writer.close()  # out of step with the server: the next request opens a new connection
            self.stream = None
            raise
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {reply}")
        return reply

    async def _kv(self, *argv: str) -> Any:
        reply = await self._post("/".join((self.kv_path, *(quote(a, safe=":") for a in argv))), self.kv_head)
        return reply["result"]

    async def _batch(self, what: str, rows: list[list[str]]) -> list[Any]:
        replies = await self._post(f"{self.kv_path}/{what}", self.kv_head, json.dumps(rows).encode())
        errors = [r["error"] for r in replies if "error" in r]
        if errors:
            raise RuntimeError(errors[0])
        return [r["result"] for r in replies]

    async def get(self, key: str) -> Any:
        return await self._kv("GET", key)

    async def set(self, key: str, value: str) -> None:
        assert await self._kv("SET", key, value) == "OK"

    async def pipeline(self, pairs: list[tuple[str, str]]) -> None:
        rows = [row for key, value in pairs for row in (["SET", key, value], ["GET", key])]
        assert len(await self._batch("pipeline", rows)) == 2 * len(pairs)

    async def transaction(self, counter: str, key: str, value: str) -> int:
        replies = await self._batch("multi-exec", [["INCR", counter], ["SET", key, value]])
        return int(replies[0])

    async def query(self, text: str) -> None:
        body = json.dumps({"data": text, "topK": 5, "includeMetadata": False, "includeVectors": False,
                           "includeData": False}).encode()
        assert len((await self._post(f"{self.vector_path}/query-data", self.vector_head, body))["result"]) <= 5

    async def close(self) -> None:
        if self.stream is not None:
            self.stream[1].close()


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
    # the worker's keys share a hash tag: its transactions (counter + key) stay in one slot of a cluster
    counter = f"load:{{{name}}}:counter"
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
                key, value = f"load:{{{name}}}:t{seq}", f"tx-{name}-{seq}"
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


# -- the load generator: several processes, each with its own event loop ---------------------------------
# One Python process cannot drive 64 httpx clients against this gateway: its one thread runs out
# before the sandbox does (py-spy: 98 % busy against the sandbox loop's ~47 %), so the bench would
# measure itself. The N clients are dealt out to ``procs`` generator processes (client i to process
# i mod procs, with the seed and name it would have in one process, so the mix does not depend on
# procs); they start together at one wall-clock instant and their tallies are merged. The generator
# runs on uvloop where it imports, on both sides of --before alike: it is the measuring instrument.
async def generate(spec: dict[str, Any]) -> dict[str, Any]:
    """One generator process's share of a run (see :func:`drive`); a JSON-able tally."""
    env, kinds = spec["env"], tuple(spec["kinds"])
    weights = tuple(w for k, w in zip(KINDS, WEIGHTS) if k in kinds)
    mode = spec["mode"]
    if mode == "redis-py":
        make: Any = lambda: RedisPyOps(env["REDIS_URL"])
    elif mode == "raw":
        make = lambda: RawHttpOps(env)
    else:
        make = lambda: SvckitOps(env, mode.partition(":")[2] or None)
    opses = [(i, make()) for i in spec["clients"]]
    tally = Tally()
    print("READY", flush=True)
    go = float(sys.stdin.readline().split()[1])  # GO <wall-clock start>
    await asyncio.sleep(max(0.0, go - time.time()))
    cpu, start = time.process_time(), time.time()
    deadline = time.perf_counter() + spec["seconds"]
    await asyncio.gather(*(worker(ops, f"{spec['label']}{i}", spec["seed"] * 1000 + i, deadline, tally, kinds, weights)
                           for i, ops in opses))
    end, cpu = time.time(), time.process_time() - cpu
    for _, ops in opses:
        await ops.close()
    return {"latencies": tally.latencies, "errors": tally.errors, "first_errors": tally.first_errors,
            "written": tally.written, "counters": tally.counters, "start": start, "end": end, "cpu": cpu,
            "loop": type(asyncio.get_running_loop()).__module__.split(".")[0]}


def generator_main() -> None:
    """``load_bench.py --generator``: the spec on stdin's first line, then ``GO <time>``; the tally to
    the spec's ``out`` file."""
    spec = json.loads(sys.stdin.readline())
    factory = None
    if spec["loop"] in ("auto", "uvloop"):
        try:
            import uvloop
        except ImportError:
            if spec["loop"] == "uvloop":
                raise
        else:
            factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        result = runner.run(generate(spec))
    with open(spec["out"], "w") as fh:  # a file, not stdout: a large write to a pipe may come out cut short
        json.dump(result, fh)


def generator_env(loop: str) -> dict[str, str]:
    """This process's environment (so the same svckit tree) for the generator processes, with uvloop
    importable unless ``loop`` is asyncio: a --before side blocks it for its sandbox, not its clients."""
    env = dict(os.environ)
    blocked = [m for m in env.get("SVCKIT_BENCH_WITHOUT", "").split(",") if m and (m != "uvloop" or loop == "asyncio")]
    env["SVCKIT_BENCH_WITHOUT"] = ",".join(blocked)
    return env


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu(stat_path: str) -> float:
    """utime + stime of a process or thread, in seconds, from its /proc stat file (0 when gone)."""
    try:
        fields = Path(stat_path).read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class CpuProbe:
    """CPU seconds used by the sandbox process (and its busiest thread, the event loop) and by its
    redis-server child between start() and stop(), from /proc."""

    def __init__(self, sandbox_pid: int, redis_pids: list[int] | None = None) -> None:
        self.pid = sandbox_pid
        self.redis = redis_pids or [pid for pid in self._children(sandbox_pid) if self._comm(pid).startswith("redis")]

    @staticmethod
    def _children(pid: int) -> list[int]:
        out: list[int] = []
        for task in Path(f"/proc/{pid}/task").glob("*/children"):
            out += [int(c) for c in task.read_text().split()]
        return out

    @staticmethod
    def _comm(pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            return ""

    def _sample(self) -> tuple[float, dict[str, float], float]:
        threads = {t.name: _cpu(f"{t}/stat") for t in Path(f"/proc/{self.pid}/task").iterdir()}
        return _cpu(f"/proc/{self.pid}/stat"), threads, sum(_cpu(f"/proc/{p}/stat") for p in self.redis)

    def start(self) -> None:
        self._start = self._sample()

    def stop(self) -> dict[str, float]:
        (s0, t0, r0), (s1, t1, r1) = self._start, self._sample()
        return {"sandbox": s1 - s0, "sandbox_loop": max((c - t0.get(t, 0.0) for t, c in t1.items()), default=0.0),
                "redis": r1 - r0}


@dataclass
class Run:
    tally: Tally
    elapsed: float
    cpu: dict[str, float]  # generator, sandbox, sandbox_loop, redis: CPU seconds during the run
    loop: str

    @property
    def requests(self) -> int:
        return sum(map(len, self.tally.latencies.values()))

    def per_request(self, what: str) -> float:
        return self.cpu[what] / max(1, self.requests) * 1e6

    def cpu_line(self, procs: int) -> str:
        return (f"generator {self.per_request('generator'):,.0f} µs ({self.cpu['generator'] / self.elapsed:.2f} cores, "
                f"{procs} processes on {self.loop}), sandbox {self.per_request('sandbox'):,.0f} µs (event loop "
                f"{self.cpu['sandbox_loop'] / self.elapsed:.0%} busy), redis {self.per_request('redis'):,.0f} µs")


def drive(mode: str, env: dict[str, str], clients: int, seconds: float, seed: int, label: str,
          kinds: tuple[str, ...] = KINDS, procs: int = 1, loop: str = "auto") -> Run:
    """``clients`` workers of ``mode`` (svckit or redis-py) in ``procs`` generator processes."""
    procs = max(1, min(procs, clients))
    gen_env = generator_env(loop)
    tmp = tempfile.mkdtemp(prefix="svckit-load-gen-")
    children = []
    for k in range(procs):
        child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--generator"], env=gen_env,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        spec = {"mode": mode, "env": env, "clients": list(range(k, clients, procs)), "seconds": seconds,
                "seed": seed, "label": label, "kinds": list(kinds), "loop": loop,
                "out": os.path.join(tmp, f"{k}.json")}
        assert child.stdin is not None
        child.stdin.write(json.dumps(spec) + "\n")  # the tokens go on a pipe, never on a command line
        child.stdin.flush()
        children.append(child)
    try:
        for child in children:
            assert child.stdout is not None
            if child.stdout.readline().strip() != "READY":
                raise RuntimeError("a load generator process failed to start")
        probe = CpuProbe(int(env["SANDBOX_PID"]), [int(p) for p in env.get("REDIS_PIDS", "").split(",") if p])
        probe.start()
        go = time.time() + 0.2
        for child in children:
            assert child.stdin is not None
            child.stdin.write(f"GO {go}\n")
            child.stdin.close()
        for child in children:
            if child.wait(timeout=seconds + 300) != 0:
                raise RuntimeError(f"a load generator process exited with {child.returncode}")
        cpu = probe.stop()
        parts = []
        for k in range(procs):
            with open(os.path.join(tmp, f"{k}.json")) as fh:
                parts.append(json.load(fh))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
            assert child.stdout is not None
            child.stdout.close()
        shutil.rmtree(tmp, ignore_errors=True)
    tally = Tally()
    for part in parts:
        for kind in KINDS:
            tally.latencies[kind] += part["latencies"][kind]
            tally.errors[kind] += part["errors"][kind]
        tally.first_errors += part["first_errors"][: 5 - len(tally.first_errors)]
        tally.written.update(part["written"])
        tally.counters.update(part["counters"])
    cpu["generator"] = sum(p["cpu"] for p in parts)
    elapsed = max(p["end"] for p in parts) - min(p["start"] for p in parts)
    return Run(tally, elapsed, cpu, "/".join(sorted({p["loop"] for p in parts})))


def verify(redis_url: str, tally: Tally, cluster: bool = False) -> tuple[int, int, int]:
    """(writes checked, values missing or wrong, counters wrong), read straight from Redis (or from
    every master of a Redis Cluster)."""
    r: Any = (redis.RedisCluster if cluster else redis.Redis).from_url(redis_url, decode_responses=True)
    mget = r.mget_nonatomic if cluster else r.mget
    keys = list(tally.written)
    bad = 0
    for i in range(0, len(keys), 1000):
        chunk = keys[i : i + 1000]
        for key, value in zip(chunk, mget(chunk)):
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
        kinds: tuple[str, ...] = KINDS, procs: int = 0, loop: str = "auto", client: str = "svckit") -> int:
    """Print the table; ``summary`` (when given) gets one dict per (clients, kind) row."""
    failures = 0
    summary = [] if summary is None else summary
    with seeded_sandbox() as env:
        redis_url = env["REDIS_URL"]
        print(f"# load bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}")
        print(f"# sandbox: kv (redis-server child) + vector (dense, demo corpus); {seconds:.0f} s per run; "
              f"mix {dict(zip(KINDS, WEIGHTS))}; pipeline = 10 commands, transaction = 2")
        print(f"# load generator: {CLIENTS[client]}; {procs or 'one per client, up to ' + str(DEFAULT_PROCS)} "
              f"processes, loop {loop}; CPU per request from /proc\n")
        print(f"| clients | kind | {client} req/s | p50 ms | p99 ms | errors | redis-py req/s | p50 ms | p99 ms "
              "| svckit / redis-py |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for n in client_counts:
            nprocs = min(n, procs or DEFAULT_PROCS)
            run_ = drive(client, env, n, seconds, seed, f"s{n}c", kinds=kinds, procs=nprocs, loop=loop)
            ours, elapsed = run_.tally, run_.elapsed
            load = os.getloadavg()[0]
            checked, bad, counters_bad = verify(redis_url, ours)
            prun = drive("redis-py", env, n, seconds, seed, f"r{n}c", kinds=KINDS[:4], procs=nprocs, loop=loop)
            peer, peer_elapsed = prun.tally, prun.elapsed
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
            total, ptotal = run_.requests, prun.requests
            kv_total = total - len(ours.latencies["query"])
            summary.append({"clients": n, "kind": "all", "rate": total / elapsed, "p50": float("nan"),
                            "p99": float("nan"), "errors": sum(ours.errors.values()), "checked": checked,
                            "lost": bad + counters_bad, "vs_redis_py": kv_total / elapsed / (ptotal / peer_elapsed),
                            "cpu_us": {k: run_.per_request(k) for k in ("generator", "sandbox", "redis")},
                            "cores": {k: v / elapsed for k, v in run_.cpu.items()}, "procs": nprocs,
                            "loop": run_.loop, "load": load, "client": client})
            print(f"| {n} | **all** | {total / elapsed:,.0f} | | | {sum(ours.errors.values())} | "
                  f"{ptotal / peer_elapsed:,.0f} | | | {kv_total / elapsed / (ptotal / peer_elapsed):.3f}× (kv only) |")
            print(f"|  | verified | {checked:,} writes, {bad} wrong, {counters_bad} counters wrong | | | | "
                  f"{peer_checked:,} writes, {peer_bad} wrong, {peer_counters_bad} counters wrong | | | |")
            print(f"|  | CPU per request | {run_.cpu_line(nprocs)}; load average {load:.1f} | | | | "
                  f"generator {prun.per_request('generator'):,.0f} µs, redis {prun.per_request('redis'):,.0f} µs "
                  f"| | | |")
            for line in ours.first_errors:
                print(f"#   error: {line}")
            failures += sum(ours.errors.values()) + bad + counters_bad + peer_bad + peer_counters_bad
    print(f"\nresult: {'OK' if failures == 0 else f'FAILED ({failures} errors or lost writes)'}")
    return 1 if failures else 0


def compare(before_tree: str, before_without: list[str], repeat: int, bench_args: list[str]) -> int:
    """Run the whole bench ``repeat`` times on each side, alternating which side goes first."""
    runs: dict[str, list[list[dict[str, Any]]]] = {"before": [], "after": []}
    for i in range(repeat):
        for side in (("before", "after") if i % 2 == 0 else ("after", "before")):
            tree, without = (before_tree, before_without) if side == "before" else (None, ())
            with tempfile.TemporaryDirectory() as tmp, code_env(tree, without) as env:
                out = os.path.join(tmp, "summary.json")
                subprocess.run([sys.executable, __file__, *bench_args, "--json", out], env=env,
                               stdout=subprocess.DEVNULL, check=False)
                with open(out) as fh:
                    runs[side].append(json.load(fh))
            print(f"# repeat {i + 1}: {side} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"# {machine()}")
    print(f"# before: {before_tree}{' without ' + ', '.join(before_without) if before_without else ''}; "
          "after: this checkout")
    gens = [r for r in runs["after"][0] if r["kind"] == "all"]
    shares = ", ".join(f"{r['procs']} processes for {r['clients']} clients" for r in gens)
    print(f"# load generator, both sides: {CLIENTS[gens[0]['client']]}; {shares}; event loop {gens[0]['loop']}\n")
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
                  f"{sum(r['checked'] for r in after):,} writes, {lost[1]} lost | | kv vs redis-py: "
                  f"{vs[0]:.3f}× | {vs[1]:.3f}× | |")
            def cpu(rs: list[dict[str, Any]]) -> str:
                us, cores = rs[0]["cpu_us"], rs[0]["cores"]
                return (f"{us['generator']:,.0f} / {us['sandbox']:,.0f} / {us['redis']:,.0f} µs, loop "
                        f"{cores['sandbox_loop']:.0%} busy, load {rs[0]['load']:.1f}")

            print(f"|  | CPU per request: generator / sandbox / redis | {cpu(before)} | {cpu(after)} | | | | |")
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
    parser.add_argument("--procs", type=int, default=0,
                        help=f"load generator processes (default: one per client, up to {DEFAULT_PROCS})")
    parser.add_argument("--gen-loop", choices=("auto", "uvloop", "asyncio"), default="auto",
                        help="the generator processes' event loop (default: uvloop where it imports, both sides)")
    parser.add_argument("--client", choices=tuple(CLIENTS), default="svckit",
                        help="what each of the N clients is (default: svckit's AsyncKV + AsyncVector)")
    parser.add_argument("--generator", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--before", help="another checkout to compare with, side by side (see above)")
    parser.add_argument("--repeat", type=int, default=1, help="with --before: runs per side")
    parser.add_argument("--before-without", default="", help="with --before: modules that side runs without "
                        "(httptools,uvloop for a tree from before issue 14)")
    args = parser.parse_args()
    if args.generator:
        generator_main()
        return
    if args.before:
        without = [m for m in args.before_without.split(",") if m]
        raise SystemExit(compare(args.before, without, args.repeat, ["--seconds", str(args.seconds), "--seed", str(args.seed),
                                                            *(["--kv-only"] if args.kv_only else []),
                                                            "--procs", str(args.procs), "--gen-loop", args.gen_loop,
                                                            "--client", args.client,
                                                            "--clients", *map(str, args.clients)]))
    summary: list[dict[str, Any]] = []
    status = run(args.seconds, args.clients, args.seed, summary, KINDS[:4] if args.kv_only else KINDS,
                 procs=args.procs, loop=args.gen_loop, client=args.client)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(summary, fh)
    raise SystemExit(status)


if __name__ == "__main__":
    main()
