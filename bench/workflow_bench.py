"""A workflow of 10 steps through the vendor's Python SDK, end to end (trigger to RUN_SUCCESS), side by
side with a floor: the same 10 steps' work as 10 plain POSTs straight to the same app.

    python bench/workflow_bench.py [--runs 20] [--steps 10] [--concurrent 10] [--rtt 0.02]

A sandbox child (areas account and queue, the paid plan set through the developer API) is the local
QStash; a FastAPI app in this process (``svckit.sandbox.app_server.AppServer``, one uvicorn worker on
a loopback port) serves the workflow with ``upstash_workflow.fastapi.Serve`` unchanged, its settings
under the vendor's names (``vendor_env``), so every delivery is verified with the signing keys. The
workflow is ``--steps`` ``context.run`` steps, each returning a small dict; the code after the last
step (which the SDK reaches only in the delivery that carries all of them) notes the time and sets an
event. A run is started as the SDK's docs say: ``QStash.message.publish_json`` to the workflow's URL.

SDK, per run, one at a time: from the publish to the workflow's end (the event: no polling skew), and
to ``RUN_SUCCESS`` in the runs log (``Queue.workflow_logs`` polled every millisecond from the event on,
straight to the sandbox; this includes the SDK's last call, which ends the run, and up to one poll).
Floor: ``--steps`` POSTs of an httpx Client, one after another, to a trivial route of the same app
that returns the same dict. The runs alternate with the floor's sequences; ``--runs`` of each after
two to warm up. Throughput: ``--concurrent`` runs published in one ``/v2/batch``, until the last
ends; the floor is as many sequences of POSTs at once from an httpx AsyncClient in a child process
(this process runs the app), each its ``--steps`` POSTs one after another; median of three rounds.

At a distance (``--rtt``, default 20 ms; 0 skips it), both hops of a step cross the latency proxy
(``_latency.py``): one proxy in front of the sandbox (the app's calls to the QStash, the trigger) and
one in front of the app (the QStash's deliveries, and the floor's POSTs). The app is then ``--rtt``
from the QStash both ways, and the bench, which plays the caller, ``--rtt`` from both; the runs log
is still read straight from the sandbox.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import math
import multiprocessing
import statistics
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from typing import Any
from urllib.parse import urlsplit

import httpx
from _child import sandbox_process
from _latency import latency_proxy
from _remote import through
from delivery_bench import percentile
from fastapi import FastAPI, Request
from kv_bench import machine
from qstash import AsyncQStash, QStash
from upstash_workflow import AsyncWorkflowContext
from upstash_workflow.fastapi import Serve

import svckit
from svckit.config import vendor_env
from svckit.queue import Queue, RunState
from svckit.sandbox.app_server import AppServer

WARM = 2  # runs and floor sequences before the timed ones: connections opened, code paths warm
ROUNDS = 3  # rounds of the concurrent measure (the median is kept)


class Ends:
    """What the workflows' last lines report: run ``n`` ended at ``perf_counter()`` as run id ``rid``."""

    def __init__(self) -> None:
        self.ended: dict[int, tuple[float, str]] = {}
        self.cond = threading.Condition()

    def end(self, n: int, rid: str) -> None:
        with self.cond:
            self.ended[n] = (time.perf_counter(), rid)
            self.cond.notify_all()

    def wait(self, ns: range | list[int], timeout: float = 60.0) -> None:
        with self.cond:
            if not self.cond.wait_for(lambda: all(n in self.ended for n in ns), timeout):
                missing = [n for n in ns if n not in self.ended]
                raise RuntimeError(f"runs {missing[:5]} did not end within {timeout:g} s")


def build_app(envs: dict[str, dict[str, str]], steps: int, ends: Ends) -> FastAPI:
    """The app: ``/floor`` (the floor's trivial route) and ``/wf/{name}``, the workflow, served for each
    of ``envs`` (the vendor-named settings the SDK calls the QStash with: near, or through the proxy)."""
    app = FastAPI()
    serve = Serve(app)

    @app.post("/floor")
    async def floor(request: Request) -> dict[str, Any]:
        return {"step": (await request.json())["step"], "ok": True}

    for name, env in envs.items():
        @serve.post(f"/wf/{name}", env=env)
        async def workflow(context: AsyncWorkflowContext[dict[str, Any]]) -> None:
            n = context.request_payload["n"]
            for i in range(steps):
                async def step(i: int = i) -> dict[str, Any]:
                    return {"step": i, "ok": True}

                await context.run(f"step-{i}", step)
            ends.end(n, context.workflow_run_id)  # reached once, in the delivery carrying every step

    return app


class Deliveries:
    """The app, wrapped: when each request to a workflow (a delivery) arrived, and how long the app
    took to answer it (the SDK's work, and its calls to the QStash made before it answers)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.arrived: list[float] = []
        self.took: dict[float, float] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/wf/"):
            return await self.app(scope, receive, send)
        began = time.perf_counter()
        self.arrived.append(began)
        try:
            await self.app(scope, receive, send)
        finally:
            self.took[began] = time.perf_counter() - began

    def between(self, start: float, end: float) -> list[float]:
        """How long each delivery that arrived between ``start`` and ``end`` took (those that ended)."""
        return [self.took.get(t, math.nan) for t in self.arrived if start <= t <= end]


def client_cost(count: int = 20) -> float:
    """What making an ``AsyncQStash`` costs, median seconds: the SDK's authorization check makes one on
    every delivery (an httpx AsyncClient, so a new SSL context with the CA bundle loaded)."""
    times = []
    for _ in range(count):
        began = time.perf_counter()
        AsyncQStash("disabled-client", base_url="disabled-client")
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def succeeded(queue: Queue, rid: str, timeout: float = 30.0) -> float:
    """Poll the runs log (every millisecond) until run ``rid`` is RUN_SUCCESS; the time it was seen."""
    deadline = time.monotonic() + timeout
    while True:
        runs = queue.workflow_logs(workflow_run_id=rid, count=1).runs
        if runs and runs[0].workflow_state == RunState.RUN_SUCCESS:
            return time.perf_counter()
        if runs and runs[0].workflow_state != RunState.RUN_STARTED:
            raise RuntimeError(f"run {rid} ended {runs[0].workflow_state.value}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {rid} was not RUN_SUCCESS within {timeout:g} s")
        time.sleep(0.001)


async def floor_sequences(url: str, sequences: int, steps: int) -> float:
    """``sequences`` sequences of ``steps`` POSTs at once, each one after another: sequences per second."""
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=sequences)) as client:
        async def one() -> None:
            for i in range(steps):
                (await client.post(url, json={"step": i})).raise_for_status()

        await one()  # the first connection opened
        began = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(sequences)))
        return sequences / (time.perf_counter() - began)


def floor_rate(url: str, sequences: int, steps: int) -> float:
    return asyncio.run(floor_sequences(url, sequences, steps))


class Setting:
    """One distance: where the bench publishes (``qstash``), the workflow's URL, the floor's URL."""

    def __init__(self, name: str, qstash: QStash, workflow_url: str, floor_url: str) -> None:
        self.name, self.qstash, self.workflow_url, self.floor_url = name, qstash, workflow_url, floor_url


class Bench:
    """What every setting's measure uses: the runs' ends, the app's deliveries, the runs log (straight
    to the sandbox), an httpx Client for the floor, the child process for the concurrent floor."""

    def __init__(self, args: argparse.Namespace, ends: Ends, app: Deliveries, queue: Queue,
                 http: httpx.Client, child: ProcessPoolExecutor) -> None:
        self.args, self.ends, self.app, self.queue, self.http, self.child = args, ends, app, queue, http, child
        self.n = 0

    def numbers(self, count: int) -> list[int]:
        self.n += count
        return list(range(self.n - count + 1, self.n + 1))

    def one_run(self, setting: Setting) -> tuple[float, float, float, str]:
        """Publish one run, wait for its end, then for RUN_SUCCESS: (started, ended, succeeded, run id)."""
        [n] = self.numbers(1)
        started = time.perf_counter()
        setting.qstash.message.publish_json(url=setting.workflow_url, body={"n": n})
        self.ends.wait([n])
        ended, rid = self.ends.ended[n]
        return started, ended, succeeded(self.queue, rid), rid

    def one_floor(self, setting: Setting) -> float:
        began = time.perf_counter()
        for i in range(self.args.steps):
            self.http.post(setting.floor_url, json={"step": i}).raise_for_status()
        return time.perf_counter() - began

    def measure(self, setting: Setting) -> dict[str, Any]:
        args = self.args
        m: dict[str, Any] = {"to_end": [], "to_success": [], "floor": [], "windows": [], "rates": []}
        for k in range(WARM + args.runs):
            started, ended, success, rid = self.one_run(setting)
            floor = self.one_floor(setting)
            if k == 0:  # the run's steps, once: one per context.run, all in the log
                [run] = self.queue.workflow_logs(workflow_run_id=rid, count=1).runs
                names = [s.step_name for g in run.steps for s in g.steps]
                assert names[-args.steps:] == [f"step-{i}" for i in range(args.steps)], names
            if k >= WARM:
                m["to_end"].append(ended - started)
                m["to_success"].append(success - started)
                m["floor"].append(floor)
                m["windows"].append((started, ended))
        for _ in range(ROUNDS if args.concurrent > 1 else 0):
            ns = self.numbers(args.concurrent)
            started = time.perf_counter()
            setting.qstash.message.batch_json([{"url": setting.workflow_url, "body": {"n": n}} for n in ns])
            self.ends.wait(ns, timeout=120)
            sdk = args.concurrent / (max(self.ends.ended[n][0] for n in ns) - started)
            m["rates"].append((sdk, self.child.submit(floor_rate, setting.floor_url, args.concurrent,
                                                      args.steps).result()))
        took = [self.app.between(*window) for window in m["windows"]]
        m["deliveries"] = statistics.median(len(t) for t in took)
        m["in_app"] = statistics.median(d for t in took for d in t if not math.isnan(d))
        return m


def rows_of(name: str, m: dict[str, Any], args: argparse.Namespace) -> list[tuple[str, ...]]:
    rows = []
    for label, key in (("trigger to the workflow's end", "to_end"),
                       ("trigger to RUN_SUCCESS in the log", "to_success")):
        for q in (50, 90):
            s, f = percentile(m[key], q, "inclusive") * 1000, percentile(m["floor"], q, "inclusive") * 1000
            rows.append((name, f"{label}, p{q}", f"{s:.1f} ms", f"{f:.1f} ms", f"{s / f:.1f}x"))
    if m["rates"]:
        sdk = statistics.median(r[0] for r in m["rates"])
        floor = statistics.median(r[1] for r in m["rates"])
        rows.append((name, f"runs/s, {args.concurrent} at once", f"{sdk:.1f}", f"{floor:.1f} sequences/s",
                     f"{floor / sdk:.1f}x"))
    return rows


def run(args: argparse.Namespace) -> None:
    began = time.perf_counter()
    with ExitStack() as stack:
        env = stack.enter_context(sandbox_process(areas=["account", "queue"]))
        env = {k: v for k, v in env.items() if k.startswith("SVC_")}
        devapi = {"Authorization": "Basic " + base64.b64encode(
            f"{env['SVC_DEVAPI_EMAIL']}:{env['SVC_DEVAPI_KEY']}".encode()).decode()}
        http = stack.enter_context(httpx.Client(timeout=30))
        # the paid plan: the free one takes 1,000 messages a day, and a run is a dozen
        http.post(f"{env['SVC_DEVAPI_URL']}/queue-upgrade", headers=devapi,
                  json={"customer_id": env["SVC_DEVAPI_EMAIL"], "plan_name": "paid"}).raise_for_status()

        envs = {"near": env}
        if args.rtt > 0:
            target = urlsplit(env["SVC_QUEUE_URL"])
            sandbox_port = stack.enter_context(latency_proxy(f"{target.hostname}:{target.port}", args.rtt))
            envs["far"] = through(env, sandbox_port)
        ends = Ends()
        app = Deliveries(build_app({name: vendor_env(e) for name, e in envs.items()}, args.steps, ends))
        server = AppServer(app)
        settings = [Setting("loopback", QStash(env["SVC_QUEUE_TOKEN"], base_url=env["SVC_QUEUE_URL"]),
                            f"{server.url}/wf/near", f"{server.url}/floor")]
        if args.rtt > 0:
            app_port = stack.enter_context(latency_proxy(f"127.0.0.1:{server.port}", args.rtt))
            far = f"http://127.0.0.1:{app_port}"
            settings.append(Setting(f"{args.rtt * 1000:.0f} ms", QStash(env["SVC_QUEUE_TOKEN"],
                                    base_url=envs["far"]["SVC_QUEUE_URL"]), f"{far}/wf/far", f"{far}/floor"))
        stack.enter_context(server)
        queue = stack.enter_context(svckit.connect(env).queue)
        child = stack.enter_context(ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")))
        bench = Bench(args, ends, app, queue, http, child)

        rows: list[tuple[str, ...]] = []
        notes = []
        for setting in settings:
            m = bench.measure(setting)
            rows += rows_of(setting.name, m, args)
            notes.append(f"{setting.name}: {m['deliveries']:.0f} deliveries to the app per run, each "
                         f"{m['in_app'] * 1000:.1f} ms in the app (median, its calls to the QStash included)")
            print(f"{setting.name}: {len(m['to_end'])} runs, {time.perf_counter() - began:.0f} s", flush=True)
        cost = client_cost()

    print(f"\n{machine()}; "
          f"upstash-workflow {_version('upstash-workflow')}, qstash {_version('qstash')}, fastapi "
          f"{_version('fastapi')}; a workflow of {args.steps} context.run steps, {args.runs} runs per setting "
          f"one at a time after {WARM} (p50, p90); {time.perf_counter() - began:.0f} s in all\n")
    print(f"| setting | measure | SDK (upstash-workflow) | floor ({args.steps} POSTs straight to the app) | ratio |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    for note in notes:
        print(f"- {note}")
    print(f"- AsyncQStash(...) made, as the SDK's authorization check does on every delivery: "
          f"{cost * 1000:.1f} ms (median of 20)")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per setting, one at a time")
    parser.add_argument("--steps", type=int, default=10, help="context.run steps per workflow")
    parser.add_argument("--concurrent", type=int, default=10, help="runs at once for the throughput row (1: none)")
    parser.add_argument("--rtt", type=float, default=0.02, help="round trip time of the far setting, s (0: none)")
    run(parser.parse_args())
