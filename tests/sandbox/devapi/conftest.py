"""The vendor's developer API paths of area C, over real HTTP with Basic auth: ``devapi_sandbox`` runs
the areas whose resources the paths list (kv, vector, account), once per module; the queue account's
tests use ``queue_sandbox`` (fresh per test), since they change its plan and token."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from svckit.sandbox import Sandbox
from tests.conftest import basic, running


def devapi_client(sandbox: Sandbox, **options) -> httpx.Client:
    env = sandbox.env
    options.setdefault("base_url", env["SVC_DEVAPI_URL"])
    return httpx.Client(headers={"Authorization": basic(env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"])}, **options)


@pytest.fixture(scope="module")
def devapi_sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("devapi"), areas=["kv", "vector", "account"]) as sandbox:
        yield sandbox


@pytest.fixture
def devapi(devapi_sandbox: Sandbox) -> Iterator[httpx.Client]:
    with devapi_client(devapi_sandbox) as client:
        yield client


@pytest.fixture
def raw_devapi(queue_sandbox: Sandbox) -> Iterator[httpx.Client]:
    with devapi_client(queue_sandbox) as client:
        yield client


from tests.queue.conftest import raw_queue  # noqa: F401
