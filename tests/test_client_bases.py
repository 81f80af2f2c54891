"""One base per client kind (svckit/_client.py): the sync and async client of each area are built the
same way, from the same arguments, settings or environment, and differ only in their transport and
in how they close (``close()`` / ``with`` for sync, ``aclose()`` / ``async with`` for async)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import certifi
import httpx
import pytest

from svckit._client import ClientBase
from svckit._http import DEFAULT_TIMEOUT, AsyncTransport, SyncTransport
from svckit.account import Account, AsyncAccount
from svckit.config import ALL_VARIABLES, Settings
from svckit.errors import InvalidArgument
from svckit.kv import KV, AsyncKV
from svckit.queue import AsyncQueue, Queue
from svckit.vector import AsyncVector, Vector

SECRET = "s3cr3t-token-abcdef"
ENV = {
    "SVC_KV_URL": "http://127.0.0.1:1/kv/", "SVC_KV_TOKEN": SECRET, "SVC_KV_READONLY_TOKEN": SECRET + "-ro",
    "SVC_VECTOR_URL": "http://127.0.0.1:1/dense", "SVC_VECTOR_SPARSE_URL": "http://127.0.0.1:1/sparse",
    "SVC_VECTOR_TOKEN": SECRET,
    "SVC_QUEUE_URL": "http://127.0.0.1:1/queue", "SVC_QUEUE_TOKEN": SECRET,
    "SVC_DEVAPI_URL": "http://127.0.0.1:1/devapi", "SVC_DEVAPI_EMAIL": "me@example.com", "SVC_DEVAPI_KEY": SECRET,
}
#: (sync, async, the Settings options that pick one of the area's services, its URL)
KINDS = [
    pytest.param(KV, AsyncKV, {}, "http://127.0.0.1:1/kv", id="kv"),
    pytest.param(KV, AsyncKV, {"readonly": True}, "http://127.0.0.1:1/kv", id="kv-readonly"),
    pytest.param(Vector, AsyncVector, {}, "http://127.0.0.1:1/dense", id="vector"),
    pytest.param(Vector, AsyncVector, {"kind": "sparse"}, "http://127.0.0.1:1/sparse", id="vector-sparse"),
    pytest.param(Queue, AsyncQueue, {}, "http://127.0.0.1:1/queue", id="queue"),
    pytest.param(Account, AsyncAccount, {}, "http://127.0.0.1:1/devapi", id="account"),
]


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ALL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)


def _twins(sync: Any, asynchronous: Any) -> None:
    """What a user sees of the two clients is the same but for the class name."""
    assert sync.url == asynchronous.url
    assert repr(sync).replace(type(sync).__name__, "X", 1) == repr(asynchronous).replace(
        type(asynchronous).__name__, "X", 1)
    assert SECRET not in repr(sync) and SECRET not in repr(asynchronous)
    assert sync.timeout == asynchronous.timeout
    assert sync._http._client.timeout == asynchronous._http._client.timeout
    assert isinstance(sync._http, SyncTransport) and isinstance(asynchronous._http, AsyncTransport)


@pytest.mark.parametrize(("sync_cls", "async_cls", "choice", "url"), KINDS)
def test_from_env_and_from_settings_give_the_same_client_for_sync_and_async(
        environ: None, sync_cls: Any, async_cls: Any, choice: dict[str, Any], url: str) -> None:
    settings = Settings.from_env()
    built = [(sync_cls.from_env(**choice), async_cls.from_env(**choice)),
             (sync_cls.from_settings(settings, **choice), async_cls.from_settings(settings, **choice))]
    for sync, asynchronous in built:
        assert type(sync) is sync_cls and type(asynchronous) is async_cls
        assert sync.url == url
        assert sync.timeout == DEFAULT_TIMEOUT
        assert sync._http._client.timeout == httpx.Timeout(DEFAULT_TIMEOUT)
        _twins(sync, asynchronous)
        sync.close()
        asyncio.run(asynchronous.aclose())


@pytest.mark.parametrize(("sync_cls", "async_cls", "choice", "url"), KINDS)
def test_options_reach_both_kinds_alike(environ: None, sync_cls: Any, async_cls: Any, choice: dict[str, Any],
                                        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SVC_CA_FILE", certifi.where())
    sync, asynchronous = sync_cls.from_env(timeout=2.5, **choice), async_cls.from_env(timeout=2.5, **choice)
    _twins(sync, asynchronous)
    assert sync.timeout == 2.5 and sync._http._client.timeout == httpx.Timeout(2.5)
    assert sync.verify == asynchronous.verify == certifi.where()  # SVC_CA_FILE, read once by from_settings
    sync.close()
    asyncio.run(asynchronous.aclose())


@pytest.mark.parametrize(("sync_cls", "async_cls"), [(KV, AsyncKV), (Vector, AsyncVector), (Queue, AsyncQueue),
                                                      (Account, AsyncAccount)])
def test_construction_is_written_once_per_area(sync_cls: Any, async_cls: Any) -> None:
    for name in ("__init__", "from_settings", "from_env"):
        sync_method, async_method = inspect.getattr_static(sync_cls, name), inspect.getattr_static(async_cls, name)
        assert sync_method is async_method, name
    assert inspect.getattr_static(KV, "from_env") is inspect.getattr_static(Queue, "from_env") is \
        inspect.getattr_static(ClientBase, "from_env")


@pytest.mark.parametrize(("sync_cls", "async_cls"), [(KV, AsyncKV), (Vector, AsyncVector), (Queue, AsyncQueue),
                                                      (Account, AsyncAccount)])
def test_async_clients_close_with_aclose_only(sync_cls: Any, async_cls: Any) -> None:
    assert not hasattr(async_cls, "close")  # no coroutine named like the sync client's close()
    assert inspect.iscoroutinefunction(async_cls.aclose)
    assert not hasattr(sync_cls, "aclose") and not inspect.iscoroutinefunction(sync_cls.close)


def test_async_with_and_with_close_the_connections(environ: None) -> None:
    async def used() -> httpx.AsyncClient:
        async with AsyncVector.from_env() as client:
            assert not client._http._client.is_closed
        return client._http._client

    assert asyncio.run(used()).is_closed
    with Vector.from_env() as client:
        assert not client._http._client.is_closed
    assert client._http._client.is_closed


def test_vector_kind_is_checked_for_both_kinds(environ: None) -> None:
    for cls in (Vector, AsyncVector):
        with pytest.raises(InvalidArgument, match="kind"):
            cls.from_env(kind="dens")
