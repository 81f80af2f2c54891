"""The reads of :class:`~svckit.localindex.LocalIndex`: ``fetch``, ``range``, ``query`` and the resumable
queries, and how a query is answered (which sides it searches, its filter judged outside the lock, the
ranking: dense, BM25 and their fusion, and each hit shaped as the service returns it).

A request's work is bounded in time (``max_query_seconds``) and stops when its client goes (``cancel``):
a :class:`~svckit.localindex.limits.Budget` checked between the queries of a batch and between the
records a filter judges.

:class:`IndexReads` is a base class of ``LocalIndex``, which is in :mod:`svckit.localindex.index`
with what an index is made of (kind, model, namespaces, persistence), its writes and its ``info``.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from svckit._progress import Cancel
from svckit.core import fusion
from svckit.core.filter import Filter, parse_filter
from svckit.embedding import DenseEmbedder
from svckit.localindex.limits import Budget, Limits
from svckit.localindex.namespace import Namespace, Verdicts
from svckit.localindex.request import (
    Includes,
    QueryRequest,
    SparsePair,
    parse_ids,
    parse_queries,
    parse_range,
    parse_resumable_end,
    parse_resumable_next,
    parse_resumable_start,
)
from svckit.localindex.resumable import Resumable, ResumableQueries


class IndexReads:
    """The read side of :class:`~svckit.localindex.LocalIndex` (module docstring)."""

    if TYPE_CHECKING:  # LocalIndex's own (svckit/localindex/index.py), which these reads use
        kind: str
        limits: Limits
        clock: Callable[[], float]
        _lock: threading.RLock
        _resumable: ResumableQueries

        def _namespace(self, name: str, create: bool = False) -> Namespace | None: ...
        def _require_model(self) -> DenseEmbedder | None: ...
        def _check_vectors(self, vector: list[float] | None, sparse_vector: SparsePair | None, *,
                           query: bool, where: str = "") -> None: ...
        def __len__(self) -> int: ...

    # -- by id: fetch and range --------------------------------------------------------------
    @staticmethod
    def _with_prefix(ns: Namespace, prefix: str) -> list[str]:
        ids = ns.ids_in_order()
        out = []
        for rid in ids[bisect.bisect_left(ids, prefix):]:
            if not rid.startswith(prefix):
                break
            out.append(rid)
        return out

    def fetch(self, ids: Any = None, namespace: str = "", *, prefix: str | None = None,
              include_metadata: bool = True, include_vectors: bool = False,
              include_data: bool = True) -> list[dict[str, Any] | None]:
        """Records by id, in the order asked (``None`` for an id that does not exist), or every record
        whose id starts with ``prefix``, in id order."""
        wanted = parse_ids(ids) if prefix is None else None
        with self._lock:
            ns = self._namespace(namespace)
            if wanted is None:
                wanted = [] if ns is None else self._with_prefix(ns, prefix or "")
            out: list[dict[str, Any] | None] = []
            for rid in wanted:
                row = None if ns is None else ns.row_of.get(rid)
                if row is None:
                    out.append(None)
                    continue
                assert ns is not None
                out.append(self._shape(ns, row, None, include_metadata, include_vectors, include_data))
            return out

    def range(self, body: Any, namespace: str = "") -> dict[str, Any]:
        """A page of vectors in id order from ``cursor`` (``{cursor, limit, prefix, include*}``) ->
        ``{nextCursor, vectors}``; the cursor is the id the next page starts at, "" once done."""
        cursor, limit, prefix, inc = parse_range(body)
        with self._lock:
            ns = self._namespace(namespace)
            if ns is None:
                return {"nextCursor": "", "vectors": []}
            ids = ns.ids_in_order()
            at = bisect.bisect_left(ids, max(cursor, prefix))
            page: list[dict[str, Any]] = []
            while at < len(ids) and len(page) < limit and ids[at].startswith(prefix):
                page.append(self._shape(ns, ns.row_of[ids[at]], None, inc.metadata, inc.vectors, inc.data))
                at += 1
            more = at < len(ids) and ids[at].startswith(prefix)
            return {"nextCursor": ids[at] if more else "", "vectors": page}

    def _shape(self, ns: Namespace, row: int, score: float | None, include_metadata: bool,
               include_vectors: bool, include_data: bool) -> dict[str, Any]:
        rec = ns.records[row]
        item: dict[str, Any] = {"id": rec.id}
        if score is not None:
            item["score"] = float(score)
        if include_vectors:
            if ns.dense is not None:
                item["vector"] = [float(x) for x in ns.dense.vector(row)]
            if ns.sparse is not None:
                indices, values = ns.sparse.vector(row)
                item["sparseVector"] = {"indices": indices, "values": values}
        if include_metadata and rec.metadata is not None:
            item["metadata"] = rec.metadata
        if include_data and rec.data is not None:
            item["data"] = rec.data
        return item

    # -- queries -----------------------------------------------------------------------------
    def query(self, request: Any, namespace: str = "", *, text: bool = True, cancel: Cancel = None
              ) -> list[dict[str, Any]] | list[list[dict[str, Any]]]:
        """Answer a query-data body (``text``) or a query body (vectors): one object (or a one-element
        array) -> one list of results; an array of several -> one list per query, in order. Past
        ``max_query_seconds`` ``InvalidRequest``; once ``cancel`` is set, ``Cancelled``."""
        queries = parse_queries(request, text=text, limits=self.limits)
        filters = [parse_filter(q.filter, self.limits) for q in queries]  # every bad filter fails first
        self._model_ready(queries)
        budget = Budget(self.limits.max_query_seconds, cancel)
        answers = []
        for q, flt in zip(queries, filters):
            budget.check()
            answers.append(self._query_one(q, flt, namespace, budget))
        return answers[0] if len(answers) == 1 else answers

    def _query_one(self, q: QueryRequest, flt: Filter | None, namespace: str,
                   budget: Budget) -> list[dict[str, Any]]:
        sides = self._sides(q)
        verdicts = self._prefilter(flt, namespace, budget)
        with self._lock:
            ns, hits = self._rank(q, sides, verdicts, namespace, q.top_k)
            return [self._shape(ns, int(row), score, q.include_metadata, q.include_vectors, q.include_data)
                    for row, score in hits]

    def _model_ready(self, queries: list[QueryRequest]) -> None:
        """Wait for the embedding model where a query's text needs it, before a request's time starts:
        loading it (once, while the sandbox starts) is not the request's work."""
        if self.kind != "sparse" and any(q.data is not None for q in queries):
            embedder = self._require_model()
            if embedder is not None:
                embedder.load()

    def _sides(self, q: QueryRequest) -> tuple[bool, bool, np.ndarray | None]:
        """Whether a query searches the dense side, the sparse side, and its dense vector (text is
        embedded here, outside the lock)."""
        if q.data is not None:
            embedder = self._require_model()
            use_dense = self.kind == "dense" or (self.kind == "hybrid" and q.query_mode != "SPARSE")
            use_sparse = self.kind == "sparse" or (self.kind == "hybrid" and q.query_mode != "DENSE")
            return use_dense, use_sparse, (embedder.embed([q.data])[0] if use_dense and embedder else None)
        self._check_vectors(q.vector, q.sparse_vector, query=True)
        qvec = None if q.vector is None else np.asarray(q.vector, dtype=np.float32)
        return q.vector is not None, q.sparse_vector is not None, qvec

    def _prefilter(self, flt: Filter | None, namespace: str, budget: Budget) -> Verdicts | None:
        """``flt``'s verdict on every record of a namespace, evaluated without holding the lock, the
        budget checked between records."""
        if flt is None:
            return None
        with self._lock:
            ns = self._namespace(namespace)
            records = [] if ns is None else list(ns.records.values())
        matched, matches, check = {}, flt.matches, budget.check
        for rec in records:
            check()
            matched[id(rec)] = matches(rec.metadata)
        return Verdicts(flt, records, matched)

    def _rank(self, q: QueryRequest, sides: tuple[bool, bool, np.ndarray | None], verdicts: Verdicts | None,
              namespace: str, top_k: int) -> tuple[Any, list[tuple[int, float]]]:
        """The best ``top_k`` ``(row, score)`` of a namespace for a query, and the namespace. Call with
        the lock held: rows mean something only until the next write."""
        use_dense, use_sparse, qvec = sides
        ns = self._namespace(namespace)
        if ns is None or not ns.row_of:
            return ns, []
        rows = None
        if verdicts is not None:
            rows = verdicts.rows(ns)
            if len(rows) == 0:
                return ns, []
        fused = use_dense and use_sparse
        depth = fusion.candidate_depth(top_k) if fused else top_k
        dense_hits: list[tuple[int, float]] = []
        sparse_hits: list[tuple[int, float]] = []
        if use_dense:
            assert ns.dense is not None and qvec is not None
            found, scores = ns.dense.search(qvec, depth, rows)
            dense_hits = list(zip(found.tolist(), scores.tolist()))
        if use_sparse:
            assert ns.sparse is not None
            if q.data is not None:
                dims, values = ns.sparse.query_vector(q.data, q.weighting_strategy)
            else:
                assert q.sparse_vector is not None
                dims, values = ns.sparse.weigh(*q.sparse_vector, q.weighting_strategy)
            sparse_hits = fusion.top(ns.sparse.score(dims, values, rows), depth)
        if fused:
            if q.fusion_algorithm == "DBSF":
                combined = fusion.dbsf([dense_hits, sparse_hits])
            else:
                combined = fusion.rrf([[r for r, _ in dense_hits], [r for r, _ in sparse_hits]])
            return ns, fusion.top(combined, top_k)
        return ns, (dense_hits if use_dense else sparse_hits)[:top_k]

    # -- resumable queries -------------------------------------------------------------------
    def resumable_start(self, body: Any, namespace: str = "", *, text: bool = True,
                        cancel: Cancel = None) -> dict[str, Any]:
        """Start a resumable query: ``{uuid, scores}`` with the first ``topK`` results. The ranking of
        the whole namespace is kept until ``resumable_end`` or ``maxIdle`` seconds without use.
        Bounded as :meth:`query` is."""
        q, max_idle = parse_resumable_start(body, text=text, limits=self.limits)
        flt = parse_filter(q.filter, self.limits)
        with self._lock:
            self._resumable.make_room()  # refused before any embedding or ranking
        self._model_ready([q])
        budget = Budget(self.limits.max_query_seconds, cancel)
        sides = self._sides(q)
        verdicts = self._prefilter(flt, namespace, budget)
        with self._lock:
            ns, hits = self._rank(q, sides, verdicts, namespace, max(len(self), 1))
            ids = [ns.records[int(row)].id for row, _ in hits]
            scores = np.asarray([score for _, score in hits], dtype=np.float64)
            includes = Includes(q.include_metadata, q.include_vectors, q.include_data)
            query = Resumable(namespace, ids, scores, 0, includes, max_idle, self.clock())
            uid = self._resumable.add(query)
            return {"uuid": uid, "scores": self._advance(query, q.top_k)}

    def resumable_next(self, body: Any) -> list[dict[str, Any]]:
        """The next ``additionalK`` results of a resumable query (``{uuid, additionalK}``)."""
        uid, additional_k = parse_resumable_next(body, self.limits)
        with self._lock:
            return self._advance(self._resumable.live(uid), additional_k)

    def resumable_end(self, body: Any) -> None:
        """Stop a resumable query (``{uuid}``) and free its ranking."""
        uid = parse_resumable_end(body)
        with self._lock:
            self._resumable.end(uid)

    def _advance(self, rq: Resumable, k: int) -> list[dict[str, Any]]:
        """The next ``k`` results of a ranking, shaped from the records as they are now (a vector
        deleted since the start is skipped)."""
        ns = self._namespace(rq.namespace)
        out = []
        end = rq.position + k
        for rid, score in zip(rq.ids[rq.position : end], rq.scores[rq.position : end].tolist()):
            row = None if ns is None else ns.row_of.get(rid)
            if row is not None:
                assert ns is not None
                inc = rq.includes
                out.append(self._shape(ns, row, score, inc.metadata, inc.vectors, inc.data))
        rq.position = end
        return out
