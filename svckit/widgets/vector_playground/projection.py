"""The Projection tab: the index on a 2-D map (a PCA of its dense vectors), the query as a star and
its hits ringed and numbered, coloured by similarity to the query or by a metadata field."""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go
import traitlets as T

from svckit.vector.projection import ProjectionMap
from svckit.widgets._chart import Chart
from svckit.widgets._plots import empty_figure, projection_figure
from svckit.widgets.vector_playground.session import Session


class ProjectionTab(W.VBox):
    color_by = T.Unicode("score")

    def __init__(self, session: Session, **kwargs: Any) -> None:
        self.session = session
        self.w_color = W.Dropdown(options=["score"], value="score", description="colour by")
        self.projection_fig = Chart().add_class("svckit-projection-chart")
        T.link((self.w_color, "value"), (self, "color_by"))
        super().__init__([self.w_color, self.projection_fig], **kwargs)

    @property
    def drawn(self) -> bool:
        """True once a map was asked for (later queries redraw it)."""
        return len(self.projection_fig.data) > 0

    def projection_map(self) -> ProjectionMap:
        """The cached map for the selected kind and the query's namespace (fitted on first use). A
        sparse index has no dense vectors, so its map is the hybrid one of the same namespace; its
        hits are found on the map by id."""
        kind = "hybrid" if self.session.kind == "sparse" else self.session.kind
        pm = self.session.projection(kind, self.session.controls.namespace.strip())
        if list(self.w_color.options) != ["score", *pm.fields()]:
            self.w_color.options = ["score", *pm.fields()]
        return pm

    def project(self) -> go.Figure | None:
        """Draw the map with the query (star) and its hits (ringed, numbered by rank)."""
        session = self.session
        try:
            pm = self.projection_map()
            if len(pm.ids) < 2:
                ns = session.controls.namespace.strip() or "(default)"
                raise LookupError(f"the map of namespace {ns} has {len(pm.ids)} vector(s): nothing to project")
            qvec = session.embed_query()
        except Exception as exc:  # noqa: BLE001 - an auxiliary view: say why it is empty, keep the rest
            self.projection_fig.show(empty_figure("Projection", f"no projection: {exc}"))
            return None
        qunit = qvec / (np.linalg.norm(qvec) or 1.0)
        if self.color_by == "score" or self.color_by not in pm.metadata.columns:
            color, label = pm.matrix @ qunit, "similarity"
        else:
            color, label = pm.metadata[self.color_by], self.color_by
        hits = session.hits
        hit_rows, hit_xy = [], []
        for row in hits.itertuples():
            if row.id in pm.position:
                hit_rows.append(row.Index)
                hit_xy.append(pm.coords[pm.position[row.id]])
            elif row.vector is not None and len(row.vector) == pm.matrix.shape[1]:
                hit_rows.append(row.Index)
                hit_xy.append(pm.transform(row.vector)[0])
        fig = projection_figure(
            pm.coords, ids=list(pm.ids), color=color, color_label=label, hits=hits.loc[hit_rows],
            hit_coords=np.asarray(hit_xy).reshape(-1, 2), query_coords=pm.transform(qunit),
            title=f"{session.kind} index: the query and its hits on a map of the index", explained=pm.explained,
            detail=f"PCA of {len(pm.ids):,} vectors ({pm.source})")
        self.projection_fig.show(fig)
        return fig
