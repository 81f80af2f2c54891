"""Dense vector storage of one namespace with exact and approximate (faiss HNSW) search.

Choice of library and threshold, by measurement (bench/vector_bench.py, 2 cores, single-threaded
queries, figures in bench/RESULTS.md): faiss-cpu ``IndexHNSWFlat`` (M=32, efSearch=128) answers in
~0.4-0.6 ms at recall@10 >= 0.99 at both 10k and 100k x 384, where an exact numpy scan takes ~1.4 ms
at 10k and tens of ms at 100k; hnswlib is as fast but ships no wheel here. Below
:data:`ANN_THRESHOLD` live vectors the exact scan costs about a millisecond, is exact and needs no
graph, so the graph is only built (lazily, on the first query past the threshold, then extended
incrementally) for large namespaces.

Filters: faiss's ``IDSelectorBitmap`` inside HNSW loses recall when few vectors match, so a filtered
query scans the matching rows exactly unless the filter keeps most of the namespace
(:data:`ANN_FILTER_FRACTION`), in which case the graph is asked for more neighbours and the result is
filtered afterwards (falling back to the exact scan if too few survive).

Rows are append-only: an update appends a new row and retires the old one; deleted rows are skipped
and the arrays (and graph) are compacted once a quarter of the rows are dead.
"""

from __future__ import annotations

import math

import numpy as np

from svckit.localindex import metrics

ANN_THRESHOLD = 10_000
ANN_FILTER_FRACTION = 0.5
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 40
HNSW_EF_SEARCH = 128


class DenseStore:
    """Rows of float32 vectors (stored as :func:`metrics.prepare` makes them) with a liveness mask."""

    def __init__(self, dimension: int, metric: str, *, ann_threshold: int = ANN_THRESHOLD) -> None:
        self.dimension = dimension
        self.metric = metrics.check_metric(metric)
        self.ann_threshold = ann_threshold
        self._vectors = np.zeros((0, dimension), dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)
        self._size = 0
        self._hnsw = None
        self._hnsw_rows = 0  # rows [0, _hnsw_rows) are in the graph

    # -- rows --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._alive[: self._size].sum())

    @property
    def size(self) -> int:
        """Rows allocated so far (alive and dead)."""
        return self._size

    def append(self, vectors: np.ndarray) -> np.ndarray:
        """Store vectors; returns their row numbers."""
        prepared = metrics.prepare(vectors, self.metric)
        if prepared.shape[1] != self.dimension:
            raise ValueError(f"vector dimension {prepared.shape[1]} does not match the index's {self.dimension}")
        n = prepared.shape[0]
        need = self._size + n
        if need > self._vectors.shape[0]:
            cap = max(need, int(self._vectors.shape[0] * 1.5) + 64)
            grown = np.zeros((cap, self.dimension), dtype=np.float32)
            grown[: self._size] = self._vectors[: self._size]
            alive = np.zeros(cap, dtype=bool)
            alive[: self._size] = self._alive[: self._size]
            self._vectors, self._alive = grown, alive
        rows = np.arange(self._size, need)
        self._vectors[rows] = prepared
        self._alive[rows] = True
        self._size = need
        return rows

    def retire(self, rows: np.ndarray | list[int]) -> None:
        self._alive[np.asarray(rows, dtype=np.int64)] = False

    def vector(self, row: int) -> np.ndarray:
        return self._vectors[row]

    def alive_rows(self) -> np.ndarray:
        return np.flatnonzero(self._alive[: self._size])

    def dead_fraction(self) -> float:
        return 0.0 if self._size == 0 else 1.0 - len(self) / self._size

    def compact(self) -> np.ndarray:
        """Drop dead rows; returns ``old_row -> new_row`` (-1 for dropped rows)."""
        keep = self.alive_rows()
        mapping = np.full(self._size, -1, dtype=np.int64)
        mapping[keep] = np.arange(len(keep))
        self._vectors = np.ascontiguousarray(self._vectors[keep])
        self._alive = np.ones(len(keep), dtype=bool)
        self._size = len(keep)
        self._hnsw, self._hnsw_rows = None, 0
        return mapping

    # -- search ------------------------------------------------------------------------------
    def search(self, query: np.ndarray, k: int, rows: np.ndarray | None = None,
               *, exact: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Best ``k`` rows for ``query`` -> ``(rows, normalised scores)``, best first.

        ``rows`` restricts the search to those (alive) rows, e.g. a filter's matches. ``exact`` forces
        (True) or forbids (False) the exact scan; ``None`` chooses by size and filter selectivity.
        """
        q = metrics.prepare(query, self.metric)[0]
        alive = len(self)
        if k <= 0 or alive == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        if exact is None:
            exact = alive < self.ann_threshold or (
                rows is not None and len(rows) < ANN_FILTER_FRACTION * alive
            )
        if not exact:
            found = self._search_ann(q, k, rows)
            if found is not None:
                return found
        return self._search_exact(q, k, rows)

    def _search_exact(self, q: np.ndarray, k: int, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        if rows is None and len(self) == self._size:
            # every row is alive: scan the stored block in place (no copy of the matrix)
            candidates = np.arange(self._size)
            raw = metrics.raw_scores(self._vectors[: self._size], q, self.metric)
        else:
            candidates = self.alive_rows() if rows is None else np.asarray(rows, dtype=np.int64)
            if len(candidates) == 0:
                return candidates, np.zeros(0)
            raw = metrics.raw_scores(self._vectors[candidates], q, self.metric)
        k = min(k, len(candidates))
        if k < len(candidates):
            part = np.argpartition(raw if self.metric == "EUCLIDEAN" else -raw, k - 1)[:k]
        else:
            part = np.arange(len(candidates))
        order = part[metrics.better_first(raw[part], self.metric)]
        return candidates[order], metrics.normalise(raw[order], self.metric)

    def _ensure_graph(self):
        import faiss

        if self._hnsw is None:
            faiss_metric = faiss.METRIC_L2 if self.metric == "EUCLIDEAN" else faiss.METRIC_INNER_PRODUCT
            self._hnsw = faiss.IndexHNSWFlat(self.dimension, HNSW_M, faiss_metric)
            self._hnsw.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            self._hnsw_rows = 0
        if self._hnsw_rows < self._size:
            self._hnsw.add(self._vectors[self._hnsw_rows : self._size])
            self._hnsw_rows = self._size
        self._hnsw.hnsw.efSearch = HNSW_EF_SEARCH
        return self._hnsw

    def build_graph(self) -> None:
        """Build (or extend) the HNSW graph now instead of at the first large query."""
        self._ensure_graph()

    def _search_ann(self, q: np.ndarray, k: int, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
        graph = self._ensure_graph()
        alive = len(self)
        dead = self._size - alive
        fraction = 1.0 if rows is None else max(len(rows) / max(alive, 1), 1e-9)
        want = min(self._size, math.ceil((k + dead) / fraction * 1.5) + k)
        graph.hnsw.efSearch = max(HNSW_EF_SEARCH, want)
        raw, found = graph.search(q[None, :], want)
        raw, found = raw[0], found[0]
        ok = found >= 0
        raw, found = raw[ok], found[ok]
        keep = self._alive[found]
        if rows is not None:
            keep &= np.isin(found, rows)
        raw, found = raw[keep][:k], found[keep][:k]
        if len(found) < min(k, alive if rows is None else len(rows)):
            return None  # too few survived the filter: let the exact scan answer
        return found.astype(np.int64), metrics.normalise(raw, self.metric)
