"""The Explain tab: why each hit ranks where it does (dense and sparse rank and score, the matched BM25
terms, the RRF / DBSF arithmetic, :func:`svckit.vector.explain.explain_hits`), one hit drawn."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import pandas as pd
import plotly.graph_objects as go
import traitlets as T

from svckit import frames
from svckit.errors import SvcError
from svckit.vector.explain import explain_hits
from svckit.widgets._chart import Chart
from svckit.widgets._common import Quiet, message_html, muted_html
from svckit.widgets._plots import empty_figure, explain_figure
from svckit.widgets._plots.vector import score_text
from svckit.widgets.vector_playground._tables import numbers_html
from svckit.widgets.vector_playground.session import Session


class ExplainTab(W.VBox):
    explain_hit = T.Unicode("", allow_none=True)  # the hit whose contributions are drawn (None: no hits)
    explain_source = T.Unicode("")  # what was returned by the index and what was computed here

    def __init__(self, session: Session, **kwargs: Any) -> None:
        self.session = session
        self.explanation: Any = None
        self.explained = pd.DataFrame()
        self._quiet = Quiet()
        self.w_explain_note = W.HTML("")
        self.w_explain_run = W.Button(description="Explain", icon="question-circle")
        self.w_explain_pick = W.Dropdown(options=[], description="hit", layout=W.Layout(width="300px"))
        self.w_explain_stats = W.HTML("")
        self.w_explain_table = W.HTML("")
        self.w_explain_formula = W.HTML("")
        self.explain_fig = Chart().add_class("svckit-explain-chart")
        self.w_explain_terms = W.HTML("")
        for w, css in ((self.w_explain_note, "svckit-explain-note"), (self.w_explain_table, "svckit-explain-table"),
                       (self.w_explain_formula, "svckit-explain-formula"),
                       (self.w_explain_pick, "svckit-explain-pick")):
            w.add_class(css)
        super().__init__([self.w_explain_note, W.HBox([self.w_explain_pick, self.w_explain_run]),
                          self.w_explain_formula,
                          W.HBox([self.explain_fig, self.w_explain_terms], layout=W.Layout(width="100%")),
                          self.w_explain_stats, self.w_explain_table], **kwargs)
        T.link((self.w_explain_pick, "value"), (self, "explain_hit"))
        self.w_explain_run.on_click(lambda _b: self.explain())
        self.observe(self._on_hit, names="explain_hit")

    def explain(self, hit_id: str | None = None) -> pd.DataFrame:
        """Explain the current query's hits on the selected index: the table of every hit, and for one
        hit (``hit_id``, else the first) its formula, its contributions chart and its matched terms."""
        session = self.session
        if not session.text.strip() or not session.controls.check_filter():
            self.w_explain_note.value = "<i>type a query (and fix the filter, if any) to explain its hits</i>"
            return self.explained
        try:
            self.explanation = explain_hits(session.client(), session.text, session.controls.params(),
                                            kind=session.kind)
        except SvcError as exc:
            self.explanation, self.explained = None, pd.DataFrame()
            self.w_explain_note.value = message_html(f"explain failed: {exc}", "error")
            return self.explained
        ex = self.explanation
        self.explained = frames.explain_frame(ex)
        self.explain_source = ex.source
        how = {"RRF": f"Reciprocal Rank Fusion: each side adds 1/(60 + its rank) over {ex.depth} candidates a side",
               "DBSF": f"Distribution-Based Score Fusion: each side adds (score − (μ−3σ)) / 6σ over {ex.depth} "
                       "candidates a side"}.get(ex.fusion or "", f"{ex.mode} query: no fusion")
        self.w_explain_note.value = (
            f"<div class='svckit-explain-note'><b>{ex.kind}</b> index ({session.where()}), mode {ex.mode}. "
            f"{html.escape(how)}.<br>{muted_html(ex.source[0].upper() + ex.source[1:] + '.')}</div>")
        self.w_explain_stats.value = (
            f"{muted_html('DBSF normalisation bounds per side')}{numbers_html(frames.fusion_stats_frame(ex))}"
            if ex.fusion == "DBSF" else "")
        show = self.explained.drop(columns=["formula"])
        self.w_explain_table.value = numbers_html(show) if len(show) else "<i>no results</i>"
        ids = list(self.explained["id"])
        with self._quiet:
            self.w_explain_pick.options = ids
        chosen = hit_id if hit_id in ids else (ids[0] if ids else None)
        if self.explain_hit == chosen:
            self.show_explained(chosen)
        else:
            self.explain_hit = chosen  # the observer draws it
        return self.explained

    def show_explained(self, hit_id: str | None) -> go.Figure | None:
        """Draw one explained hit: its formula, its contributions chart and its matched terms."""
        if self.explanation is None or not hit_id:
            self.explain_fig.show(empty_figure("Contributions", "no hit to explain"))
            self.w_explain_formula.value = self.w_explain_terms.value = ""
            return None
        row = self.explained[self.explained["id"] == hit_id].iloc[0]
        terms = frames.explain_terms_frame(self.explanation, hit_id)
        shown = terms.reindex(columns=["word", "term", "tf", "doc_len", "idf", "query_weight", "doc_weight",
                                       "contribution"]).rename(columns={"term": "stem"})
        shown = shown.dropna(axis=1, how="all")  # what the service does not say (tf, idf) is left out
        self.w_explain_formula.value = (
            f"<div><b>{int(row['rank'])}. {html.escape(hit_id)}</b>: score {score_text(row['score'])} "
            f"(returned), {score_text(row['recomputed'])} (recomputed)<br><code>{html.escape(str(row['formula']))}"
            "</code></div>")
        fig = explain_figure(row.to_dict(), terms, fusion=self.explanation.fusion,
                             title=f"Why {hit_id} ranks {int(row['rank'])}")
        fig.update_layout(width=540)
        self.explain_fig.show(fig)
        self.w_explain_terms.value = (
            muted_html("matched BM25 terms (contribution = query weight × BM25 weight)") + numbers_html(shown)
            if len(terms) else "<i>no query term occurs in this document</i>")
        return fig

    def _on_hit(self, change: dict) -> None:
        if not self._quiet and self.explanation is not None:
            self.show_explained(change["new"])
