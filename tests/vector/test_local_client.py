"""LocalVector, the Vector client over a LocalIndex in this process: it answers what the remote client
answers from the sandbox (same models, same hits) and refuses with the same exception types."""

from __future__ import annotations

import pytest

from svckit.errors import BadRequest, EmbeddingModelRequired, InvalidArgument, NotFound
from svckit.vector import LocalVector, VectorQueries
from svckit.vector.models import QueryOptions
from tests.conftest import VECTOR_CORPUS as CORPUS


@pytest.fixture(scope="module")
def local_hybrid():
    from svckit.localindex import LocalIndex

    index = LocalIndex(kind="hybrid")
    index.upsert_data(CORPUS)
    index.upsert_data(CORPUS[:2], namespace="pets only")
    return LocalVector(index)


def test_local_and_remote_clients_give_the_same_hits_for_the_same_options(local_hybrid, hybrid):
    options = QueryOptions(top_k=3, include_metadata=True, include_data=True, filter="topic = 'python'",
                           query_mode="DENSE").model_dump()
    local = local_hybrid.query_data("store rows in a database", **options)
    remote = hybrid.query_data("store rows in a database", **options)
    assert [r.id for r in local] == [r.id for r in remote] and local[0].id == "sqlite"
    assert local[0].metadata == {"topic": "python", "module": "sqlite3", "year": 2006}
    assert local[0].data == CORPUS[5]["data"]


def test_a_batch_gives_one_list_per_query_and_namespaces_are_kept_apart(local_hybrid):
    cats, bread = local_hybrid.query_data(["a purring cat", "bake bread"], top_k=1)
    assert cats[0].id == "cat" and bread[0].id == "bread"
    only = local_hybrid.query_data("bake bread", top_k=5, namespace="pets only")
    assert {r.id for r in only} == {"cat", "dog"}


def test_browsing_calls_answer_the_service_models(local_hybrid):
    assert local_hybrid.list_namespaces() == ["", "pets only"]
    page = local_hybrid.range("", 3, include_metadata=True)
    assert [r.id for r in page.vectors] == ["bread", "cat", "csv"] and page.next_cursor == "dog"
    found, missing = local_hybrid.fetch(["dog", "nope"], namespace="pets only", include_vectors=True)
    assert found.metadata["animal"] == "dog" and len(found.vector) == 384 and found.sparse_vector.indices
    assert missing is None
    info = local_hybrid.info()
    assert info.namespaces["pets only"].vector_count == 2 and info.vector_count == len(CORPUS) + 2


def test_a_bad_filter_is_a_bad_request_with_its_position_like_the_service(local_hybrid, hybrid):
    for client in (local_hybrid, hybrid):
        with pytest.raises(BadRequest, match="position 16") as caught:
            client.query_data("cat", filter="animal = 'c' AND")
        assert caught.value.status == 400


def test_arguments_are_refused_before_the_index_is_asked_like_the_remote_client(local_hybrid):
    with pytest.raises(InvalidArgument, match="top_k"):
        local_hybrid.query_data("cat", top_k=0)
    with pytest.raises(InvalidArgument, match="query_mode"):
        local_hybrid.query_data("cat", query_mode="SIDEWAYS")


def test_an_index_without_a_model_answers_embedding_model_required(local_hybrid):
    from svckit.localindex import LocalIndex

    with pytest.raises(EmbeddingModelRequired) as caught:
        LocalVector(LocalIndex(kind="dense", model=False)).query_data("cat")
    assert caught.value.status == 422
    with pytest.raises(NotFound):
        local_hybrid.delete_namespace("no such namespace")


def test_query_options_drop_what_an_index_kind_does_not_take():
    full = QueryOptions(weighting_strategy="IDF", fusion_algorithm="DBSF", query_mode="SPARSE")
    assert full.for_kind("dense").model_dump(include={"weighting_strategy", "fusion_algorithm", "query_mode"}) == \
        {"weighting_strategy": None, "fusion_algorithm": None, "query_mode": None}
    assert full.for_kind("sparse").weighting_strategy == "IDF" and full.for_kind("sparse").query_mode is None
    assert full.for_kind("hybrid") == full
    with pytest.raises(ValueError):
        QueryOptions(top_k=0)


def test_both_clients_satisfy_the_protocol_the_widget_types_them_with(local_hybrid, hybrid):
    def first_id(client: VectorQueries) -> str:
        return client.query_data("a purring cat", top_k=1)[0].id

    assert first_id(local_hybrid) == first_id(hybrid) == "cat"
