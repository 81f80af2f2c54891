"""LocalIndex: a dense, sparse or hybrid text index with namespaces, filters and persistence.

It answers the same request objects as the service's ``query-data`` endpoint (wire field names) and
returns the same result shapes, so the sandbox serves it over HTTP and the playground widget can use
it directly when no service is configured.

Here: :class:`LocalIndex` itself, what an index is made of (kind, model, namespaces, persistence), its
writes (``upsert_data``, ``upsert``, ``update``, ``delete``, ``reset``, compaction) and its ``info``.
Its reads (``fetch``, ``range``, ``query``, the resumable queries, and the ranking behind them) are in
:mod:`svckit.localindex.reads`, the base class :class:`~svckit.localindex.reads.IndexReads`.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from svckit._progress import Cancel
from svckit.core import bm25
from svckit.core.filter import parse_filter
from svckit.embedding import DenseEmbedder, get_embedder, packaged_model_path
from svckit.errors import EmbeddingModelMissing
from svckit.localindex import metrics, sparse
from svckit.localindex.ann import ANN_THRESHOLD, DenseStore
from svckit.localindex.limits import Budget, Limits
from svckit.localindex.namespace import Entry, Namespace, Record
from svckit.localindex.reads import IndexReads
from svckit.localindex.request import (
    InvalidRequest,
    SparsePair,
    UnknownName,
    parse_ids,
    parse_update,
    parse_upsert,
    parse_vectors,
)
from svckit.localindex.resumable import ResumableQueries
from svckit.localindex.store import IndexStore
from svckit.vector.models import KINDS

SPARSE_MODEL = "BM25"
COMPACT_DEAD_FRACTION = 0.25


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON Merge Patch: objects merge key by key, ``null`` removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _model_dimension(path: Path) -> int:
    """The embedding dimension from the model directory's pooling config (no weights loaded)."""
    for cfg in sorted(path.glob("*_Pooling/config.json")):
        dim = json.loads(cfg.read_text()).get("word_embedding_dimension")
        if dim:
            return int(dim)
    return int(json.loads((path / "config.json").read_text())["hidden_size"])


class LocalIndex(IndexReads):
    """A local text index.

    ``kind``: ``dense`` (sentence-transformers embedding), ``sparse`` (BM25) or ``hybrid`` (both).
    ``model``: ``None`` for the packaged all-MiniLM-L6-v2, a sentence-transformers model directory, a
    :class:`DenseEmbedder`, or ``False`` for an index created without an embedding model (text
    operations raise :class:`EmbeddingModelMissing`; ``dimension`` then defaults to 384).
    ``path``: ``None`` keeps everything in memory; a directory persists every change there, before
    the index shows it (a write the disk refused raises :class:`~svckit.errors.DiskError` and changes
    nothing).
    ``limits``: what one request may ask for (:class:`Limits`; its defaults when None).
    ``name``: the index's name, for the error about a namespace that does not exist.

    Namespaces follow the service: one is created by the first upsert into it and goes only by
    :meth:`delete_namespace`; :meth:`reset` and deleting its last vector leave it, empty (listed by
    :meth:`namespaces` and :meth:`info`, persisted). The default namespace ``""`` always exists and
    cannot be deleted. Reads, deletes, updates and resets of a namespace that does not exist answer
    as for an empty one and create nothing.
    """

    def __init__(self, kind: str = "dense", metric: str = "COSINE", model: Any = None,
                 path: str | Path | None = None, *, dimension: int | None = None,
                 ann_threshold: int = ANN_THRESHOLD, limits: Limits | None = None,
                 name: str | None = None) -> None:
        kind = str(kind).lower()
        if kind not in KINDS:
            raise ValueError(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
        self.kind = kind
        self.name = name
        self.metric = metrics.check_metric(metric)
        self.ann_threshold = ann_threshold
        self.limits = limits or Limits()
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
        #: seconds, monotonic; resumable queries expire by it (tests replace it to step time)
        self.clock: Callable[[], float] = time.monotonic
        self._resumable = ResumableQueries(self.limits.max_resumable, lambda: self.clock())
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
                        if r[2] is not None and r[4] is not None and not r[6]:
                            self._embedder.remember(r[2], r[4])
            self._insert(ns_name, [Entry(r[1], r[2], r[3], r[5], r[6]) for r in batch], vectors, persist=False)
        for ns_name in self._store.namespaces():  # the empty ones: reset, or their vectors deleted
            self._namespace(ns_name, create=True)

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

    def _check_vectors(self, vector: list[float] | None, sparse_vector: SparsePair | None, *,
                       query: bool, where: str = "") -> None:
        """Refuse vectors this kind of index cannot hold: a hybrid index stores both parts (a query may
        give either), a dense index only ``vector`` and a sparse one only ``sparseVector``."""
        if self.kind == "dense" and sparse_vector is not None:
            raise InvalidRequest(f"{where}sparseVector: this is a dense index; give vector only")
        if self.kind == "sparse" and vector is not None:
            raise InvalidRequest(f"{where}vector: this is a sparse index; give sparseVector only")
        if self.kind == "dense" and vector is None:
            raise InvalidRequest(f"{where}vector: required on a dense index")
        if self.kind == "sparse" and sparse_vector is None:
            raise InvalidRequest(f"{where}sparseVector: required on a sparse index")
        if self.kind == "hybrid" and not query and (vector is None or sparse_vector is None):
            raise InvalidRequest(f"{where}vector and sparseVector: a hybrid index stores both")
        if vector is not None and len(vector) != self.dimension:
            raise InvalidRequest(f"{where}Invalid vector dimension: {len(vector)}, expected: {self.dimension}")

    # -- writes ------------------------------------------------------------------------------
    def upsert_data(self, items: Any, namespace: str = "") -> int:
        """Insert or replace ``{id, data, metadata}`` items (one object or a list); returns how many."""
        parsed = parse_upsert(items)
        embedder = self._require_model()
        # last write of an id within one batch wins, as if the items were upserted in order
        unique = list({rid: Entry(rid, data, meta) for rid, data, meta in parsed}.values())
        vectors = embedder.embed([e.data or "" for e in unique]) if embedder is not None else None
        with self._lock:
            self._insert(namespace, unique, vectors, persist=True)
        return len(unique)

    def upsert(self, items: Any, namespace: str = "") -> int:
        """Insert or replace vectors given by the client: ``{id, vector, sparseVector, metadata, data}``
        (one object or a list); nothing is embedded, so an index without a model takes them too."""
        parsed = parse_vectors(items)
        for n, item in enumerate(parsed):
            self._check_vectors(item.vector, item.sparse_vector, query=False,
                                where=f"[{n}] " if isinstance(items, list) else "")
        unique = list({item.id: item for item in parsed}.values())
        vectors = None if self.kind == "sparse" else np.asarray([i.vector for i in unique], dtype=np.float32)
        entries = [Entry(i.id, i.data, i.metadata, i.sparse_vector, True) for i in unique]
        with self._lock:
            self._insert(namespace, entries, vectors, persist=True)
        return len(entries)

    def _insert(self, namespace: str, items: Sequence[Entry], vectors: np.ndarray | None, *, persist: bool) -> None:
        # Stored first: a write the disk refused (DiskError) leaves the index as it was, so nothing is
        # answered from memory that a restart would not find. The same holds for every write below.
        if persist and self._store is not None:
            self._store.upsert(namespace, [
                (e.id, self._next_seq(), e.data, e.metadata, None if vectors is None else vectors[i], e.sparse,
                 e.given)
                for i, e in enumerate(items)
            ])
        ns = self._namespace(namespace, create=True)
        assert ns is not None
        old_rows = [ns.row_of[e.id] for e in items if e.id in ns.row_of]
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
        for row, e in zip(rows, items):
            ns.records[row] = Record(e.id, e.data, e.metadata, e.given)
            ns.row_of[e.id] = row
            if ns.sparse is not None:
                if e.sparse is not None:
                    ns.sparse.add_fixed(row, *e.sparse)
                else:
                    ns.sparse.add(row, *bm25.term_frequencies(e.data or ""))
        ns.sorted_ids = None
        self._maybe_compact(ns)

    def _next_seq(self) -> int:
        # increasing across restarts (wall clock in ns plus a counter): reload order == upsert order
        return time.time_ns() + next(self._seq)

    def update(self, body: Any, namespace: str = "") -> dict[str, int]:
        """Change one vector's values, data or metadata (``metadataUpdateMode`` OVERWRITE or PATCH);
        ``{"updated": 1}``, or 0 when the id does not exist. New ``data`` without new vectors is
        embedded again where the index has a model; without one only the stored text changes."""
        u = parse_update(body)
        if u.vector is not None or u.sparse_vector is not None:
            self._check_vectors(u.vector, u.sparse_vector, query=True)
        reembed = u.data is not None and u.vector is None and u.sparse_vector is None and (
            self.kind == "sparse" or self._embedder is not None)
        embedded = self.embed(u.data) if u.data is not None and reembed and self.kind != "sparse" else None
        with self._lock:
            ns = self._namespace(namespace)
            row = None if ns is None else ns.row_of.get(u.id)
            if row is None:
                return {"updated": 0}
            assert ns is not None
            rec = ns.records[row]
            if u.metadata is None:
                metadata = rec.metadata
            elif u.mode == "PATCH":
                metadata = merge_patch(rec.metadata or {}, u.metadata)
            else:
                metadata = u.metadata
            given = False if reembed else (rec.given or u.vector is not None or u.sparse_vector is not None)
            fixed = None
            if not reembed and ns.sparse is not None:
                fixed = u.sparse_vector or (ns.sparse.vector(row) if ns.sparse.is_fixed(row) else None)
            vectors = None
            if ns.dense is not None:
                dense = embedded[0] if embedded is not None else (u.vector or ns.dense.vector(row).copy())
                vectors = np.asarray([dense], dtype=np.float32)
            data = u.data if u.data is not None else rec.data
            self._insert(namespace, [Entry(u.id, data, metadata, fixed, given)], vectors, persist=True)
            return {"updated": 1}

    def delete(self, ids: Any = None, namespace: str = "", *, prefix: str | None = None,
               filter: str | None = None, cancel: Cancel = None) -> int:
        """Delete vectors by id (a list or one), by id ``prefix`` or by metadata ``filter``; returns how
        many existed. A filter is judged within the query's bounds (``max_query_seconds``, ``cancel``),
        before anything is deleted."""
        budget = Budget(self.limits.max_query_seconds, cancel)
        flt = parse_filter(filter, self.limits) if filter is not None else None
        if filter is not None and flt is None:
            raise InvalidRequest("filter: an empty filter would delete everything; use reset for that")
        wanted = parse_ids(ids) if ids is not None else None
        verdicts = self._prefilter(flt, namespace, budget)
        with self._lock:
            ns = self._namespace(namespace)
            if ns is None:
                return 0
            if wanted is not None:
                gone = [rid for rid in dict.fromkeys(wanted) if rid in ns.row_of]
            elif prefix is not None:
                gone = self._with_prefix(ns, prefix)
            elif verdicts is not None:
                gone = [ns.records[row].id for row in verdicts.rows(ns).tolist()]
            else:
                raise InvalidRequest("delete: give ids, prefix or filter")
            if self._store is not None and gone:
                self._store.delete(namespace, gone)
            rows = [ns.row_of.pop(rid) for rid in gone]
            for row in rows:
                ns.records.pop(row, None)
                if ns.sparse is not None:
                    ns.sparse.remove(row)
            if ns.dense is not None and rows:
                ns.dense.retire(rows)
            ns.sorted_ids = None
            self._maybe_compact(ns)  # an emptied namespace stays, as after a reset
            return len(gone)

    def reset(self, namespace: str = "", *, all: bool = False) -> None:
        """Remove every vector of a namespace, or of every namespace with ``all``. The namespaces stay,
        empty; a namespace that does not exist is not created."""
        with self._lock:
            if self._store is not None:
                self._store.empty(None if all else namespace)
            if all:
                names = list(self._namespaces)
            else:
                names = [namespace] if namespace in self._namespaces else []
            for name in names:
                del self._namespaces[name]
                self._namespace(name, create=True)  # empty, with fresh dense and sparse parts

    def delete_namespace(self, namespace: str) -> None:
        """Delete a namespace and its vectors; the default namespace cannot be deleted."""
        if namespace == "":
            raise InvalidRequest("the default namespace cannot be deleted (reset empties it)")
        with self._lock:
            if namespace not in self._namespaces:
                where = f" for the index {self.name}" if self.name else ""
                raise UnknownName(f"Namespace {namespace}{where} does not exist")
            if self._store is not None:
                self._store.drop_namespace(namespace)
            del self._namespaces[namespace]

    def _maybe_compact(self, ns: Namespace) -> None:
        if ns.dense is None or ns.dense.size < 1024 or ns.dense.dead_fraction() < COMPACT_DEAD_FRACTION:
            return
        mapping = ns.dense.compact()
        old_sparse = ns.sparse
        ns.records = {int(mapping[r]): rec for r, rec in ns.records.items()}
        ns.row_of = {rid: int(mapping[r]) for rid, r in ns.row_of.items()}
        ns.next_row = ns.dense.size
        if old_sparse is not None:
            fresh = sparse.SparseStore()
            for old_row, new_row in enumerate(mapping.tolist()):
                if new_row < 0:
                    continue
                if old_sparse.is_fixed(old_row):
                    fresh.add_fixed(new_row, *old_sparse.vector(old_row))
                elif old_row in old_sparse.doc_terms:
                    fresh.add(new_row, old_sparse.doc_terms[old_row], old_sparse.doc_len[old_row])
            ns.sparse = fresh

    # -- what it holds (fetch, range and the queries are in reads.py) ------------------------
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
