"""The playground's HTML tables: hits, one record in full, float columns in the playground's one
precision (:func:`~svckit.widgets._plots.vector.score_text`, six decimals, as its charts and frames)."""

from __future__ import annotations

import html
import json
from typing import Any

import numpy as np
import pandas as pd

from svckit.widgets._common import frame_html
from svckit.widgets._plots.vector import score_text


def hits_html(df: pd.DataFrame, *, max_chars: int = 160) -> str:
    """The hits as an HTML table (escaped; long text and vectors shortened)."""
    if df.empty:
        return "<i>no results</i>"
    show = df.copy()
    if show["vector"].isna().all():
        show = show.drop(columns=["vector"])
    else:
        show["vector"] = show["vector"].map(
            lambda v: "" if v is None else f"[{', '.join(f'{x:.3f}' for x in list(v)[:4])}, … ({len(v)} dims)]")
    if show["sparse_terms"].isna().all():
        show = show.drop(columns=["sparse_terms"])
    if show["data"].isna().all():
        show = show.drop(columns=["data"])
    else:  # one line per hit: collapse the newlines of the stored text
        def one_line(text: str) -> str:
            text = " ".join(text.split())
            return text if len(text) <= max_chars else text[:max_chars] + "…"

        show["data"] = show["data"].fillna("").map(one_line)
    show["score"] = show["score"].map(score_text)
    show.columns = [c.removeprefix("metadata.") for c in show.columns]
    return wide_html(frame_html(show))


def ranks_html(df: pd.DataFrame) -> str:
    """Rank, id and score of the hits (the side-by-side comparison's columns), as wide as its ids: in
    a row of such tables that is too narrow, the next table goes below instead of cutting this one."""
    if df.empty:
        return "<i>no results</i>"
    show = df[["rank", "id", "score"]].assign(score=df["score"].map(score_text))
    return f"<div class='svckit-ranks' style='width:max-content;max-width:100%;overflow-x:auto'>{frame_html(show)}</div>"


def wide_html(table: str) -> str:
    """A table in a box that scrolls sideways instead of being cut at the widget's edge."""
    return f"<div style='overflow-x:auto;max-width:100%'>{table}</div>"


def record_html(record: Any, namespace: str = "") -> str:
    """One stored vector in full: id, namespace, data, metadata (JSON), dense and sparse vector."""
    if record is None:
        return "<i>no such id in this namespace</i>"
    rows = [("id", html.escape(record.id)), ("namespace", html.escape(namespace or "(default)"))]
    if record.data is not None:
        rows.append(("data", html.escape(record.data)))
    meta = record.metadata
    if meta:
        rows.append(("metadata", f"<pre style='margin:0'>{html.escape(json.dumps(meta, indent=2, default=str))}</pre>"))
    vector = record.vector
    if vector:
        head = ", ".join(f"{x:.4f}" for x in list(vector)[:8])
        rows.append(("vector", f"[{head}, …] ({len(vector)} dims, norm {np.linalg.norm(vector):.3f})"))
    sparse = record.sparse_vector
    if sparse is not None:
        pairs = list(zip(sparse.indices, sparse.values))
        shown = ", ".join(f"{i}: {v:.3f}" for i, v in pairs[:10])
        rows.append(("sparse vector", f"{{{shown}{', …' if len(pairs) > 10 else ''}}} ({len(pairs)} non-zero)"))
    cells = "".join(f"<tr><th style='text-align:left;vertical-align:top'>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table class='svc-table svckit-record-table'>{cells}</table>"


def numbers_html(frame: pd.DataFrame, **options: Any) -> str:
    """A table whose float columns show the playground's one precision (NA as a dash), in a box that
    scrolls sideways instead of being cut at the widget's edge."""
    formats = {c: score_text for c in frame.columns if pd.api.types.is_float_dtype(frame[c])}
    return wide_html(frame_html(frame, formatters=formats, **options))
