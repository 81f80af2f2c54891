"""Clients of the account (area C) tests, over real HTTP against ``queue_sandbox`` (areas C and D,
fresh per test)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from svckit.account import Account, AsyncAccount
from svckit.sandbox import Sandbox
from tests.conftest import basic


@pytest.fixture
def account(queue_sandbox: Sandbox) -> Iterator[Account]:
    with Account.from_settings(queue_sandbox.settings) as client:
        yield client


@pytest.fixture
async def aaccount(queue_sandbox: Sandbox):
    async with AsyncAccount.from_settings(queue_sandbox.settings) as client:
        yield client


@pytest.fixture
def raw_devapi(queue_sandbox: Sandbox) -> Iterator[httpx.Client]:
    """A plain httpx client with the right Basic credentials, to see exactly what the server answers."""
    env = queue_sandbox.env
    with httpx.Client(base_url=env["SVC_DEVAPI_URL"],
                      headers={"Authorization": basic(env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"])}) as c:
        yield c


# area C rotates and upgrades the queue account, so its tests also reach area D's clients
from tests.queue.conftest import aqueue, queue, raw_queue, runner  # noqa: E402, F401
