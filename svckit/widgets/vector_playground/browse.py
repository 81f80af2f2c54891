"""The Browse tab: whatever an index holds, however it was filled: its namespaces with their counts,
a namespace page by page (``range``), its map (a sample of its vectors), and any record in full.

Far from the service each request is a round trip, so what does not depend on another answer goes
side by side: showing an index is ``info`` (the namespaces and their counts), the first page and the
ids its map samples at once, then the sample's vectors; a page is one request."""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import pandas as pd
import plotly.graph_objects as go
import traitlets as T

from svckit import frames
from svckit._inflight import InFlight
from svckit.errors import SvcError
from svckit.vector.projection import list_ids
from svckit.widgets._chart import Chart
from svckit.widgets._common import Quiet, frame_html, message_html, muted_html
from svckit.widgets._plots import empty_figure, projection_figure
from svckit.widgets.vector_playground._tables import record_html
from svckit.widgets.vector_playground.session import Session

BROWSE_PAGE = 25  # rows of the table per page


class BrowseState(T.HasTraits):
    """What the Browse tab shows (the playground shows the same traits)."""

    browse_namespace = T.Unicode("")
    namespace_names = T.List(T.Unicode())
    browse_count = T.Int(0)  # vectors listed so far in the table
    browse_cursor = T.Unicode("")  # where the next page starts ("" = nothing more)
    map_count = T.Int(0)  # vectors on the map
    record_id = T.Unicode("")


class BrowseTab(BrowseState, W.VBox):
    def __init__(self, session: Session, **kwargs: Any) -> None:
        self.session = session
        self.browse_records = frames.records_frame([])
        self.record: Any = None
        self._quiet = Quiet()
        lay = W.Layout
        self.w_browse_ns = W.Dropdown(options=[("(default)", "")], value="", description="namespace",
                                      layout=lay(width="300px"))
        self.w_browse_refresh = W.Button(description="Refresh", icon="refresh")
        self.w_browse_info = W.HTML("")
        self.w_browse_color = W.Dropdown(options=["none"], value="none", description="colour by")
        self.browse_fig = Chart().add_class("svckit-browse-map")
        self.w_browse_table = W.HTML("")
        self.w_browse_next = W.Button(description="Next page", icon="arrow-right", disabled=True)
        self.w_record_id = W.Text(description="id", placeholder="a vector id, then Enter", continuous_update=False,
                                  layout=lay(width="300px"))
        self.w_record_fetch = W.Button(description="Fetch record", icon="search")
        self.w_record = W.HTML("")
        for w, css in ((self.w_browse_ns, "svckit-browse-namespace"), (self.w_browse_info, "svckit-browse-info"),
                       (self.w_browse_table, "svckit-browse-table"), (self.w_browse_next, "svckit-browse-next"),
                       (self.w_record_id, "svckit-record-id"), (self.w_record, "svckit-record")):
            w.add_class(css)
        table = W.VBox([self.w_browse_table, self.w_browse_next],
                       layout=lay(flex="1 1 auto", min_width="0", overflow="auto", margin="0 0 0 16px"))
        super().__init__([W.HBox([self.w_browse_ns, self.w_browse_refresh, self.w_browse_color]), self.w_browse_info,
                          W.HBox([self.browse_fig, table], layout=lay(width="100%")),
                          W.HBox([self.w_record_id, self.w_record_fetch]), self.w_record], **kwargs)
        T.link((self.w_browse_ns, "value"), (self, "browse_namespace"))
        T.link((self.w_record_id, "value"), (self, "record_id"))
        self.observe(self._on_namespace, names="browse_namespace")
        self.observe(lambda _c: self.record_id and self.inspect(self.record_id, self.browse_namespace),
                     names="record_id")
        self.w_browse_color.observe(lambda _c: self._quiet or self.draw_map(), names="value")
        self.w_browse_refresh.on_click(lambda _b: self.browse())
        self.w_browse_next.on_click(lambda _b: self.next_page())
        self.w_record_fetch.on_click(lambda _b: self.inspect(self.record_id, self.browse_namespace))

    def list_namespaces(self) -> list[str]:
        """The selected index's namespaces (the default one is "")."""
        names = list(self.session.client().list_namespaces())
        self._show_names(names, self.browse_namespace)
        return names

    def browse(self, namespace: str | None = None) -> pd.DataFrame:
        """Show the selected index as it is: its namespaces with their counts, the first page of a
        namespace and its map (see the module: two round trips). Returns the page as
        :func:`svckit.frames.records_frame`."""
        kind = self.session.kind
        wanted = self.browse_namespace if namespace is None else namespace
        try:
            info, page, ids = self._read(wanted, describe=True)
            names = list(info.namespaces)
            if namespace is not None and namespace not in names:
                raise LookupError(f"the {kind} index has no namespace {namespace!r}")
            self._show_names(names, wanted)
            if self.browse_namespace != wanted:  # the namespace shown before is gone: the first one
                _, page, ids = self._read(self.browse_namespace, describe=False)
            counts = frames.namespaces_frame(info)
            counts["namespace"] = counts["namespace"].replace("", "(default)")
            self.w_browse_info.value = (f"<div><b>{html.escape(kind)}</b> index ({self.session.where()}): "
                                        f"{int(counts['vector_count'].sum()):,} vectors in {len(counts)} "
                                        f"namespace(s)</div>{frame_html(counts)}")
            self.browse_count = 0
            shown = self._show_page(page)
            self.map_index(ids)
        except (SvcError, LookupError) as exc:
            self.w_browse_info.value = message_html(f"browse failed: {exc}", "error")
            return frames.records_frame([])
        return shown

    def next_page(self) -> pd.DataFrame:
        """The next page of the namespace (after the rows shown); empty once the end was reached."""
        return self._load_page(self.browse_cursor) if self.browse_cursor else frames.records_frame([])

    def _show_names(self, names: list[str], wanted: str) -> None:
        with self._quiet:
            self.namespace_names = names
            self.w_browse_ns.options = [(n or "(default)", n) for n in names]
            self.browse_namespace = wanted if wanted in names else (names[0] if names else "")

    def _read(self, namespace: str, *, describe: bool) -> tuple[Any, Any, list[str] | None]:
        """``info`` (when ``describe``), the first page of ``namespace`` and, while its map is still to
        be drawn, the ids the map samples: requests that do not depend on each other, side by side."""
        client, kind = self.session.client(), self.session.kind
        wants_map = kind != "sparse" and not self.session.has_projection(kind, namespace)
        info, page, ids = _side_by_side(
            client.info if describe else None,
            functools.partial(client.range, "", BROWSE_PAGE, namespace=namespace, include_metadata=True,
                              include_data=True),
            functools.partial(list_ids, client, namespace) if wants_map else None)
        return info, page, ids

    def _load_page(self, cursor: str) -> pd.DataFrame:
        page = self.session.client().range(cursor, BROWSE_PAGE, namespace=self.browse_namespace,
                                           include_metadata=True, include_data=True)
        return self._show_page(page)

    def _show_page(self, page: Any) -> pd.DataFrame:
        records, self.browse_cursor = page.vectors, page.next_cursor
        first = self.browse_count + 1
        self.browse_count += len(records)
        self.browse_records = frames.records_frame(records)
        show = self.browse_records.drop(columns=["vector", "sparse_indices", "sparse_values"])
        show.columns = [c.removeprefix("metadata.") for c in show.columns]
        show["data"] = show["data"].fillna("").map(lambda t: t if len(t) <= 80 else t[:80] + "…")
        more = "more: Next page" if self.browse_cursor else "the end of the namespace"
        self.w_browse_table.value = (
            f"{muted_html(f'vectors {first:,}–{self.browse_count:,} in id order ({more})')}{frame_html(show)}"
            if records else "<i>empty namespace</i>")
        self.w_browse_next.disabled = not self.browse_cursor
        return self.browse_records

    def map_index(self, ids: list[str] | None = None) -> go.Figure | None:
        """The map of the browsed namespace, coloured by a metadata field (``ids``: the namespace's,
        when listed already). None for a sparse index (no dense vectors)."""
        if self.session.kind == "sparse":
            self.map_count = 0
            self.browse_fig.show(empty_figure("Map", "a sparse index has no dense vectors to map"))
            return None
        pm = self.session.projection(self.session.kind, self.browse_namespace, ids)
        fields = pm.fields()
        with self._quiet:
            self.w_browse_color.options = ["none", *fields]
            if self.w_browse_color.value == "none" and fields:
                self.w_browse_color.value = fields[0]
        self.map_count = len(pm.ids)
        return self.draw_map()

    def draw_map(self) -> go.Figure | None:
        if self.session.kind == "sparse":
            return None
        kind, ns = self.session.kind, self.browse_namespace
        pm = self.session.projection(kind, ns)
        field_name = self.w_browse_color.value
        color = pm.metadata[field_name] if field_name in pm.metadata.columns else None
        fig = projection_figure(pm.coords, ids=list(pm.ids), color=color, color_label=field_name,
                                title=f"{kind} index · namespace {ns or '(default)'}", explained=pm.explained,
                                detail=f"PCA of {len(pm.ids):,} vectors ({pm.source})")
        fig.update_layout(width=560, height=480)
        self.browse_fig.show(fig)
        return fig

    def inspect(self, vector_id: str, namespace: str) -> tuple[Any, str]:
        """Fetch one vector in full; the record (None if missing) and its HTML."""
        try:
            self.record = self.session.client().fetch([vector_id], namespace=namespace, include_vectors=True)[0]
            shown = record_html(self.record, namespace)
        except SvcError as exc:
            self.record = None
            shown = message_html(f"fetch failed: {exc}", "error")
        self.w_record.value = shown
        return self.record, shown

    def _on_namespace(self, _change: Any) -> None:
        if not self._quiet:
            _, page, ids = self._read(self.browse_namespace, describe=False)
            self.browse_count = 0
            self._show_page(page)
            self.map_index(ids)


def _side_by_side(*calls: Callable[[], Any] | None) -> list[Any]:
    """Each call's answer (None where the call is None), the calls made side by side: one round trip."""
    made = [call for call in calls if call is not None]
    answers: list[Any] = []
    with InFlight(max(len(made), 1)) as flight:
        for call in made:
            flight.submit(call, then=answers.append)
    given = iter(answers)
    return [None if call is None else next(given) for call in calls]
