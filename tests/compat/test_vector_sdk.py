"""upstash-vector's ``Index`` and ``AsyncIndex``, unchanged, against the sandbox's vector indexes.

Every test runs once with each client. Tests about the data API use explicit vectors on the index
created without a model (``nomodel``, 384 dimensions) and on the sparse and hybrid indexes; the few
about text use tiny corpora on the model-backed dense index. Each test works in a namespace of its
own, so tests do not see each other's vectors.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from upstash_vector import AsyncIndex, Index
from upstash_vector.errors import ClientError, UpstashError
from upstash_vector.types import (
    Data,
    FusionAlgorithm,
    MetadataUpdateMode,
    QueryMode,
    SparseVector,
    Vector,
    WeightingStrategy,
)

from svckit.sandbox import Sandbox

DIM = 384
URLS = {"dense": "SVC_VECTOR_URL", "sparse": "SVC_VECTOR_SPARSE_URL", "hybrid": "SVC_VECTOR_HYBRID_URL",
        "nomodel": "SVC_VECTOR_NOMODEL_URL"}


def unit(*hot: int) -> list[float]:
    """A 384-dimensional vector with ones at ``hot`` (so cosine similarities are easy to reason about)."""
    v = np.zeros(DIM)
    v[list(hot)] = 1.0
    return v.tolist()


class Driver:
    """Calls an Index or AsyncIndex method and returns its result (awaited on one loop for AsyncIndex)."""

    def __init__(self, client: Any, loop: asyncio.AbstractEventLoop | None) -> None:
        self.client, self.loop = client, loop

    def wait(self, value: Any) -> Any:
        if inspect.isawaitable(value):
            assert self.loop is not None
            return self.loop.run_until_complete(value)
        return value

    def __getattr__(self, method: str) -> Any:
        return lambda *args, **kwargs: self.wait(getattr(self.client, method)(*args, **kwargs))


@pytest.fixture(params=["Index", "AsyncIndex"])
def sdk(request, blank_sandbox: Sandbox) -> Iterator[Any]:
    """``sdk("nomodel")``: that index through the SDK client of this run (Index or AsyncIndex)."""
    loop = asyncio.new_event_loop() if request.param == "AsyncIndex" else None
    cls = AsyncIndex if loop else Index
    token = blank_sandbox.env["SVC_VECTOR_TOKEN"]
    yield lambda kind: Driver(cls(blank_sandbox.env[URLS[kind]], token, retries=0), loop)
    if loop is not None:
        loop.close()


@pytest.fixture
def ns(request) -> str:
    """A namespace of this test alone (its node name with the client, made path-safe)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", request.node.name)


def ids(results: list[Any]) -> list[str]:
    return [r.id for r in results]


# -- upsert and query ------------------------------------------------------------------------------


def test_upsert_dense_vectors_in_every_shape_and_query_by_vector(sdk, ns):
    ix = sdk("nomodel")
    assert ix.upsert([("t1", unit(0), {"shape": "tuple"}, "first"), ("t2", np.array(unit(1)))], namespace=ns) \
        == "Success"
    ix.upsert([{"id": "d1", "vector": unit(2), "metadata": {"shape": "dict"}},
               Vector(id="v1", vector=unit(3), metadata={"shape": "Vector"}, data="vector object")], namespace=ns)
    hits = ix.query(vector=unit(0), top_k=2, include_metadata=True, include_data=True, include_vectors=True,
                    namespace=ns)
    assert hits[0].id == "t1" and hits[0].score == pytest.approx(1.0)
    assert hits[0].metadata == {"shape": "tuple"} and hits[0].data == "first"
    assert hits[0].vector == pytest.approx(unit(0))
    assert hits[1].score == pytest.approx(0.5)  # orthogonal: cosine 0 -> (1 + 0) / 2
    plain = ix.query(vector=unit(3), top_k=1, namespace=ns)[0]
    assert plain.id == "v1" and plain.metadata is None and plain.data is None and plain.vector is None
    assert ids(ix.query(vector=unit(0, 1, 2, 3), top_k=10, filter="shape = 'dict'", namespace=ns)) == ["d1"]
    assert len(ix.query(vector=unit(0), namespace=ns)) == 4  # topK 10 > 4 stored
    assert "t1" not in ids(ix.query(vector=unit(0), top_k=10))  # the default namespace holds none of them


def test_upsert_sparse_vectors_and_query_by_sparse_vector(sdk, ns):
    ix = sdk("sparse")
    ix.upsert([("a", SparseVector([1, 2], [0.5, 1.0]), {"k": "a"}), ("b", ([2, 3], [2.0, 1.0]))], namespace=ns)
    ix.upsert([{"id": "c", "sparse_vector": SparseVector([3], [4.0])}], namespace=ns)
    hits = ix.query(sparse_vector=([2, 3], [1.0, 1.0]), include_vectors=True, include_metadata=True, namespace=ns)
    # the score is the inner product over shared dimensions
    assert [(h.id, h.score) for h in hits] == [("c", 4.0), ("b", 3.0), ("a", 1.0)]
    assert hits[2].sparse_vector == SparseVector([1, 2], [0.5, 1.0]) and hits[2].metadata == {"k": "a"}
    weighted = ix.query(sparse_vector=SparseVector([1], [1.0]), weighting_strategy=WeightingStrategy.IDF,
                        namespace=ns)
    idf = math.log((3 - 1 + 0.5) / (1 + 0.5) + 1)  # 3 vectors, 1 of them holds dimension 1
    assert ids(weighted) == ["a"] and weighted[0].score == pytest.approx(0.5 * idf)


def test_hybrid_vectors_and_fused_queries(sdk, ns):
    ix = sdk("hybrid")
    ix.upsert([("h1", unit(0), ([7], [1.0])), ("h2", unit(1), ([8], [1.0]), {"n": 2}, "two"),
               Vector(id="h3", vector=unit(0, 1), sparse_vector=SparseVector([7, 8], [0.5, 0.5]))], namespace=ns)
    rrf = ix.query(vector=unit(0), sparse_vector=([8], [1.0]), top_k=3, namespace=ns)
    scores = {h.id: h.score for h in rrf}
    # dense ranks h1, h3, h2; sparse ranks h2, h3: RRF adds 1 / (60 + rank) from each side
    assert scores["h3"] == pytest.approx(1 / 62 + 1 / 62)
    assert scores["h1"] == pytest.approx(1 / 61) and scores["h2"] == pytest.approx(1 / 63 + 1 / 61)
    dbsf = ix.query(vector=unit(0), sparse_vector=([8], [1.0]), fusion_algorithm=FusionAlgorithm.DBSF,
                    top_k=3, namespace=ns)
    # DBSF maps each side's scores with (s - (mean - 3 sd)) / (6 sd), then adds them
    dense_side = {"h1": 1.0, "h3": (1 + math.sqrt(0.5)) / 2, "h2": 0.5}
    sparse_side = {"h2": 1.0, "h3": 0.5}
    expected = {k: 0.0 for k in dense_side}
    for side in (dense_side, sparse_side):
        mean = sum(side.values()) / len(side)
        sd = math.sqrt(sum((v - mean) ** 2 for v in side.values()) / len(side))
        for k, v in side.items():
            expected[k] += (v - (mean - 3 * sd)) / (6 * sd)
    assert {h.id: h.score for h in dbsf} == pytest.approx(expected)
    assert ids(dbsf) == sorted(expected, key=expected.get, reverse=True)
    assert ids(ix.query(vector=unit(1), top_k=1, namespace=ns)) == ["h2"]  # the dense side alone
    assert ids(ix.query(sparse_vector=([7], [1.0]), top_k=1, namespace=ns)) == ["h1"]  # the sparse side alone
    with pytest.raises(UpstashError, match="hybrid index stores both"):
        ix.upsert([("half", unit(2))], namespace=ns)


def test_data_upsert_and_text_query_with_every_option(sdk, ns):
    ix = sdk("dense")
    ix.upsert([Data(id="cat", data="A cat sleeps on the sofa", metadata={"pet": True}),
               Data(id="car", data="The engine of the car needs oil", metadata={"pet": False})], namespace=ns)
    ix.upsert([("dog", "A dog fetches the ball", {"pet": True})], namespace=ns)  # a tuple with text
    hits = ix.query(data="kitten napping", top_k=1, include_data=True, include_metadata=True, namespace=ns)
    assert ids(hits) == ["cat"] and hits[0].data == "A cat sleeps on the sofa" and hits[0].metadata == {"pet": True}
    assert 0 < hits[0].score <= 1
    assert ids(ix.query(data="vehicle motor", top_k=3, filter="pet = true", namespace=ns)) in (["cat", "dog"],
                                                                                               ["dog", "cat"])
    hybrid = sdk("hybrid")
    hybrid.upsert([Data(id="oil", data="The engine of the car needs oil")], namespace=ns)
    for mode in QueryMode:
        assert ids(hybrid.query(data="engine oil", query_mode=mode, top_k=1, namespace=ns)) == ["oil"]
    with pytest.raises(UpstashError, match="embedding model"):
        sdk("nomodel").query(data="no model here", namespace=ns)


def test_query_many_by_vector_and_by_data(sdk, ns):
    ix = sdk("nomodel")
    ix.upsert([("x", unit(0)), ("y", unit(1))], namespace=ns)
    many = ix.query_many(queries=[{"vector": unit(0), "top_k": 1}, {"vector": unit(1), "top_k": 1,
                                                                     "include_vectors": True}], namespace=ns)
    assert [ids(r) for r in many] == [["x"], ["y"]] and many[1][0].vector == pytest.approx(unit(1))
    assert [ids(r) for r in ix.query_many(queries=[{"vector": unit(1), "top_k": 1}], namespace=ns)] == [["y"]]
    dense = sdk("dense")
    dense.upsert([Data(id="tea", data="green tea"), Data(id="ski", data="alpine skiing")], namespace=ns)
    by_data = dense.query_many(queries=[{"data": "a cup of tea", "top_k": 1}, {"data": "snow sport", "top_k": 1}],
                               namespace=ns)
    assert [ids(r) for r in by_data] == [["tea"], ["ski"]]


# -- resumable queries ---------------------------------------------------------------------------


def test_resumable_query_fetches_next_pages_and_stops(sdk, ns):
    ix = sdk("nomodel")
    # similarity to unit(0) falls with the index: v0 is the best match, v5 the worst
    ix.upsert([(f"v{i}", (np.array(unit(0)) * (6 - i) + np.array(unit(1)) * i).tolist(), {"i": i})
               for i in range(6)], namespace=ns)
    first, handle = ix.resumable_query(vector=unit(0), top_k=2, include_metadata=True, namespace=ns)
    assert ids(first) == ["v0", "v1"] and first[0].metadata == {"i": 0}
    assert ids(ix.wait(handle.fetch_next(3))) == ["v2", "v3", "v4"]
    assert ids(ix.wait(handle.fetch_next(3))) == ["v5"]
    assert ix.wait(handle.fetch_next(3)) == []
    ix.wait(handle.stop())
    with pytest.raises(UpstashError, match="not found"):
        ix.wait(handle.fetch_next(1))
    filtered, handle2 = ix.resumable_query(vector=unit(1), top_k=1, filter="i >= 4", namespace=ns)
    assert ids(filtered) == ["v5"] and ids(ix.wait(handle2.fetch_next(5))) == ["v4"]
    ix.wait(handle2.stop())


def test_resumable_query_by_data(sdk, ns):
    ix = sdk("dense")
    ix.upsert([Data(id="tea", data="green tea"), Data(id="ski", data="alpine skiing")], namespace=ns)
    first, handle = ix.resumable_query(data="a cup of tea", top_k=1, include_data=True, namespace=ns)
    assert ids(first) == ["tea"] and first[0].data == "green tea"
    assert ids(ix.wait(handle.fetch_next(1))) == ["ski"]
    ix.wait(handle.stop())


# -- range, fetch, delete, update ----------------------------------------------------------------


def test_range_with_cursor_until_the_end_and_with_a_prefix(sdk, ns):
    ix = sdk("nomodel")
    ix.upsert([(f"doc-{i:02d}", unit(i), {"i": i}) for i in range(7)] + [("img-1", unit(20))], namespace=ns)
    seen, cursor, pages = [], "", 0
    while True:
        page = ix.range(cursor=cursor, limit=3, include_metadata=True, namespace=ns)
        seen += page.vectors
        pages += 1
        cursor = page.next_cursor
        if cursor == "":
            break
    assert pages == 3 and ids(seen) == [f"doc-{i:02d}" for i in range(7)] + ["img-1"]
    assert seen[0].metadata == {"i": 0} and seen[0].vector is None
    docs = ix.range(cursor="", limit=100, prefix="doc-", include_vectors=True, namespace=ns)
    assert docs.next_cursor == "" and len(docs.vectors) == 7 and docs.vectors[3].vector == pytest.approx(unit(3))
    first = ix.range(limit=4, prefix="doc-", namespace=ns)
    rest = ix.range(cursor=first.next_cursor, limit=4, prefix="doc-", namespace=ns)
    assert ids(first.vectors) + ids(rest.vectors) == [f"doc-{i:02d}" for i in range(7)] and rest.next_cursor == ""


def test_fetch_by_ids_and_by_prefix(sdk, ns):
    ix = sdk("nomodel")
    ix.upsert([("a-1", unit(1), {"n": 1}, "one"), ("a-2", unit(2)), ("b-1", unit(3))], namespace=ns)
    got = ix.fetch(["a-1", "missing", "b-1"], include_metadata=True, include_data=True, namespace=ns)
    assert got[0].id == "a-1" and got[0].metadata == {"n": 1} and got[0].data == "one" and got[0].vector is None
    assert got[1] is None and got[2].id == "b-1"
    assert ix.fetch("a-2", include_vectors=True, namespace=ns)[0].vector == pytest.approx(unit(2))
    assert ids(ix.fetch(prefix="a-", namespace=ns)) == ["a-1", "a-2"]


def test_delete_by_ids_prefix_and_filter(sdk, ns):
    ix = sdk("nomodel")
    ix.upsert([(f"k{i}", unit(i), {"group": "odd" if i % 2 else "even"}) for i in range(6)]
              + [("tmp-1", unit(10)), ("tmp-2", unit(11))], namespace=ns)
    assert ix.delete(["k0", "nope"], namespace=ns).deleted == 1
    assert ix.delete("k1", namespace=ns).deleted == 1
    assert ix.delete(prefix="tmp-", namespace=ns).deleted == 2
    assert ix.delete(filter="group = 'odd'", namespace=ns).deleted == 2  # k3, k5
    assert ids(ix.range(limit=10, namespace=ns).vectors) == ["k2", "k4"]


def test_update_vector_data_and_metadata_in_both_modes(sdk, ns):
    ix = sdk("nomodel")
    ix.upsert([("u", unit(0), {"a": 1, "nested": {"x": 1, "y": 2}}, "old text"), ("other", unit(1))], namespace=ns)
    assert ix.update("u", metadata={"b": 2}, namespace=ns) is True  # OVERWRITE is the default
    assert ix.fetch("u", include_metadata=True, namespace=ns)[0].metadata == {"b": 2}
    assert ix.update("u", metadata={"c": 3, "b": None, "nested": {"x": 9}}, namespace=ns,
                     metadata_update_mode=MetadataUpdateMode.PATCH)
    assert ix.fetch("u", include_metadata=True, namespace=ns)[0].metadata == {"c": 3, "nested": {"x": 9}}
    assert ix.update("u", metadata={"only": True}, metadata_update_mode=MetadataUpdateMode.OVERWRITE, namespace=ns)
    assert ix.fetch("u", include_metadata=True, namespace=ns)[0].metadata == {"only": True}
    assert ix.update("u", vector=unit(1), data="new text", namespace=ns)
    moved = {h.id: h for h in ix.query(vector=unit(1), top_k=2, include_data=True, include_metadata=True,
                                       namespace=ns)}
    assert {k: h.score for k, h in moved.items()} == pytest.approx({"u": 1.0, "other": 1.0})
    assert moved["u"].data == "new text" and moved["u"].metadata == {"only": True}  # metadata kept
    assert ix.update("missing", metadata={"x": 1}, namespace=ns) is False
    hybrid = sdk("hybrid")
    hybrid.upsert([("hv", unit(0), ([1], [1.0]))], namespace=ns)
    assert hybrid.update("hv", sparse_vector=SparseVector([2], [3.0]), namespace=ns)
    after = hybrid.fetch("hv", include_vectors=True, namespace=ns)[0]
    assert after.sparse_vector == SparseVector([2], [3.0]) and after.vector == pytest.approx(unit(0))


def test_update_data_reembeds_on_an_index_with_a_model(sdk, ns):
    ix = sdk("dense")
    ix.upsert([Data(id="t", data="a bowl of soup"), Data(id="f", data="football match")], namespace=ns)
    assert ix.update("t", data="rocket launch into orbit", namespace=ns)
    assert ids(ix.query(data="spaceflight", top_k=1, namespace=ns)) == ["t"]


# -- namespaces, reset, info ---------------------------------------------------------------------


def test_reset_empties_a_namespace_and_keeps_it(sdk, ns):
    # "The namespace will be completely empty after /reset is called, but will not be deleted."
    ix = sdk("nomodel")
    ix.upsert([("a", unit(0), {"k": 1}), ("b", unit(1))], namespace=ns)
    assert ix.reset(namespace=ns) == "Success"
    assert ns in ix.list_namespaces() and ix.info().namespaces[ns].vector_count == 0
    page = ix.range(limit=10, namespace=ns)
    assert page.vectors == [] and page.next_cursor == ""
    assert ix.query(vector=unit(0), top_k=5, namespace=ns) == []
    assert ix.fetch(["a", "b"], namespace=ns) == [None, None]
    assert ix.delete_namespace(ns) is None  # the reset namespace is still there to delete
    assert ns not in ix.list_namespaces() and ns not in ix.info().namespaces


def test_reset_of_one_namespace_leaves_the_others(sdk, ns):
    ix = sdk("sparse")
    for name in (f"{ns}-a", f"{ns}-b"):
        ix.upsert([("s", ([1], [1.0]))], namespace=name)
    assert ix.reset(namespace=f"{ns}-a") == "Success"
    assert ix.fetch("s", namespace=f"{ns}-a") == [None] and ix.fetch("s", namespace=f"{ns}-b")[0].id == "s"
    counts = ix.info().namespaces
    assert counts[f"{ns}-a"].vector_count == 0 and counts[f"{ns}-b"].vector_count == 1


def test_reset_all_empties_every_namespace_and_keeps_them(sdk, ns):
    ix = sdk("sparse")
    for name in (f"{ns}-a", f"{ns}-b", ""):
        ix.upsert([("s", ([1], [1.0]))], namespace=name)
    assert ix.reset(all=True) == "Success"
    info, names = ix.info(), ix.list_namespaces()
    assert info.vector_count == 0 and all(n.vector_count == 0 for n in info.namespaces.values())
    assert {"", f"{ns}-a", f"{ns}-b"} <= set(names) and set(info.namespaces) == set(names)
    assert ix.range(limit=10, namespace=f"{ns}-a").vectors == [] and ix.fetch("s") == [None]
    assert ix.delete_namespace(f"{ns}-a") is None and ix.delete_namespace(f"{ns}-b") is None


def test_deleting_the_last_vector_keeps_the_namespace(sdk, ns):
    ix = sdk("nomodel")
    ix.upsert([("one", unit(0), {"g": 1}), ("two", unit(1), {"g": 2})], namespace=ns)
    assert ix.delete("one", namespace=ns).deleted == 1
    assert ix.delete(filter="g = 2", namespace=ns).deleted == 1
    assert ns in ix.list_namespaces() and ix.info().namespaces[ns].vector_count == 0
    assert ix.range(limit=10, namespace=ns).vectors == []
    assert ix.delete_namespace(ns) is None


def test_a_namespace_is_created_by_an_upsert_only(sdk, ns):
    ix = sdk("nomodel")
    # reads, deletes, updates and resets of a namespace that does not exist answer as for an empty one
    page = ix.range(limit=10, namespace=ns)
    assert page.vectors == [] and page.next_cursor == ""
    assert ix.query(vector=unit(0), namespace=ns) == []
    assert ix.fetch(["x"], namespace=ns) == [None]
    assert ix.delete(["x"], namespace=ns).deleted == 0
    assert ix.update("x", metadata={"k": 1}, namespace=ns) is False
    assert ix.reset(namespace=ns) == "Success"
    first, handle = ix.resumable_query(vector=unit(0), top_k=2, namespace=ns)
    assert first == []
    ix.wait(handle.stop())
    assert ns not in ix.list_namespaces() and ns not in ix.info().namespaces  # and none of them made it
    ix.upsert([("x", unit(0))], namespace=ns)
    assert ns in ix.list_namespaces() and ix.info().namespaces[ns].vector_count == 1


def test_the_default_namespace_always_exists_and_cannot_be_deleted(sdk, ns):
    ix = sdk("nomodel")
    assert ix.reset() == "Success"
    assert "" in ix.list_namespaces() and ix.info().namespaces[""].vector_count == 0
    # AsyncIndex refuses this itself (ClientError); Index sends it and the sandbox refuses it
    with pytest.raises((UpstashError, ClientError), match="default namespace"):
        ix.delete_namespace("")
    assert "" in ix.list_namespaces()


def test_delete_namespace_of_one_that_does_not_exist_names_it_and_the_index(sdk, ns):
    # the service's 404 reads "Namespace ns for the index $NAME does not exist"
    with pytest.raises(UpstashError, match=re.escape(f"Namespace {ns} for the index nomodel does not exist")):
        sdk("nomodel").delete_namespace(ns)


def test_delete_namespace_removes_the_namespace_and_its_vectors(sdk, ns):
    ix = sdk("nomodel")
    ix.upsert([("old", unit(0)), ("older", unit(1))], namespace=ns)
    assert ix.delete_namespace(ns) is None
    assert ns not in ix.list_namespaces() and ns not in ix.info().namespaces
    ix.upsert([("new", unit(2))], namespace=ns)  # the same name again starts empty
    assert ids(ix.range(limit=10, namespace=ns).vectors) == ["new"]


def test_an_emptied_namespace_survives_a_sandbox_restart(tmp_path):
    def index(sb: Sandbox) -> Index:
        return Index(sb.env["SVC_VECTOR_NOMODEL_URL"], sb.env["SVC_VECTOR_TOKEN"], retries=0)

    with Sandbox(tmp_path, areas=["vector"]) as sb:
        ix = index(sb)
        for name in ("was-reset", "was-emptied", "was-deleted"):
            ix.upsert([("v", unit(0))], namespace=name)
        ix.reset(namespace="was-reset")
        ix.delete("v", namespace="was-emptied")
        ix.delete_namespace("was-deleted")
    with Sandbox(tmp_path, areas=["vector"]) as sb:
        ix = index(sb)
        assert ix.list_namespaces() == ["", "was-emptied", "was-reset"]
        assert ix.info().namespaces["was-reset"].vector_count == 0
        assert ix.delete_namespace("was-reset") is None
    with Sandbox(tmp_path, areas=["vector"]) as sb:
        assert index(sb).list_namespaces() == ["", "was-emptied"]


def test_list_namespaces_and_delete_namespace(sdk, ns):
    ix = sdk("nomodel")
    ix.upsert([("one", unit(0))], namespace=f"{ns}-x")
    ix.upsert([("one", unit(0))], namespace=f"{ns}-y")
    names = ix.list_namespaces()
    assert {"", f"{ns}-x", f"{ns}-y"} <= set(names)
    assert ix.delete_namespace(f"{ns}-x") is None
    assert f"{ns}-x" not in ix.list_namespaces() and f"{ns}-y" in ix.list_namespaces()
    with pytest.raises(UpstashError, match="does not exist"):
        ix.delete_namespace(f"{ns}-x")
    # AsyncIndex refuses this itself (ClientError); Index sends it and the sandbox refuses it
    with pytest.raises((UpstashError, ClientError), match="default namespace"):
        ix.delete_namespace("")


def test_info_with_per_namespace_counts(sdk, ns):
    ix = sdk("hybrid")
    ix.upsert([(f"i{n}", unit(n), ([n], [1.0])) for n in range(3)], namespace=ns)
    ix.upsert([("j", unit(5), ([5], [1.0]))], namespace=f"{ns}-2")
    info = ix.info()
    assert info.namespaces[ns].vector_count == 3 and info.namespaces[f"{ns}-2"].vector_count == 1
    assert info.namespaces[ns].pending_vector_count == 0
    assert info.vector_count == sum(n.vector_count for n in info.namespaces.values())
    assert info.dimension == DIM and info.similarity_function == "COSINE" and info.index_size > 0
    assert info.dense_index.dimension == DIM and info.sparse_index.embedding_model == "BM25"
    assert sdk("sparse").info().dense_index is None


# -- the errors a user sees ----------------------------------------------------------------------


def test_errors_carry_the_services_message(sdk, ns, blank_sandbox):
    ix = sdk("nomodel")
    with pytest.raises(UpstashError, match="Invalid vector dimension: 2, expected: 384"):
        ix.upsert([("short", [0.1, 0.2])], namespace=ns)
    with pytest.raises(UpstashError, match="dense index"):
        ix.query(sparse_vector=([1], [1.0]), namespace=ns)
    with pytest.raises(UpstashError, match="filter"):
        ix.query(vector=unit(0), filter="year >>> 3", namespace=ns)
    bad = Index(blank_sandbox.env["SVC_VECTOR_NOMODEL_URL"], "wrong-token", retries=0)
    with pytest.raises(UpstashError, match="Unauthorized"):
        bad.info()
