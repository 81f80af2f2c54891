"""Far from the service, over real HTTP against the sandbox: the queue client walks its listings in
pages of the most the service takes (runs 10, DLQ entries 100, events 1,000 a request), so a walk
is as few round trips as the cursor chain allows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from svckit.queue import Queue
from svckit.sandbox import Sandbox
from tests.counting import CountingTransport
from tests.runs import boom, finish_runs


def test_walks_take_pages_of_the_most_the_service_takes(queue_sandbox: Sandbox, runner) -> None:
    finish_runs(runner, "https://example.test/fails", 150, lambda context: context.run("step", boom), retries=0)
    transport = CountingTransport()
    with Queue.from_settings(queue_sandbox.settings, transport=transport) as queue:
        walks: dict[str, tuple[Callable[[], Iterator[Any]], int, int, str]] = {
            "runs": (queue.iter_runs, 150, 15, "10"), "dlq": (queue.iter_dlq, 150, 2, "100"),
            "events": (queue.iter_events, 450, 1, "1000")}  # a run's one message: created, attempted, failed
        for name, (walk, items, requests, count) in walks.items():
            transport.clear()
            assert sum(1 for _ in walk()) == items, name
            assert len(transport.requests) == transport.round_trips == requests, name
            assert {r.url.params["count"] for r in transport.requests} == {count}, name
        transport.clear()
        assert sum(1 for _ in queue.iter_runs(count=5)) == 150 and len(transport.requests) == 30
