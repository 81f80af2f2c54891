"""Far from the service, over real HTTP against the sandbox: the vector jobs take the round trips
their design says. A 10,000-record read is one page or one wave of fetch batches (in the order
asked), an explanation is one request, an evaluation's batches go side by side."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from svckit._inflight import DEFAULT_IN_FLIGHT
from svckit.sandbox import Sandbox
from svckit.vector import AsyncVector, QueryOptions, Vector, protocol
from svckit.vector.evaluation import evaluate
from svckit.vector.explain import explain_hits
from tests.counting import AsyncCountingTransport, CountingTransport

N = 10_000
NS = "round-trips"
QUERY = "bake bread dough in the oven, or cook a vegetable soup with stock"


@pytest.fixture(scope="module")
def ids(vector_sandbox: Sandbox) -> list[str]:
    """10,000 records in a namespace of the index without a model (vectors short to write)."""
    made = [f"r{i:05d}" for i in range(N)]
    with Vector.from_settings(vector_sandbox.settings, kind="nomodel", timeout=60.0) as raw:
        for start in range(0, N, 1000):
            raw.upsert([{"id": rid, "vector": [1.0] * 383 + [i / N], "metadata": {"n": i}}
                        for i, rid in enumerate(made[start:start + 1000], start=start)], namespace=NS)
    return made


def operations(transport: CountingTransport) -> list[str]:
    """The vector operation of each request sent (``/vector/{index}/{operation}[/{namespace}]``)."""
    return [path.split("/")[3] for path in transport.paths()]


@pytest.fixture
def counted(vector_sandbox: Sandbox) -> Iterator[tuple[Vector, CountingTransport]]:
    transport = CountingTransport()
    with Vector.from_settings(vector_sandbox.settings, kind="nomodel", transport=transport) as client:
        yield client, transport


def test_iter_range_reads_10k_records_in_one_request(counted, ids) -> None:
    client, transport = counted
    assert [r.id for r in client.iter_range(namespace=NS, include_metadata=True)] == ids
    assert operations(transport) == ["range"] and b'"limit":10000' in transport.requests[0].read()
    transport.clear()
    # with their vectors a page is 1,000 records: ten pages, one after another
    assert sum(1 for _ in client.iter_range(namespace=NS, include_vectors=True)) == N
    assert operations(transport) == ["range"] * 10 and transport.round_trips == 10


def test_fetch_of_10k_ids_is_one_wave_of_batches_answered_in_the_order_asked(counted, ids) -> None:
    client, transport = counted
    transport.clear(hold=DEFAULT_IN_FLIGHT)
    asked = ids[::-1]
    asked[17] = asked[9_000] = "no-such-id"
    got = client.fetch(asked, namespace=NS)
    assert [None if r is None else r.id for r in got] == [None if a == "no-such-id" else a for a in asked]
    assert got[1].metadata == {"n": N - 2}
    assert len(transport.requests) == transport.peak == DEFAULT_IN_FLIGHT and transport.round_trips == 1

    transport.clear(hold=4)
    assert len(client.fetch(ids, namespace=NS, in_flight=4)) == N
    assert len(transport.requests) == 4 and transport.peak <= 4 and transport.round_trips == 1

    transport.clear()  # a small fetch is one request
    assert [r.id for r in client.fetch(ids[:5], namespace=NS) if r] == ids[:5]
    assert len(transport.requests) == 1


async def test_async_fetch_overlaps_its_batches_too(vector_sandbox: Sandbox, ids) -> None:
    transport = AsyncCountingTransport(hold=DEFAULT_IN_FLIGHT)
    settings = vector_sandbox.settings
    async with AsyncVector.from_settings(settings, kind="nomodel", transport=transport) as client:
        got = await client.fetch(ids[::-1], namespace=NS)
    assert [r.id for r in got if r] == ids[::-1]
    assert len(transport.requests) == transport.peak == DEFAULT_IN_FLIGHT and transport.round_trips == 1


@pytest.fixture
def counted_hybrid(vector_sandbox: Sandbox) -> Iterator[tuple[Vector, CountingTransport]]:
    transport = CountingTransport()
    with Vector.from_settings(vector_sandbox.settings, kind="hybrid", transport=transport) as client:
        yield client, transport


def test_explaining_a_query_is_one_request_once_the_kind_is_known(counted_hybrid) -> None:
    client, transport = counted_hybrid
    ex = explain_hits(client, QUERY, QueryOptions(top_k=5), kind="hybrid")
    assert ex.hits[0].recomputed == pytest.approx(ex.hits[0].score) and ex.hit("bread").terms
    assert operations(transport) == ["query-data"]  # the query and each side alone, in one batch
    transport.clear()
    explain_hits(client, QUERY, QueryOptions(top_k=5))
    assert operations(transport) == ["info", "query-data"] and transport.round_trips == 2


def test_an_evaluation_sends_its_batches_side_by_side(counted_hybrid) -> None:
    client, transport = counted_hybrid
    transport.clear(hold=8)
    words = ["bread", "soup", "cat", "dog", "eagle", "json", "csv", "sqlite"]
    labelled = pd.DataFrame({"query": [f"{w} number {i}" for i in range(5) for w in words],
                             "relevant": [[w] for _ in range(5) for w in words]})
    per_query = evaluate(client, labelled, k=3, kind="hybrid", progress=False)
    # 4 configurations x 2 batches of 20 texts, all in flight at once
    assert len(transport.requests) == transport.peak == 8 and transport.round_trips == 1
    assert per_query.groupby("configuration", sort=False)["query_index"].apply(list).map(
        lambda done: done == list(range(40))).all()  # every query, in order, in every configuration


def test_pages_are_decoded_with_the_collector_paused(counted, ids, monkeypatch) -> None:
    client, _ = counted
    seen: list[bool] = []

    def watched(decode: Any) -> Any:
        def run(result: Any) -> Any:
            seen.append(gc.isenabled())
            return decode(result)
        return run

    for name in ("decode_fetch", "decode_range"):
        monkeypatch.setattr(protocol, name, watched(getattr(protocol, name)))
    assert gc.isenabled()
    client.fetch(ids, namespace=NS)
    client.range(namespace=NS)
    assert seen == [False] * (DEFAULT_IN_FLIGHT + 1) and gc.isenabled()
