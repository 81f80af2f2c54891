"""explain_hits for any client: over the sandbox's hybrid index (the service returns only final scores,
so the sides come from DENSE / SPARSE queries, the weights from fetch, the fusion is recomputed here)
the recomputed scores equal the returned ones; a LocalVector is explained from its index; frames."""

from __future__ import annotations

import math

import pytest

from svckit import frames
from svckit.core import bm25
from svckit.vector.explain import FROM_SERVICE, explain_hits, index_kind
from svckit.vector.models import QueryOptions
from tests.conftest import VECTOR_CORPUS

TEXT = {item["id"]: item["data"] for item in VECTOR_CORPUS}
QUERY = "bake bread dough in the oven, or cook a vegetable soup with stock"


@pytest.mark.parametrize("algorithm", ["RRF", "DBSF"])
def test_service_hits_are_explained_and_the_fusion_recomputed_here_gives_the_returned_score(
    hybrid, algorithm
):
    ex = explain_hits(hybrid, QUERY, QueryOptions(top_k=5, fusion_algorithm=algorithm))
    assert ex.source == FROM_SERVICE and ex.kind == "hybrid" and ex.fusion == algorithm
    returned = hybrid.query_data(QUERY, top_k=5, fusion_algorithm=algorithm)
    assert [(h.id, h.score) for h in ex.hits] == [(r.id, r.score) for r in returned]
    for h in ex.hits:
        assert h.recomputed == pytest.approx(h.score, rel=1e-12)
        assert h.dense_rank is not None  # every text is a dense candidate (8 < 50)
    bread = ex.hit("bread")
    # the terms come from the fetched sparse vector: the query's terms present in the text
    assert {t.term for t in bread.terms} == set(bm25.tokenize(QUERY)) & set(bm25.tokenize(TEXT["bread"]))
    assert math.fsum(t.contribution for t in bread.terms) == pytest.approx(bread.sparse_score, rel=1e-9)
    assert all(t.tf is None for t in bread.terms)  # the service does not say term frequencies


def test_service_idf_query_weights_are_unknown_and_shown_as_nan(hybrid):
    ex = explain_hits(hybrid, QUERY, QueryOptions(top_k=3, query_mode="SPARSE", weighting_strategy="IDF"))
    assert ex.fusion is None and ex.mode == "SPARSE"
    terms = frames.explain_terms_frame(ex)
    assert len(terms) and terms["query_weight"].isna().all() and terms["doc_weight"].notna().all()


def test_a_local_client_is_explained_from_its_index_and_frames_show_it():
    from svckit.localindex import LocalIndex
    from svckit.vector import LocalVector

    index = LocalIndex(kind="hybrid")
    index.upsert_data(VECTOR_CORPUS)
    client = LocalVector(index)
    assert index_kind(client) == "hybrid"
    ex = explain_hits(client, QUERY, QueryOptions(top_k=4, fusion_algorithm="DBSF"))
    assert "local index" in ex.source
    table = frames.explain_frame(ex)
    assert table.columns.tolist() == [
        "rank",
        "id",
        "score",
        "recomputed",
        "dense_rank",
        "dense_score",
        "sparse_rank",
        "sparse_score",
        "dense_part",
        "sparse_part",
        "terms",
        "formula",
    ]
    assert table["rank"].tolist() == [1, 2, 3, 4] and (table["score"] == table["recomputed"]).all()
    assert table.set_index("id").loc["bread", "terms"] == "bake, bread, dough"
    terms = frames.explain_terms_frame(ex, "bread")
    assert terms["term"].tolist() == ["bake", "bread", "dough"] and (terms["tf"] == 1).all()
    stats = frames.fusion_stats_frame(ex)
    assert stats["side"].tolist() == ["dense", "sparse"]
    assert (stats["high"] - stats["low"]).tolist() == pytest.approx((6 * stats["std"]).tolist())
