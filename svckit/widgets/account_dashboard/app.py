"""The account dashboard: the console's first page. It opens on every resource of the account
(:mod:`.overview`) and drills down: into the queue account (:mod:`.queue_view`, the dashboard's view of
its usage, limits, plans and token), or into a database or a vector index, opening the KV explorer or
the vector playground on it, built with the account client's ``kv_client(database)`` /
``vector_client(index)``. *Back to all resources* returns to the first page (and closes the explorer
or playground it opened, and its client).

This module composes the pages: one is shown at a time (``page``), the others hidden, so the static
view of a saved notebook shows the page the widget showed. The queue account's traits and methods are
the dashboard's own (``dashboard.account``, ``dashboard.upgrade(plan)``, ``dashboard.usage_box``), as
they were before the dashboard had other pages.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as W
import traitlets as T

from svckit.account.client import QueueAccountAdmin
from svckit.widgets._common import Composed, muted_html, style_widget
from svckit.widgets._static import StaticView
from svckit.widgets.account_dashboard.overview import ResourcesOverview
from svckit.widgets.account_dashboard.queue_view import QueueAccountView, QueueResources

#: the pages, by ``page``: the first page, the queue account, an opened database or vector index
PAGES = ("overview", "queue", "database", "vector")
#: the queue account view's traits, the dashboard's own too (linked)
QUEUE_TRAITS = ("account", "usage", "period", "compare_plan", "upgrade_plan", "token_masked", "message",
                "message_kind", "refreshed")
#: an index type -> the playground's kind to query it with
PLAYGROUND_KINDS = {"DENSE": "dense", "SPARSE": "sparse", "HYBRID": "hybrid"}


class AccountDashboard(StaticView, Composed, W.VBox):
    """``AccountDashboard(account, queue=queue, presets=PLAN_PRESETS)`` with an
    ``svckit.account.Account`` client: every resource of the account with its usage first, drill-down
    into each (see the module). ``queue``, ``compare_plan``, ``presets`` and ``autorefresh`` are the
    queue account page's (:class:`QueueAccountView`); ``page="queue"`` opens on that page (the first
    page then loads when it is first shown)."""

    page = T.Enum(PAGES, "overview", help="the page shown")
    opened_id = T.Unicode("", help="the id of the resource a drill-down page shows")
    account = T.Any(None, allow_none=True)
    usage = T.Any(None, allow_none=True)
    period = T.Unicode("1d")
    compare_plan = T.Unicode("paid")
    upgrade_plan = T.Unicode("paid")
    token_masked = T.Unicode("")
    message = T.Unicode("")
    message_kind = T.Unicode("info")
    refreshed = T.Int(0)

    def __init__(self, client: QueueAccountAdmin, *, queue: QueueResources | None = None, compare_plan: str | None = None,
                 presets: Mapping[str, Mapping[str, Any]] | None = None, autorefresh: bool = True,
                 page: str = "overview", **traits: Any) -> None:
        self.client = client
        self.opened: W.Widget | None = None  # the KV explorer or playground of a drill-down page
        self._title = ""  # that page's title
        self._opened_client: Any = None
        queue_traits = {k: traits.pop(k) for k in list(traits) if k in QUEUE_TRAITS}
        self.queue_view = QueueAccountView(client, queue=queue, compare_plan=compare_plan, presets=presets,
                                           autorefresh=autorefresh, **queue_traits)
        self.overview = ResourcesOverview(client, fallback=lambda: (self.queue_view.account, self.queue_view.usage))
        self.overview.on_open = self.open_resource
        self._views = (self.queue_view, self.overview)
        self.back_button = W.Button(description="Back to all resources", icon="arrow-left",
                                    layout=W.Layout(width="190px"))
        self.back_button.on_click(lambda _b: self.back())
        self.crumb = W.HTML()
        self.crumb.add_class("svc-account-crumb")
        self.resource_page = W.VBox()
        self.resource_page.add_class("svc-account-resource")
        super().__init__([style_widget(), W.HBox([self.back_button, self.crumb], layout=W.Layout(align_items="center")),
                          self.overview, self.queue_view, self.resource_page], **traits)
        self.add_class("svc-account-dashboard")
        for name in QUEUE_TRAITS:
            T.link((self.queue_view, name), (self, name))
        self._autorefresh = autorefresh
        self.observe(lambda _c: self._show(), names=["page", "opened_id"])
        self.queue_view.observe(self._queue_changed, names="account")
        self.page = page
        self._show()

    # ------------------------------------------------------------------ public
    @property
    def resources(self) -> Any:
        """The :class:`~svckit.account.resources.AccountResources` the first page shows (None before a load)."""
        return self.overview.resources

    def refresh(self) -> Any:
        """Load the queue account's page again (as before: record, usage and counts, one round trip) and
        the first page's resources in the background. Returns the queue account record."""
        self.overview.refresh()
        return self.queue_view.refresh()

    def wait(self, timeout: float | None = 60) -> bool:
        """Wait for the first page's load under way to be shown."""
        return self.overview.wait(timeout)

    def back(self) -> None:
        """Back to all resources (closing the explorer or playground a drill-down opened)."""
        self.page = "overview"

    def open_queue(self) -> QueueAccountView:
        """Drill into the queue account: its usage, limits, plans and token."""
        self.page = "queue"
        return self.queue_view

    def open_resource(self, kind_or_id: str, resource_id: str | None = None) -> W.Widget:
        """Drill into a resource by id (or name): ``open_resource(id)`` or ``open_resource(kind, id)`` as the cards'
        buttons call it. A database opens the KV explorer on it, a vector index the playground, the
        queue account its page. Returns the view opened."""
        wanted = resource_id if resource_id is not None else kind_or_id
        res = self.resources
        if res is None:
            raise ValueError("open_resource: no resources loaded yet (refresh() and wait())")
        for db in res.databases:
            if wanted in (db.database_id, db.database_name):
                return self.open_database(db)
        for index in res.vector_indexes:
            if wanted in (index.id, index.name):
                return self.open_vector_index(index)
        if any(wanted in (str(q.id), str(getattr(q, "name", "") or "")) for q in res.queue_accounts):
            return self.open_queue()
        raise ValueError(f"open_resource: no database, vector index or queue account {wanted!r} in the account")

    def open_database(self, database: Any) -> W.Widget:
        """The KV explorer on ``database`` (its REST URL and token, from the account client)."""
        from svckit.widgets.kv_explorer import KVExplorer

        kv = self.client.kv_client(database)  # type: ignore[attr-defined]
        return self._open_page("database", database.database_id, f"Key-value database {database.database_name}",
                               kv, lambda: KVExplorer(kv))

    def open_vector_index(self, index: Any) -> W.Widget:
        """The vector playground on ``index``, queried as its kind (the other kinds: the local index)."""
        from svckit.widgets.vector_playground import VectorPlayground

        kind = PLAYGROUND_KINDS.get(str(getattr(index.index_type, "value", index.index_type)).upper(), "dense")
        client = self.client.vector_client(index)  # type: ignore[attr-defined]
        others = {k: f"the dashboard opened index {index.name} ({kind}) only" for k in PLAYGROUND_KINDS.values()
                  if k != kind}
        return self._open_page("vector", index.id, f"Vector index {index.name}", client,
                               lambda: VectorPlayground({kind: client}, index_kind=kind, not_configured=others,
                                                        autorun=False))

    # ------------------------------------------------------------------ pages
    def _open_page(self, page: str, rid: str, title: str, client: Any, build: Any) -> W.Widget:
        self._close_opened()
        self._opened_client = client
        self.opened = build()
        self.resource_page.children = [self.opened]
        self._title = title
        with self.hold_trait_notifications():
            self.opened_id = rid
            self.page = page
        return self.opened

    def _close_opened(self) -> None:
        opened, client = self.opened, self._opened_client
        self.opened = self._opened_client = None
        self.resource_page.children = []
        if opened is not None:
            opened.close()
        if client is not None:
            client.close()

    def _show(self) -> None:
        page = self.page
        if page != "database" and page != "vector" and self.opened is not None:
            self._close_opened()
            self.opened_id = ""
        shown = {"overview": self.overview, "queue": self.queue_view}.get(page, self.resource_page)
        for part in (self.overview, self.queue_view, self.resource_page):
            part.layout.display = None if part is shown else "none"
        self.back_button.layout.display = "none" if page == "overview" else None
        if page == "overview":
            self.crumb.value = "<b class='svc-account-title'>All resources of the account</b>"
            if self._autorefresh and not self.overview.loaded and not self.overview.loading:
                self.overview.refresh()
        else:
            title = "Queue account" if page == "queue" else self._title
            self.crumb.value = (f"{muted_html('All resources ›')} <b class='svc-account-title'>"
                                f"{html.escape(title)}</b>")

    def _queue_changed(self, _change: Any) -> None:
        """A plan change or a new token on the queue page: the first page's card follows."""
        if self.overview.loaded and not self.overview.loading:
            self.overview.refresh()

    def close(self) -> None:
        self._close_opened()
        super().close()
