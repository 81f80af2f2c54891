"""svckit.embedding is a good guest in the user's kernel: importing it (or the local index, or the
widgets) sets no environment variable, the packaged model loads with nothing from the network, and
the model runs on the device sentence-transformers would choose unless told otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_clean(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter whose environment has none of the hub's offline switches."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False, timeout=300)


def test_importing_the_local_index_and_the_widgets_sets_no_environment_variable():
    result = run_clean(
        "import os\n"
        "before = dict(os.environ)\n"
        "import svckit.localindex, svckit.widgets, svckit.embedding\n"
        "assert 'HF_HUB_OFFLINE' not in os.environ and 'TRANSFORMERS_OFFLINE' not in os.environ\n"
        "assert dict(os.environ) == before, set(os.environ.items()) ^ set(before.items())\n"
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_the_packaged_model_loads_and_embeds_with_the_network_shut():
    """No HF_HUB_OFFLINE, every connection and name lookup refused: the model still loads (it is
    named by its directory, with local_files_only) and embeds; the environment is left as it was."""
    pytest.importorskip("sentence_transformers")
    result = run_clean(
        "import os, socket\n"
        "def refuse(*args, **kwargs):\n"
        "    raise OSError('the network is shut in this test')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "before = dict(os.environ)\n"
        "from svckit.embedding import DenseEmbedder\n"
        "vectors = DenseEmbedder(cache_dir=None).embed(['read a JSON file'])\n"
        "assert vectors.shape == (1, 384), vectors.shape\n"
        "assert dict(os.environ) == before\n"
    )
    assert result.returncode == 0, result.stderr


class FakeSentenceTransformer:
    """Records how the model was asked to load."""

    calls: ClassVar[list[dict]] = []

    def __init__(self, path: str, **kwargs) -> None:
        self.calls.append({"path": path, **kwargs})


def test_the_model_runs_where_sentence_transformers_chooses_unless_told(monkeypatch):
    sentence_transformers = pytest.importorskip("sentence_transformers")
    from svckit.embedding import DenseEmbedder, get_embedder

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", FakeSentenceTransformer)
    FakeSentenceTransformer.calls = []
    DenseEmbedder(cache_dir=None).load()
    DenseEmbedder(cache_dir=None, device="cpu").load()
    chosen, told = FakeSentenceTransformer.calls
    assert chosen["device"] is None and chosen["local_files_only"] is True  # CUDA or MPS when present
    assert told["device"] == "cpu" and told["local_files_only"] is True
    assert get_embedder(device="cpu") is get_embedder(device="cpu")
    assert get_embedder(device="cpu") is not get_embedder()
    assert get_embedder(device="cpu").device == "cpu" and get_embedder().device is None


def test_svc_embedding_device_names_the_device_and_svc_embedding_cache_the_cache(monkeypatch, tmp_path):
    from svckit.embedding import get_embedder

    # (one embedder per model and device in a process: a device no other test asks for)
    monkeypatch.setenv("SVC_EMBEDDING_DEVICE", "cpu:0")
    monkeypatch.setenv("SVC_EMBEDDING_CACHE", str(tmp_path))
    embedder = get_embedder()
    assert embedder.device == "cpu:0" and embedder.disk_cache is not None
    assert embedder.disk_cache.path.parent == tmp_path
    monkeypatch.setenv("SVC_EMBEDDING_CACHE", "off")
    assert get_embedder(device="meta").disk_cache is None  # an argument wins over the variable
