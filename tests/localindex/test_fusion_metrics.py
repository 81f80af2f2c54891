"""Fusion (RRF, DBSF) against hand-computed values, and the dense score normalisation per metric."""

from __future__ import annotations

import math

import numpy as np
import pytest

from svckit.core import fusion
from svckit.localindex import metrics


def test_rrf_matches_hand_computation():
    dense = ["a", "b", "c"]
    sparse = ["c", "a", "d"]
    fused = fusion.rrf([dense, sparse])
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["d"] == pytest.approx(1 / 63)
    assert [i for i, _ in fusion.top(fused, 4)] == ["a", "c", "b", "d"]


def test_dbsf_matches_hand_computation():
    dense = [("a", 0.9), ("b", 0.8), ("c", 0.4)]
    sparse = [("c", 12.0), ("a", 3.0)]
    mu1 = (0.9 + 0.8 + 0.4) / 3
    s1 = math.sqrt(((0.9 - mu1) ** 2 + (0.8 - mu1) ** 2 + (0.4 - mu1) ** 2) / 3)
    mu2, s2 = 7.5, 4.5

    def n(s, mu, sd):
        return (s - (mu - 3 * sd)) / (6 * sd)

    fused = fusion.dbsf([dense, sparse])
    assert fused["a"] == pytest.approx(n(0.9, mu1, s1) + n(3.0, mu2, s2))
    assert fused["b"] == pytest.approx(n(0.8, mu1, s1))
    assert fused["c"] == pytest.approx(n(0.4, mu1, s1) + n(12.0, mu2, s2))
    assert [i for i, _ in fusion.top(fused, 3)] == ["a", "c", "b"]  # 0.987 > 0.936 > 0.654


def test_dbsf_with_equal_scores_maps_to_the_middle():
    assert fusion.dbsf_normalise([2.0, 2.0]) == [0.5, 0.5]
    assert fusion.dbsf_normalise([]) == []


def test_candidate_depth():
    assert fusion.candidate_depth(10) == 50
    assert fusion.candidate_depth(40) == 80


def test_metric_normalisation_by_hand():
    rng = np.random.default_rng(1)
    q = rng.normal(size=8).astype(np.float32)
    v = rng.normal(size=(5, 8)).astype(np.float32)
    # COSINE: (1 + cos) / 2
    stored = metrics.prepare(v, "COSINE")
    qn = metrics.prepare(q, "COSINE")[0]
    cos = (v @ q) / (np.linalg.norm(v, axis=1) * np.linalg.norm(q))
    np.testing.assert_allclose(metrics.normalise(metrics.raw_scores(stored, qn, "COSINE"), "COSINE"),
                               (1 + cos) / 2, rtol=1e-5)
    # EUCLIDEAN: 1 / (1 + squared distance)
    sq = ((v - q) ** 2).sum(axis=1)
    np.testing.assert_allclose(metrics.normalise(metrics.raw_scores(v, q, "EUCLIDEAN"), "EUCLIDEAN"),
                               1 / (1 + sq), rtol=1e-5)
    # DOT_PRODUCT on unit vectors: (1 + dot) / 2
    u = stored
    np.testing.assert_allclose(metrics.normalise(metrics.raw_scores(u, qn, "DOT_PRODUCT"), "DOT_PRODUCT"),
                               (1 + u @ qn) / 2, rtol=1e-5)


def test_identical_vectors_score_one_for_every_metric():
    v = metrics.prepare(np.array([[0.6, 0.8]]), "COSINE")
    for metric in metrics.METRICS:
        raw = metrics.raw_scores(v, v[0], metric)
        assert metrics.normalise(raw, metric)[0] == pytest.approx(1.0)


def test_unknown_metric_is_refused():
    with pytest.raises(ValueError, match="COSINE"):
        metrics.check_metric("MANHATTAN")
