"""The Batch tab: several queries in one request (one per line), a score chart each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit.errors import SvcError
from svckit.widgets._chart import Chart
from svckit.widgets._common import message_html
from svckit.widgets._plots import score_figure
from svckit.widgets.vector_playground.session import Session


class BatchTab(W.VBox):
    batch_text = T.Unicode("")

    def __init__(self, session: Session, **kwargs: Any) -> None:
        self.session = session
        self.batch_hits: list[pd.DataFrame] = []
        self.w_batch = W.Textarea(placeholder="one query per line", layout=W.Layout(width="480px", height="90px"))
        self.w_batch_run = W.Button(description="Run batch", icon="list")
        self.batch_box = W.VBox([])
        T.link((self.w_batch, "value"), (self, "batch_text"))
        self.w_batch_run.on_click(lambda _b: self.batch())
        super().__init__([self.w_batch, self.w_batch_run, self.batch_box], **kwargs)

    def batch(self, texts: Sequence[str] | None = None) -> list[pd.DataFrame]:
        """Several queries in one request (one per line of the batch box); one chart each."""
        if texts is not None:
            self.batch_text = "\n".join(texts)
        lines = [t.strip() for t in self.batch_text.splitlines() if t.strip()]
        if not lines or not self.session.controls.check_filter():
            self.batch_box.children = [W.HTML(message_html(
                "type one query per line" if not lines else "fix the filter first"))]
            return []
        try:
            results = self.session.run(self.session.kind, lines, self.session.controls.params())
        except SvcError as exc:
            self.batch_box.children = [W.HTML(message_html(str(exc), "error"))]
            return []
        self.batch_hits = [frames.hits_frame(r) for r in results]
        self.batch_box.children = [Chart(score_figure(df, title=f"“{text[:60]}”"))
                                   for text, df in zip(lines, self.batch_hits)]
        return self.batch_hits
