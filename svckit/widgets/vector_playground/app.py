"""The vector playground: query controls over seven tabs (Results, Compare modes, Projection, Batch,
Browse, Explain, Evaluate), each a view of its own in this package; this module composes them, links
their traits to the playground's, and runs a query through the tabs that show it."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit.errors import SvcError
from svckit.vector.projection import ProjectionMap
from svckit.vector.queries import VectorQueries
from svckit.vector.routing import KindRouter, LocalCorpus, configured_clients
from svckit.widgets._common import MessageBar, Quiet, style_widget
from svckit.widgets._static import StaticView
from svckit.widgets.vector_playground.batch import BatchTab
from svckit.widgets.vector_playground.browse import BrowseState, BrowseTab
from svckit.widgets.vector_playground.compare import CompareTab
from svckit.widgets.vector_playground.controls import QueryControls, QueryState
from svckit.widgets.vector_playground.evaluate import EvaluateState, EvaluateTab
from svckit.widgets.vector_playground.explain import ExplainTab
from svckit.widgets.vector_playground.projection import ProjectionTab
from svckit.widgets.vector_playground.results import ResultsTab
from svckit.widgets.vector_playground.session import Session
from svckit.widgets.vector_playground.stale import show_stale, stale_note

TABS = ("Results", "Compare modes", "Projection", "Batch", "Browse", "Explain", "Evaluate")
PROJECTION_TAB, BROWSE_TAB, EXPLAIN_TAB = TABS.index("Projection"), TABS.index("Browse"), TABS.index("Explain")
#: the views whose state the playground shows as traits of its own, and the traits of each
LINKED = {
    "controls": QueryState.class_trait_names(),
    "projection": ["color_by"],
    "batcher": ["batch_text"],
    "browse_tab": BrowseState.class_trait_names(),
    "explainer": ["explain_hit", "explain_source"],
    "evaluator": EvaluateState.class_trait_names(),
}
#: a change of one of these re-runs the query
REQUEST = ["query_text", "top_k", "namespace", "include_metadata", "include_vectors", "include_data", "query_mode",
           "fusion", "weighting"]


class VectorPlayground(QueryState, BrowseState, EvaluateState, StaticView, W.VBox):
    """Type a query, tune the request, and see the hits, the score chart, the DENSE / SPARSE / HYBRID
    comparison, a 2-D map of the index, batch queries, a browser of whatever an index holds, each
    hit explained, and a retrieval evaluation.

    ``VectorPlayground(clients)`` maps an index kind to its client (a :class:`~svckit.vector.Vector`);
    kinds without one query the local index (a :class:`~svckit.vector.LocalVector` over ``corpus``),
    with the reason from ``not_configured`` in the banner. :meth:`from_settings` builds the clients
    from the SVC_VECTOR_* variables. Every control's value is a trait, and every action a public
    method (``query()``, ``compare()``, ``batch()``, ``browse()``, ``inspect()``, ``explain()``,
    ``evaluate()`` ...), so tests and notebooks drive it without a browser. Each tab is an attribute
    (``controls``, ``results``, ``comparison``, ``projection``, ``batcher``, ``browse_tab``, ``explainer``,
    ``evaluator``) and its controls are reached through it: ``playground.results.score_fig``."""

    #: the Batch tab draws a chart per query after the widget is displayed: room for that many in
    #: its static view (a batch of more is named there, "not kept")
    static_spare_charts = 6
    color_by = T.Unicode("score")
    batch_text = T.Unicode("")
    explain_hit = T.Unicode("", allow_none=True)  # the hit whose contributions are drawn (None: no hits)
    explain_source = T.Unicode("")
    # what is shown
    backend = T.Unicode("")  # "remote" / "local" for the current kind
    fallback_reason = T.Unicode("")
    result_count = T.Int(0)
    status = T.Unicode("")
    stale = T.Unicode("")  # why the hits shown no longer answer the request ("" while they do)

    def __init__(self, clients: Mapping[str, VectorQueries | None] | None = None, *,
                 corpus: LocalCorpus | None = None, not_configured: Mapping[str, str] | None = None,
                 query: str = "", index_kind: str = "hybrid", autorun: bool = True, **kwargs: Any) -> None:
        self.router = KindRouter(clients, corpus=corpus, not_configured=not_configured)
        self.controls = QueryControls()
        self.session = Session(self.controls, self.router)
        self.results = ResultsTab()
        self.comparison = CompareTab(self.session)
        self.projection = ProjectionTab(self.session)
        self.batcher = BatchTab(self.session)
        self.browse_tab = BrowseTab(self.session)
        self.explainer = ExplainTab(self.session)
        self.evaluator = EvaluateTab(self.session)
        self._quiet = Quiet()
        self._applied_filter = ""
        self.w_banner = W.HTML("")
        self.w_status = MessageBar()
        self.w_stale = W.HTML("")
        self.tabs = W.Tab(children=[self.results, self.comparison, self.projection, self.batcher, self.browse_tab,
                                    self.explainer, self.evaluator], titles=TABS)
        super().__init__([style_widget(), W.HTML("<h3 style='margin:4px 0'>Vector query playground</h3>"),
                          self.w_banner, self.controls, self.w_status, self.w_stale, self.tabs])
        self.add_class("svckit-vector-playground")
        self.w_status.add_class("svckit-status")
        self.w_stale.add_class("svckit-stale-note")
        self.w_banner.add_class("svckit-banner-box")
        for view, names in LINKED.items():
            for name in names:  # the view's state is the start; the traits given here then reach it
                T.link((getattr(self, view), name), (self, name))
        T.link((self.w_status, "message"), (self, "status"))
        for name, value in kwargs.items():
            setattr(self, name, value)
        self.observe(self._on_filter, names="filter_text")
        self.observe(self._on_kind, names="index_kind")
        self.observe(self._on_request_change, names=REQUEST)
        self.observe(self._on_color, names="color_by")
        self.observe(self._on_stale, names="stale")
        self.tabs.observe(self._on_tab, names="selected_index")
        self.controls.w_search.on_click(lambda _b: self.query())
        # Enter in the filter box searches (the box sends its text as typed, to check it at once, and
        # Enter as a "submit" message of its own)
        self.controls.w_filter.on_msg(self._on_filter_submit)
        self.results.w_hit_fetch.on_click(lambda _b: self.results.w_hit_pick.value
                                          and self.inspect(self.results.w_hit_pick.value))
        with self._quiet:
            self.index_kind = index_kind
            self._update_banner()
            if query:
                self.query_text = query
        if autorun and self.query_text:
            self.query()

    @classmethod
    def from_settings(cls, settings: Any = None, **kwargs: Any) -> VectorPlayground:
        """Build with a Vector client for each kind the settings configure (SVC_VECTOR_URL for dense,
        SVC_VECTOR_SPARSE_URL, SVC_VECTOR_HYBRID_URL); the others fall back to the local index."""
        from svckit.config import Settings

        clients, missing = configured_clients(settings if settings is not None else Settings.from_env())
        return cls(clients, not_configured=missing, **kwargs)

    @property
    def corpus(self) -> LocalCorpus:
        return self.router.corpus

    @property
    def hits(self) -> pd.DataFrame:
        return self.session.hits

    @property
    def by_mode(self) -> dict[str, pd.DataFrame]:
        """The hits of the Compare modes tab, by query mode."""
        return self.comparison.by_mode

    @property
    def rank_fig(self) -> Any:
        """The rank-shift chart of the Compare modes tab (``.figure`` is its plotly figure)."""
        return self.comparison.rank_fig

    @property
    def projection_fig(self) -> Any:
        """The 2-D map of the Projection tab (``.figure`` is its plotly figure)."""
        return self.projection.projection_fig

    @property
    def eval_summary(self) -> pd.DataFrame:
        """The last evaluation's summary: one row per configuration."""
        return self.evaluator.eval_summary

    # -- public -------------------------------------------------------------------------------------

    def query(self, text: str | None = None) -> pd.DataFrame:
        """Run the query on the selected index; update the table, score chart, comparison and the map
        and explanation if their tab is open. Returns the hits frame; errors are shown in the widget."""
        if text is not None:
            with self._quiet:
                self.query_text = text
        if not self.controls.check_filter():
            self.w_status.say("fix the filter first")
            return self.hits
        if not self.query_text.strip():
            self.w_status.say("type a query")
            return self.hits
        try:
            hits = self.session.run(self.index_kind, [self.query_text], self.controls.params())[0]
        except SvcError as exc:
            self.w_status.say(f"query failed: {exc}", "error")
            return self.hits
        finally:
            self._update_banner()
        self._applied_filter, self.stale = self.filter_text, ""
        self.session.hits = frames.hits_frame(hits)
        self.result_count = len(self.hits)
        self.results.show(self.hits, f"Scores for “{self.query_text[:60]}” ({self.index_kind})")
        failed = self.comparison.compare()
        found = f"{self.result_count} hit(s) from the {self.index_kind} index ({self.session.where()})"
        self.w_status.say("; ".join([found, *failed, *self._still_filling()]))
        if self.tabs.selected_index == PROJECTION_TAB or self.projection.drawn:
            self.projection.project()  # only once the map has been asked for: fitting it is not free
        if self.tabs.selected_index == EXPLAIN_TAB:
            self.explainer.explain()
        return self.hits

    def _still_filling(self) -> list[str]:
        """Why a query found nothing when the index is still being filled (one more request, only
        then): a fresh sandbox embeds its demo corpus in the background for a minute or so."""
        if self.result_count:
            return []
        try:
            pending = self.session.client().info().pending_vector_count
        except SvcError:
            return []
        return [f"{pending:,} vectors are still being indexed: search again in a moment"] if pending else []

    def compare(self) -> dict[str, pd.DataFrame]:
        """The query on the hybrid index in DENSE, SPARSE and HYBRID mode, side by side, and the
        rank-shift chart between them."""
        self.comparison.compare()
        return self.comparison.by_mode

    def projection_map(self) -> ProjectionMap:
        return self.projection.projection_map()

    def batch(self, texts: Sequence[str] | None = None) -> list[pd.DataFrame]:
        return self.batcher.batch(texts)

    def browse(self, namespace: str | None = None) -> pd.DataFrame:
        return self.browse_tab.browse(namespace)

    def next_page(self) -> pd.DataFrame:
        return self.browse_tab.next_page()

    def inspect(self, vector_id: str, namespace: str | None = None) -> Any:
        """Fetch one vector in full and show it (Browse and Results tabs); a hit of the Results tab is
        looked up in the query's namespace. Returns the record (None if missing)."""
        ns = self.namespace.strip() if namespace is None else namespace
        record, shown = self.browse_tab.inspect(vector_id, ns)
        if vector_id in self.results.w_hit_pick.options and ns == self.namespace.strip():
            self.results.w_hit_record.value = shown  # one of the hits shown: under them too
        return record

    def explain(self, hit_id: str | None = None) -> pd.DataFrame:
        return self.explainer.explain(hit_id)

    def add_labelled_set(self, name: str, labelled: pd.DataFrame) -> None:
        self.evaluator.add_labelled_set(name, labelled)

    def start_evaluation(self) -> Any:
        return self.evaluator.start_evaluation()

    def evaluate(self, labelled: pd.DataFrame | None = None, k: int | None = None, *,
                 timeout: float | None = None) -> pd.DataFrame:
        return self.evaluator.evaluate(labelled, k, timeout=timeout)

    def close(self) -> None:
        self.evaluator.job.close()
        super().close()

    # -- internals ------------------------------------------------------------------------------------
    def _client(self, kind: str) -> VectorQueries:
        return self.router.client(kind)

    def _update_banner(self) -> None:
        kind = self.index_kind
        if self.router.is_remote(kind):
            self.backend, self.fallback_reason = "remote", ""
            self.w_banner.value = ("<div class='svckit-banner svckit-remote' style='background:#e8f4ea;padding:4px 8px;"
                                   f"border-left:4px solid #2ca02c'>Querying the <b>service</b> ({kind} index).</div>")
            return
        self.backend, self.fallback_reason = "local", self.router.fallback_reason(kind)
        self.w_banner.value = (
            "<div class='svckit-banner svckit-fallback' style='background:#fff4d6;padding:4px 8px;"
            "border-left:4px solid #ff9f1c'><b>Local fallback:</b> querying the local embedding index "
            f"(demo corpus, in this kernel), because {html.escape(self.fallback_reason)}.</div>")

    # -- handlers -------------------------------------------------------------------------------------
    def _on_filter(self, _change: dict) -> None:
        # parsed on every keystroke (errors show at once); the filter is applied on Enter or Search, so
        # typing does not send a request per character, and until then the hits shown say they are stale
        valid = self.controls.check_filter()
        if self._quiet:
            return
        changed = self.filter_text != self._applied_filter and len(self.hits) > 0
        self.stale = stale_note(self._applied_filter) if changed else ""
        if valid and changed:
            self.w_status.say("filter is valid: press Enter (or Search) to apply it")

    def _on_filter_submit(self, _widget: Any, content: dict, _buffers: Any) -> None:
        if content.get("event") == "submit":
            self.query()

    def _on_stale(self, _change: dict) -> None:
        show_stale(self.w_stale, (self.results.score_fig, self.results.w_table, self.comparison.rank_fig,
                                  self.comparison.compare_tables), self.stale)

    def _on_kind(self, _change: dict) -> None:
        self._update_banner()
        if not self._quiet and self.query_text.strip():
            self.query()

    def _on_request_change(self, _change: dict) -> None:
        if not self._quiet and self.query_text.strip():
            self.query()

    def _on_tab(self, change: dict) -> None:
        if change["new"] == PROJECTION_TAB and self.query_text.strip() and len(self.hits):
            self.projection.project()
        if change["new"] == BROWSE_TAB and not self.namespace_names:
            self.browse()
        if change["new"] == EXPLAIN_TAB and self.query_text.strip() and self.explainer.explanation is None:
            self.explain()

    def _on_color(self, _change: dict) -> None:
        if not self._quiet and self.query_text.strip() and len(self.hits):
            self.projection.project()
