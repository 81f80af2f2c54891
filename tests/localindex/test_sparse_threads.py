"""Texts tokenized on several threads at once (an index built in a background job while a query is
tokenized) get the stems they get alone: the stemmer's state is not shared between threads."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

import snowballstemmer

from svckit.core.bm25 import stem


def test_words_stemmed_on_several_threads_at_once_get_their_own_stems():
    alone = snowballstemmer.stemmer("english")
    # words of their own (not in stem's cache from other tests), each stemmed by the stemmer itself
    words = [f"{base}{i}ingly" for i in range(6_000) for base in ("svckitrunn", "svckitconnect", "svckithop")]
    expected = {w: alone.stemWord(w) for w in words}
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often, as on a busy kernel
    try:
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda chunk: [(w, stem(w)) for w in chunk],
                                    [words[i::8] for i in range(8)]))
    finally:
        sys.setswitchinterval(interval)
    wrong = [(w, got, expected[w]) for chunk in results for w, got in chunk if got != expected[w]]
    assert not wrong, wrong[:5]
