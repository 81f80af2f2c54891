"""Fixtures for the vector playground and workflow timeline tests.

Unit tests use the in-memory fakes of ``fakes.py`` (fast, no sockets) and a small LocalIndex corpus
(the packaged embedding model loads once per session). ``sandbox`` is a real sandbox seeded with the
demo data, served over HTTP, for the tests that must see the real clients at work.
"""

from __future__ import annotations

import importlib.util
import time

import pytest

SANDBOX_CORPUS = 40
CORPUS = [
    ("a cat sat on the warm mat", "pets", 2001),
    ("dogs love to run in the park", "pets", 2003),
    ("the parrot learned to say hello", "pets", 2010),
    ("stock markets fell sharply on friday", "finance", 2008),
    ("the central bank raised interest rates", "finance", 2022),
    ("bond yields climbed after the report", "finance", 2019),
    ("a recipe for tomato soup with basil", "food", 2015),
    ("how to bake sourdough bread at home", "food", 2020),
    ("slow cooked beef stew for winter", "food", 2012),
]


@pytest.fixture(scope="session")
def corpus_items() -> list[dict]:
    return [{"id": f"doc-{i}", "data": text, "metadata": {"genre": genre, "year": year}}
            for i, (text, genre, year) in enumerate(CORPUS)]


@pytest.fixture(scope="session")
def local_corpus(corpus_items):
    """One LocalCorpus for the session: the model and the three small indexes are built once."""
    from svckit.widgets.vector_playground import LocalCorpus

    corpus = LocalCorpus(corpus_items)
    for kind in ("dense", "sparse", "hybrid"):
        corpus.index(kind)
    return corpus


def _sandbox_ready() -> bool:
    return all(importlib.util.find_spec(m) is not None
               for m in ("svckit.sandbox.queue", "svckit.sandbox.vector", "svckit.queue", "svckit.vector"))


@pytest.fixture(scope="session")
def sandbox():
    if not _sandbox_ready():
        pytest.skip("the sandbox's queue/vector areas are not in this tree yet")
    from svckit.sandbox import Sandbox

    # a small demo corpus keeps the sandbox's own embedding short; the widgets fetch what it holds
    with Sandbox(seed="demo", backend="fakeredis", demo_limit=SANDBOX_CORPUS) as sb:
        clients = sb.connect()
        deadline = time.monotonic() + 240
        while clients.vector.info().vector_count < SANDBOX_CORPUS:
            if time.monotonic() > deadline:
                pytest.fail("the sandbox's demo vectors were not seeded within 240 s")
            time.sleep(0.2)
        clients.close()
        yield sb
