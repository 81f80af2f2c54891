"""The playground's query controls: the text, topK, namespace, filter (checked as it is typed, its
error shown under it with a caret), the index kind and the options each kind takes."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import traitlets as T

from svckit.vector.models import KINDS, FusionAlgorithm, QueryMode, QueryOptions
from svckit.widgets._common import one_of

MODES = tuple(m.value for m in QueryMode)
FUSIONS = tuple(f.value for f in FusionAlgorithm)
WEIGHTINGS = ("", "IDF")  # "" = none
#: the most hits the playground asks for (the topK slider's end)
MAX_TOP_K = 100


class QueryState(T.HasTraits):
    """The request a query sends (the playground shows the same traits)."""

    query_text = T.Unicode("")
    top_k = T.Int(10)
    namespace = T.Unicode("")
    filter_text = T.Unicode("")
    include_metadata = T.Bool(True)
    include_vectors = T.Bool(False)
    include_data = T.Bool(True)
    index_kind = T.Enum(KINDS, default_value="hybrid")
    query_mode = T.Enum(MODES, default_value="HYBRID")
    fusion = T.Enum(FUSIONS, default_value="RRF")
    weighting = T.Unicode("")  # one of WEIGHTINGS
    filter_error = T.Unicode("")
    filter_error_position = T.Int(-1)

    @T.validate("top_k")
    def _top_k_in_range(self, proposal: Any) -> int:
        if not 1 <= proposal["value"] <= MAX_TOP_K:
            raise T.TraitError(f"top_k must be from 1 to {MAX_TOP_K}, not {proposal['value']!r}")
        return proposal["value"]

    @T.validate("weighting")
    def _known_weighting(self, proposal: Any) -> str:
        return one_of(proposal, WEIGHTINGS)


class QueryControls(QueryState, W.VBox):
    """The request's controls (``params()`` turns them into :class:`QueryOptions`)."""

    def __init__(self, **kwargs: Any) -> None:
        lay = W.Layout
        self.w_query = W.Text(placeholder="ask something, press Enter", description="query",
                              continuous_update=False, layout=lay(width="480px"))
        self.w_search = W.Button(description="Search", icon="search", button_style="primary")
        self.w_topk = W.IntSlider(value=10, min=1, max=MAX_TOP_K, description="topK", continuous_update=False)
        self.w_namespace = W.Text(description="namespace", placeholder="(default)", continuous_update=False,
                                  layout=lay(width="240px"))
        self.w_filter = W.Text(description="filter", placeholder="genre = 'drama' AND year >= 2000",
                               continuous_update=True, layout=lay(width="480px"))
        self.w_filter_error = W.HTML("")
        self.w_inc_meta = W.Checkbox(value=True, description="metadata", indent=False, layout=lay(width="110px"))
        self.w_inc_vec = W.Checkbox(value=False, description="vectors", indent=False, layout=lay(width="100px"))
        self.w_inc_data = W.Checkbox(value=True, description="data", indent=False, layout=lay(width="80px"))
        self.w_kind = W.Dropdown(options=KINDS, value="hybrid", description="index", layout=lay(width="200px"))
        self.w_mode = W.Dropdown(options=MODES, value="HYBRID", description="mode", layout=lay(width="200px"))
        self.w_fusion = W.Dropdown(options=FUSIONS, value="RRF", description="fusion", layout=lay(width="180px"))
        self.w_weight = W.Dropdown(options=[("none", ""), ("IDF", "IDF")], value="", description="weighting",
                                   layout=lay(width="200px"))
        super().__init__([
            W.HBox([self.w_query, self.w_search]),
            W.HBox([self.w_filter]), self.w_filter_error,
            W.HBox([self.w_topk, self.w_namespace]),
            W.HBox([self.w_kind, self.w_mode, self.w_fusion, self.w_weight]),
            W.HBox([W.Label("include:"), self.w_inc_meta, self.w_inc_vec, self.w_inc_data]),
        ], **kwargs)
        for w, name in ((self.w_query, "query_text"), (self.w_topk, "top_k"), (self.w_namespace, "namespace"),
                        (self.w_filter, "filter_text"), (self.w_inc_meta, "include_metadata"),
                        (self.w_inc_vec, "include_vectors"), (self.w_inc_data, "include_data"),
                        (self.w_kind, "index_kind"), (self.w_mode, "query_mode"), (self.w_fusion, "fusion"),
                        (self.w_weight, "weighting")):
            T.link((w, "value"), (self, name))
        self.w_query.add_class("svckit-query")
        self.w_filter.add_class("svckit-filter")
        self.observe(lambda _c: self._update_enabled(), names="index_kind")
        self._update_enabled()

    def params(self, kind: str | None = None) -> QueryOptions:
        """The query options the controls describe, trimmed to what ``kind`` accepts."""
        p = QueryOptions(top_k=self.top_k, namespace=self.namespace.strip(), filter=self.filter_text,
                         include_metadata=self.include_metadata, include_vectors=self.include_vectors,
                         include_data=self.include_data, query_mode=self.query_mode,
                         fusion_algorithm=self.fusion, weighting_strategy=self.weighting or None)
        return p.for_kind(kind or self.index_kind)

    def check_filter(self) -> bool:
        """Parse the filter; show a syntax error inline with a caret under its position."""
        from svckit.core.filter import FilterSyntaxError, parse_filter

        text = self.filter_text
        try:
            parse_filter(text)
        except FilterSyntaxError as exc:
            pos = exc.position
            self.filter_error, self.filter_error_position = exc.reason, pos
            caret = html.escape(text[:pos]) + "<span class='svc-caret'>" + \
                html.escape(text[pos:pos + 1] or " ") + "</span>" + html.escape(text[pos + 1:])
            self.w_filter_error.value = (
                "<pre class='svckit-filter-error svc-error' style='margin:0 0 0 90px'>"
                f"{caret}\n{' ' * pos}^ {html.escape(self.filter_error)} (position {pos})</pre>")
            return False
        self.filter_error, self.filter_error_position = "", -1
        self.w_filter_error.value = ""
        return True

    def _update_enabled(self) -> None:
        hybrid = self.index_kind == "hybrid"
        self.w_mode.disabled = self.w_fusion.disabled = not hybrid
        self.w_weight.disabled = self.index_kind == "dense"
