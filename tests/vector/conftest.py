"""Fixtures of the vector tests: one sandbox (vector area only) for the whole session, so the model
loads once, and a small hand-written corpus whose metadata exercises the filter language."""

from __future__ import annotations

import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"

CORPUS = [
    {"id": "cat", "data": "The cat sat on the warm mat and purred quietly.",
     "metadata": {"animal": "cat", "legs": 4, "pet": True, "tags": ["fur", "indoor"], "home": {"city": "Oslo"}}},
    {"id": "dog", "data": "A loyal dog fetched the ball across the park.",
     "metadata": {"animal": "dog", "legs": 4, "pet": True, "tags": ["fur", "outdoor"], "home": {"city": "Bergen"}}},
    {"id": "eagle", "data": "An eagle soared high above the mountain valley.",
     "metadata": {"animal": "eagle", "legs": 2, "pet": False, "tags": ["feathers"], "home": {"city": "Tromso"}}},
    {"id": "json", "data": "Serialize Python objects to JSON strings with json.dumps.",
     "metadata": {"topic": "python", "module": "json", "year": 2008}},
    {"id": "csv", "data": "Read and write comma separated value files with the csv module.",
     "metadata": {"topic": "python", "module": "csv", "year": 2001}},
    {"id": "sqlite", "data": "Store rows in an embedded SQL database file using sqlite3.",
     "metadata": {"topic": "python", "module": "sqlite3", "year": 2006}},
    {"id": "bread", "data": "Knead the dough, let it rise, then bake the bread for forty minutes.",
     "metadata": {"topic": "cooking", "minutes": 40}},
    {"id": "soup", "data": "Simmer onions and carrots in stock to make a vegetable soup.",
     "metadata": {"topic": "cooking", "minutes": 30}},
]


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory):
    from svckit.sandbox.server import Sandbox

    sb = Sandbox(tmp_path_factory.mktemp("vector-sandbox"), areas=["vector"])
    sb.start()
    try:
        clients = {kind: _client(sb, kind) for kind in ("dense", "sparse", "hybrid")}
        for client in clients.values():
            client.upsert_data(CORPUS)
        yield sb
    finally:
        for client in clients.values():
            client.close()
        sb.stop()


def _client(sb, kind):
    from svckit.vector import Vector

    return Vector.from_settings(sb.settings, kind=kind, timeout=60.0)


@pytest.fixture(scope="session")
def dense(sandbox):
    with _client(sandbox, "dense") as v:
        yield v


@pytest.fixture(scope="session")
def sparse_index(sandbox):
    with _client(sandbox, "sparse") as v:
        yield v


@pytest.fixture(scope="session")
def hybrid(sandbox):
    with _client(sandbox, "hybrid") as v:
        yield v


@pytest.fixture(scope="session")
def embedder():
    from svckit.vector.local import get_embedder

    return get_embedder()
