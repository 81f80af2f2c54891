"""Fixtures for areas C and D: a real sandbox (account + queue areas) on loopback, and clients."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import httpx
import pytest

from svckit.account import Account, AsyncAccount
from svckit.queue import AsyncQueue, Queue
from svckit.sandbox import Sandbox
from svckit.sandbox.runner import WorkflowRunner


@pytest.fixture
def sandbox(tmp_path) -> Iterator[Sandbox]:
    # queue_retry_delay=0: retries happen at once, so tests never sleep.
    with Sandbox(tmp_path / "data", areas=["account", "queue"], queue_retry_delay=0) as sb:
        yield sb


@pytest.fixture
def runner(sandbox: Sandbox) -> WorkflowRunner:
    return sandbox.area("queue").runner  # type: ignore[attr-defined]


@pytest.fixture
def account(sandbox: Sandbox) -> Iterator[Account]:
    with Account.from_settings(sandbox.settings) as client:
        yield client


@pytest.fixture
def queue(sandbox: Sandbox) -> Iterator[Queue]:
    with Queue.from_settings(sandbox.settings) as client:
        yield client


@pytest.fixture
async def aaccount(sandbox: Sandbox):
    async with AsyncAccount.from_settings(sandbox.settings) as client:
        yield client


@pytest.fixture
async def aqueue(sandbox: Sandbox):
    async with AsyncQueue.from_settings(sandbox.settings) as client:
        yield client


def basic(email: str, key: str) -> str:
    return "Basic " + base64.b64encode(f"{email}:{key}".encode()).decode()


@pytest.fixture
def raw_devapi(sandbox: Sandbox) -> Iterator[httpx.Client]:
    """A plain httpx client with the right Basic credentials, to see exactly what the server answers."""
    env = sandbox.env
    with httpx.Client(base_url=env["SVC_DEVAPI_URL"],
                      headers={"Authorization": basic(env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"])}) as c:
        yield c


@pytest.fixture
def raw_queue(sandbox: Sandbox) -> Iterator[httpx.Client]:
    env = sandbox.env
    with httpx.Client(base_url=env["SVC_QUEUE_URL"],
                      headers={"Authorization": f"Bearer {env['SVC_QUEUE_TOKEN']}"}) as c:
        yield c
