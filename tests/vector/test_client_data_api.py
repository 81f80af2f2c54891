"""Vector and AsyncVector over the whole data API, against the sandbox over real HTTP, and the
arguments refused before any request is sent."""

from __future__ import annotations

import re

import httpx
import numpy as np
import pytest

from svckit.errors import BadRequest, InvalidArgument, NotFound
from svckit.vector import (
    AsyncVector,
    MetadataUpdateMode,
    QueryResult,
    RangeResult,
    ResumableQueryResult,
    SparseVector,
    Vector,
    VectorRecord,
)

DIM = 384


def unit(*hot: int) -> np.ndarray:
    v = np.zeros(DIM)
    v[list(hot)] = 1.0
    return v


@pytest.fixture
def nomodel(vector_sandbox):
    with Vector.from_settings(vector_sandbox.settings, kind="nomodel") as v:
        yield v


@pytest.fixture
def ns(request) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", request.node.name)


def test_upsert_vectors_query_and_fetch(nomodel, ns):
    assert nomodel.upsert([{"id": "a", "vector": unit(0), "metadata": {"n": 1}, "data": "alpha"},
                           {"id": "b", "vector": unit(1).tolist()}], namespace=ns) == "Success"
    hits = nomodel.query(unit(0), top_k=2, include_metadata=True, include_data=True, namespace=ns)
    assert all(isinstance(h, QueryResult) for h in hits)
    assert [(h.id, round(h.score, 6)) for h in hits] == [("a", 1.0), ("b", 0.5)]
    assert hits[0].metadata == {"n": 1} and hits[0].data == "alpha"
    many = nomodel.query_many([{"vector": unit(1), "top_k": 1}, {"vector": unit(0), "top_k": 1}], namespace=ns)
    assert [[h.id for h in r] for r in many] == [["b"], ["a"]]
    assert [[h.id for h in r] for r in nomodel.query_many([{"vector": unit(1), "top_k": 1}], namespace=ns)] == [["b"]]
    [record] = nomodel.fetch(prefix="a", include_vectors=True, namespace=ns)
    assert isinstance(record, VectorRecord) and record.vector == pytest.approx(unit(0).tolist())


def test_sparse_and_hybrid_vectors_in_every_accepted_shape(vector_sandbox, ns):
    with Vector.from_settings(vector_sandbox.settings, kind="sparse") as sp:
        sp.upsert([{"id": "m", "sparse_vector": SparseVector(indices=[3, 4], values=[1.0, 2.0])},
                   {"id": "t", "sparse_vector": ([4], [5.0])},
                   {"id": "d", "sparseVector": {"indices": [3], "values": [1.0]}}], namespace=ns)
        hits = sp.query(sparse_vector=([4], [1.0]), include_vectors=True, namespace=ns)
        assert [(h.id, h.score) for h in hits] == [("t", 5.0), ("m", 2.0)]
        assert hits[1].sparse_vector == SparseVector(indices=[3, 4], values=[1.0, 2.0])
    with Vector.from_settings(vector_sandbox.settings, kind="hybrid") as hy:
        hy.upsert({"id": "h", "vector": unit(2), "sparse_vector": (np.array([9]), np.array([1.0]))}, namespace=ns)
        assert [h.id for h in hy.query(unit(2), sparse_vector=([9], [1.0]), namespace=ns)] == ["h"]


def test_range_pages_and_iter_range_walk_everything(nomodel, ns):
    nomodel.upsert([{"id": f"r{i:02d}", "vector": unit(i), "metadata": {"i": i}} for i in range(12)], namespace=ns)
    page = nomodel.range(limit=5, include_metadata=True, namespace=ns)
    assert isinstance(page, RangeResult) and [v.id for v in page.vectors] == [f"r{i:02d}" for i in range(5)]
    assert page.next_cursor and page.vectors[0].metadata == {"i": 0}
    walked = [v.id for v in nomodel.iter_range(page_size=5, namespace=ns)]
    assert walked == [f"r{i:02d}" for i in range(12)]
    assert [v.id for v in nomodel.iter_range(page_size=2, prefix="r1", namespace=ns)] == ["r10", "r11"]


def test_resumable_query_start_next_end(nomodel, ns):
    nomodel.upsert([{"id": f"q{i}", "vector": unit(0) * (5 - i) + unit(1) * i} for i in range(5)], namespace=ns)
    start = nomodel.resumable_query({"vector": unit(0)}, top_k=2, namespace=ns)
    assert isinstance(start, ResumableQueryResult) and [h.id for h in start.scores] == ["q0", "q1"]
    assert [h.id for h in nomodel.resumable_query_next(start.uuid, 2)] == ["q2", "q3"]
    nomodel.resumable_query_end(start.uuid)
    with pytest.raises(NotFound, match="not found"):
        nomodel.resumable_query_next(start.uuid, 1)


def test_update_delete_reset_and_namespaces(nomodel, ns):
    nomodel.upsert([{"id": f"u{i}", "vector": unit(i), "metadata": {"k": i, "keep": True}} for i in range(6)],
                   namespace=ns)
    assert nomodel.update("u0", metadata={"k": None, "new": 1}, metadata_update_mode=MetadataUpdateMode.PATCH,
                          namespace=ns)
    assert nomodel.fetch("u0", namespace=ns)[0].metadata == {"keep": True, "new": 1}
    assert nomodel.update("u0", metadata={"only": 1}, metadata_update_mode="overwrite", namespace=ns)
    assert nomodel.fetch("u0", namespace=ns)[0].metadata == {"only": 1}
    assert nomodel.update("nobody", vector=unit(1), namespace=ns) is False
    assert nomodel.delete(["u0", "zzz"], namespace=ns) == 1
    assert nomodel.delete(prefix="u1", namespace=ns) == 1
    assert nomodel.delete(filter="k >= 4", namespace=ns) == 2
    assert [v.id for v in nomodel.iter_range(namespace=ns)] == ["u2", "u3"]
    assert ns in nomodel.list_namespaces() and nomodel.info().namespaces[ns].vector_count == 2
    nomodel.reset(namespace=ns)  # emptied, and kept
    assert ns in nomodel.list_namespaces() and nomodel.info().namespaces[ns].vector_count == 0
    nomodel.upsert({"id": "x", "vector": unit(0)}, namespace=ns)
    nomodel.delete_namespace(ns)
    with pytest.raises(NotFound, match="does not exist"):
        nomodel.delete_namespace(ns)


def test_reset_all_empties_every_namespace(vector_sandbox, ns):
    with Vector.from_settings(vector_sandbox.settings, kind="nomodel") as v:
        v.upsert({"id": "a", "vector": unit(0)}, namespace=ns)
        v.upsert({"id": "b", "vector": unit(0)})
        v.reset(all=True)
        assert {"", ns} <= set(v.list_namespaces()) and v.info().vector_count == 0


def test_server_refusals_are_bad_requests(nomodel, ns):
    with pytest.raises(BadRequest, match="Invalid vector dimension: 3, expected: 384"):
        nomodel.upsert({"id": "short", "vector": [1.0, 2.0, 3.0]}, namespace=ns)
    with pytest.raises(BadRequest, match="dense index"):
        nomodel.query(sparse_vector=([1], [1.0]), namespace=ns)


async def test_async_client_covers_the_same_operations(vector_sandbox, ns):
    async with AsyncVector.from_settings(vector_sandbox.settings, kind="nomodel") as v:
        await v.upsert([{"id": f"z{i}", "vector": unit(i), "metadata": {"i": i}} for i in range(4)], namespace=ns)
        assert [h.id for h in await v.query(unit(3), top_k=1, namespace=ns)] == ["z3"]
        assert [r.id for r in await v.fetch(["z1", "z2"], namespace=ns)] == ["z1", "z2"]
        assert [r.id async for r in v.iter_range(page_size=3, namespace=ns)] == ["z0", "z1", "z2", "z3"]
        start = await v.resumable_query({"vector": unit(0)}, top_k=1, namespace=ns)
        assert len(await v.resumable_query_next(start.uuid, 10)) == 3
        await v.resumable_query_end(start.uuid)
        assert await v.update("z0", metadata={"j": 1}, metadata_update_mode="PATCH", namespace=ns)
        assert (await v.fetch("z0", namespace=ns))[0].metadata == {"i": 0, "j": 1}
        assert await v.delete(filter="i > 1", namespace=ns) == 2
        assert ns in await v.list_namespaces()
        await v.reset(namespace=ns)
        assert (await v.range(namespace=ns)).vectors == []


# -- refused before sending ----------------------------------------------------------------------


def _refuse(request: httpx.Request) -> httpx.Response:
    pytest.fail(f"a request was sent: {request.method} {request.url}")


@pytest.mark.parametrize(("call", "argument"), [
    (lambda v: v.query(), "vector"),
    (lambda v: v.query([]), "vector"),
    (lambda v: v.query(sparse_vector=([1, 2], [1.0])), "sparse_vector"),
    (lambda v: v.query(sparse_vector="1:2"), "sparse_vector"),
    (lambda v: v.upsert({"vector": [1.0]}), "items"),
    (lambda v: v.upsert({"id": "a"}), "vector"),
    (lambda v: v.upsert([]), "items"),
    (lambda v: v.fetch(), "ids"),
    (lambda v: v.fetch("a", prefix="b"), "ids"),
    (lambda v: v.fetch(prefix=""), "prefix"),
    (lambda v: v.delete(), "ids"),
    (lambda v: v.delete(prefix="a", filter="x = 1"), "ids"),
    (lambda v: v.range(limit=0), "limit"),
    (lambda v: v.range(cursor=3), "cursor"),
    (lambda v: v.update("a"), "vector"),
    (lambda v: v.update("a", metadata={"x": 1}, metadata_update_mode="MERGE"), "metadata_update_mode"),
    (lambda v: v.update("", metadata={}), "id"),
    (lambda v: v.resumable_query("text", max_idle=0), "max_idle"),
    (lambda v: v.resumable_query_next("u", 0), "additional_k"),
    (lambda v: v.resumable_query_next("", 1), "uuid"),
    (lambda v: v.delete_namespace(""), "namespace"),
])
def test_data_api_arguments_refused_before_sending(call, argument):
    with (Vector("http://127.0.0.1:9", "test-token-0000", transport=httpx.MockTransport(_refuse)) as v,
          pytest.raises(InvalidArgument) as info):
        call(v)
    assert info.value.argument == argument
