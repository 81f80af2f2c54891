"""The sandbox's vector endpoints over real HTTP, through the Vector client and raw httpx."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from svckit.core import fusion
from svckit.errors import AuthError, BadRequest, EmbeddingModelRequired
from svckit.vector import AsyncVector, QueryResult, SparseVector, Vector
from tests.conftest import VECTOR_CORPUS as CORPUS

IDS = {c["id"] for c in CORPUS}


def raw_post(vector_sandbox, kind, path, body, token=None):
    url = vector_sandbox.env["SVC_VECTOR_URL"].rsplit("/", 1)[0] + f"/{kind}{path}"
    headers = {} if token is False else {"Authorization": f"Bearer {token or vector_sandbox.env['SVC_VECTOR_TOKEN']}"}
    return httpx.post(url, json=body, headers=headers, timeout=60)


# -- request fields ------------------------------------------------------------------------------


def test_data_and_default_top_k(dense):
    hits = dense.query_data("a cat on a mat")
    assert all(isinstance(h, QueryResult) for h in hits)
    assert len(hits) == len(CORPUS)  # default topK 10 > 8 stored vectors
    assert hits[0].id == "cat"
    assert {h.id for h in hits} == IDS


@pytest.mark.parametrize("kind", ["dense", "hybrid"])
def test_top_k_limits_and_orders(vector_sandbox, kind):
    with Vector.from_settings(vector_sandbox.settings, kind=kind) as v:
        hits = v.query_data("bread dough baking", top_k=3)
    assert len(hits) == 3
    assert hits[0].id == "bread"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_results_carry_only_what_was_asked_for(dense, sparse_index, hybrid):
    plain = dense.query_data("soup", top_k=1)[0]
    assert plain.vector is None and plain.metadata is None and plain.data is None
    full = dense.query_data("soup", top_k=1, include_metadata=True, include_vectors=True, include_data=True)[0]
    assert full.id == "soup"
    assert full.metadata == {"topic": "cooking", "minutes": 30}
    assert full.data == CORPUS[7]["data"]
    assert len(full.vector) == 384 and full.sparse_vector is None
    sp = sparse_index.query_data("soup", top_k=1, include_vectors=True)[0]
    assert sp.vector is None and isinstance(sp.sparse_vector, SparseVector)
    assert len(sp.sparse_vector.indices) == len(sp.sparse_vector.values) > 0
    assert sp.sparseVector is sp.sparse_vector
    hy = hybrid.query_data("soup", top_k=1, include_vectors=True)[0]
    assert len(hy.vector) == 384 and hy.sparse_vector is not None


def test_dense_score_is_normalised_cosine(dense, embedder):
    q = embedder.embed(["flying birds of prey"])[0]
    for hit in dense.query_data("flying birds of prey", include_vectors=True):
        v = np.array(hit.vector)
        cos = float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q)))
        assert hit.score == pytest.approx((1 + cos) / 2, abs=1e-5)


@pytest.mark.parametrize(("flt", "expected"), [
    ("animal = 'cat'", {"cat"}),
    ("animal != 'cat'", {"dog", "eagle"}),
    ("legs < 4", {"eagle"}),
    ("legs <= 4", {"cat", "dog", "eagle"}),
    ("minutes > 30", {"bread"}),
    ("year >= 2006", {"json", "sqlite"}),
    ("module GLOB 's*'", {"sqlite"}),
    ("module NOT GLOB 's*'", {"json", "csv"}),
    ("module IN ('json', 'csv')", {"json", "csv"}),
    ("animal NOT IN ('cat', 'dog')", {"eagle"}),
    ("tags CONTAINS 'fur'", {"cat", "dog"}),
    ("tags NOT CONTAINS 'fur'", {"eagle"}),
    ("HAS FIELD home.city", {"cat", "dog", "eagle"}),
    ("HAS NOT FIELD topic", {"cat", "dog", "eagle"}),
    ("home.city = 'Bergen'", {"dog"}),
    ("tags[0] = 'feathers'", {"eagle"}),
    ("tags[#-1] = 'outdoor'", {"dog"}),
    ("pet = true", {"cat", "dog"}),
    ("pet = 0", {"eagle"}),
    ("topic = 'cooking' OR animal = 'eagle' AND legs = 4", {"bread", "soup"}),
    ("(topic = 'cooking' OR animal = 'eagle') AND minutes < 35", {"soup"}),
])
@pytest.mark.parametrize("kind", ["dense", "sparse", "hybrid"])
def test_filter_operators_over_http(vector_sandbox, kind, flt, expected):
    with Vector.from_settings(vector_sandbox.settings, kind=kind) as v:
        # "the" is a stop word: a sparse query needs a real term, so use words from every document
        hits = v.query_data("cat dog eagle json csv sqlite3 bread soup", top_k=10, filter=flt)
    assert {h.id for h in hits} == expected


def test_bad_filter_is_a_400_with_the_position(vector_sandbox, dense):
    with pytest.raises(BadRequest) as info:
        dense.query_data("x", filter="legs >< 4")
    assert "position 6" in str(info.value)
    response = raw_post(vector_sandbox, "dense", "/query-data", {"data": "x", "filter": "legs = "})
    assert response.status_code == 400
    assert response.json()["status"] == 400 and "position 7" in response.json()["error"]


@pytest.mark.parametrize("body", [{"topK": 3}, {"data": "x", "topK": 0}, {"data": "x", "topK": "3"},
                                  {"data": "x", "queryMode": "FAST"}, {"data": "x", "fusionAlgorithm": "AVG"},
                                  {"data": "x", "weightingStrategy": "TFIDF"}, {"data": "x", "includeData": "yes"}])
def test_invalid_requests_are_400(vector_sandbox, body):
    response = raw_post(vector_sandbox, "hybrid", "/query-data", body)
    assert response.status_code == 400
    assert set(response.json()) == {"error", "status"}


def test_weighting_strategy_idf_reweights_sparse_scores(sparse_index):
    plain = {h.id: h.score for h in sparse_index.query_data("cat dog eagle bread")}
    idf = {h.id: h.score for h in sparse_index.query_data("cat dog eagle bread", weighting_strategy="IDF")}
    assert set(plain) == set(idf) == {"cat", "dog", "eagle", "bread"}
    # each of these terms occurs in one of 8 documents: ln((8 - 1 + 0.5)/(1 + 0.5) + 1) = ln 6
    for key, score in plain.items():
        assert idf[key] == pytest.approx(score * np.log(6.0))


@pytest.mark.parametrize("algorithm", ["RRF", "DBSF"])
def test_hybrid_fusion_equals_hand_fusion_of_both_sides(hybrid, algorithm):
    query = "python module for json files"
    depth = fusion.candidate_depth(5)
    dense = hybrid.query_data(query, top_k=depth, query_mode="DENSE")
    sparse = hybrid.query_data(query, top_k=depth, query_mode="SPARSE")
    assert dense and sparse
    if algorithm == "RRF":
        expected: dict = {}
        for ranking in ([h.id for h in dense], [h.id for h in sparse]):
            for rank, rid in enumerate(ranking, start=1):
                expected[rid] = expected.get(rid, 0) + 1 / (60 + rank)
    else:
        expected = {}
        for hits in (dense, sparse):
            s = np.array([h.score for h in hits])
            mu, sd = s.mean(), s.std()
            for h in hits:
                expected[h.id] = expected.get(h.id, 0) + (0.5 if sd == 0 else (h.score - (mu - 3 * sd)) / (6 * sd))
    fused = hybrid.query_data(query, top_k=5, fusion_algorithm=algorithm)
    best = sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert [h.id for h in fused] == [rid for rid, _ in best]
    for hit, (_, score) in zip(fused, best):
        assert hit.score == pytest.approx(score, rel=1e-6)


def test_query_modes_of_a_hybrid_index(hybrid, dense, sparse_index):
    q = "eagle over the mountains"
    dense_mode = hybrid.query_data(q, top_k=3, query_mode="DENSE")
    assert [h.id for h in dense_mode] == [h.id for h in dense.query_data(q, top_k=3)]
    assert all(0 <= h.score <= 1 for h in dense_mode)
    sparse_mode = hybrid.query_data(q, top_k=3, query_mode="SPARSE")
    assert [(h.id, round(h.score, 6)) for h in sparse_mode] == [
        (h.id, round(h.score, 6)) for h in sparse_index.query_data(q, top_k=3)]
    assert hybrid.query_data(q, top_k=1)[0].id == "eagle"


# -- batch shapes --------------------------------------------------------------------------------


def test_batch_shapes(vector_sandbox, dense):
    one = dense.query_data("cat", top_k=2)
    assert isinstance(one, list) and all(isinstance(h, QueryResult) for h in one)
    single_array = dense.query_data(["cat"], top_k=2)
    assert all(isinstance(h, QueryResult) for h in single_array)
    batch = dense.query_data(["cat", {"data": "bread", "topK": 1}], top_k=2)
    assert len(batch) == 2 and len(batch[0]) == 2 and len(batch[1]) == 1
    assert batch[0][0].id == "cat" and batch[1][0].id == "bread"
    # on the wire: one list for an object or a one-element array, a list of lists otherwise
    r1 = raw_post(vector_sandbox, "dense", "/query-data", [{"data": "cat", "topK": 1}]).json()["result"]
    assert isinstance(r1[0], dict)
    r2 = raw_post(vector_sandbox, "dense", "/query-data", [{"data": "cat", "topK": 1}, {"data": "dog", "topK": 1}])
    assert [[h["id"] for h in lst] for lst in r2.json()["result"]] == [["cat"], ["dog"]]


# -- namespaces and data operations -----------------------------------------------------------------


def test_namespaces_are_created_on_upsert_and_isolated(hybrid):
    assert hybrid.query_data("cat", namespace="pets-only") == []
    hybrid.upsert_data([{"id": "cat", "data": "A tabby kitten naps.", "metadata": {"ns": True}}], namespace="pets-only")
    in_ns = hybrid.query_data("cat", namespace="pets-only", include_metadata=True)
    assert [(h.id, h.metadata) for h in in_ns] == [("cat", {"ns": True})]
    default_cat = hybrid.fetch("cat")[0]
    assert default_cat.data == CORPUS[0]["data"]  # the default namespace is untouched
    info = hybrid.info()
    assert info.namespaces["pets-only"].vector_count == 1
    assert info.namespaces[""].vector_count == len(CORPUS)
    assert hybrid.delete("cat", namespace="pets-only") == 1
    assert hybrid.query_data("cat", namespace="pets-only") == []


@pytest.mark.parametrize("namespace", ["with space", "a/b", "ünï"])
def test_namespace_names_survive_the_path(sparse_index, namespace):
    sparse_index.upsert_data({"id": "n1", "data": "lonely namespace lighthouse"}, namespace=namespace)
    assert [h.id for h in sparse_index.query_data("lighthouse", namespace=namespace)] == ["n1"]
    assert namespace in sparse_index.info().namespaces
    assert sparse_index.query_data("lighthouse") == []
    assert sparse_index.delete("n1", namespace=namespace) == 1


def test_delete_namespace_answers_the_services_404_and_refuses_the_default_with_400(vector_sandbox):
    missing = raw_post(vector_sandbox, "nomodel", "/delete-namespace/never-made", None)
    assert missing.status_code == 404
    assert missing.json() == {"error": "Namespace never-made for the index nomodel does not exist", "status": 404}
    # upstash-vector's Index sends /delete-namespace for "", @upstash/vector /delete-namespace/
    for path in ("/delete-namespace", "/delete-namespace/"):
        refused = raw_post(vector_sandbox, "nomodel", path, [])
        assert refused.status_code == 400 and "default namespace cannot be deleted" in refused.json()["error"]


def test_a_namespace_reset_in_the_js_sdks_form_is_kept(vector_sandbox):
    # @upstash/vector 1.2.3 POSTs [] to reset/{ns}, list-namespaces and delete-namespace/{ns}
    ns = "js-reset"
    assert raw_post(vector_sandbox, "nomodel", f"/upsert/{ns}", {"id": "a", "vector": [0.1] * 384}).is_success
    assert raw_post(vector_sandbox, "nomodel", f"/reset/{ns}", []).json() == {"result": "Success"}
    assert ns in raw_post(vector_sandbox, "nomodel", "/list-namespaces", []).json()["result"]
    page = raw_post(vector_sandbox, "nomodel", f"/range/{ns}", {"cursor": "", "limit": 5}).json()
    assert page == {"result": {"nextCursor": "", "vectors": []}}
    info = httpx.get(vector_sandbox.env["SVC_VECTOR_NOMODEL_URL"] + "/info",
                     headers={"Authorization": f"Bearer {vector_sandbox.env['SVC_VECTOR_TOKEN']}"}).json()
    assert info["result"]["namespaces"][ns] == {"vectorCount": 0, "pendingVectorCount": 0}
    assert raw_post(vector_sandbox, "nomodel", f"/delete-namespace/{ns}", []).json() == {"result": "Success"}
    assert ns not in raw_post(vector_sandbox, "nomodel", "/list-namespaces", []).json()["result"]


def test_upsert_fetch_delete_round_trip(dense):
    ns = "round-trip"
    assert dense.upsert_data({"id": "one", "data": "first text", "metadata": {"k": 1}}, namespace=ns) == "Success"
    dense.upsert_data([{"id": "two", "data": "second text"}, {"id": "one", "data": "first text, edited"}],
                      namespace=ns)
    one, two, missing = dense.fetch(["one", "two", "three"], namespace=ns, include_vectors=True)
    assert one.data == "first text, edited" and one.metadata is None
    assert len(two.vector) == 384 and missing is None
    assert dense.delete(["one", "three"], namespace=ns) == 1
    assert dense.fetch(["one"], namespace=ns) == [None]
    assert dense.info().namespaces[ns].vector_count == 1
    dense.delete("two", namespace=ns)


def test_info_describes_each_index(dense, sparse_index, hybrid):
    d, s, h = dense.info(), sparse_index.info(), hybrid.info()
    assert (d.index_type, d.dimension, d.similarity_function) == ("DENSE", 384, "COSINE")
    assert d.dense_index.embedding_model == "all-MiniLM-L6-v2" and d.sparse_index is None
    assert s.index_type == "SPARSE" and s.sparse_index.embedding_model == "BM25" and s.dense_index is None
    assert h.index_type == "HYBRID" and h.dense_index and h.sparse_index
    assert d.vector_count >= len(CORPUS)


# -- auth and 422 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic eDp5"},
                                     {"Authorization": "Bearer"}])
def test_missing_or_wrong_token_is_401(vector_sandbox, headers):
    url = vector_sandbox.env["SVC_VECTOR_URL"] + "/query-data"
    response = httpx.post(url, json={"data": "cat"}, headers=headers)
    assert response.status_code == 401
    body = response.json()
    assert body["status"] == 401 and body["error"]


def test_client_raises_auth_error_without_leaking_the_token(vector_sandbox):
    secret = "not-the-token-0123456789"
    with Vector(vector_sandbox.env["SVC_VECTOR_URL"], secret) as v:
        with pytest.raises(AuthError) as info:
            v.query_data("cat")
        assert secret not in str(info.value) and secret not in repr(v)


@pytest.mark.parametrize("path", ["/query-data", "/upsert-data"])
def test_index_without_model_answers_422(vector_sandbox, path):
    body = {"data": "cat", "topK": 1} if path == "/query-data" else {"id": "a", "data": "cat"}
    response = raw_post(vector_sandbox, "nomodel", path, body)
    assert response.status_code == 422
    assert response.json()["status"] == 422
    assert "embedding model" in response.json()["error"]
    with Vector.from_settings(vector_sandbox.settings, kind="nomodel") as v, pytest.raises(
        EmbeddingModelRequired, match="embedding model"
    ):
        v.query_data("cat")


async def test_async_client(vector_sandbox):
    async with AsyncVector.from_settings(vector_sandbox.settings, kind="hybrid") as v:
        hits = await v.query_data(["dog in a park", "soup"], top_k=1, include_data=True)
        assert [h[0].id for h in hits] == ["dog", "soup"]
        assert hits[1][0].data == CORPUS[7]["data"]
        assert (await v.info()).index_type == "HYBRID"


def test_from_env_reads_svc_variables(vector_sandbox, monkeypatch):
    for name, value in vector_sandbox.env.items():
        monkeypatch.setenv(name, value)
    with Vector.from_env(kind="sparse") as v:
        assert v.url == vector_sandbox.env["SVC_VECTOR_SPARSE_URL"]
        assert v.query_data("csv files", top_k=1)[0].id == "csv"
    assert vector_sandbox.connect().vector.url == vector_sandbox.env["SVC_VECTOR_URL"]
