"""Explained hits over the local index: the recomputed score is the score the query returns (RRF and
DBSF), the fusion parts are the published formulas' terms, and the BM25 terms are exactly the query
terms present in the document, adding up to its sparse score."""

from __future__ import annotations

import math

import numpy as np
import pytest

from svckit._units import decimal_text
from svckit.core import bm25, fusion
from svckit.localindex import LocalIndex
from svckit.localindex.explain import explain
from tests.conftest import VECTOR_CORPUS as CORPUS

TEXT = {item["id"]: item["data"] for item in CORPUS}
QUERY = "bake bread dough in the oven, or cook a vegetable soup with stock"


@pytest.fixture(scope="module")
def hybrid_index() -> LocalIndex:
    index = LocalIndex(kind="hybrid")
    index.upsert_data(CORPUS)
    return index


@pytest.fixture(scope="module")
def sparse_only() -> LocalIndex:
    index = LocalIndex(kind="sparse")
    index.upsert_data(CORPUS)
    return index


def returned(index: LocalIndex, **body) -> list[tuple[str, float]]:
    return [(h["id"], h["score"]) for h in index.query({"data": QUERY, "topK": 5, **body})]


@pytest.mark.parametrize("algorithm", ["RRF", "DBSF"])
def test_the_explained_score_is_the_score_the_query_returns(hybrid_index, algorithm):
    ex = explain(hybrid_index, QUERY, top_k=5, fusion_algorithm=algorithm)
    assert [(h.id, h.score) for h in ex.hits] == returned(hybrid_index, fusionAlgorithm=algorithm)
    assert ex.fusion == algorithm and ex.mode == "HYBRID" and ex.depth == len(CORPUS)
    for h in ex.hits:
        assert h.recomputed == h.score  # the same arithmetic, to the last bit
        assert h.dense_part + h.sparse_part == pytest.approx(h.score, abs=1e-15)
    # both sides found the bread and soup passages, and they lead the fused ranking
    assert {h.id for h in ex.hits[:2]} == {"bread", "soup"}
    assert all(h.dense_rank is not None and h.sparse_rank is not None for h in ex.hits[:2])


def test_rrf_parts_are_one_over_k_plus_rank_and_zero_for_a_missing_side(hybrid_index):
    ex = explain(hybrid_index, QUERY, top_k=8, fusion_algorithm="RRF")
    for h in ex.hits:
        assert h.dense_part == (0.0 if h.dense_rank is None else 1 / (60 + h.dense_rank))
        assert h.sparse_part == (0.0 if h.sparse_rank is None else 1 / (60 + h.sparse_rank))
    absent = [h for h in ex.hits if h.sparse_rank is None]
    assert absent and all("0 (not among the" in h.formula for h in absent)  # e.g. the eagle shares no word
    top = ex.hits[0]
    assert top.formula.startswith(f"1/(60+{top.dense_rank}) + 1/(60+{top.sparse_rank}) = ")


def test_dbsf_bounds_are_mean_plus_minus_three_sigma_of_each_candidate_list(hybrid_index):
    ex = explain(hybrid_index, QUERY, top_k=5, fusion_algorithm="DBSF")
    dense_scores = [s for _, s in returned(hybrid_index, queryMode="DENSE", topK=50)]
    sparse_scores = [s for _, s in returned(hybrid_index, queryMode="SPARSE", topK=50)]
    for stats, scores in zip(ex.stats, (dense_scores, sparse_scores)):
        mu, sigma = float(np.mean(scores)), float(np.std(scores))  # population σ, as DBSF defines it
        assert stats.candidates == len(scores)
        assert stats.low == pytest.approx(mu - 3 * sigma) and stats.high == pytest.approx(mu + 3 * sigma)
    low, high = ex.stats[0].low, ex.stats[0].high
    for h in ex.hits:
        assert h.dense_part == pytest.approx((h.dense_score - low) / (high - low))
        d, lo, hi = (decimal_text(x) for x in (h.dense_score, low, high))  # svckit's one precision
        assert f"({d} − {lo}) / ({hi} − {lo})" in h.formula


def test_bm25_terms_are_the_query_terms_present_in_the_document_and_add_up_to_its_sparse_score(hybrid_index):
    ex = explain(hybrid_index, QUERY, top_k=8)
    query_terms = set(bm25.tokenize(QUERY))
    assert set(ex.query_terms) == query_terms
    for h in ex.hits:
        expected = query_terms & set(bm25.tokenize(TEXT[h.id]))
        assert {t.term for t in h.terms} == expected
        if h.sparse_score is not None:
            assert math.fsum(t.contribution for t in h.terms) == pytest.approx(h.sparse_score, rel=1e-12)
        for t in h.terms:
            assert t.query_weight == 1.0  # no weighting: one per distinct term
            assert t.idf is not None and t.idf > 0  # the index knows the IDF even when not weighing with it
            assert t.tf == bm25.tokenize(TEXT[h.id]).count(t.term) and t.doc_len == len(
                bm25.tokenize(TEXT[h.id])
            )
            assert t.dimension == bm25.term_index(t.term)
    bread = ex.hit("bread")
    assert {t.term for t in bread.terms} == {"bake", "bread", "dough"}
    assert {t.word for t in ex.hit("soup").terms} >= {"vegetable", "soup"}  # the words as typed, not stems


def test_idf_weighting_gives_each_term_its_idf_as_query_weight(sparse_only):
    ex = explain(sparse_only, QUERY, top_k=3, weighting_strategy="IDF")
    assert ex.kind == "sparse" and ex.fusion is None and ex.weighting == "IDF"
    n = len(CORPUS)
    for h in ex.hits:
        assert h.recomputed == pytest.approx(h.score, rel=1e-12)
        assert "no fusion" in h.formula
        for t in h.terms:
            df = sum(t.term in bm25.tokenize(text) for text in TEXT.values())
            assert t.idf == pytest.approx(math.log((n - df + 0.5) / (df + 0.5) + 1))
            assert t.query_weight == t.idf and t.contribution == pytest.approx(t.idf * t.doc_weight)


def test_a_single_mode_query_on_a_hybrid_index_is_not_fused(hybrid_index):
    dense = explain(hybrid_index, QUERY, top_k=3, query_mode="DENSE")
    assert dense.fusion is None and dense.mode == "DENSE" and dense.stats == ()
    assert [(h.id, h.score) for h in dense.hits] == returned(hybrid_index, queryMode="DENSE", topK=3)
    assert all(h.recomputed == h.score and h.terms == () and h.sparse_rank is None for h in dense.hits)
    assert dense.depth == 3 and fusion.candidate_depth(3) == 50  # no candidate pool without fusion
