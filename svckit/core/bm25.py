"""BM25 as the service computes it, I/O-free: our own tokenizer, English stop words, Snowball stemming,
and the term weights. The local index (:mod:`svckit.localindex.sparse`) scores with it; a client
explaining a service's hits (:mod:`svckit.vector.explain`) tokenizes the query with it.

Text -> words (``[a-z0-9]+`` after lower-casing and splitting identifiers on ``_`` and ``.``) -> stop
words dropped -> Snowball English stem -> a dimension index, a stable 31-bit hash of the stem (so a
query is encoded without knowing the index's vocabulary, and indices survive restarts).

Document weight of a term that occurs ``f`` times in a document of ``|D|`` terms (hosted service's
BM25, k1 = 1.2, b = 0.75, ``avgdl`` the mean document length of the namespace)::

    w = f·(k1 + 1) / (f + k1·(1 − b + b·|D|/avgdl))

Query terms weigh 1 each. With ``weightingStrategy: IDF`` each query dimension is multiplied at query
time by ``ln((N − n + 0.5)/(n + 0.5) + 1)`` (N documents in the namespace, n of them with the term).
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import threading
from collections import Counter
from typing import Any

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
    if stemmer is None:  # snowballstemmer (the ``local`` extra) is imported when a word is first stemmed
        import snowballstemmer

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


def bm25_weight(f: Any, doc_len: Any, avgdl: float) -> Any:
    """BM25's document weight (``f`` and ``doc_len`` numbers or numpy arrays alike)."""
    avgdl = avgdl or 1.0
    return f * (K1 + 1) / (f + K1 * (1 - B + B * doc_len / avgdl))


def idf(n_docs: int, n_with_term: int) -> float:
    return math.log((n_docs - n_with_term + 0.5) / (n_with_term + 0.5) + 1)
