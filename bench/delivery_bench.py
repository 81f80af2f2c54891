"""The local QStash's delivery: how long from publish to the destination, and how many deliveries a
second, side by side with a floor: the same receiver called directly by an httpx client.

    python bench/delivery_bench.py [--messages 200] [--burst 2000] [--plans free paid]

A sandbox child (areas account and queue) and a receiver in this process (uvicorn on a loopback
socket, a bare ASGI app that notes when each request arrives). Latency: one message at a time,
``publish`` (httpx) to its arrival at the receiver, p50 and p99; the floor is one POST straight to the
receiver. Throughput: ``--burst`` messages published in batches of 100, from the first publish to the
last arrival; the floor is as many POSTs sent straight to the receiver by an httpx AsyncClient with
1, 10 and the plan's ``max_global_parallelism`` (the sandbox's own bound) in flight, the best of them,
from a child process as the sandbox is one. Each plan is set
through the developer API before its rows.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import multiprocessing
import os
import platform
import socket
import statistics
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Self

import httpx
import uvicorn
from _child import sandbox_process

PLAN_PARALLELISM = {"free": 10, "paid": 200, "queue_enterprise_1m": 1000}
#: the free plan takes 1,000 messages a day: the latency rows use 240 of them, the burst at most this
FREE_BURST = 600


class Arrivals:
    """A receiver: ``arrived[body] = perf_counter()`` for every request."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self.event = threading.Event()
        self.waiting_for = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off", interface="asgi3")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.arrived[body.decode()] = time.perf_counter()
        if len(self.arrived) >= self.waiting_for:
            self.event.set()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    def expect(self, count: int) -> None:
        self.arrived.clear()
        self.event.clear()
        self.waiting_for = count

    def __enter__(self) -> Self:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def percentile(values: list[float], q: float, method: str = "exclusive") -> float:
    """The ``q``-th percentile of ``values`` (``statistics.quantiles``' ``method``)."""
    return statistics.quantiles(values, n=100, method=method)[int(q) - 1] if len(values) > 1 else values[0]


def latency(receiver: Arrivals, send: Any, count: int) -> list[float]:
    times = []
    for i in range(count):
        receiver.expect(1)
        started = time.perf_counter()
        send(f"m{i}")
        receiver.event.wait(30)
        times.append(receiver.arrived[f"m{i}"] - started)
    return times


async def straight(target: str, count: int, in_flight: int) -> float:
    gate = asyncio.Semaphore(in_flight)
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=in_flight)) as client:
        async def one(i: int) -> None:
            async with gate:
                (await client.post(target, content=f"d{i}")).raise_for_status()
        began = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        return count / (time.perf_counter() - began)


def straight_rate(target: str, count: int, in_flight: int) -> float:
    """POSTs a second straight to the receiver, ``in_flight`` at once (run in a child process)."""
    return asyncio.run(straight(target, count, in_flight))


def run(args: argparse.Namespace) -> None:
    with sandbox_process(areas=["account", "queue"]) as env, Arrivals() as receiver, httpx.Client() as http:
        queue = {"Authorization": f"Bearer {env['SVC_QUEUE_TOKEN']}"}
        devapi = {"Authorization": "Basic " + base64.b64encode(
            f"{env['SVC_DEVAPI_EMAIL']}:{env['SVC_DEVAPI_KEY']}".encode()).decode()}
        target = f"{receiver.url}/hook"
        rows = []
        for plan in args.plans:
            if plan != "free":
                http.post(f"{env['SVC_DEVAPI_URL']}/queue-upgrade", headers=devapi,
                          json={"customer_id": env["SVC_DEVAPI_EMAIL"], "plan_name": plan}).raise_for_status()
            publish = lambda body: http.post(f"{env['SVC_QUEUE_URL']}/v2/publish/{target}", content=body,
                                             headers=queue).raise_for_status()
            direct = lambda body: http.post(target, content=body).raise_for_status()
            latency(receiver, direct, 20)  # warm both paths' connections
            latency(receiver, publish, 20)
            sandbox, floor = latency(receiver, publish, args.messages), latency(receiver, direct, args.messages)
            for name, q in (("p50", 50), ("p99", 99)):
                s, f = percentile(sandbox, q) * 1000, percentile(floor, q) * 1000
                rows.append((plan, f"publish to delivery {name}", f"{s:.2f} ms", f"{f:.2f} ms", f"{s / f:.1f}x"))

            burst = min(args.burst, FREE_BURST) if plan == "free" else args.burst
            receiver.expect(burst)
            started = time.perf_counter()
            for first in range(0, burst, 100):
                batch = [{"destination": target, "body": f"b{i}"} for i in range(first, min(first + 100, burst))]
                http.post(f"{env['SVC_QUEUE_URL']}/v2/batch", json=batch, headers=queue).raise_for_status()
            receiver.event.wait(300)
            sandbox_rate = len(receiver.arrived) / (max(receiver.arrived.values()) - started)

            # the floor's client in a process of its own, as the sandbox is: in this one it would share
            # the interpreter with the receiver and slow both
            # the receiver is one uvicorn worker: more in flight is not faster, so the floor is the best
            # of a few widths
            floors = {}
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as child:
                for width in sorted({1, 10, PLAN_PARALLELISM[plan]}):
                    receiver.expect(burst)
                    floors[width] = child.submit(straight_rate, target, burst, width).result()
            width, floor_rate = max(floors.items(), key=lambda item: item[1])
            rows.append((plan, f"deliveries/s ({burst:,} messages)",
                         f"{sandbox_rate:,.0f} ({PLAN_PARALLELISM[plan]} at once at most)",
                         f"{floor_rate:,.0f} ({width} at once; " + ", ".join(
                             f"{r:,.0f} at {w}" for w, r in floors.items() if w != width) + ")",
                         f"{floor_rate / sandbox_rate:.1f}x"))
        print(f"\n{platform.node()}: {os.cpu_count()} cores, Python {sys.version.split()[0]}\n")
        print("| plan | measure | sandbox | floor (httpx straight to the receiver) | ratio |")
        print("|---|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--burst", type=int, default=2000)
    parser.add_argument("--plans", nargs="+", default=["free", "paid"], choices=sorted(PLAN_PARALLELISM))
    run(parser.parse_args())
