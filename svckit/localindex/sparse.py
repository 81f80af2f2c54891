"""The sparse side of the local index: BM25 over inverted indexes (the tokenizer and the weights are
:mod:`svckit.core.bm25`, shared with the clients).

The score is the exact inner product over shared dimensions.

Document weights depend on ``avgdl``, which moves as documents come and go, so :class:`SparseStore`
keeps raw term frequencies in an inverted index and computes the weights when it scores. Sparse
vectors the client gives (``upsert`` with ``sparseVector``) are kept as given, in a second inverted
index of fixed weights; a query scores both, and IDF counts documents of either kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from svckit.core.bm25 import bm25_weight, idf, query_dimensions


@dataclass
class SparseStore:
    """Inverted indexes of one namespace: dimension -> {row: term frequency} for text rows (BM25 at
    score time), dimension -> {row: weight} for rows whose sparse vector was given, plus text lengths."""

    postings: dict[int, dict[int, int]] = field(default_factory=dict)
    doc_terms: dict[int, dict[int, int]] = field(default_factory=dict)
    doc_len: dict[int, int] = field(default_factory=dict)
    total_len: int = 0
    fixed_postings: dict[int, dict[int, float]] = field(default_factory=dict)
    fixed: dict[int, dict[int, float]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.doc_len) + len(self.fixed)

    @property
    def avgdl(self) -> float:
        return self.total_len / len(self.doc_len) if self.doc_len else 0.0

    def add(self, row: int, tf: dict[int, int], length: int) -> None:
        self.remove(row)
        self.doc_terms[row] = tf
        self.doc_len[row] = length
        self.total_len += length
        for dim, count in tf.items():
            self.postings.setdefault(dim, {})[row] = count

    def add_fixed(self, row: int, indices: list[int], values: list[float]) -> None:
        """Store a sparse vector as given (its weights do not change with the namespace)."""
        self.remove(row)
        weights = {int(d): float(v) for d, v in zip(indices, values)}
        self.fixed[row] = weights
        for dim, value in weights.items():
            self.fixed_postings.setdefault(dim, {})[row] = value

    def is_fixed(self, row: int) -> bool:
        return row in self.fixed

    def remove(self, row: int) -> None:
        weights = self.fixed.pop(row, None)
        if weights is not None:
            _drop(self.fixed_postings, row, weights)
        tf = self.doc_terms.pop(row, None)
        if tf is None:
            return
        self.total_len -= self.doc_len.pop(row)
        _drop(self.postings, row, tf)

    def document_frequency(self, dim: int) -> int:
        return len(self.postings.get(dim, ())) + len(self.fixed_postings.get(dim, ()))

    def weigh(self, dims: list[int], values: list[float], weighting: str | None) -> tuple[list[int], list[float]]:
        """A query's sparse vector, each value multiplied by the dimension's IDF when asked."""
        if weighting == "IDF":
            n = len(self)
            values = [v * idf(n, self.document_frequency(d)) for d, v in zip(dims, values)]
        return dims, values

    def query_vector(self, text: str, weighting: str | None) -> tuple[list[int], list[float]]:
        """The query's sparse vector: weight 1 per distinct term, times IDF when asked."""
        dims = query_dimensions(text)
        return self.weigh(dims, [1.0] * len(dims), weighting)

    def score(self, dims: list[int], values: list[float], rows: np.ndarray | None = None) -> dict[int, float]:
        """Exact inner product of the query with every document sharing a dimension -> {row: score}.

        ``rows`` (optional) restricts scoring to those rows (a metadata filter's matches).
        """
        allowed = None if rows is None else set(rows.tolist())
        avgdl = self.avgdl
        totals: dict[int, float] = {}
        for dim, qw in zip(dims, values):
            if qw == 0:
                continue
            posting = self.postings.get(dim)
            if posting:
                doc_rows = np.fromiter(posting.keys(), dtype=np.int64, count=len(posting))
                tfs = np.fromiter(posting.values(), dtype=np.float64, count=len(posting))
                lens = np.fromiter((self.doc_len[r] for r in doc_rows.tolist()), dtype=np.float64,
                                   count=len(posting))
                weights = np.asarray(qw * bm25_weight(tfs, lens, avgdl))
                for r, w in zip(doc_rows.tolist(), weights.tolist()):
                    if allowed is None or r in allowed:
                        totals[r] = totals.get(r, 0.0) + w
            for r, value in self.fixed_postings.get(dim, {}).items():
                if allowed is None or r in allowed:
                    totals[r] = totals.get(r, 0.0) + qw * value
        return totals

    def vector(self, row: int) -> tuple[list[int], list[float]]:
        """A document's sparse vector (indices ascending; BM25 weights with the current avgdl for text)."""
        if row in self.fixed:
            weights = self.fixed[row]
            dims = sorted(weights)
            return dims, [weights[d] for d in dims]
        tf = self.doc_terms.get(row, {})
        dims = sorted(tf)
        length = self.doc_len.get(row, 0)
        avgdl = self.avgdl
        return dims, [float(bm25_weight(float(tf[d]), float(length), avgdl)) for d in dims]


def _drop(postings: dict[int, dict[int, Any]], row: int, dims: dict[int, Any]) -> None:
    for dim in dims:
        posting = postings.get(dim)
        if posting is not None:
            posting.pop(row, None)
            if not posting:
                del postings[dim]
