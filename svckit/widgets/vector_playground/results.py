"""The Results tab: the hits' scores as bars, the hits as a table, and any hit of them in full."""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import pandas as pd

from svckit.widgets._chart import Chart
from svckit.widgets._plots import score_figure
from svckit.widgets.vector_playground._tables import hits_html


class ResultsTab(W.VBox):
    def __init__(self, **kwargs: Any) -> None:
        self.score_fig = Chart().add_class("svckit-score-chart")
        self.w_table = W.HTML("")
        self.w_hit_pick = W.Dropdown(options=[], description="hit", layout=W.Layout(width="300px"))
        self.w_hit_fetch = W.Button(description="Full record", icon="file-text")
        self.w_hit_record = W.HTML("")
        for w, css in ((self.w_table, "svckit-hits-table"), (self.w_hit_pick, "svckit-hit-pick"),
                       (self.w_hit_record, "svckit-hit-record")):
            w.add_class(css)
        super().__init__([self.score_fig, self.w_table, W.HBox([self.w_hit_pick, self.w_hit_fetch]),
                          self.w_hit_record], **kwargs)

    def show(self, hits: pd.DataFrame, title: str) -> None:
        """Draw ``hits`` (:func:`svckit.frames.hits_frame`): the table, the score bars, the hit picker."""
        self.w_table.value = hits_html(hits)
        self.w_hit_pick.options = list(hits["id"])
        self.w_hit_record.value = ""  # a record shown before belongs to other hits
        self.score_fig.show(score_figure(hits, title=title))
