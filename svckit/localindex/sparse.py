"""Sparse BM25 embedding: our own tokenizer, English stop words, Snowball stemming.

Text -> words (``[a-z0-9]+`` after lower-casing and splitting identifiers on ``_`` and ``.``) -> stop
words dropped -> Snowball English stem -> a dimension index, a stable 31-bit hash of the stem (so a
query is encoded without knowing the index's vocabulary, and indices survive restarts).

Document weight of a term that occurs ``f`` times in a document of ``|D|`` terms (hosted service's
BM25, k1 = 1.2, b = 0.75, ``avgdl`` the mean document length of the namespace)::

    w = f·(k1 + 1) / (f + k1·(1 − b + b·|D|/avgdl))

Query terms weigh 1 each. With ``weightingStrategy: IDF`` each query dimension is multiplied at query
time by ``ln((N − n + 0.5)/(n + 0.5) + 1)`` (N documents in the namespace, n of them with the term).
The score is the exact inner product over shared dimensions.

Document weights depend on ``avgdl``, which moves as documents come and go, so :class:`SparseStore`
keeps raw term frequencies in an inverted index and computes the weights when it scores. Sparse
vectors the client gives (``upsert`` with ``sparseVector``) are kept as given, in a second inverted
index of fixed weights; a query scores both, and IDF counts documents of either kind.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import snowballstemmer

K1 = 1.2
B = 0.75

# English stop words (the classic Snowball/NLTK list, apostrophes stripped as our tokenizer does).
STOP_WORDS = frozenset(["a", "about", "above", "after", "again", "against", "ain", "all", "am", "an", "and", "any", "are", "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "couldn", "d", "did", "didn", "do", "does", "doesn", "doing", "don", "down", "during", "each", "few", "for", "from", "further", "had", "hadn", "has", "hasn", "have", "haven", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "isn", "it", "its", "itself", "just", "ll", "m", "ma", "me", "mightn", "more", "most", "mustn", "my", "myself", "needn", "no", "nor", "not", "now", "o", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "re", "s", "same", "shan", "she", "should", "shouldn", "so", "some", "such", "t", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "ve", "very", "was", "wasn", "we", "were", "weren", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "won", "wouldn", "y", "you", "your", "yours", "yourself", "yourselves"])

_WORD = re.compile(r"[a-z0-9]+")
#: a stemmer per thread: snowballstemmer's keeps the word being stemmed in the object, and two
#: threads stemming at once (an index built in a background job while a query is tokenized) corrupt
#: each other's word (IndexError, or a wrong stem)
_stemmers = threading.local()


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


def tokenize(text: str) -> list[str]:
    """Stemmed content words of ``text``, in order (duplicates kept: they are term frequencies)."""
    words = _WORD.findall(text.lower().replace("_", " "))
    return [stem(w) for w in words if w not in STOP_WORDS]


def typed_words(text: str) -> dict[str, str]:
    """``{stemmed term: the first word of text that gives it}``, the word as it was typed (its case
    kept): what a person reads beside the stem the index stores (``manager`` for ``manag``)."""
    lowered = text.lower().replace("_", " ")
    same = len(lowered) == len(text)  # lower() kept every position: the typed word can be cut out
    out: dict[str, str] = {}
    for match in _WORD.finditer(lowered):
        word = match.group()
        if word not in STOP_WORDS:
            out.setdefault(stem(word), text[match.start():match.end()] if same else word)
    return out


@functools.lru_cache(maxsize=200_000)
def term_index(term: str) -> int:
    """The sparse dimension of a stemmed term: the first 31 bits of its BLAKE2b hash."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "big") & 0x7FFFFFFF


def term_frequencies(text: str) -> tuple[dict[int, int], int]:
    """``({dimension: count}, document length in terms)`` of a text."""
    terms = tokenize(text)
    return dict(Counter(term_index(t) for t in terms)), len(terms)


def query_dimensions(text: str) -> list[int]:
    """The distinct dimensions of a query, each of weight 1."""
    return sorted({term_index(t) for t in tokenize(text)})


def bm25_weight(f: np.ndarray | float, doc_len: np.ndarray | float, avgdl: float) -> np.ndarray | float:
    avgdl = avgdl or 1.0
    return f * (K1 + 1) / (f + K1 * (1 - B + B * doc_len / avgdl))


def idf(n_docs: int, n_with_term: int) -> float:
    return math.log((n_docs - n_with_term + 0.5) / (n_with_term + 0.5) + 1)


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
