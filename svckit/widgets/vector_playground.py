"""Vector query playground: type a query, tune the request, and see the hits, the score chart, the
DENSE / SPARSE / HYBRID comparison with its rank shifts, a 2-D map of the index, batch queries, a
browser of whatever an index holds (its namespaces, its vectors page by page, their map, one record),
each hit explained (Explain: dense and sparse rank and score, matched BM25 terms, the RRF / DBSF
arithmetic; :func:`svckit.vector.explain.explain_hits`) and a retrieval evaluation of every mode and
fusion on a labelled set (Evaluate: recall@k, MRR, nDCG@k; :mod:`svckit.vector.evaluation`), run in
a thread with a progress bar and Cancel.

>>> from svckit.widgets.vector_playground import VectorPlayground    # doctest: +SKIP
>>> VectorPlayground.from_settings()                                 # doctest: +SKIP

Where the queries go. With the SVC_VECTOR_* variables set, every query goes to the service
(``Vector.from_settings(settings, kind=...)``). When an index kind is not configured, or the index
answers 422 (created without an embedding model), that kind falls back to a :class:`LocalVector`
client over a LocalIndex loaded with the demo corpus in this kernel, and a banner says so. Every
client, remote, local or a test's fake, is typed by the :class:`VectorQueries` protocol. Nothing falls back silently.

Browsing and the map: for a kind served remotely the widget lists the index's namespaces
(``list_namespaces``) and walks a namespace with ``range``, so it shows any index, however it was
filled. The map is fitted on a sample of what the namespace holds: at most :data:`MAP_CAP` vectors,
drawn at random (fixed seed) from the first :data:`SCAN_CAP` ids, fetched with their vectors. A kind
served locally maps the local index's dense matrix. A sparse index has no dense vectors: its query
map is the hybrid one of the same namespace and its hits are placed by id; its Browse tab lists the
vectors without a map. The 2-component PCA is fitted once per (index, namespace) and cached; it is
only fitted when the Projection or Browse tab asks for it (or ``project()`` / ``map_index()``). The query vector is not returned by the
service, so the query is embedded in this kernel with the same packaged model and projected through
the same PCA; hits not on the map are placed by their returned vector (include vectors) if any.
Points are coloured by similarity to the query ("score") or by a metadata field.

Public methods (``query()``, ``compare()``, ``project()``, ``batch()``, ``list_namespaces()``,
``browse()``, ``next_page()``, ``map_index()``, ``inspect()``, ``explain()``, ``show_explained()``,
``add_labelled_set()``, ``evaluate()``, ``start_evaluation()``, ``cancel_evaluation()``) do the work; handlers only forward UI
events to them, and what is shown is mirrored in traits, so tests drive the widget
without a browser.
"""

from __future__ import annotations

import html
import json
import random
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as W
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import traitlets as T

from svckit import frames
from svckit.errors import ConfigError, EmbeddingModelRequired, SvcError
from svckit.vector import evaluation
from svckit.vector.client import KIND_SETTINGS
from svckit.vector.explain import explain_hits
from svckit.vector.local_client import LocalVector, VectorQueries
from svckit.vector.models import KINDS, FusionAlgorithm, QueryMode, QueryOptions
from svckit.widgets import _plots
from svckit.widgets._common import frame_html, style_widget

MODES = tuple(m.value for m in QueryMode)
FUSIONS = tuple(f.value for f in FusionAlgorithm)
PROJECTION_TAB = 2
BROWSE_TAB = 4
EXPLAIN_TAB = 5
EVALUATE_TAB = 6
DEMO_SET = "demo labelled set"
BROWSE_PAGE = 25  # rows of the Browse table per page
MAP_CAP = 2_000  # at most this many vectors are fetched and projected on a map
SCAN_CAP = 20_000  # the map's sample is spread over at most this many ids (listed without vectors)
ID_PAGE = 1_000  # ids per range request while listing them
FETCH_CHUNK = 500  # ids per fetch request


def _local_api() -> Any:
    """The local index package, imported only when a fallback is needed (it pulls in torch)."""
    from svckit.vector import local

    return local


# -- results as HTML -------------------------------------------------------------------------------

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
    show["score"] = show["score"].map("{:.4f}".format)
    show.columns = [c.removeprefix("metadata.") for c in show.columns]
    return frame_html(show)


# -- browsing ---------------------------------------------------------------------------------------

def sample_records(client: VectorQueries, namespace: str, *, cap: int | None = None,
                   scan: int | None = None) -> tuple[list[Any], int]:
    """Up to ``cap`` (:data:`MAP_CAP`) records of a namespace with their vectors, a random sample (fixed
    seed, so the map is stable) of its first ``scan`` (:data:`SCAN_CAP`) ids in id order, and how many
    ids were listed. Small namespaces come back whole."""
    cap = MAP_CAP if cap is None else cap
    scan = SCAN_CAP if scan is None else scan
    ids: list[str] = []
    cursor = ""
    while len(ids) < scan:
        page = client.range(cursor, min(ID_PAGE, scan - len(ids)), namespace=namespace)
        ids += [r.id for r in page.vectors]
        cursor = page.next_cursor
        if not cursor:
            break
    # a seeded random sample: an even stride would alias with ids that cycle through groups
    chosen = ids if len(ids) <= cap else sorted(random.Random(0).sample(ids, cap))
    out: list[Any] = []
    for start in range(0, len(chosen), FETCH_CHUNK):
        out += [r for r in client.fetch(chosen[start:start + FETCH_CHUNK], namespace=namespace,
                                        include_vectors=True) if r is not None]
    return out, len(ids)


def _flat_metadata(record: Any) -> dict[str, Any]:
    meta = record.metadata or {}
    return {k: v for k, v in meta.items() if not isinstance(v, (dict, list))}


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


def _number_formats(frame: pd.DataFrame) -> dict[str, Any]:
    """Five significant digits for the float columns of a table (NA shown as a dash)."""
    def five(value: Any) -> str:
        return "–" if pd.isna(value) else f"{float(value):.5g}"

    return {c: five for c in frame.columns if pd.api.types.is_float_dtype(frame[c])}


def _scrolling(table: str) -> str:
    """A wide table in a box that scrolls sideways instead of being cut at the widget's edge."""
    return f"<div style='overflow-x:auto;max-width:100%'>{table}</div>"


def _where(client: VectorQueries) -> str:
    """Where a client's answers come from, as the widget says it."""
    return "local index" if isinstance(client, LocalVector) else "service"


@dataclass
class ProjectionMap:
    """The 2-D map of one index: the fitted PCA, the corpus ids, their coordinates and metadata."""

    ids: np.ndarray
    coords: np.ndarray
    matrix: np.ndarray  # unit-normalised dense vectors, for "colour by score"
    metadata: pd.DataFrame
    pca: Any
    position: dict[str, int] = field(default_factory=dict)
    source: str = "local index"

    def transform(self, vectors: np.ndarray) -> np.ndarray:
        return self.pca.transform(np.asarray(vectors, dtype=np.float32).reshape(-1, self.matrix.shape[1]))


def fit_projection(ids: Sequence[str], matrix: np.ndarray, metadata: pd.DataFrame | None = None) -> ProjectionMap:
    """Fit a 2-component PCA on the index's dense vectors (randomized SVD: fast at 100,000 x 384)."""
    from sklearn.decomposition import PCA

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms == 0, 1, norms)
    pca = PCA(n_components=2, svd_solver="randomized" if len(unit) > 2000 else "full", random_state=0)
    coords = pca.fit_transform(unit) if len(unit) >= 2 else np.zeros((len(unit), 2))
    ids_arr = np.asarray([str(i) for i in ids], dtype=object)
    meta = metadata if metadata is not None else pd.DataFrame(index=range(len(ids_arr)))
    return ProjectionMap(ids_arr, coords, unit, meta.reset_index(drop=True), pca,
                         {i: k for k, i in enumerate(ids_arr)})


class LocalCorpus:
    """The demo corpus in local indexes, one per kind, built on first use and shared."""

    def __init__(self, items: Sequence[Any] | None = None, *, namespace: str = "") -> None:
        self._items = items
        self.namespace = namespace
        self._indexes: dict[str, Any] = {}
        self._clients: dict[str, LocalVector] = {}

    @property
    def items(self) -> Sequence[Any]:
        if self._items is None:
            self._items = list(_local_api().load_demo_corpus())
        return self._items

    def index(self, kind: str) -> Any:
        if kind not in self._indexes:
            idx = _local_api().LocalIndex(kind=kind)
            idx.upsert_data(self.items, namespace=self.namespace)
            self._indexes[kind] = idx
        return self._indexes[kind]

    def client(self, kind: str) -> LocalVector:
        """The :class:`LocalVector` client of the ``kind`` index."""
        if kind not in self._clients:
            self._clients[kind] = LocalVector(self.index(kind))
        return self._clients[kind]


# -- the widget --------------------------------------------------------------------------------------

class VectorPlayground(W.VBox):
    """Query controls, results + score chart, mode comparison, projection, batch."""

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
    weighting = T.Unicode("")  # "" = none, "IDF"
    color_by = T.Unicode("score")
    batch_text = T.Unicode("")
    # what is shown
    backend = T.Unicode("")  # "remote" / "local" for the current kind
    fallback_reason = T.Unicode("")
    filter_error = T.Unicode("")
    filter_error_position = T.Int(-1)
    result_count = T.Int(0)
    status = T.Unicode("")
    # the Browse tab
    browse_namespace = T.Unicode("")
    namespace_names = T.List(T.Unicode())
    browse_count = T.Int(0)  # vectors listed so far in the Browse table
    browse_cursor = T.Unicode("")  # where the next page starts ("" = nothing more)
    map_count = T.Int(0)  # vectors on the Browse map
    record_id = T.Unicode("")
    # the Explain tab
    explain_hit = T.Unicode("", allow_none=True)  # the hit whose contributions are drawn (None: no hits)
    explain_source = T.Unicode("")  # what was returned by the index and what was computed here
    # the Evaluate tab
    eval_k = T.Int(10)
    labelled_name = T.Unicode(DEMO_SET)
    eval_running = T.Bool(False)
    eval_done = T.Int(0)  # batches done
    eval_total = T.Int(0)
    eval_status = T.Unicode("")

    def __init__(self, clients: Mapping[str, VectorQueries | None] | None = None, *,
                 corpus: LocalCorpus | None = None, not_configured: Mapping[str, str] | None = None, query: str = "", index_kind: str = "hybrid",
                 autorun: bool = True, **kwargs: Any) -> None:
        """``clients`` maps an index kind to its Vector client; kinds without one use the local
        index (a :class:`LocalVector`), with the reason from ``not_configured`` (or a default) in the banner."""
        self._remote = {k: c for k, c in (clients or {}).items() if c is not None}
        self._not_configured = dict(not_configured or {})
        self._failed_remote: dict[str, str] = {}  # kind -> why it fell back (422)
        self.corpus = corpus or LocalCorpus()
        self._projections: dict[tuple[str, str], ProjectionMap] = {}
        self.hits = frames.hits_frame([])
        self.by_mode: dict[str, pd.DataFrame] = {}
        self.batch_hits: list[pd.DataFrame] = []
        self.browse_records = frames.records_frame([])
        self.record: Any = None
        self._applied_filter = ""
        self.explanation: Any = None
        self.explained = pd.DataFrame()
        self.labelled_sets: dict[str, pd.DataFrame | None] = {DEMO_SET: None}  # None: built on first use
        self.eval_per_query = pd.DataFrame()
        self.eval_summary = pd.DataFrame()
        self._eval_thread: threading.Thread | None = None
        self._eval_cancel = threading.Event()

        lay = W.Layout
        self.w_query = W.Text(placeholder="ask something, press Enter", description="query",
                              continuous_update=False, layout=lay(width="480px"))
        self.w_search = W.Button(description="Search", icon="search", button_style="primary")
        self.w_topk = W.IntSlider(value=10, min=1, max=100, description="topK", continuous_update=False)
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
        self.w_banner = W.HTML("")
        self.w_status = W.HTML("")
        self.w_table = W.HTML("")
        self.score_fig = go.FigureWidget()
        self.compare_tables = W.HBox([])
        self.rank_fig = go.FigureWidget()
        self.w_color = W.Dropdown(options=["score"], value="score", description="colour by")
        self.projection_fig = go.FigureWidget()
        self.w_batch = W.Textarea(placeholder="one query per line", layout=lay(width="480px", height="90px"))
        self.w_batch_run = W.Button(description="Run batch", icon="list")
        self.batch_box = W.VBox([])
        self.w_hit_pick = W.Dropdown(options=[], description="hit", layout=lay(width="300px"))
        self.w_hit_fetch = W.Button(description="Full record", icon="file-text")
        self.w_hit_record = W.HTML("")
        self.w_browse_ns = W.Dropdown(options=[("(default)", "")], value="", description="namespace",
                                      layout=lay(width="300px"))
        self.w_browse_refresh = W.Button(description="Refresh", icon="refresh")
        self.w_browse_info = W.HTML("")
        self.w_browse_color = W.Dropdown(options=["none"], value="none", description="colour by")
        self.browse_fig = go.FigureWidget()
        self.w_browse_table = W.HTML("")
        self.w_browse_next = W.Button(description="Next page", icon="arrow-right", disabled=True)
        self.w_record_id = W.Text(description="id", placeholder="a vector id, then Enter", continuous_update=False,
                                  layout=lay(width="300px"))
        self.w_record_fetch = W.Button(description="Fetch record", icon="search")
        self.w_record = W.HTML("")
        self.w_explain_note = W.HTML("")
        self.w_explain_run = W.Button(description="Explain", icon="question-circle")
        self.w_explain_pick = W.Dropdown(options=[], description="hit", layout=lay(width="300px"))
        self.w_explain_stats = W.HTML("")
        self.w_explain_table = W.HTML("")
        self.w_explain_formula = W.HTML("")
        self.explain_fig = go.FigureWidget()
        self.w_explain_terms = W.HTML("")
        self.w_labelled = W.Dropdown(options=[DEMO_SET], value=DEMO_SET, description="labelled set",
                                     layout=lay(width="340px"))
        self.w_eval_k = W.IntSlider(value=10, min=1, max=50, description="k", continuous_update=False)
        self.w_eval_run = W.Button(description="Evaluate", icon="play", button_style="primary")
        self.w_eval_cancel = W.Button(description="Cancel", icon="stop", disabled=True)
        self.w_eval_progress = W.IntProgress(value=0, min=0, max=1, description="progress",
                                             layout=lay(width="340px"))
        self.w_eval_status = W.HTML("")
        self.w_eval_table = W.HTML("")
        self.eval_fig = go.FigureWidget()
        self.w_eval_queries = W.HTML("")

        for w, name in ((self.w_query, "query_text"), (self.w_topk, "top_k"), (self.w_namespace, "namespace"),
                        (self.w_filter, "filter_text"), (self.w_inc_meta, "include_metadata"),
                        (self.w_inc_vec, "include_vectors"), (self.w_inc_data, "include_data"),
                        (self.w_kind, "index_kind"), (self.w_mode, "query_mode"), (self.w_fusion, "fusion"),
                        (self.w_weight, "weighting"), (self.w_color, "color_by"), (self.w_batch, "batch_text"),
                        (self.w_browse_ns, "browse_namespace"), (self.w_record_id, "record_id"),
                        (self.w_explain_pick, "explain_hit"), (self.w_eval_k, "eval_k"),
                        (self.w_labelled, "labelled_name")):
            T.link((w, "value"), (self, name))
        self.observe(self._on_filter, names="filter_text")
        self.observe(self._on_kind, names="index_kind")
        self.observe(self._on_request_change, names=["query_text", "top_k", "namespace", "include_metadata",
                                                     "include_vectors", "include_data", "query_mode", "fusion",
                                                     "weighting"])
        self.observe(self._on_color, names="color_by")
        self.w_search.on_click(lambda _b: self.query())
        self.w_batch_run.on_click(lambda _b: self.batch())
        self.observe(self._on_browse_namespace, names="browse_namespace")
        self.w_browse_color.observe(lambda _c: self._draw_browse_map(), names="value")
        self.w_browse_refresh.on_click(lambda _b: self.browse())
        self.w_browse_next.on_click(lambda _b: self.next_page())
        self.w_record_fetch.on_click(lambda _b: self.inspect(self.record_id, self.browse_namespace))
        self.observe(lambda _c: self.record_id and self.inspect(self.record_id, self.browse_namespace),
                     names="record_id")
        self.w_hit_fetch.on_click(lambda _b: self.w_hit_pick.value and self.inspect(self.w_hit_pick.value))
        self.w_explain_run.on_click(lambda _b: self.explain())
        self.observe(self._on_explain_hit, names="explain_hit")
        self.w_eval_run.on_click(lambda _b: self.start_evaluation())
        self.w_eval_cancel.on_click(lambda _b: self.cancel_evaluation())

        controls = W.VBox([
            W.HBox([self.w_query, self.w_search]),
            W.HBox([self.w_filter]), self.w_filter_error,
            W.HBox([self.w_topk, self.w_namespace]),
            W.HBox([self.w_kind, self.w_mode, self.w_fusion, self.w_weight]),
            W.HBox([W.Label("include:"), self.w_inc_meta, self.w_inc_vec, self.w_inc_data]),
        ])
        self.tabs = W.Tab(children=[
            W.VBox([self.score_fig, self.w_table, W.HBox([self.w_hit_pick, self.w_hit_fetch]), self.w_hit_record]),
            W.VBox([self.rank_fig, self.compare_tables]),
            W.VBox([self.w_color, self.projection_fig]),
            W.VBox([self.w_batch, self.w_batch_run, self.batch_box]),
            W.VBox([W.HBox([self.w_browse_ns, self.w_browse_refresh, self.w_browse_color]), self.w_browse_info,
                    W.HBox([self.browse_fig, W.VBox([self.w_browse_table, self.w_browse_next],
                                                    layout=lay(flex="1 1 auto", min_width="0", overflow="auto",
                                                              margin="0 0 0 16px"))],
                           layout=lay(width="100%")),
                    W.HBox([self.w_record_id, self.w_record_fetch]), self.w_record]),
            W.VBox([self.w_explain_note, W.HBox([self.w_explain_pick, self.w_explain_run]), self.w_explain_formula,
                    W.HBox([self.explain_fig, self.w_explain_terms], layout=lay(width="100%")),
                    self.w_explain_stats, self.w_explain_table]),
            W.VBox([W.HBox([self.w_labelled, self.w_eval_k]),
                    W.HBox([self.w_eval_run, self.w_eval_cancel, self.w_eval_progress]), self.w_eval_status,
                    W.HBox([self.eval_fig, self.w_eval_table], layout=lay(width="100%")), self.w_eval_queries]),
        ])
        for i, title in enumerate(("Results", "Compare modes", "Projection", "Batch", "Browse", "Explain",
                                   "Evaluate")):
            self.tabs.set_title(i, title)
        self.tabs.observe(self._on_tab, names="selected_index")
        super().__init__([style_widget(), W.HTML("<h3 style='margin:4px 0'>Vector query playground</h3>"),
                          self.w_banner,
                          controls, self.w_status, self.tabs], **kwargs)
        self.add_class("svckit-vector-playground")
        # stable hooks for the browser tests and for user CSS
        for w, css in ((self.w_query, "svckit-query"), (self.w_filter, "svckit-filter"),
                       (self.w_status, "svckit-status"), (self.w_banner, "svckit-banner-box"),
                       (self.score_fig, "svckit-score-chart"), (self.rank_fig, "svckit-rank-chart"),
                       (self.projection_fig, "svckit-projection-chart"), (self.w_table, "svckit-hits-table"),
                       (self.w_browse_ns, "svckit-browse-namespace"), (self.w_browse_info, "svckit-browse-info"),
                       (self.browse_fig, "svckit-browse-map"), (self.w_browse_table, "svckit-browse-table"),
                       (self.w_browse_next, "svckit-browse-next"), (self.w_record_id, "svckit-record-id"),
                       (self.w_record, "svckit-record"), (self.w_hit_pick, "svckit-hit-pick"),
                       (self.w_hit_record, "svckit-hit-record"), (self.w_explain_note, "svckit-explain-note"),
                       (self.w_explain_table, "svckit-explain-table"), (self.explain_fig, "svckit-explain-chart"),
                       (self.w_explain_formula, "svckit-explain-formula"), (self.w_explain_pick, "svckit-explain-pick"),
                       (self.w_eval_table, "svckit-eval-table"), (self.eval_fig, "svckit-eval-chart"),
                       (self.w_eval_status, "svckit-eval-status"), (self.w_eval_progress, "svckit-eval-progress")):
            w.add_class(css)
        self._suspend = True
        self.index_kind = index_kind
        self._update_enabled()
        self._update_banner()
        if query:
            self.query_text = query
        self._suspend = False
        if autorun and self.query_text:
            self.query()

    @classmethod
    def from_settings(cls, settings: Any = None, **kwargs: Any) -> VectorPlayground:
        """Build with a Vector client for each kind the settings configure (SVC_VECTOR_URL for dense,
        SVC_VECTOR_SPARSE_URL, SVC_VECTOR_HYBRID_URL); the others fall back to the local index."""
        from svckit.config import Settings

        settings = settings if settings is not None else Settings.from_env()
        clients: dict[str, Any] = {}
        missing: dict[str, str] = {}
        for kind in KINDS:
            url_attr = KIND_SETTINGS[kind]
            try:
                settings.require(url_attr, "vector_token")  # names the missing SVC_* variable(s)
                from svckit.vector import Vector

                clients[kind] = Vector.from_settings(settings, kind=kind)
            except ConfigError as exc:
                missing[kind] = str(exc).split(":")[0].replace("missing", "the service is not configured:", 1) \
                    + " is not set"
            except ImportError as exc:  # the client package is not installed in this environment
                missing[kind] = f"the vector client is unavailable ({exc})"
        return cls(clients, not_configured=missing, **kwargs)

    # -- public -------------------------------------------------------------------------------------
    def params(self, kind: str | None = None) -> QueryOptions:
        """The query options the controls describe, trimmed to what ``kind`` accepts."""
        p = QueryOptions(top_k=self.top_k, namespace=self.namespace.strip(), filter=self.filter_text,
                         include_metadata=self.include_metadata, include_vectors=self.include_vectors,
                         include_data=self.include_data, query_mode=self.query_mode,
                         fusion_algorithm=self.fusion, weighting_strategy=self.weighting or None)
        return p.for_kind(kind or self.index_kind)

    def query(self, text: str | None = None) -> pd.DataFrame:
        """Run the query on the selected index; update the table, score chart, comparison and map.
        Returns the hits frame. Errors are shown in the widget (and the frame is empty)."""
        if text is not None:
            self._suspend = True
            self.query_text = text
            self._suspend = False
        if not self._check_filter():
            self.status = "fix the filter first"
            self._show_status()
            return self.hits
        if not self.query_text.strip():
            self.status = "type a query"
            self._show_status()
            return self.hits
        try:
            self._applied_filter = self.filter_text
            self.hits = frames.hits_frame(self._run(self.index_kind, [self.query_text], self.params())[0])
        except SvcError as exc:
            self.status = f"query failed: {exc}"
            self._show_status(error=True)
            return self.hits
        self.result_count = len(self.hits)
        self.status = (f"{self.result_count} hit(s) from the {self.index_kind} index "
                       f"({'service' if self.backend == 'remote' else 'local index'})")
        self._show_status()
        self.w_table.value = hits_html(self.hits)
        self.w_hit_pick.options = list(self.hits["id"])
        title = f"Scores for “{self.query_text[:60]}” ({self.index_kind})"
        self._replace(self.score_fig, _plots.score_figure(self.hits, title=title))
        self.compare()
        if self.tabs.selected_index == PROJECTION_TAB or len(self.projection_fig.data):
            self.project()  # only once the map has been asked for: fitting it is not free
        if self.tabs.selected_index == EXPLAIN_TAB:
            self.explain()
        return self.hits

    def compare(self) -> dict[str, pd.DataFrame]:
        """The same query on the hybrid index in DENSE, SPARSE and HYBRID mode, side by side, and the
        rank-shift chart between them."""
        base = self.params("hybrid")
        self.by_mode = {}
        for mode in ("DENSE", "SPARSE", "HYBRID"):
            p = base.model_copy(update={"query_mode": QueryMode(mode)})
            try:
                self.by_mode[mode] = frames.hits_frame(self._run("hybrid", [self.query_text], p)[0])
            except SvcError as exc:
                self.by_mode[mode] = frames.hits_frame([])
                self.status += f"; {mode} comparison failed: {exc}"
        self._replace(self.rank_fig, _plots.rank_shift_figure(self.by_mode, title="Rank shift across query modes"))
        self.compare_tables.children = [
            W.VBox([W.HTML(f"<b style='color:{_plots.MODE_COLORS[m]}'>{m}</b>"),
                    W.HTML(hits_html(df[["rank", "id", "score"]].assign(vector=None, sparse_terms=pd.NA,
                                                                          data=pd.NA)))],
                   layout=W.Layout(margin="0 12px 0 0"))
            for m, df in self.by_mode.items()]
        return self.by_mode

    def projection_map(self) -> ProjectionMap:
        """The cached PCA map for the selected kind and the query's namespace (fitted on first use).

        A sparse index has no dense vectors, so its map is the hybrid one of the same namespace; its
        hits are found on the map by id."""
        map_kind = "hybrid" if self.index_kind == "sparse" else self.index_kind
        pm = self._projection(map_kind, self.namespace.strip())
        fields = [c for c in pm.metadata.columns if pm.metadata[c].notna().any()]
        if list(self.w_color.options) != ["score", *fields]:
            self.w_color.options = ["score", *fields]
        return pm

    def _projection(self, kind: str, namespace: str) -> ProjectionMap:
        key = (kind, namespace)
        if key not in self._projections:
            ids, matrix, meta, source = self._map_vectors(kind, namespace)
            pm = fit_projection(ids, matrix, meta)
            pm.source = source
            self._projections[key] = pm
        return self._projections[key]

    def _map_vectors(self, kind: str, namespace: str) -> tuple[list[str], np.ndarray, pd.DataFrame, str]:
        """The vectors to project: a sample (:func:`sample_records`) of what the namespace holds, from
        the service when the kind is remote, else from the local index."""
        client = self._client(kind)
        records, listed = sample_records(client, namespace)
        records = [r for r in records if r.vector]
        ids = [r.id for r in records]
        matrix = np.asarray([r.vector for r in records], dtype=np.float32).reshape(len(ids), -1 if ids else 0)
        source = _where(client)
        if listed > len(records):
            source += f", {len(records):,} sampled of {listed:,}{'+' if listed >= SCAN_CAP else ''}"
        return ids, matrix, pd.DataFrame([_flat_metadata(r) for r in records]), source

    def project(self) -> go.Figure | None:
        """Draw the map with the query (star) and its hits (ringed, numbered by rank)."""
        try:
            pm = self.projection_map()
            if len(pm.ids) < 2:
                ns = self.namespace.strip() or "(default)"
                raise LookupError(f"the map of namespace {ns} has {len(pm.ids)} vector(s): nothing to project")
            qvec = self._embed_query()
        except Exception as exc:  # noqa: BLE001 - an auxiliary view: say why it is empty, keep the rest
            self._replace(self.projection_fig, _plots._empty("Projection", f"no projection: {exc}"))
            return None
        qunit = qvec / (np.linalg.norm(qvec) or 1.0)
        if self.color_by == "score" or self.color_by not in pm.metadata.columns:
            color, label = pm.matrix @ qunit, "similarity"
        else:
            color, label = pm.metadata[self.color_by], self.color_by
        hit_rows, hit_xy = [], []
        for row in self.hits.itertuples():
            if row.id in pm.position:
                hit_rows.append(row.Index)
                hit_xy.append(pm.coords[pm.position[row.id]])
            elif row.vector is not None and len(row.vector) == pm.matrix.shape[1]:
                hit_rows.append(row.Index)
                hit_xy.append(pm.transform(row.vector)[0])
        fig = _plots.projection_figure(
            pm.coords, ids=list(pm.ids), color=color, color_label=label, hits=self.hits.loc[hit_rows],
            hit_coords=np.asarray(hit_xy).reshape(-1, 2), query_coords=pm.transform(qunit),
            title=f"{self.index_kind} index: PCA of {len(pm.ids):,} vectors ({pm.source})")
        self._replace(self.projection_fig, fig)
        return fig

    def _embed_query(self) -> np.ndarray:
        """The query's dense vector, embedded in this kernel with the packaged model (the service
        does not return the query vector); the embedder is shared with any in-process index."""
        from svckit.localindex.embedding import get_embedder

        return np.asarray(get_embedder().embed([self.query_text]))[0]

    def batch(self, texts: Sequence[str] | None = None) -> list[pd.DataFrame]:
        """Several queries in one request (one per line of the batch box); one chart each."""
        if texts is not None:
            self.batch_text = "\n".join(texts)
        lines = [t.strip() for t in self.batch_text.splitlines() if t.strip()]
        if not lines or not self._check_filter():
            self.batch_box.children = [W.HTML("<i>type one query per line</i>" if not lines else
                                              "<i>fix the filter first</i>")]
            return []
        try:
            results = self._run(self.index_kind, lines, self.params())
        except SvcError as exc:
            self.batch_box.children = [W.HTML(f"<span style='color:#d62728'>{html.escape(str(exc))}</span>")]
            return []
        self.batch_hits = [frames.hits_frame(r) for r in results]
        figs = []
        for text, df in zip(lines, self.batch_hits):
            fw = go.FigureWidget(_plots.score_figure(df, title=f"“{text[:60]}”"))
            figs.append(fw)
        self.batch_box.children = figs
        return self.batch_hits

    # -- browsing ---------------------------------------------------------------------------------------
    def list_namespaces(self) -> list[str]:
        """The selected index's namespaces (the default one is ""), also offered in the Browse tab."""
        names = list(self._client(self.index_kind).list_namespaces())
        self.namespace_names = names
        suspended, self._suspend = self._suspend, True
        self.w_browse_ns.options = [(n or "(default)", n) for n in names]
        if self.browse_namespace not in names:
            self.browse_namespace = names[0] if names else ""
        self._suspend = suspended
        return names

    def browse(self, namespace: str | None = None) -> pd.DataFrame:
        """Show the selected index as it is: its namespaces with their counts, the first page of a
        namespace (``range``) and its map. Returns the page as :func:`svckit.frames.records_frame`."""
        try:
            names = self.list_namespaces()
            if namespace is not None:
                if namespace not in names:
                    raise LookupError(f"the {self.index_kind} index has no namespace {namespace!r}")
                suspended, self._suspend = self._suspend, True
                self.browse_namespace = namespace
                self._suspend = suspended
            counts = frames.namespaces_frame(self._client(self.index_kind).info())
            counts["namespace"] = counts["namespace"].replace("", "(default)")
            self.w_browse_info.value = (f"<div><b>{self.index_kind}</b> index ({_where(self._client(self.index_kind))}): "
                                        f"{int(counts['vector_count'].sum()):,} vectors in {len(counts)} "
                                        f"namespace(s)</div>{frame_html(counts)}")
            self.browse_count, self.browse_cursor = 0, ""
            page = self._load_page("")
            self.map_index()
        except (SvcError, LookupError) as exc:
            self.w_browse_info.value = f"<span style='color:#d62728'>browse failed: {html.escape(str(exc))}</span>"
            return frames.records_frame([])
        return page

    def next_page(self) -> pd.DataFrame:
        """The next page of the namespace (after the rows shown); empty once the end was reached."""
        return self._load_page(self.browse_cursor) if self.browse_cursor else frames.records_frame([])

    def _load_page(self, cursor: str) -> pd.DataFrame:
        page = self._client(self.index_kind).range(cursor, BROWSE_PAGE, namespace=self.browse_namespace,
                                                   include_metadata=True, include_data=True)
        records, self.browse_cursor = page.vectors, page.next_cursor
        first = self.browse_count + 1
        self.browse_count += len(records)
        self.browse_records = frames.records_frame(records)
        show = self.browse_records.drop(columns=["vector", "sparse_indices", "sparse_values"])
        show.columns = [c.removeprefix("metadata.") for c in show.columns]
        show["data"] = show["data"].fillna("").map(lambda t: t if len(t) <= 80 else t[:80] + "…")
        more = "more: Next page" if self.browse_cursor else "the end of the namespace"
        self.w_browse_table.value = (f"<div class='svc-muted'>vectors {first:,}–{self.browse_count:,} in id order"
                                     f" ({more})</div>{frame_html(show)}" if records else "<i>empty namespace</i>")
        self.w_browse_next.disabled = not self.browse_cursor
        return self.browse_records

    def map_index(self) -> go.Figure | None:
        """The map of the browsed namespace: a PCA of (a sample of) its dense vectors, coloured by a
        metadata field. None for a sparse index (no dense vectors)."""
        if self.index_kind == "sparse":
            self.map_count = 0
            self._replace(self.browse_fig, _plots._empty("Map", "a sparse index has no dense vectors to map"))
            return None
        pm = self._projection(self.index_kind, self.browse_namespace)
        fields = [c for c in pm.metadata.columns if pm.metadata[c].notna().any()]
        suspended, self._suspend = self._suspend, True
        self.w_browse_color.options = ["none", *fields]
        if self.w_browse_color.value == "none" and fields:
            self.w_browse_color.value = fields[0]
        self._suspend = suspended
        self.map_count = len(pm.ids)
        return self._draw_browse_map()

    def _draw_browse_map(self) -> go.Figure | None:
        if self._suspend or self.index_kind == "sparse":
            return None
        pm = self._projection(self.index_kind, self.browse_namespace)
        field_name = self.w_browse_color.value
        color = pm.metadata[field_name] if field_name in pm.metadata.columns else None
        ns = self.browse_namespace or "(default)"
        fig = _plots.projection_figure(pm.coords, ids=list(pm.ids), color=color, color_label=field_name,
                                       title=f"{self.index_kind} index, namespace {ns}: PCA of {len(pm.ids):,} "
                                             f"vectors ({pm.source})")
        fig.update_layout(width=560, height=460)
        self._replace(self.browse_fig, fig)
        return fig

    def inspect(self, vector_id: str, namespace: str | None = None) -> Any:
        """Fetch one vector in full (data, metadata, dense and sparse values) and show it; a hit of
        the Results tab is looked up in the query's namespace. Returns the record (None if missing)."""
        ns = self.namespace.strip() if namespace is None else namespace
        try:
            self.record = self._client(self.index_kind).fetch([vector_id], namespace=ns, include_vectors=True)[0]
            shown = record_html(self.record, ns)
        except SvcError as exc:
            self.record = None
            shown = f"<span style='color:#d62728'>fetch failed: {html.escape(str(exc))}</span>"
        self.w_record.value = self.w_hit_record.value = shown
        return self.record

    # -- explained hits -------------------------------------------------------------------------------
    def explain(self, hit_id: str | None = None) -> pd.DataFrame:
        """Explain the current query's hits on the selected index (:func:`svckit.vector.explain.
        explain_hits`): the table of every hit, and for one hit (``hit_id``, else the first) its
        formula, the chart of its contributions and its matched terms. Returns the explain frame."""
        if not self.query_text.strip() or not self._check_filter():
            self.w_explain_note.value = "<i>type a query (and fix the filter, if any) to explain its hits</i>"
            return self.explained
        client = self._client(self.index_kind)
        try:
            self.explanation = explain_hits(client, self.query_text, self.params(), kind=self.index_kind)
        except SvcError as exc:
            self.explanation, self.explained = None, pd.DataFrame()
            self.w_explain_note.value = f"<span style='color:#d62728'>explain failed: {html.escape(str(exc))}</span>"
            return self.explained
        ex = self.explanation
        self.explained = frames.explain_frame(ex)
        self.explain_source = ex.source
        how = {"RRF": f"Reciprocal Rank Fusion: each side adds 1/(60 + its rank) over {ex.depth} candidates a side",
               "DBSF": f"Distribution-Based Score Fusion: each side adds (score − (μ−3σ)) / 6σ over {ex.depth} "
                       "candidates a side"}.get(ex.fusion or "", f"{ex.mode} query: no fusion")
        where = "local index" if isinstance(client, LocalVector) else "service"
        self.w_explain_note.value = (
            f"<div class='svckit-explain-note'><b>{ex.kind}</b> index ({where}), mode {ex.mode}. {html.escape(how)}."
            f"<br><span class='svc-muted'>{html.escape(ex.source[0].upper() + ex.source[1:])}.</span></div>")
        self.w_explain_stats.value = (
            f"<div class='svc-muted'>DBSF normalisation bounds per side</div>{frame_html(frames.fusion_stats_frame(ex).round(4))}"
            if ex.fusion == "DBSF" else "")
        show = self.explained.drop(columns=["formula"])
        self.w_explain_table.value = _scrolling(frame_html(show, formatters=_number_formats(show))) if len(show) \
            else "<i>no results</i>"
        ids = list(self.explained["id"])
        suspended, self._suspend = self._suspend, True
        self.w_explain_pick.options = ids
        self._suspend = suspended
        chosen = hit_id if hit_id in ids else (ids[0] if ids else None)
        if self.explain_hit == chosen:
            self.show_explained(chosen)
        else:
            self.explain_hit = chosen  # the observer draws it
        return self.explained

    def show_explained(self, hit_id: str | None) -> go.Figure | None:
        """Draw one explained hit: its formula, its contributions chart and its matched terms."""
        if self.explanation is None or not hit_id:
            self._replace(self.explain_fig, _plots._empty("Contributions", "no hit to explain"))
            self.w_explain_formula.value = self.w_explain_terms.value = ""
            return None
        row = self.explained[self.explained["id"] == hit_id].iloc[0]
        terms = frames.explain_terms_frame(self.explanation, hit_id)
        shown = terms.reindex(columns=["term", "tf", "doc_len", "idf", "query_weight", "doc_weight", "contribution"])
        shown = shown.dropna(axis=1, how="all")
        self.w_explain_formula.value = (
            f"<div><b>{int(row['rank'])}. {html.escape(hit_id)}</b>: score {float(row['score']):.6g} "
            f"(returned), {float(row['recomputed']):.6g} (recomputed)<br><code>{html.escape(str(row['formula']))}"
            "</code></div>")
        fig = _plots.explain_figure(row.to_dict(), terms, fusion=self.explanation.fusion,
                                    title=f"Why {hit_id} ranks {int(row['rank'])}")
        fig.update_layout(width=540)
        self._replace(self.explain_fig, fig)
        self.w_explain_terms.value = (
            "<div class='svc-muted'>matched BM25 terms (contribution = query weight × BM25 weight)</div>"
            + frame_html(shown, formatters=_number_formats(shown)) if len(terms) else
            "<i>no query term occurs in this document</i>")
        return fig

    def _on_explain_hit(self, change: dict) -> None:
        if not self._suspend and self.explanation is not None:
            self.show_explained(change["new"])

    # -- retrieval evaluation ---------------------------------------------------------------------------
    def add_labelled_set(self, name: str, labelled: pd.DataFrame) -> None:
        """Offer a labelled set (``query``, ``relevant`` columns) in the Evaluate tab and select it."""
        self.labelled_sets[name] = evaluation.check_labelled(labelled)
        self.w_labelled.options = list(self.labelled_sets)
        self.labelled_name = name

    def labelled(self) -> pd.DataFrame:
        """The selected labelled set; the demo set is built on first use, limited to the ids of the
        local demo corpus when the selected kind runs locally."""
        found = self.labelled_sets.get(self.labelled_name)
        if found is None:
            client = self._client(self.index_kind)
            ids = [str(i["id"]) for i in self.corpus.items] if isinstance(client, LocalVector) else None
            found = evaluation.demo_labelled_queries(ids)
            self.labelled_sets[self.labelled_name] = found
        return found

    def start_evaluation(self) -> threading.Thread | None:
        """Evaluate the selected index on the selected labelled set in a thread (the Cancel button
        stops it between batches); the frames land in ``eval_per_query`` / ``eval_summary``."""
        if self.eval_running:
            return self._eval_thread
        try:
            labelled = self.labelled()
        except (ImportError, ValueError) as exc:
            self.eval_status = f"no labelled set: {exc}"
            self.w_eval_status.value = f"<span style='color:#d62728'>{html.escape(self.eval_status)}</span>"
            return None
        if labelled.empty:
            self.eval_status = "the labelled set has no query whose relevant ids are in this index"
            self.w_eval_status.value = f"<i>{html.escape(self.eval_status)}</i>"
            return None
        self._eval_cancel.clear()
        self.eval_running, self.eval_done, self.eval_total = True, 0, 0
        self.w_eval_run.disabled, self.w_eval_cancel.disabled = True, False
        self.w_eval_progress.value = 0
        kind, client, k = self.index_kind, self._client(self.index_kind), self.eval_k
        self.eval_status = f"evaluating {len(labelled)} queries on the {kind} index…"
        self.w_eval_status.value = html.escape(self.eval_status)
        self._eval_thread = threading.Thread(target=self._evaluate, args=(client, kind, labelled, k), daemon=True,
                                             name="svckit-vector-evaluate")
        self._eval_thread.start()
        return self._eval_thread

    def evaluate(self, labelled: pd.DataFrame | None = None, k: int | None = None, *,
                 timeout: float | None = None) -> pd.DataFrame:
        """Evaluate and wait: ``labelled`` (else the selected set) at ``k`` (else the slider).
        Returns the summary frame (one row per configuration)."""
        if labelled is not None:
            self.add_labelled_set("given labelled set", labelled)
        if k is not None:
            self.eval_k = k
        thread = self.start_evaluation()
        if thread is not None:
            thread.join(timeout)
        return self.eval_summary

    def cancel_evaluation(self) -> None:
        """Stop a running evaluation after its current batch (the rows done so far are shown)."""
        self._eval_cancel.set()

    def _evaluate(self, client: VectorQueries, kind: str, labelled: pd.DataFrame, k: int) -> None:
        def step(done: int, total: int) -> None:
            self.eval_done, self.eval_total = done, total
            self.w_eval_progress.max, self.w_eval_progress.value = total, done

        try:
            per_query = evaluation.evaluate(client, labelled, k=k, kind=kind, namespace=self.namespace.strip(),
                                            progress=False, cancel=self._eval_cancel, on_step=step)
            summary = evaluation.summarize(per_query) if len(per_query) else pd.DataFrame()
            cancelled = bool(per_query.attrs.get("cancelled"))
            self.eval_per_query, self.eval_summary = per_query, summary
            where = "local index" if isinstance(client, LocalVector) else "service"
            self.eval_status = (f"{'cancelled after' if cancelled else 'done:'} {len(per_query)} query runs, "
                                f"{len(labelled)} labelled queries × {len(summary)} configuration(s), top {k}, "
                                f"{kind} index ({where})")
            self.w_eval_status.value = html.escape(self.eval_status)
            self.w_eval_table.value = frame_html(summary.round(4)) if len(summary) else "<i>nothing evaluated</i>"
            fig = _plots.evaluation_figure(summary, title=f"{self.labelled_name}: {kind} index, k = {k}")
            fig.update_layout(width=620)
            self._replace(self.eval_fig, fig)
            if len(per_query):
                worst = per_query.sort_values(["ndcg", "query_index"]).head(10)
                worst = worst[["configuration", "query", "relevant", "found", "first_relevant_rank", "recall",
                               "reciprocal_rank", "ndcg"]].rename(columns={
                    "first_relevant_rank": "first hit", "reciprocal_rank": "RR", "ndcg": f"nDCG@{k}",
                    "recall": f"recall@{k}"})
                self.w_eval_queries.value = _scrolling(
                    "<div class='svc-muted'>the 10 hardest query runs (lowest nDCG)</div>"
                    + frame_html(worst, formatters=_number_formats(worst)))
        except SvcError as exc:
            self.eval_status = f"evaluation failed: {exc}"
            self.w_eval_status.value = f"<span style='color:#d62728'>{html.escape(self.eval_status)}</span>"
        finally:
            self.eval_running = False
            self.w_eval_run.disabled, self.w_eval_cancel.disabled = False, True

    # -- internals ------------------------------------------------------------------------------------
    def _client(self, kind: str) -> VectorQueries:
        """The client the ``kind`` queries go to: the service's, or the local index's when the kind
        is not configured or its index answered 422."""
        if kind in self._remote and kind not in self._failed_remote:
            return self._remote[kind]
        return self.corpus.client(kind)

    def _run(self, kind: str, texts: Sequence[str], p: QueryOptions) -> list[list[Any]]:
        """One list of hits per text, from the ``kind`` index (falling back to the local one on 422)."""
        data = texts[0] if len(texts) == 1 else list(texts)
        try:
            out = self._client(kind).query_data(data, **p.model_dump())
        except EmbeddingModelRequired as exc:
            self._failed_remote[kind] = f"the {kind} index answered 422 (no embedding model): {exc}"
            out = self._client(kind).query_data(data, **p.model_dump())
        if kind == self.index_kind:
            self._update_banner()
        return out if len(texts) > 1 else [out]

    def _update_banner(self) -> None:
        kind = self.index_kind
        if kind in self._remote and kind not in self._failed_remote:
            self.backend, self.fallback_reason = "remote", ""
            self.w_banner.value = (f"<div class='svckit-banner svckit-remote' style='background:#e8f4ea;padding:4px 8px;"
                                   f"border-left:4px solid #2ca02c'>Querying the <b>service</b> ({kind} index).</div>")
            return
        self.backend = "local"
        self.fallback_reason = self._failed_remote.get(kind) or self._not_configured.get(kind) or (
            f"no service client for the {kind} index")
        self.w_banner.value = (
            "<div class='svckit-banner svckit-fallback' style='background:#fff4d6;padding:4px 8px;"
            "border-left:4px solid #ff9f1c'><b>Local fallback:</b> querying the local embedding index "
            f"(demo corpus, in this kernel), because {html.escape(self.fallback_reason)}.</div>")

    def _check_filter(self) -> bool:
        """Parse the filter; show a syntax error inline with a caret under its position."""
        local = _local_api()
        text = self.filter_text
        try:
            local.parse_filter(text)
        except local.FilterSyntaxError as exc:
            pos = exc.position
            self.filter_error = exc.reason
            self.filter_error_position = pos
            caret = html.escape(text[:pos]) + "<span style='background:#d62728;color:white'>" + \
                html.escape(text[pos:pos + 1] or " ") + "</span>" + html.escape(text[pos + 1:])
            self.w_filter_error.value = (
                "<pre class='svckit-filter-error' style='color:#d62728;margin:0 0 0 90px'>"
                f"{caret}\n{' ' * pos}^ {html.escape(self.filter_error)} (position {pos})</pre>")
            return False
        self.filter_error, self.filter_error_position = "", -1
        self.w_filter_error.value = ""
        return True

    def _update_enabled(self) -> None:
        hybrid = self.index_kind == "hybrid"
        self.w_mode.disabled = self.w_fusion.disabled = not hybrid
        self.w_weight.disabled = self.index_kind == "dense"

    def _show_status(self, error: bool = False) -> None:
        color = "#d62728" if error else "#555"
        self.w_status.value = f"<span style='color:{color}'>{html.escape(self.status)}</span>"

    @staticmethod
    def _replace(target: go.FigureWidget, fig: go.Figure) -> None:
        _plots.show_in(target, fig)

    # -- handlers -------------------------------------------------------------------------------------
    def _on_filter(self, _change: dict) -> None:
        # parsed on every keystroke (errors show at once); a valid filter is applied on Search/Enter
        # so typing does not send a request per character
        if self._check_filter() and self.query_text.strip() and not self._suspend \
                and self.filter_text != self._applied_filter:
            self.status = "filter is valid: press Search to apply it"
            self._show_status()

    def _on_kind(self, _change: dict) -> None:
        self._update_enabled()
        self._update_banner()
        if not self._suspend and self.query_text.strip():
            self.query()

    def _on_request_change(self, _change: dict) -> None:
        if not self._suspend and self.query_text.strip():
            self.query()

    def _on_tab(self, change: dict) -> None:
        if change["new"] == PROJECTION_TAB and self.query_text.strip() and len(self.hits):
            self.project()
        if change["new"] == BROWSE_TAB and not self.namespace_names:
            self.browse()
        if change["new"] == EXPLAIN_TAB and self.query_text.strip() and self.explanation is None:
            self.explain()

    def _on_color(self, _change: dict) -> None:
        if not self._suspend and self.query_text.strip() and len(self.hits):
            self.project()

    def _on_browse_namespace(self, _change: dict) -> None:
        if not self._suspend:
            self.browse_count, self.browse_cursor = 0, ""
            self._load_page("")
            self.map_index()

