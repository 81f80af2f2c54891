"""The Compare modes tab: the same query on the hybrid index in DENSE, SPARSE and HYBRID mode, side
by side, and how each id's rank shifts between them."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import pandas as pd

from svckit import frames
from svckit.errors import SvcError
from svckit.vector.models import QueryMode
from svckit.widgets._chart import Chart
from svckit.widgets._plots import MODE_COLORS, rank_shift_figure
from svckit.widgets.vector_playground._tables import ranks_html
from svckit.widgets.vector_playground.session import Session


class CompareTab(W.VBox):
    def __init__(self, session: Session, **kwargs: Any) -> None:
        self.session = session
        self.by_mode: dict[str, pd.DataFrame] = {}
        self.rank_fig = Chart().add_class("svckit-rank-chart")
        # the three tables side by side where they fit, one under another where they do not
        self.compare_tables = W.HBox([], layout=W.Layout(flex_flow="row wrap"))
        self.compare_tables.add_class("svckit-compare-tables")
        super().__init__([self.rank_fig, self.compare_tables], **kwargs)

    def compare(self) -> list[str]:
        """Run the three modes and draw them; returns what failed (shown in the status line)."""
        base = self.session.controls.params("hybrid")
        self.by_mode, failed = {}, []
        for mode in ("DENSE", "SPARSE", "HYBRID"):
            options = base.model_copy(update={"query_mode": QueryMode(mode)})
            try:
                self.by_mode[mode] = frames.hits_frame(self.session.run("hybrid", [self.session.text], options)[0])
            except SvcError as exc:
                self.by_mode[mode] = frames.hits_frame([])
                failed.append(f"{mode} comparison failed: {exc}")
        self.rank_fig.show(rank_shift_figure(self.by_mode, title="Rank shift across query modes"))
        self.compare_tables.children = [
            W.VBox([W.HTML(f"<b style='color:{MODE_COLORS[m]}'>{html.escape(m)}</b>"), W.HTML(ranks_html(df))],
                   layout=W.Layout(flex="0 0 auto", max_width="100%", margin="0 16px 4px 0"))
            for m, df in self.by_mode.items()]
        return failed
