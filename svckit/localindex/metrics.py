"""Distance metrics of dense indexes and their normalisation to a 0..1 score (1 = most similar).

These follow the hosted service's documentation:

- COSINE:      score = (1 + cos(q, v)) / 2
- EUCLIDEAN:   score = 1 / (1 + ‖q − v‖²)           (squared distance)
- DOT_PRODUCT: score = (1 + q·v) / 2                 (meant for unit vectors)

COSINE stores unit vectors so the raw similarity is an inner product; the others store vectors as given.
"""

from __future__ import annotations

import numpy as np

METRICS = ("COSINE", "EUCLIDEAN", "DOT_PRODUCT")


def check_metric(metric: str) -> str:
    name = str(metric).upper()
    if name not in METRICS:
        raise ValueError(f"metric: {metric!r} is not one of {', '.join(METRICS)}")
    return name


def prepare(vectors: np.ndarray, metric: str) -> np.ndarray:
    """Vectors as stored for ``metric``: float32, rows normalised to unit length for COSINE."""
    out = np.ascontiguousarray(vectors, dtype=np.float32)
    if out.ndim == 1:
        out = out[None, :]
    if metric == "COSINE":
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.ascontiguousarray(out / np.where(norms == 0, 1.0, norms), dtype=np.float32)
    return out


def raw_scores(matrix: np.ndarray, query: np.ndarray, metric: str) -> np.ndarray:
    """Raw similarity of ``query`` against every row: inner product, or squared distance for EUCLIDEAN."""
    if metric == "EUCLIDEAN":
        diff = matrix - query[None, :]
        return np.einsum("ij,ij->i", diff, diff)
    return matrix @ query


def normalise(raw: np.ndarray, metric: str) -> np.ndarray:
    """Raw similarities (squared distances for EUCLIDEAN) -> scores in 0..1, higher is more similar."""
    raw = np.asarray(raw, dtype=np.float64)
    if metric == "EUCLIDEAN":
        scores = 1.0 / (1.0 + np.maximum(raw, 0.0))
    else:
        scores = (1.0 + raw) / 2.0
    return np.clip(scores, 0.0, 1.0)


def better_first(raw: np.ndarray, metric: str) -> np.ndarray:
    """Order of rows, best first, for raw similarities of ``metric``."""
    return np.argsort(raw, kind="stable") if metric == "EUCLIDEAN" else np.argsort(-raw, kind="stable")
