"""Vector frames: query hits, stored records, namespaces, and a query's explanation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from svckit._units import mark
from svckit.frames._columns import Column, build, models
from svckit.vector.models import NamespaceInfo, QueryResult, VectorRecord


def _sparse(part: str) -> Any:
    return lambda i: None if i.sparse_vector is None else getattr(i.sparse_vector, part)


_ID, _DATA, _VECTOR = Column("id", "string"), Column("data", "string"), Column("vector", "object")
#: a stored vector's columns, then one ``metadata.<name>`` column per metadata field (nested fields dotted)
RECORD_COLUMNS = (_ID, _DATA, _VECTOR, Column("sparse_indices", "object", _sparse("indices")),
                  Column("sparse_values", "object", _sparse("values")))
#: a hit's: ``rank`` (from 1) and ``score`` around a record's; a batch's frame leads with ``query``
QUERY_COLUMNS = (Column("rank", "Int64"), _ID, Column("score", "Float64", unit="score"), *RECORD_COLUMNS[1:])
#: the playground's hits: plain int and float, the sparse vector's size for its indices and values
HITS_COLUMNS = (Column("rank", "int64"), Column("id", "str"), Column("score", "float64", unit="score"), _DATA,
                _VECTOR, Column("sparse_terms", "Int64", lambda i: None if i.sparse_vector is None
                                else len(i.sparse_vector.indices), "count"))


def _with_metadata(frame: pd.DataFrame, items: Sequence[QueryResult | VectorRecord]) -> pd.DataFrame:
    """``frame`` and one ``metadata.<name>`` column per metadata field of ``items`` (nested fields dotted)."""
    metas = [dict(i.metadata or {}) for i in items]
    if not any(metas):
        return frame
    meta = pd.json_normalize(metas).add_prefix("metadata.").convert_dtypes()
    return mark(pd.concat([frame, meta.set_index(frame.index)], axis=1))


def _hits(results: Any) -> tuple[bool, list[list[QueryResult]]]:
    """Whether ``results`` is a batch, and its groups of hits (one group when it is not)."""
    scores = results.get("scores") if isinstance(results, Mapping) else getattr(results, "scores", None)
    results = list(results if scores is None else scores)
    batch = bool(results) and isinstance(results[0], (list, tuple))
    return batch, [models(group, QueryResult, "scores") for group in (results if batch else [results])]


def query_frame(results: Any) -> pd.DataFrame:
    """Query results, one row per hit: ``[query,] rank, id, score, data, vector, sparse_indices,
    sparse_values`` plus one ``metadata.<name>`` column per metadata field (nested fields dotted).
    ``rank`` counts from 1, as the widgets and the explanations do (the best hit is rank 1).

    A batch (a list of lists) gets a leading ``query`` column with the query's position. Accepts
    ``QueryResult`` models, the wire dicts of the local index, or a resumable query's first page
    (``ResumableQueryResult``: its ``scores``).
    """
    batch, groups = _hits(results)
    hits = [hit for group in groups for hit in group]
    columns = (Column("query", "Int64"), *QUERY_COLUMNS) if batch else QUERY_COLUMNS
    frame = build(columns, hits, query=[qi for qi, group in enumerate(groups) for _ in group],
                  rank=[rank for group in groups for rank in range(1, len(group) + 1)])
    return _with_metadata(frame, hits)


def records_frame(records: Any) -> pd.DataFrame:
    """Stored vectors (``fetch``, a ``range`` page, ``iter_range``), one row per vector: ``id, data,
    vector, sparse_indices, sparse_values`` and the ``metadata.<name>`` columns. ``None`` entries (ids
    that ``fetch`` did not find) are left out. Accepts ``VectorRecord`` models or wire dicts."""
    items = models(records, VectorRecord, "vectors")
    return _with_metadata(build(RECORD_COLUMNS, items), items)


NAMESPACE_COLUMNS = (Column("namespace", "string", lambda pair: pair[0]),
                     Column("vector_count", "Int64", lambda pair: pair[1].vector_count, "count"),
                     Column("pending_vector_count", "Int64", lambda pair: pair[1].pending_vector_count, "count"))


def namespaces_frame(info: Any) -> pd.DataFrame:
    """Per-namespace counts of an index (``IndexInfo`` or the wire ``info`` dict), one row per
    namespace, the default namespace ("") first: ``namespace, vector_count, pending_vector_count``."""
    given = info.get("namespaces") if isinstance(info, Mapping) else info.namespaces
    return build(NAMESPACE_COLUMNS, sorted((name, NamespaceInfo.model_validate(ns, from_attributes=True))
                                           for name, ns in (given or {}).items()))


def hits_frame(items: Sequence[Any]) -> pd.DataFrame:
    """One query's hits as the playground shows them: :func:`query_frame` with ``rank`` as int64,
    ``id`` as str, ``score`` as float64, and ``sparse_terms`` (the sparse vector's size, last) in place
    of its indices and values. Accepts the clients' QueryResult models (or their dicts)."""
    hits = models(list(items), QueryResult, "scores")
    frame = _with_metadata(build(HITS_COLUMNS, hits, rank=range(1, len(hits) + 1)), hits)
    return frame[[c for c in frame.columns if c != "sparse_terms"] + ["sparse_terms"]]


EXPLAIN_COLUMNS = (
    Column("rank", "Int64"), Column("id", "string"),
    *(Column(name, "Float64", unit="score") for name in ("score", "recomputed")),
    Column("dense_rank", "Int64"), Column("dense_score", "Float64", unit="score"),
    Column("sparse_rank", "Int64"), Column("sparse_score", "Float64", unit="score"),
    *(Column(name, "Float64", unit="score") for name in ("dense_part", "sparse_part")),
    Column("terms", "string", lambda h: ", ".join(t.word or t.term for t in h.terms)),
    Column("formula", "string"),
)


def explain_frame(explanation: Any) -> pd.DataFrame:
    """An explanation of a query's hits (:func:`svckit.vector.explain.explain_hits`), one row per hit:
    ``rank, id, score`` (as the query returned it), ``recomputed`` (from the parts), ``dense_rank,
    dense_score, sparse_rank, sparse_score``, ``dense_part, sparse_part`` (what each side adds to a
    fused score: ``1/(k+rank)`` for RRF, the normalised score for DBSF), ``terms`` (the query's words
    whose BM25 terms matched, best first) and ``formula`` (the arithmetic, in words)."""
    return build(EXPLAIN_COLUMNS, explanation.hits)


def _hit(name: str) -> Any:
    return lambda pair: getattr(pair[0], name)


def _term(name: str) -> Any:
    return lambda pair: getattr(pair[1], name)


EXPLAIN_TERMS_COLUMNS = (
    Column("rank", "Int64", _hit("rank")), Column("id", "string", _hit("id")),
    Column("word", "string", lambda pair: pair[1].word or pair[1].term), Column("term", "string", _term("term")),
    Column("dimension", "Int64", _term("dimension")),
    *(Column(name, "Float64", _term(name), "score") for name in ("query_weight", "doc_weight", "contribution")),
    Column("tf", "Int64", _term("tf"), "count"), Column("doc_len", "Int64", _term("doc_len"), "count"),
    Column("idf", "Float64", _term("idf"), "score"),
)


def explain_terms_frame(explanation: Any, hit_id: str | None = None) -> pd.DataFrame:
    """The matched BM25 terms of the explained hits (or of one), one row per (hit, term): ``rank, id,
    word`` (as the query typed it), ``term`` (its stem, what the index stores), ``dimension,
    query_weight, doc_weight, contribution, tf, doc_len, idf``; a hit's contributions add up to its
    sparse score. ``tf``, ``doc_len`` and ``idf`` are known for a local index only (NA from the
    service)."""
    return build(EXPLAIN_TERMS_COLUMNS,
                 [(h, t) for h in explanation.hits if hit_id is None or h.id == hit_id for t in h.terms])


FUSION_STATS_COLUMNS = (Column("side", "string"), Column("candidates", "Int64", unit="count"),
                        *(Column(name, "float64", unit="score") for name in ("mean", "std", "low", "high")))


def fusion_stats_frame(explanation: Any) -> pd.DataFrame:
    """The candidate lists of a fused query, one row per side: ``side, candidates`` and, for DBSF, the
    normalisation ``mean, std, low`` (μ − 3σ, maps to 0) and ``high`` (μ + 3σ, maps to 1)."""
    return build(FUSION_STATS_COLUMNS, explanation.stats)
