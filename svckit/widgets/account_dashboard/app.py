"""The account dashboard: the console's first page. It opens on every resource of the account
(:mod:`.overview`) and drills down: into the queue account (:mod:`.queue_view`, the dashboard's view of
its usage, limits, plans and token), or into a database or a vector index, opening the KV explorer or
the vector playground on it, built with the account client's ``kv_client(database)`` /
``vector_client(index)``. *Back to all resources* returns to the first page (and closes the explorer
or playground it opened, and its client).

This module composes the pages: one is shown at a time (``page``), the others hidden, so the static
view of a saved notebook shows the page the widget showed. The pages are attributes (``overview``,
``queue_view``) and their controls are reached through them (``dashboard.queue_view.usage_box``); the
queue account's traits (``dashboard.account``, ``message``...) and its actions (``upgrade(plan)``,
``rotate_token()``, ``compare(plan)``, the ``request_*`` variants and their ``confirm_bar``) are the
dashboard's own too, as they were before the dashboard had other pages.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as W
import traitlets as T

from svckit.account.client import QueueAccountAdmin
from svckit.errors import SvcError
from svckit.widgets._common import ConfirmBar, muted_html, show_one, style_widget
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


class AccountDashboard(StaticView, W.VBox):
    """``AccountDashboard(account, queue=queue, presets=PLAN_PRESETS)`` with an
    ``svckit.account.Account`` client: every resource of the account with its usage first, drill-down
    into each (see the module). ``queue``, ``compare_plan``, ``presets`` and ``autorefresh`` are the
    queue account page's (:class:`QueueAccountView`); ``page="queue"`` opens on that page. Each page
    loads when it is first shown (with ``autorefresh``), so the account is read once at the start."""

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
        # each page loads when it is first shown (_show), so the start reads the queue account once
        self.queue_view = QueueAccountView(client, queue=queue, compare_plan=compare_plan, presets=presets,
                                           autorefresh=False, **queue_traits)
        self.overview = ResourcesOverview(client, fallback=self._queue_alone)
        self.overview.on_open = self.open_resource
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
        self._built = False
        self.page = page
        self._show()
        self._built = True

    # ------------------------------------------------------------------ public
    @property
    def resources(self) -> Any:
        """The :class:`~svckit.account.resources.AccountResources` the first page shows (None before a load)."""
        return self.overview.resources

    @property
    def confirm_bar(self) -> ConfirmBar:
        """The queue account page's confirmation bar (``request_upgrade`` and ``request_rotate`` ask there)."""
        return self.queue_view.confirm_bar

    def compare(self, plan: str) -> Any:
        """Compare the queue account's limits with ``plan``'s presets; returns the limits frame."""
        return self.queue_view.compare(plan)

    def upgrade(self, plan: str) -> str | None:
        """Move the queue account to ``plan`` now (see :meth:`QueueAccountView.upgrade`)."""
        return self.queue_view.upgrade(plan)

    def rotate_token(self) -> str | None:
        """Rotate the queue token now; returns it masked."""
        return self.queue_view.rotate_token()

    def request_upgrade(self, plan: str) -> None:
        """Ask, on the confirmation bar, to move the queue account to ``plan``."""
        self.queue_view.request_upgrade(plan)

    def request_rotate(self) -> None:
        """Ask, on the confirmation bar, to rotate the queue token."""
        self.queue_view.request_rotate()

    def refresh(self) -> Any:
        """Load the queue account's page again (as before: record, usage and counts, one round trip) and
        the first page's resources in the background. Returns the queue account record."""
        self.overview.refresh()
        return self.queue_view.refresh()

    def wait(self, timeout: float | None = 60) -> bool:
        """Wait for the loads under way (the first page's, the queue page's) to be shown."""
        return self.overview.wait(timeout) and self.queue_view.wait(timeout)

    def back(self) -> None:
        """Back to all resources (closing the explorer or playground a drill-down opened)."""
        self.page = "overview"

    def open_queue(self) -> QueueAccountView:
        """Drill into the queue account: its usage, limits, plans and token (the first time, read in the
        background: :meth:`wait`)."""
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
        show_one(shown, (self.overview, self.queue_view, self.resource_page))
        self.back_button.layout.display = "none" if page == "overview" else None
        if page == "overview":
            self.crumb.value = "<b class='svc-account-title'>All resources of the account</b>"
            if self._autorefresh and not self.overview.loaded and not self.overview.loading:
                self.overview.refresh()
        else:
            if page == "queue" and self._autorefresh and not self.queue_view.refreshed:
                # shown by a click: loaded in the background; ``page="queue"`` at the start: at once
                self.queue_view.refresh(background=self._built)
            title = "Queue account" if page == "queue" else self._title
            self.crumb.value = (f"{muted_html('All resources ›')} <b class='svc-account-title'>"
                                f"{html.escape(title)}</b>")

    def _queue_changed(self, change: Any) -> None:
        """A plan change or a new token on the queue page: the first page's card follows (not the
        queue page's first load: the first page read the same account)."""
        if change["old"] is not None and self.overview.loaded and not self.overview.loading:
            self.overview.refresh()

    def _queue_alone(self) -> tuple[Any, Any]:
        """The queue account and its usage, for a first page whose service lists no resources (read in
        the first page's background load): the queue page's when it has loaded, else read now."""
        view = self.queue_view
        if view.refreshed:
            return view.account, view.usage
        try:
            record = self.client.queue_account()
        except SvcError:
            return None, None
        try:
            return record, self.client.queue_stats(view.period)
        except SvcError:
            return record, None

    def close(self) -> None:
        """Close the explorer or playground a drill-down opened, drop the loads under way, then close."""
        self._close_opened()
        self.overview.job.close()
        self.queue_view.job.close()
        super().close()
