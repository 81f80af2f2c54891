"""LocalIndex: a dense, sparse or hybrid text index with namespaces, filters and persistence.

It answers the same request objects as the service's ``query-data`` endpoint (wire field names) and
returns the same result shapes, so the sandbox serves it over HTTP and the playground widget can use
it directly when no service is configured.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from svckit.vector.local import fusion, metrics, sparse
from svckit.vector.local.ann import ANN_THRESHOLD, DenseStore
from svckit.vector.local.embedding import DenseEmbedder, get_embedder, packaged_model_path
from svckit.vector.local.filter import parse_filter
from svckit.vector.local.request import InvalidRequest, QueryRequest, parse_ids, parse_query, parse_upsert
from svckit.vector.local.store import IndexStore

KINDS = ("dense", "sparse", "hybrid")
SPARSE_MODEL = "BM25"
COMPACT_DEAD_FRACTION = 0.25


class EmbeddingModelMissing(RuntimeError):
    """The index was created without an embedding model, so it cannot embed text (HTTP 422)."""

    def __init__(self) -> None:
        super().__init__("Embedding data for this index is not allowed. The index must be created with "
                         "an embedding model to embed data")


@dataclass
class Record:
    id: str
    data: str | None
    metadata: dict[str, Any] | None


@dataclass
class Namespace:
    """One namespace: records by row, the id -> row map, and the dense and sparse parts."""

    dense: DenseStore | None
    sparse: sparse.SparseStore | None
    records: dict[int, Record] = field(default_factory=dict)
    row_of: dict[str, int] = field(default_factory=dict)
    next_row: int = 0

    def __len__(self) -> int:
        return len(self.row_of)


def _model_dimension(path: Path) -> int:
    """The embedding dimension from the model directory's pooling config (no weights loaded)."""
    for cfg in sorted(path.glob("*_Pooling/config.json")):
        dim = json.loads(cfg.read_text()).get("word_embedding_dimension")
        if dim:
            return int(dim)
    return int(json.loads((path / "config.json").read_text())["hidden_size"])


class LocalIndex:
    """A local text index.

    ``kind``: ``dense`` (sentence-transformers embedding), ``sparse`` (BM25) or ``hybrid`` (both).
    ``model``: ``None`` for the packaged all-MiniLM-L6-v2, a sentence-transformers model directory, a
    :class:`DenseEmbedder`, or ``False`` for an index created without an embedding model (text
    operations raise :class:`EmbeddingModelMissing`; ``dimension`` then defaults to 384).
    ``path``: ``None`` keeps everything in memory; a directory persists every change there.
    """

    def __init__(self, kind: str = "dense", metric: str = "COSINE", model: Any = None,
                 path: str | Path | None = None, *, dimension: int | None = None,
                 ann_threshold: int = ANN_THRESHOLD) -> None:
        kind = str(kind).lower()
        if kind not in KINDS:
            raise ValueError(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
        self.kind = kind
        self.metric = metrics.check_metric(metric)
        self.ann_threshold = ann_threshold
        self._embedder: DenseEmbedder | None = None
        self.has_model = model is not False
        self.model_name: str | None = None
        if kind != "sparse":
            if isinstance(model, DenseEmbedder):
                self._embedder = model
            elif self.has_model:
                self._embedder = get_embedder(model)
            if self._embedder is not None:
                self.model_name = self._embedder.name
                self.dimension = dimension or _model_dimension(self._embedder.model_path)
            else:
                self.dimension = dimension or _model_dimension(packaged_model_path())
        else:
            self.dimension = 0
            self.model_name = None
        self._lock = threading.RLock()
        self._namespaces: dict[str, Namespace] = {}
        self._seq = itertools.count()
        self._store: IndexStore | None = None
        if path is not None:
            self._store = IndexStore(path)
            self._open_store()

    # -- persistence -------------------------------------------------------------------------
    def _settings(self) -> dict[str, Any]:
        return {"kind": self.kind, "metric": self.metric, "dimension": self.dimension,
                "model": self.model_name, "has_model": self.has_model}

    def _open_store(self) -> None:
        assert self._store is not None
        saved = self._store.settings()
        if saved:
            for key in ("kind", "metric", "dimension"):
                if saved.get(key) != self._settings()[key]:
                    raise ValueError(f"the index at {self._store.directory} was created with {key}="
                                     f"{saved.get(key)!r}, not {self._settings()[key]!r}")
        else:
            self._store.save_settings(self._settings())
        for ns_name, group in itertools.groupby(self._store.load(), key=lambda r: r[0]):
            batch = list(group)
            vectors = None
            if self.kind != "sparse":
                vectors = np.stack([r[4] for r in batch if r[4] is not None]) if batch else None
                if self._embedder is not None:
                    for r in batch:
                        if r[2] is not None and r[4] is not None:
                            self._embedder.remember(r[2], r[4])
            self._insert(ns_name, [(r[1], r[2], r[3]) for r in batch], vectors, persist=False)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    # -- helpers -----------------------------------------------------------------------------
    def _namespace(self, name: str, create: bool = False) -> Namespace | None:
        ns = self._namespaces.get(name)
        if ns is None and create:
            ns = Namespace(
                dense=None if self.kind == "sparse" else DenseStore(self.dimension, self.metric,
                                                                      ann_threshold=self.ann_threshold),
                sparse=None if self.kind == "dense" else sparse.SparseStore(),
            )
            self._namespaces[name] = ns
        return ns

    def _require_model(self) -> DenseEmbedder | None:
        if self.kind != "sparse" and self._embedder is None:
            raise EmbeddingModelMissing()
        return self._embedder

    def embed(self, texts: Sequence[str] | str) -> np.ndarray:
        """Dense embeddings of ``texts`` with this index's model (cached for identical text)."""
        embedder = self._embedder or (get_embedder() if self.kind == "sparse" else None)
        if embedder is None:
            raise EmbeddingModelMissing()
        return embedder.embed([texts] if isinstance(texts, str) else list(texts))

    # -- writes ------------------------------------------------------------------------------
    def upsert_data(self, items: Any, namespace: str = "") -> int:
        """Insert or replace ``{id, data, metadata}`` items (one object or a list); returns how many."""
        parsed = parse_upsert(items)
        embedder = self._require_model()
        # last write of an id within one batch wins, as if the items were upserted in order
        unique = list({rid: (rid, data, meta) for rid, data, meta in parsed}.values())
        vectors = embedder.embed([d for _, d, _ in unique]) if embedder is not None else None
        with self._lock:
            self._insert(namespace, unique, vectors, persist=True)
        return len(unique)

    def _insert(self, namespace: str, items: Sequence[tuple[str, str | None, Any]],
                vectors: np.ndarray | None, *, persist: bool) -> None:
        ns = self._namespace(namespace, create=True)
        assert ns is not None
        old_rows = [ns.row_of[rid] for rid, _, _ in items if rid in ns.row_of]
        if ns.dense is not None:
            if old_rows:
                ns.dense.retire(old_rows)
            assert vectors is not None, "a dense part needs vectors"
            rows = ns.dense.append(vectors).tolist()
            ns.next_row = ns.dense.size
        else:
            rows = list(range(ns.next_row, ns.next_row + len(items)))
            ns.next_row += len(items)
        for row in old_rows:
            ns.records.pop(row, None)
            if ns.sparse is not None:
                ns.sparse.remove(row)
        for row, (rid, data, meta) in zip(rows, items):
            ns.records[row] = Record(rid, data, meta)
            ns.row_of[rid] = row
            if ns.sparse is not None:
                tf, length = sparse.term_frequencies(data or "")
                ns.sparse.add(row, tf, length)
        if persist and self._store is not None:
            self._store.upsert(namespace, [
                (rid, self._next_seq(), data, meta, None if vectors is None else vectors[i])
                for i, (rid, data, meta) in enumerate(items)
            ])
        self._maybe_compact(ns)

    def _next_seq(self) -> int:
        # increasing across restarts (wall clock in ns plus a counter): reload order == upsert order
        return time.time_ns() + next(self._seq)

    def delete(self, ids: Any, namespace: str = "") -> int:
        """Delete vectors by id; returns how many existed."""
        wanted = parse_ids(ids)
        with self._lock:
            ns = self._namespace(namespace)
            if ns is None:
                return 0
            gone = [rid for rid in dict.fromkeys(wanted) if rid in ns.row_of]
            rows = [ns.row_of.pop(rid) for rid in gone]
            for row in rows:
                ns.records.pop(row, None)
                if ns.sparse is not None:
                    ns.sparse.remove(row)
            if ns.dense is not None and rows:
                ns.dense.retire(rows)
            if self._store is not None and gone:
                self._store.delete(namespace, gone)
            if not ns.row_of and namespace != "":
                del self._namespaces[namespace]
            else:
                self._maybe_compact(ns)
            return len(gone)

    def _maybe_compact(self, ns: Namespace) -> None:
        if ns.dense is None or ns.dense.size < 1024 or ns.dense.dead_fraction() < COMPACT_DEAD_FRACTION:
            return
        mapping = ns.dense.compact()
        ns.records = {int(mapping[r]): rec for r, rec in ns.records.items()}
        ns.row_of = {rid: int(mapping[r]) for rid, r in ns.row_of.items()}
        ns.next_row = ns.dense.size
        if ns.sparse is not None:
            fresh = sparse.SparseStore()
            for row, rec in ns.records.items():
                fresh.add(row, *sparse.term_frequencies(rec.data or ""))
            ns.sparse = fresh

    # -- reads -------------------------------------------------------------------------------
    def fetch(self, ids: Any, namespace: str = "", *, include_metadata: bool = True,
              include_vectors: bool = False, include_data: bool = True) -> list[dict[str, Any] | None]:
        """Records by id, in the order asked; ``None`` for an id that does not exist."""
        wanted = parse_ids(ids)
        with self._lock:
            ns = self._namespace(namespace)
            out: list[dict[str, Any] | None] = []
            for rid in wanted:
                row = None if ns is None else ns.row_of.get(rid)
                if row is None:
                    out.append(None)
                    continue
                assert ns is not None
                out.append(self._shape(ns, row, None, include_metadata, include_vectors, include_data))
            return out

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

    def query(self, request: Any, namespace: str = "") -> list[dict[str, Any]] | list[list[dict[str, Any]]]:
        """Answer a query-data body: one object (or a one-element array) -> one list of results; an
        array of several -> one list per query, in order."""
        if isinstance(request, list):
            if not request:
                raise InvalidRequest("query-data: the array of queries is empty")
            parsed = [parse_query(r) for r in request]
            answers = [self._query_one(q, namespace) for q in parsed]
            return answers[0] if len(answers) == 1 else answers
        return self._query_one(parse_query(request), namespace)

    def _query_one(self, q: QueryRequest, namespace: str) -> list[dict[str, Any]]:
        flt = parse_filter(q.filter)
        embedder = self._require_model()
        use_dense = self.kind == "dense" or (self.kind == "hybrid" and q.query_mode != "SPARSE")
        use_sparse = self.kind == "sparse" or (self.kind == "hybrid" and q.query_mode != "DENSE")
        qvec = embedder.embed([q.data])[0] if (use_dense and embedder is not None) else None
        with self._lock:
            ns = self._namespace(namespace)
            if ns is None or not ns.row_of:
                return []
            rows = None
            if flt is not None:
                rows = np.fromiter((r for r, rec in ns.records.items() if flt.matches(rec.metadata)),
                                   dtype=np.int64)
                if len(rows) == 0:
                    return []
                rows.sort()
            fused = use_dense and use_sparse
            depth = fusion.candidate_depth(q.top_k) if fused else q.top_k
            dense_hits: list[tuple[int, float]] = []
            sparse_hits: list[tuple[int, float]] = []
            if use_dense:
                assert ns.dense is not None and qvec is not None
                found, scores = ns.dense.search(qvec, depth, rows)
                dense_hits = list(zip(found.tolist(), scores.tolist()))
            if use_sparse:
                assert ns.sparse is not None
                dims, values = ns.sparse.query_vector(q.data, q.weighting_strategy)
                totals = ns.sparse.score(dims, values, rows)
                sparse_hits = fusion.top(totals, depth)
            if fused:
                if q.fusion_algorithm == "DBSF":
                    combined = fusion.dbsf([dense_hits, sparse_hits])
                else:
                    combined = fusion.rrf([[r for r, _ in dense_hits], [r for r, _ in sparse_hits]])
                hits = fusion.top(combined, q.top_k)
            else:
                hits = dense_hits if use_dense else sparse_hits
                hits = hits[: q.top_k]
            return [self._shape(ns, int(row), score, q.include_metadata, q.include_vectors, q.include_data)
                    for row, score in hits]

    def info(self) -> dict[str, Any]:
        """Index statistics, shaped like the service's ``/info`` result."""
        with self._lock:
            namespaces = {name: {"vectorCount": len(ns), "pendingVectorCount": 0}
                          for name, ns in sorted(self._namespaces.items())}
            namespaces.setdefault("", {"vectorCount": 0, "pendingVectorCount": 0})
            total = sum(v["vectorCount"] for v in namespaces.values())
        if self._store is not None:
            size = self._store.size_bytes()
        else:
            size = total * (self.dimension * 4 + 64)
        out: dict[str, Any] = {
            "vectorCount": total,
            "pendingVectorCount": 0,
            "indexSize": int(size),
            "dimension": self.dimension,
            "similarityFunction": self.metric,
            "indexType": self.kind.upper(),
            "namespaces": dict(sorted(namespaces.items())),
        }
        if self.kind != "sparse":
            out["denseIndex"] = {"dimension": self.dimension, "similarityFunction": self.metric,
                                 "embeddingModel": self.model_name}
        if self.kind != "dense":
            out["sparseIndex"] = {"embeddingModel": SPARSE_MODEL}
        return out

    def namespaces(self) -> list[str]:
        with self._lock:
            return sorted(set(self._namespaces) | {""})

    def dense_matrix(self, namespace: str = "") -> tuple[list[str], np.ndarray]:
        """``(ids, matrix)`` of the live dense vectors of a namespace, e.g. for a 2-D projection."""
        if self.kind == "sparse":
            raise ValueError("dense_matrix: a sparse index has no dense vectors")
        with self._lock:
            ns = self._namespace(namespace)
            if ns is None or ns.dense is None or not ns.row_of:
                return [], np.zeros((0, self.dimension), dtype=np.float32)
            rows = sorted(ns.row_of.values())
            return [ns.records[r].id for r in rows], np.stack([ns.dense.vector(r) for r in rows]).copy()

    def __len__(self) -> int:
        with self._lock:
            return sum(len(ns) for ns in self._namespaces.values())

    def __repr__(self) -> str:
        where = "memory" if self._store is None else str(self._store.directory)
        return f"LocalIndex(kind={self.kind!r}, metric={self.metric!r}, vectors={len(self)}, at={where})"
