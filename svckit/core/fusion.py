"""Fusion of a dense and a sparse ranking for hybrid indexes, as published.

Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009)::

    RRF(d) = Σ_lists 1 / (k + rank_list(d)),   k = 60, rank counted from 1 (the best hit has rank 1)

A list that does not hold ``d`` adds nothing.

Distribution-Based Score Fusion (the formulation the hosted service and Qdrant document)::

    DBSF(d) = Σ_lists (s_list(d) − (μ − 3σ)) / (6σ)

with μ and σ the mean and population standard deviation of that list's candidate scores; a list whose
scores are all equal (σ = 0) maps every score to 0.5, the middle of the range. Scores are not clipped.

Candidate depth: each side contributes its best ``candidate_depth(top_k) = max(2·top_k, 50)``
candidates (at most 1,000, the largest topK), so fusion can lift a document that is only mid-ranked
on one side into the top k.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

RRF_K = 60
RRF_RANK_BASE = 1
DBSF_SIGMAS = 3.0
MIN_CANDIDATES = 50
#: the largest topK a query may ask for (the sandbox's default limit, localindex/limits.py)
MAX_CANDIDATES = 1000


def candidate_depth(top_k: int) -> int:
    """How many candidates each side of a hybrid query contributes before fusion: never more than
    a query may ask for (at least ``top_k``), so that explaining a hit can fetch each side's
    candidates through the query API, as the index took them."""
    return min(max(2 * top_k, MIN_CANDIDATES), max(top_k, MAX_CANDIDATES))


def rrf(rankings: Sequence[Sequence[K]], k: int = RRF_K) -> dict[K, float]:
    """Reciprocal Rank Fusion of best-first id lists -> fused score per id."""
    fused: dict[K, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=RRF_RANK_BASE):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused


def dbsf_normalise(scores: Sequence[float]) -> list[float]:
    """One list's scores mapped with ``(s − (μ − 3σ)) / (6σ)``."""
    if not scores:
        return []
    n = len(scores)
    mu = sum(scores) / n
    sigma = math.sqrt(sum((s - mu) ** 2 for s in scores) / n)
    if sigma == 0:
        return [0.5] * n
    low = mu - DBSF_SIGMAS * sigma
    return [(s - low) / (2 * DBSF_SIGMAS * sigma) for s in scores]


def dbsf(scored_lists: Sequence[Sequence[tuple[K, float]]]) -> dict[K, float]:
    """Distribution-Based Score Fusion of ``[(id, score), ...]`` lists -> fused score per id."""
    fused: dict[K, float] = {}
    for scored in scored_lists:
        normalised = dbsf_normalise([s for _, s in scored])
        for (item, _), value in zip(scored, normalised):
            fused[item] = fused.get(item, 0.0) + value
    return fused


def top(fused: dict[K, float], k: int) -> list[tuple[K, float]]:
    """The ``k`` best fused items, best first (ties broken by id for a stable order)."""
    return sorted(fused.items(), key=lambda kv: (-kv[1], str(kv[0])))[:k]
