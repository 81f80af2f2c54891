"""The Evaluate tab: every query mode and fusion of the selected index scored on a labelled set
(recall@k, MRR, nDCG@k; :mod:`svckit.vector.evaluation`), run as a background job with a progress
bar and Cancel."""

from __future__ import annotations

import threading
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit._progress import Progress
from svckit.errors import SvcError
from svckit.vector import evaluation
from svckit.widgets._chart import Chart
from svckit.widgets._common import MessageBar, muted_html, positive
from svckit.widgets._jobs import BackgroundJob
from svckit.widgets._plots import evaluation_figure
from svckit.widgets.vector_playground._tables import numbers_html
from svckit.widgets.vector_playground.session import Session

DEMO_SET = "demo labelled set"


class EvaluateState(T.HasTraits):
    """What the Evaluate tab runs and shows (the playground shows the same traits)."""

    eval_k = T.Int(10)
    labelled_name = T.Unicode(DEMO_SET)
    eval_running = T.Bool(False)
    eval_done = T.Int(0)  # batches answered
    eval_total = T.Int(0)
    eval_status = T.Unicode("")

    @T.validate("eval_k")
    def _positive(self, proposal: Any) -> int:
        return positive(proposal)


class EvaluateTab(EvaluateState, W.VBox):
    def __init__(self, session: Session, **kwargs: Any) -> None:
        self.session = session
        self.labelled_sets: dict[str, pd.DataFrame | None] = {DEMO_SET: None}  # None: built on first use
        self.eval_per_query = pd.DataFrame()
        self.eval_summary = pd.DataFrame()
        lay = W.Layout
        self.w_labelled = W.Dropdown(options=[DEMO_SET], value=DEMO_SET, description="labelled set",
                                     layout=lay(width="340px"))
        self.w_eval_k = W.IntSlider(value=10, min=1, max=50, description="k", continuous_update=False)
        self.w_eval_run = W.Button(description="Evaluate", icon="play", button_style="primary")
        self.w_eval_cancel = W.Button(description="Cancel", icon="stop", disabled=True)
        self.w_eval_progress = W.IntProgress(value=0, min=0, max=1, description="progress", layout=lay(width="340px"))
        self.w_eval_status = MessageBar()
        self.w_eval_table = W.HTML("")
        self.eval_fig = Chart().add_class("svckit-eval-chart")
        self.w_eval_queries = W.HTML("")
        for w, css in ((self.w_eval_table, "svckit-eval-table"), (self.w_eval_status, "svckit-eval-status"),
                       (self.w_eval_progress, "svckit-eval-progress")):
            w.add_class(css)
        self.job = BackgroundJob(self.w_eval_progress, name="svckit-vector-evaluate")
        super().__init__([W.HBox([self.w_labelled, self.w_eval_k]),
                          W.HBox([self.w_eval_run, self.w_eval_cancel, self.w_eval_progress]), self.w_eval_status,
                          W.HBox([self.eval_fig, self.w_eval_table], layout=lay(width="100%")), self.w_eval_queries],
                         **kwargs)
        T.link((self.w_labelled, "value"), (self, "labelled_name"))
        T.link((self.w_eval_k, "value"), (self, "eval_k"))
        T.link((self.w_eval_status, "message"), (self, "eval_status"))
        self.w_eval_run.on_click(lambda _b: self.start_evaluation())
        self.w_eval_cancel.on_click(lambda _b: self.cancel_evaluation())
        self.observe(self._on_running, names="eval_running")

    def add_labelled_set(self, name: str, labelled: pd.DataFrame) -> None:
        """Offer a labelled set (``query``, ``relevant`` columns) and select it."""
        self.labelled_sets[name] = evaluation.check_labelled(labelled)
        self.w_labelled.options = list(self.labelled_sets)
        self.labelled_name = name

    def labelled(self) -> pd.DataFrame:
        """The selected labelled set; the demo set is built on first use, limited to the ids of the
        local demo corpus when the selected kind runs locally."""
        found = self.labelled_sets.get(self.labelled_name)
        if found is None:
            local = not self.session.router.is_remote(self.session.kind)
            ids = [str(i["id"]) for i in self.session.router.corpus.items] if local else None
            found = evaluation.demo_labelled_queries(ids)
            self.labelled_sets[self.labelled_name] = found
        return found

    def start_evaluation(self) -> threading.Thread | None:
        """Evaluate in the background (Cancel stops the batches not sent yet); the frames land in
        ``eval_per_query`` / ``eval_summary``. Returns the job's thread (None when nothing runs)."""
        if self.eval_running:
            return self.job.thread
        try:
            labelled = self.labelled()
        except (ImportError, ValueError) as exc:
            self.w_eval_status.say(f"no labelled set: {exc}", "error")
            return None
        if labelled.empty:
            self.w_eval_status.say("the labelled set has no query whose relevant ids are in this index")
            return None
        kind, client, where, k = self.session.kind, self.session.client(), self.session.where(), self.eval_k
        namespace = self.session.controls.namespace.strip()
        self.eval_done, self.eval_total = 0, 0
        self.w_eval_status.say(f"evaluating {len(labelled)} queries on the {kind} index…")
        self.eval_running = True

        def work(progress: Any, cancel: threading.Event) -> pd.DataFrame:
            def step(p: Progress) -> None:
                self.eval_done, self.eval_total = p.done, p.total or 0
                progress(p)
            return evaluation.evaluate(client, labelled, k=k, kind=kind, namespace=namespace, progress=step,
                                       cancel=cancel)

        self.job.start(work, on_done=lambda per_query: self._show(per_query, kind, where, labelled, k),
                       on_error=self._failed)
        return self.job.thread

    def evaluate(self, labelled: pd.DataFrame | None = None, k: int | None = None, *,
                 timeout: float | None = None) -> pd.DataFrame:
        """Evaluate and wait: ``labelled`` (else the selected set) at ``k`` (else the slider).
        Returns the summary frame (one row per configuration)."""
        if labelled is not None:
            self.add_labelled_set("given labelled set", labelled)
        if k is not None:
            self.eval_k = k
        if self.start_evaluation() is not None:
            self.job.wait(timeout)
        return self.eval_summary

    def cancel_evaluation(self) -> None:
        """Stop a running evaluation: the batches in flight finish (their rows are shown), the others
        are not sent."""
        self.job.cancel()

    def _show(self, per_query: pd.DataFrame, kind: str, where: str, labelled: pd.DataFrame, k: int) -> None:
        self.eval_running = False
        summary = evaluation.summarize(per_query) if len(per_query) else pd.DataFrame()
        self.eval_per_query, self.eval_summary = per_query, summary
        cancelled = bool(per_query.attrs.get("cancelled"))
        self.w_eval_status.say(f"{'cancelled after' if cancelled else 'done:'} {len(per_query)} query runs, {len(labelled)} "
                  f"labelled queries × {len(summary)} configuration(s), top {k}, {kind} index ({where})")
        self.w_eval_table.value = numbers_html(summary) if len(summary) else "<i>nothing evaluated</i>"
        fig = evaluation_figure(summary, title=f"{self.labelled_name}: {kind} index, k = {k}")
        fig.update_layout(width=620)
        self.eval_fig.show(fig)
        if len(per_query):
            worst = per_query.sort_values(["ndcg", "query_index"]).head(10)
            worst = worst[["configuration", "query", "relevant", "found", "first_relevant_rank", "recall",
                           "reciprocal_rank", "ndcg"]].rename(columns={
                "first_relevant_rank": "first hit", "reciprocal_rank": "RR", "ndcg": f"nDCG@{k}",
                "recall": f"recall@{k}"})
            self.w_eval_queries.value = muted_html("the 10 hardest query runs (lowest nDCG)") + numbers_html(worst)

    def _failed(self, exc: BaseException) -> None:
        self.eval_running = False
        what = str(exc) if isinstance(exc, SvcError) else f"{type(exc).__name__}: {exc}"
        self.w_eval_status.say(f"evaluation failed: {what}", "error")

    def _on_running(self, _change: Any) -> None:
        self.w_eval_run.disabled, self.w_eval_cancel.disabled = self.eval_running, not self.eval_running
