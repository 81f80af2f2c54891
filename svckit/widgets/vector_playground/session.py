"""What the playground's tabs share: the controls (the request), the router (where each index kind's
queries go), the current hits, and the fitted maps of the indexes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from svckit import frames
from svckit.vector.models import QueryOptions
from svckit.vector.projection import ProjectionMap, map_namespace
from svckit.vector.queries import VectorQueries
from svckit.vector.routing import KindRouter
from svckit.widgets.vector_playground.controls import QueryControls


class Session:
    """The playground's shared state; every tab reads the request and the clients from here."""

    def __init__(self, controls: QueryControls, router: KindRouter) -> None:
        self.controls = controls
        self.router = router
        self.hits = frames.hits_frame([])
        self._maps: dict[tuple[str, str], ProjectionMap] = {}

    @property
    def kind(self) -> str:
        return self.controls.index_kind

    @property
    def text(self) -> str:
        return self.controls.query_text

    def client(self, kind: str | None = None) -> VectorQueries:
        return self.router.client(kind or self.kind)

    def where(self, kind: str | None = None) -> str:
        return self.router.where(kind or self.kind)

    def run(self, kind: str, texts: Sequence[str], options: QueryOptions) -> list[list[Any]]:
        return self.router.query(kind, texts, options)

    def projection(self, kind: str, namespace: str, ids: list[str] | None = None) -> ProjectionMap:
        """The map of ``kind``'s ``namespace``, fitted on first use and kept (fitting is not free);
        ``ids``: the namespace's ids, when they were listed beside other requests."""
        key = (kind, namespace)
        if key not in self._maps:
            self._maps[key] = map_namespace(self.client(kind), namespace, where=self.where(kind), ids=ids)
        return self._maps[key]

    def has_projection(self, kind: str, namespace: str) -> bool:
        return (kind, namespace) in self._maps

    def embed_query(self) -> np.ndarray:
        """The query's dense vector, embedded in this kernel with the packaged model (the service does
        not return the query vector); the embedder is shared with any in-process index."""
        from svckit.embedding import get_embedder

        return np.asarray(get_embedder().embed([self.text]))[0]
