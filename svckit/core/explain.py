"""Why a hit scored what it scored: dense rank and score, sparse rank and score, the BM25 terms that
matched with their weights, and the fusion arithmetic (RRF or DBSF) that gave the final score.

This module is the pure core (:func:`explain_ranked`, :func:`matched_terms`, the result types), with
no I/O; two entry points share it:

- :func:`svckit.localindex.explain.explain` over a :class:`~svckit.localindex.LocalIndex` in this
  process: the dense and sparse candidate lists come from the index's own DENSE and SPARSE queries at the fused query's candidate
  depth (:func:`svckit.core.fusion.candidate_depth`), the term weights from its inverted index
  (term frequency, document length, ``avgdl``, IDF), so everything is computed from the index's state;
- :func:`svckit.vector.explain.explain_hits` for any client (the service included): the same lists
  from separate DENSE / SPARSE queries, the document weights from ``fetch`` (sparse vectors), and the
  fusion recomputed here with the same code (:mod:`svckit.core.fusion`).

Either way the hits explained are the ones the real query returned, in its order, and each carries
the score the query returned next to the score recomputed from the parts, so a difference would show.

The fusion formulas (see :mod:`svckit.core.fusion`)::

    RRF(d)  = Σ_sides 1 / (k + rank_side(d))                 k = 60, ranks from 1; absent side adds 0
    DBSF(d) = Σ_sides (s_side(d) − (μ − 3σ)) / ((μ + 3σ) − (μ − 3σ))   μ, σ over that side's candidates

A sparse score is ``Σ_terms query weight × document weight``: the query weight is 1 per distinct
term (times ``ln((N − n + 0.5)/(n + 0.5) + 1)`` with IDF weighting), the document weight BM25's
``f·(k1 + 1) / (f + k1·(1 − b + b·|D|/avgdl))``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from svckit._units import decimal_text
from svckit.core import bm25, fusion

#: what an explanation says about where its numbers come from
COMPUTED_LOCALLY = (
    "computed here from the local index's state: candidate lists, BM25 term statistics and the fusion"
)


@dataclass(frozen=True)
class TermWeight:
    """One query term present in a document, and what it adds to the document's sparse score."""

    term: str  # the stemmed term, as the index stores it
    dimension: int
    query_weight: float  # 1, or the term's IDF with IDF weighting (NaN when the service does not say)
    doc_weight: float  # BM25 weight of the term in the document
    contribution: float  # query_weight × doc_weight
    tf: int | None = None  # occurrences in the document (local index only)
    doc_len: int | None = None
    idf: float | None = None  # the term's IDF in the index (local index only; weighs the query with IDF)
    word: str = ""  # the query's word that gives the term, as typed (the stem is ``term``)


@dataclass(frozen=True)
class SideStats:
    """A candidate list of a fused query: its depth and, for DBSF, the normalisation bounds."""

    side: str  # "dense" or "sparse"
    candidates: int
    mean: float
    std: float
    low: float  # μ − 3σ, maps to 0
    high: float  # μ + 3σ, maps to 1


@dataclass(frozen=True)
class HitExplanation:
    """One hit: its place in the answer, each side's rank and score, and how they combine."""

    rank: int  # 1-based, in the query's answer
    id: str
    score: float  # as the query returned it
    recomputed: float  # the same score recomputed from the parts below
    dense_rank: int | None = None
    dense_score: float | None = None
    sparse_rank: int | None = None
    sparse_score: float | None = None
    dense_part: float | None = None  # what the dense side adds to the fused score
    sparse_part: float | None = None
    formula: str = ""
    terms: tuple[TermWeight, ...] = ()


@dataclass(frozen=True)
class Explanation:
    """The explanation of one query's hits."""

    query: str
    kind: str  # dense, sparse, hybrid
    mode: str  # DENSE, SPARSE, HYBRID (what ran)
    fusion: str | None  # RRF / DBSF for a fused query, else None
    top_k: int
    depth: int  # candidates per side
    hits: tuple[HitExplanation, ...]
    stats: tuple[SideStats, ...] = ()
    weighting: str | None = None
    source: str = COMPUTED_LOCALLY
    query_terms: tuple[str, ...] = field(default=())

    def hit(self, hit_id: str) -> HitExplanation:
        for h in self.hits:
            if h.id == hit_id:
                return h
        raise KeyError(f"{hit_id!r} is not among the explained hits ({', '.join(h.id for h in self.hits)})")


Scored = Sequence[tuple[str, float]]


def side_stats(side: str, scored: Scored) -> SideStats:
    """The DBSF normalisation bounds of one candidate list (μ ± 3σ, population σ)."""
    scores = [s for _, s in scored]
    n = len(scores)
    mu = sum(scores) / n if n else 0.0
    sigma = math.sqrt(sum((s - mu) ** 2 for s in scores) / n) if n else 0.0
    return SideStats(side, n, mu, sigma, mu - fusion.DBSF_SIGMAS * sigma, mu + fusion.DBSF_SIGMAS * sigma)


def _fmt(x: float) -> str:
    return decimal_text(x)  # the precision of every number svckit writes


def explain_ranked(
    final: Scored,
    *,
    dense: Scored | None,
    sparse_hits: Scored | None,
    algorithm: str | None,
    terms: Callable[[str], Sequence[TermWeight]] | None = None,
    query: str = "",
    kind: str = "hybrid",
    mode: str = "HYBRID",
    top_k: int | None = None,
    weighting: str | None = None,
    source: str = COMPUTED_LOCALLY,
    query_terms: Sequence[str] = (),
) -> Explanation:
    """Explain the hits ``final`` (``[(id, returned score)]``, best first) of a query whose sides gave
    the candidate lists ``dense`` and ``sparse_hits`` (None: that side did not run). With both sides
    the lists are fused with ``algorithm`` (RRF or DBSF) by :mod:`svckit.core.fusion` itself, so
    the recomputed score is the index's own arithmetic. ``terms(id)`` gives a hit's matched terms."""
    fused = dense is not None and sparse_hits is not None
    algorithm = (algorithm or "RRF").upper() if fused else None
    dense_pos = {hid: (r, s) for r, (hid, s) in enumerate(dense or (), start=fusion.RRF_RANK_BASE)}
    sparse_pos = {hid: (r, s) for r, (hid, s) in enumerate(sparse_hits or (), start=fusion.RRF_RANK_BASE)}
    stats: tuple[SideStats, ...] = ()
    combined: dict[str, float] = {}
    norm: dict[str, dict[str, float]] = {"dense": {}, "sparse": {}}
    if fused:
        assert dense is not None and sparse_hits is not None
        if algorithm == "DBSF":
            combined = fusion.dbsf([dense, sparse_hits])
            stats = (side_stats("dense", dense), side_stats("sparse", sparse_hits))
            for name, scored in (("dense", dense), ("sparse", sparse_hits)):
                norm[name] = dict(zip([h for h, _ in scored], fusion.dbsf_normalise([s for _, s in scored])))
        else:
            combined = fusion.rrf([[h for h, _ in dense], [h for h, _ in sparse_hits]])
            stats = (
                SideStats("dense", len(dense), math.nan, math.nan, math.nan, math.nan),
                SideStats("sparse", len(sparse_hits), math.nan, math.nan, math.nan, math.nan),
            )
    depth = max(len(dense or ()), len(sparse_hits or ()))
    hits = []
    for rank, (hid, score) in enumerate(final, start=1):
        d_rank, d_score = dense_pos.get(hid, (None, None))
        s_rank, s_score = sparse_pos.get(hid, (None, None))
        matched = tuple(terms(hid)) if terms is not None and sparse_hits is not None else ()
        d_part = s_part = None
        if fused and algorithm == "RRF":
            d_part = 0.0 if d_rank is None else 1.0 / (fusion.RRF_K + d_rank)
            s_part = 0.0 if s_rank is None else 1.0 / (fusion.RRF_K + s_rank)
            recomputed = combined.get(hid, math.nan)
            formula = (
                " + ".join(
                    [
                        f"1/({fusion.RRF_K}+{d_rank})"
                        if d_rank
                        else f"0 (not among the {len(dense or ())} dense candidates)",
                        f"1/({fusion.RRF_K}+{s_rank})"
                        if s_rank
                        else f"0 (not among the {len(sparse_hits or ())} sparse candidates)",
                    ]
                )
                + f" = {_fmt(d_part)} + {_fmt(s_part)} = {_fmt(recomputed)}"
            )
        elif fused:
            d_part = norm["dense"].get(hid, 0.0)
            s_part = norm["sparse"].get(hid, 0.0)
            recomputed = combined.get(hid, math.nan)
            parts = []
            for side, st, raw in (("dense", stats[0], d_score), ("sparse", stats[1], s_score)):
                if raw is None:
                    parts.append(f"0 (not among the {st.candidates} {side} candidates)")
                elif st.std == 0:
                    parts.append("0.5 (all candidates scored alike)")
                else:
                    low = _fmt(st.low) if st.low >= 0 else f"({_fmt(st.low)})"
                    parts.append(f"({_fmt(raw)} − {low}) / ({_fmt(st.high)} − {low})")
            formula = " + ".join(parts) + f" = {_fmt(d_part)} + {_fmt(s_part)} = {_fmt(recomputed)}"
        elif dense is not None:
            recomputed = d_score if d_score is not None else math.nan
            formula = f"dense score {_fmt(recomputed)} (similarity normalised to 0..1), no fusion"
        else:
            recomputed = (
                math.fsum(t.contribution for t in matched)
                if matched
                else (s_score if s_score is not None else math.nan)
            )
            shown = " + ".join(f"{_fmt(t.query_weight)}×{_fmt(t.doc_weight)}" for t in matched) or "no terms"
            formula = f"Σ query weight × BM25 weight = {shown} = {_fmt(recomputed)}, no fusion"
        hits.append(
            HitExplanation(
                rank,
                hid,
                float(score),
                float(recomputed),
                d_rank,
                d_score,
                s_rank,
                s_score,
                d_part,
                s_part,
                formula,
                matched,
            )
        )
    return Explanation(
        query,
        kind,
        mode,
        algorithm,
        top_k if top_k is not None else len(final),
        depth,
        tuple(hits),
        stats,
        weighting,
        source,
        tuple(query_terms),
    )


def matched_terms(
    text: str,
    doc_weights: dict[int, float],
    query_weights: dict[int, float] | None = None,
) -> list[TermWeight]:
    """The distinct terms of ``text`` whose dimension the document holds, best contribution first.

    ``doc_weights``: the document's sparse vector ``{dimension: weight}``; ``query_weights``: the
    query's ``{dimension: weight}`` (None: 1 per term, the unweighted query)."""
    out = []
    for term, word in bm25.typed_words(text).items():
        dim = bm25.term_index(term)
        if dim not in doc_weights:
            continue
        qw = 1.0 if query_weights is None else query_weights.get(dim, math.nan)
        out.append(TermWeight(term, dim, qw, doc_weights[dim], qw * doc_weights[dim], word=word))
    return sorted(out, key=lambda t: (-t.contribution if not math.isnan(t.contribution) else 0.0, t.term))
