"""Clients of the queue and workflow (area D) tests, over real HTTP against ``queue_sandbox``
(areas C and D, fresh per test), and the sandbox's workflow runner behind it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from svckit.queue import AsyncQueue, Queue
from svckit.sandbox import Sandbox
from svckit.sandbox.workflow.runner import WorkflowRunner


@pytest.fixture
def runner(queue_sandbox: Sandbox) -> WorkflowRunner:
    return queue_sandbox.area("queue").runner  # type: ignore[attr-defined]


@pytest.fixture
def queue(queue_sandbox: Sandbox) -> Iterator[Queue]:
    with Queue.from_settings(queue_sandbox.settings) as client:
        yield client


@pytest.fixture
async def aqueue(queue_sandbox: Sandbox):
    async with AsyncQueue.from_settings(queue_sandbox.settings) as client:
        yield client


@pytest.fixture
def raw_queue(queue_sandbox: Sandbox) -> Iterator[httpx.Client]:
    env = queue_sandbox.env
    with httpx.Client(base_url=env["SVC_QUEUE_URL"],
                      headers={"Authorization": f"Bearer {env['SVC_QUEUE_TOKEN']}"}) as c:
        yield c
