"""Where each index kind's queries go: the service where it is configured, else a local index.

The playground (and a notebook) queries three kinds of index, dense, sparse and hybrid. A
:class:`KindRouter` holds one client per kind: the service's :class:`~svckit.vector.Vector` where the
SVC_VECTOR_* variables configure that kind, else a :class:`~svckit.vector.LocalVector` over a
:class:`LocalCorpus` (the packaged demo corpus, :mod:`svckit.core.corpus`, in this kernel). A kind
whose service index answers 422 (created without an embedding model) falls back to the local index
from then on. Nothing falls back silently: :meth:`KindRouter.fallback_reason` says why a kind is local.

::

    router = KindRouter.from_settings(Settings.from_env())
    router.query("hybrid", ["how do I parse json"], QueryOptions(top_k=5))   # one list of hits per text
    router.where("sparse"), router.fallback_reason("sparse")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from svckit.errors import ConfigError, EmbeddingModelRequired
from svckit.vector.client import KIND_SETTINGS
from svckit.vector.models import KINDS, QueryOptions
from svckit.vector.queries import VectorQueries


class LocalCorpus:
    """The demo corpus (or ``items``) in local indexes, one per kind, built on first use and shared."""

    def __init__(self, items: Sequence[Any] | None = None, *, namespace: str = "") -> None:
        self._items = items
        self.namespace = namespace
        self._clients: dict[str, Any] = {}

    @property
    def items(self) -> Sequence[Any]:
        if self._items is None:
            from svckit.core.corpus import load_demo_corpus

            self._items = list(load_demo_corpus())
        return self._items

    def index(self, kind: str) -> Any:
        """The ``kind`` local index (a :class:`~svckit.localindex.LocalIndex`), built on first use."""
        return self.client(kind).index

    def client(self, kind: str) -> Any:
        """The :class:`~svckit.vector.LocalVector` client of the ``kind`` index (the local index is
        imported here, on first use: it needs the ``local`` extra)."""
        if kind not in self._clients:
            from svckit.vector import LocalVector

            self._clients[kind] = LocalVector.from_items(self.items, kind=kind, namespace=self.namespace)
        return self._clients[kind]


def configured_clients(settings: Any) -> tuple[dict[str, VectorQueries], dict[str, str]]:
    """A service client for each kind the settings configure (SVC_VECTOR_URL for dense,
    SVC_VECTOR_SPARSE_URL, SVC_VECTOR_HYBRID_URL), and for the others why they are not."""
    clients: dict[str, VectorQueries] = {}
    missing: dict[str, str] = {}
    for kind in KINDS:
        try:
            settings.require(KIND_SETTINGS[kind], "vector_token")  # names the missing SVC_* variable(s)
            from svckit.vector.client import Vector

            clients[kind] = Vector.from_settings(settings, kind=kind)
        except ConfigError as exc:
            missing[kind] = str(exc).split(":")[0].replace("missing", "the service is not configured:", 1) \
                + " is not set"
    return clients, missing


class KindRouter:
    """One client per index kind, the service's or a local index's (see the module)."""

    def __init__(self, clients: Mapping[str, VectorQueries | None] | None = None, *,
                 corpus: LocalCorpus | None = None, not_configured: Mapping[str, str] | None = None) -> None:
        self.remote = {k: c for k, c in (clients or {}).items() if c is not None}
        self.not_configured = dict(not_configured or {})
        self.failed: dict[str, str] = {}  # kind -> why its service index fell back (422)
        self.corpus = corpus or LocalCorpus()

    @classmethod
    def from_settings(cls, settings: Any = None, *, corpus: LocalCorpus | None = None) -> KindRouter:
        from svckit.config import Settings

        clients, missing = configured_clients(settings if settings is not None else Settings.from_env())
        return cls(clients, corpus=corpus, not_configured=missing)

    def is_remote(self, kind: str) -> bool:
        return kind in self.remote and kind not in self.failed

    def client(self, kind: str) -> VectorQueries:
        """The client the ``kind`` queries go to now."""
        return self.remote[kind] if self.is_remote(kind) else self.corpus.client(kind)

    def where(self, kind: str) -> str:
        """Where ``kind``'s answers come from, as a person reads it."""
        return "service" if self.is_remote(kind) else "local index"

    def fallback_reason(self, kind: str) -> str:
        """Why ``kind`` is answered locally ("" when it goes to the service)."""
        if self.is_remote(kind):
            return ""
        return self.failed.get(kind) or self.not_configured.get(kind) or f"no service client for the {kind} index"

    def query(self, kind: str, texts: Sequence[str], options: QueryOptions) -> list[list[Any]]:
        """One list of hits per text from the ``kind`` index; a service index without an embedding
        model (422) falls back to the local one, for this and later queries."""
        data: Any = texts[0] if len(texts) == 1 else list(texts)
        out: Any  # one list of hits, or one per text
        try:
            out = self.client(kind).query_data(data, **options.model_dump())
        except EmbeddingModelRequired as exc:
            if not self.is_remote(kind):
                raise
            self.failed[kind] = f"the {kind} index answered 422 (no embedding model): {exc}"
            out = self.client(kind).query_data(data, **options.model_dump())
        return out if len(texts) > 1 else [out]


__all__ = ["KindRouter", "LocalCorpus", "configured_clients"]
