"""The account dashboard's first page: every resource of the account, as the vendor's console home
shows it, a card per resource grouped by kind (key-value databases, vector indexes, search indexes,
queue accounts), each with its plan, region, endpoint, masked token and its usage as bars against
its limits, and an *Open* button that drills into it.

Loading it is :meth:`svckit.account.Account.resources` (the four lists side by side, then every
resource's stats side by side: two round trips), on a :class:`~svckit.widgets._jobs.BackgroundJob`,
so a click on *Refresh* never holds the kernel while the service answers.

A service without the vendor's listing paths (or a client without ``resources()``) still has the
queue account the dashboard reads by the spec's path: the page then shows that one card, and a note
(not an error) saying why nothing else is listed.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit.account.resources import AccountResources
from svckit.widgets._account_cards import KINDS, resource_card
from svckit.widgets._common import MessageBar, error_text, muted_html
from svckit.widgets._jobs import BackgroundJob

#: the lists :class:`AccountResources` names in ``errors`` when one could not be read
LISTS = ("databases", "vector_indexes", "search_indexes", "queue_accounts")
#: kinds a drill-down opens a view on (a search index has no data view here)
OPENABLE = ("Key-value database", "Vector index", "Queue account")


class ResourcesOverview(W.VBox):
    """Every resource of the account with its usage (see the module). ``on_open(kind, id)`` is called
    by a card's *Open* button; ``fallback()`` gives the queue account record and its usage to show
    where the service lists no resources (called in the load's thread: it may read them)."""

    resources = T.Any(None, allow_none=True, help="the AccountResources of the last load")
    loaded = T.Int(0, help="how many times the resources were loaded")
    loading = T.Bool(False)
    message = T.Unicode("")
    message_kind = T.Unicode("info")
    note = T.Unicode("", help="why only the queue account is shown ('' when the service lists its resources)")

    def __init__(self, client: Any, *, period: str = "1h",
                 fallback: Callable[[], tuple[Any, Any]] | None = None) -> None:
        self.client = client
        self.period = period
        self.fallback = fallback
        self.frame = pd.DataFrame()
        self.usage_frame = pd.DataFrame()
        self.on_open: Callable[[str, str], None] | None = None
        self.open_buttons: dict[str, W.Button] = {}
        self.refresh_button = W.Button(description="Refresh", icon="refresh", layout=W.Layout(width="100px"))
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.status = W.HTML()
        self.msg = MessageBar()
        self.note_box = W.HTML()
        self.sections = W.VBox()
        # one layout (and button style) for every card's parts: a card is four models, not seven, and
        # a first page of many resources still weighs kilobytes
        self._card_layout, self._html_layout = W.Layout(), W.Layout()
        self._button_layout, self._button_style = W.Layout(width="90px"), W.ButtonStyle()
        self.job = BackgroundJob(label=self.status, name="svckit-account-resources")
        super().__init__([W.HBox([self.refresh_button, self.status], layout=W.Layout(align_items="center")),
                          self.msg, self.note_box, self.sections])
        self.add_class("svc-account-overview")
        T.link((self, "message"), (self.msg, "message"))
        T.link((self, "message_kind"), (self.msg, "message_kind"))

    # ------------------------------------------------------------------ loading
    def refresh(self) -> bool:
        """Load every resource and its usage again, in the background; False when a load is already
        under way (its result is the one shown)."""
        if self.job.running:
            return False
        self.loading = True
        self.msg.say("Loading the account's resources…")
        self.job.start(lambda _progress, _cancel: self._load(), on_done=self._loaded, on_error=self._failed)
        return True

    def wait(self, timeout: float | None = 60) -> bool:
        """Wait for a load under way to be shown; True once none is running."""
        return self.job.wait(timeout)

    def _load(self) -> tuple[AccountResources | None, tuple[Any, Any]]:
        """In the job's thread: the resources, and the queue account (with its usage) to show alone
        where they hold no queue account."""
        reader = getattr(self.client, "resources", None)
        resources = reader(self.period) if callable(reader) else None
        alone = (None, None)
        if (resources is None or not resources.queue_accounts) and self.fallback is not None:
            alone = self.fallback()
        return resources, alone

    def _failed(self, exc: BaseException) -> None:
        self.loading = False
        self.msg.say(f"Loading the account's resources failed: {error_text(exc)}", "error")

    def _loaded(self, loaded: tuple[AccountResources | None, tuple[Any, Any]]) -> None:
        resources, alone = loaded
        self.loading = False
        self.loaded += 1
        self.note = self._note(resources)
        shown = self._queue_alone(resources, alone) if self.note or resources is None else resources
        self.resources = shown
        self.frame = frames.resources_frame(shown)
        self.usage_frame = frames.resource_usage_frame(shown)
        self._render()
        self.msg.say(f"Loaded at {pd.Timestamp.now(tz='UTC'):%H:%M:%S} UTC (refresh #{self.loaded}).")

    @staticmethod
    def _note(resources: AccountResources | None) -> str:
        if resources is None:
            return "This client lists no resources (it has no resources()): the queue account alone."
        failed = [name for name in LISTS if name in resources.errors]
        if not failed or any((resources.databases, resources.vector_indexes, resources.search_indexes)):
            return ""
        why = resources.errors[failed[0]]
        return (f"This service does not list the account's resources (the vendor's developer API paths: "
                f"{why}): the queue account alone.")

    @staticmethod
    def _queue_alone(resources: AccountResources | None, alone: tuple[Any, Any]) -> AccountResources:
        """The queue account the spec's path reads, as the one resource (with its usage, if read)."""
        if resources is not None and resources.queue_accounts:
            return resources
        record, usage = alone
        if record is None:
            return AccountResources()
        stats = {record.id: usage} if usage is not None else {}
        return AccountResources(queue_accounts=[record], queue_stats=stats)

    # ------------------------------------------------------------------ drawing
    def _render(self) -> None:
        self.note_box.value = f"<div class='svc-account-note'>{muted_html(self.note)}</div>" if self.note else ""
        self.open_buttons = {}
        errors = self.resources.errors if self.resources is not None else {}
        sections: list[W.Widget] = []
        for kind, heading in KINDS.items():
            rows = self.frame[self.frame["kind"] == kind] if not self.frame.empty else self.frame
            if rows.empty:
                continue
            cards = [self._card(row, errors.get(str(row["id"]), "")) for _, row in rows.iterrows()]
            title = W.HTML(f"<h4 class='svc-kind-title'>{html.escape(heading)} "
                           f"<span class='svc-muted'>({len(cards)})</span></h4>")
            grid = W.GridBox(cards, layout=W.Layout(grid_template_columns="repeat(auto-fill, minmax(380px, 1fr))",
                                                     grid_gap="8px", width="100%"))
            sections.append(W.VBox([title, grid]))
        if not sections:
            sections.append(W.HTML(muted_html("The account holds no resources.")))
        old, self.sections.children = self.sections.children, sections
        for section in old:
            _close_tree(section)

    def _card(self, row: pd.Series, error: str) -> W.VBox:
        rid, kind = str(row["id"]), str(row["kind"])
        usage = self.usage_frame[self.usage_frame["id"] == rid] if not self.usage_frame.empty else self.usage_frame
        button = W.Button(description="Open", icon="folder-open", layout=self._button_layout,
                          style=self._button_style, tooltip=f"open {kind.lower()} {row['name']}")
        if kind in OPENABLE:
            button.on_click(lambda _b, k=kind, i=rid: self.on_open and self.on_open(k, i))
        else:
            button.disabled = True
            button.tooltip = "no data view: the service serves no search data API here"
        self.open_buttons[rid] = button
        card = W.VBox([W.HTML(resource_card(row, usage, error), layout=self._html_layout),
                       button], layout=self._card_layout)
        card.add_class("svc-resource-card")
        return card


def _close_tree(widget: W.Widget) -> None:
    """Close a card section the page no longer shows (its widgets, not the layouts they share)."""
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    widget.close()
