"""A 2-D map of what a namespace holds: a seeded sample of its records and a PCA fitted on their dense
vectors, so a notebook (and the playground's Projection and Browse tabs) can place the index, a query
and its hits on one picture.

::

    from svckit.vector import Vector
    from svckit.vector.projection import fit_projection, sample_records
    records, listed = sample_records(v, "")              # at most MAP_CAP records, with vectors
    pm = fit_projection([r.id for r in records], [r.vector for r in records])
    pm.coords, pm.transform(query_vector)                # 2-D positions

Sampling: at most :data:`MAP_CAP` vectors are fetched, drawn at random (fixed seed, so the map is
stable) from the first :data:`SCAN_CAP` ids the namespace lists in id order. That is two round trips:
one ``range`` page of up to :data:`SCAN_CAP` ids (ids alone are about 25 bytes each), then one fetch
of the sample, whose batches the client sends side by side. Small namespaces come back whole.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from svckit._cursor import Pages, listing
from svckit.vector.queries import VectorQueries

MAP_CAP = 2_000  # at most this many vectors are fetched and projected on a map
SCAN_CAP = 20_000  # the map's sample is spread over at most this many ids (listed without vectors)


def list_ids(client: VectorQueries, namespace: str, scan: int | None = None) -> list[str]:
    """The first ``scan`` (:data:`SCAN_CAP`) ids of a namespace in id order: one ``range`` request
    where the service gives the whole page asked for (each page asks for the ids still wanted;
    the one cursor loop, :mod:`svckit._cursor`)."""
    pages = Pages("vectors", "next_cursor", start="", limit=SCAN_CAP if scan is None else scan)
    wanted = pages.limit or 0
    return [r.id for r in listing(lambda cursor: client.range(cursor, wanted - pages.count, namespace=namespace),
                                  pages)]


def sample_records(client: VectorQueries, namespace: str, *, cap: int | None = None,
                   scan: int | None = None, ids: list[str] | None = None) -> tuple[list[Any], int]:
    """Up to ``cap`` (:data:`MAP_CAP`) records of a namespace with their vectors, a random sample (fixed
    seed) of its first ``scan`` (:data:`SCAN_CAP`) ids in id order, and how many ids were listed.
    ``ids``: that listing, when the caller has read it already (beside other requests)."""
    cap = MAP_CAP if cap is None else cap
    ids = list_ids(client, namespace, scan) if ids is None else ids
    # a seeded random sample: an even stride would alias with ids that cycle through groups
    chosen = ids if len(ids) <= cap else sorted(random.Random(0).sample(ids, cap))
    if not chosen:
        return [], 0
    records = client.fetch(chosen, namespace=namespace, include_vectors=True)
    return [r for r in records if r is not None], len(ids)


def flat_metadata(record: Any) -> dict[str, Any]:
    """A record's metadata fields that can colour a map (nested objects and lists left out)."""
    meta = record.metadata or {}
    return {k: v for k, v in meta.items() if not isinstance(v, (dict, list))}


@dataclass
class ProjectionMap:
    """The 2-D map of one index: the fitted PCA, the corpus ids, their coordinates and metadata."""

    ids: np.ndarray
    coords: np.ndarray
    matrix: np.ndarray  # unit-normalised dense vectors, for "colour by similarity"
    metadata: pd.DataFrame
    pca: Any
    position: dict[str, int] = field(default_factory=dict)
    source: str = "local index"

    def transform(self, vectors: Any) -> np.ndarray:
        """Positions of more vectors (a query, a hit) on this map."""
        return self.pca.transform(np.asarray(vectors, dtype=np.float32).reshape(-1, self.matrix.shape[1]))

    @property
    def explained(self) -> list[float]:
        """The share of the vectors' variance each of the map's two axes explains (PCA's
        ``explained_variance_ratio_``): what the map leaves out is the rest."""
        ratio = getattr(self.pca, "explained_variance_ratio_", None)
        return [] if ratio is None else [float(r) for r in ratio]

    def fields(self) -> list[str]:
        """The metadata fields a map can be coloured by (those with a value somewhere)."""
        return [c for c in self.metadata.columns if self.metadata[c].notna().any()]


def fit_projection(ids: Sequence[str], matrix: Any, metadata: pd.DataFrame | None = None) -> ProjectionMap:
    """Fit a 2-component PCA on the index's dense vectors (randomized SVD: fast at 100,000 x 384)."""
    from sklearn.decomposition import PCA

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms == 0, 1, norms)
    pca = PCA(n_components=2, svd_solver="randomized" if len(unit) > 2000 else "full", random_state=0)
    coords = pca.fit_transform(unit) if len(unit) >= 2 else np.zeros((len(unit), 2))
    ids_arr = np.asarray([str(i) for i in ids], dtype=object)
    meta = metadata if metadata is not None else pd.DataFrame(index=range(len(ids_arr)))
    return ProjectionMap(ids_arr, coords, unit, meta.reset_index(drop=True), pca,
                         {i: k for k, i in enumerate(ids_arr)})


def map_namespace(client: VectorQueries, namespace: str, *, where: str = "",
                  ids: list[str] | None = None) -> ProjectionMap:
    """The map of a namespace from a sample of its records (:func:`sample_records`, of ``ids`` when
    given); ``source`` says where the vectors came from (``where``) and how many were sampled of how
    many listed."""
    records, listed = sample_records(client, namespace, ids=ids)
    records = [r for r in records if r.vector]
    ids = [r.id for r in records]
    matrix = np.asarray([r.vector for r in records], dtype=np.float32).reshape(len(ids), -1 if ids else 0)
    pm = fit_projection(ids, matrix, pd.DataFrame([flat_metadata(r) for r in records]))
    pm.source = where
    if listed > len(records):
        pm.source += f", {len(records):,} sampled of {listed:,}{'+' if listed >= SCAN_CAP else ''}"
    return pm


__all__ = ["MAP_CAP", "SCAN_CAP", "ProjectionMap", "fit_projection", "flat_metadata", "list_ids",
           "map_namespace", "sample_records"]
