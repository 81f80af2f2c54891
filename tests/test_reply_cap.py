"""The clients' reply cap (``max_reply_bytes``) counts the bytes a reply decodes to: a 64 KiB gzip
reply that inflates to a 64 MiB value is refused at the cap, while it is decoded, on the sync and the
async client, and the value is never held whole."""

from __future__ import annotations

import asyncio
import tracemalloc

import pytest

from svckit._pools import AsyncPool, SyncPool
from svckit.errors import TransportError
from svckit.kv import KV, AsyncKV
from tests.scripted import Scripted, _inflating

VALUE = 64 * 1024 * 1024  # the value the reply inflates to
CAP = 1024 * 1024


def _peak_growth(run: object) -> int:
    """Bytes the process allocated at its peak while ``run()`` ran, over what it held before."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        run()  # type: ignore[operator]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before


def test_a_gzip_reply_is_counted_as_decoded_by_kv_and_async_kv(srv: Scripted) -> None:
    url = f"{srv.url}/inflates/{VALUE}"
    assert len(_inflating(VALUE)) < 100_000  # what crosses the wire is far under the cap
    errors: list[str] = []

    def sync() -> None:
        with KV(url, "token", transport=SyncPool(max_reply_bytes=CAP)) as kv, \
                pytest.raises(TransportError, match=r"over the limit of 1,048,576 bytes \(max_reply_bytes\)") as got:
            kv.get("k")
        errors.append(str(got.value))

    async def use_async() -> None:
        kv = AsyncKV(url, "token", transport=AsyncPool(max_reply_bytes=CAP))
        try:
            with pytest.raises(TransportError, match=r"over the limit of 1,048,576 bytes \(max_reply_bytes\)") as got:
                await kv.get("k")
            errors.append(str(got.value))
        finally:
            await kv.aclose()

    sync_growth = _peak_growth(sync)
    async_growth = _peak_growth(lambda: asyncio.run(use_async()))
    assert all("decodes to" in e for e in errors) and len(errors) == 2
    # refused at the cap while decoding: nothing near the 64 MiB value was ever held
    assert sync_growth < VALUE // 4 and async_growth < VALUE // 4, (sync_growth, async_growth)


def test_a_reply_coded_twice_is_refused_before_it_is_decoded(srv: Scripted) -> None:
    """A step of a reply gzipped twice could inflate a millionfold before the decoded bytes are
    counted: svckit decodes one coding (as servers send), and says so."""
    with KV(f"{srv.url}/inflates-twice/{VALUE}", "token", transport=SyncPool(max_reply_bytes=CAP)) as kv, \
            pytest.raises(TransportError, match=r"more than one content coding \(gzip, gzip\)"):
        kv.get("k")
    with KV(f"{srv.url}/inflates/100", "token") as kv:  # one coding, under the cap: decoded as ever
        assert kv.get("k") == "x" * 100
