"""Sandbox lifecycle of the vector area: demo seed (idempotent), and a restart keeps every vector."""

from __future__ import annotations

import time

import pytest

from svckit.localindex import load_demo_corpus
from svckit.sandbox.server import Sandbox
from svckit.vector import Vector

DEMO_LIMIT = 12


def wait_until_seeded(sb: Sandbox, expected: int, timeout: float = 120.0) -> dict[str, int]:
    counts: dict[str, int] = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        counts = {}
        for kind in ("dense", "sparse", "hybrid"):
            with Vector.from_settings(sb.settings, kind=kind) as v:
                info = v.info()
                default = info.namespaces[""].vector_count
                counts[kind] = default if info.pending_vector_count == 0 else -1
        if all(c == expected for c in counts.values()):
            return counts
        time.sleep(0.2)
    pytest.fail(f"demo seed did not finish: {counts}")


def test_demo_seed_is_idempotent_and_a_restart_keeps_every_vector(tmp_path):
    corpus = load_demo_corpus(limit=DEMO_LIMIT)
    with Sandbox(tmp_path, areas=["vector"], seed="demo", demo_limit=DEMO_LIMIT) as sb:
        wait_until_seeded(sb, DEMO_LIMIT)
        with Vector.from_settings(sb.settings, kind="hybrid") as v:
            first = corpus[3]
            hit = v.query_data(first["data"][:200], top_k=1, include_metadata=True)[0]
            assert hit.id == first["id"] and hit.metadata == first["metadata"]
            v.upsert_data({"id": "mine", "data": "a note of my own", "metadata": {"by": "me"}}, namespace="notes")
            before = v.query_data("my own note", top_k=3, namespace="notes", include_vectors=True)
        with Vector.from_settings(sb.settings, kind="nomodel") as nm:
            assert nm.info().vector_count == 0  # the demo corpus never goes into the model-less index
    with Sandbox(tmp_path, areas=["vector"], seed="demo", demo_limit=DEMO_LIMIT) as sb:
        # a second seed over the same data directory adds nothing
        wait_until_seeded(sb, DEMO_LIMIT)
        with Vector.from_settings(sb.settings, kind="hybrid") as v:
            info = v.info()
            assert info.namespaces[""].vector_count == DEMO_LIMIT
            assert info.namespaces["notes"].vector_count == 1
            after = v.query_data("my own note", top_k=3, namespace="notes", include_vectors=True)
            assert [(h.id, h.vector) for h in after] == [(h.id, h.vector) for h in before]
            assert v.fetch(corpus[0]["id"])[0].data == corpus[0]["data"]


_KERNEL_AFTER_START = """
import os, sys
from svckit.sandbox.server import Sandbox
with Sandbox(sys.argv[1], areas=["vector"]) as sb:
    # the kernel's next line: plotly, which imports narwhals while the model loads on its own thread
    print(sorted(m for m in ("narwhals.stable.v1", "narwhals.stable.v2") if m in sys.modules), flush=True)
    os._exit(0)  # not waiting for the model to load (a stop does)
"""


def test_the_model_warm_up_shares_no_import_with_the_kernel_in_flight(tmp_path):
    """A sandbox in the kernel loads its embedding model on a thread of its own (scikit-learn, under
    sentence-transformers, imports narwhals) while the notebook goes on to import plotly (which imports
    narwhals too): narwhals is imported before the sandbox is up, so the two never import it at once,
    which ended in importlib's _DeadlockError in about one notebook run in eight. A fresh interpreter:
    the test process has imported everything already."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _KERNEL_AFTER_START, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "['narwhals.stable.v1', 'narwhals.stable.v2']", done.stdout
