"""The KV explorer: browse a keyspace of any size, view and edit values, run commands, watch traffic,
act on every key under a pattern. Each part is a view of its own in this package (the key browser,
the value view, the key tree, the console, the monitor and pub/sub streams, the bulk panel); this
module composes them, links their traits to the explorer's, and wires one view's events to another."""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit.kv.client import KV
from svckit.widgets._common import MessageBar, badge, style_widget
from svckit.widgets._static import StaticView
from svckit.widgets.kv_explorer.browser import KeyBrowser, ScanState
from svckit.widgets.kv_explorer.bulk_panel import BulkPanel, BulkState
from svckit.widgets.kv_explorer.console import Console
from svckit.widgets.kv_explorer.key_tree import KeyTree
from svckit.widgets.kv_explorer.listing import search_glob
from svckit.widgets.kv_explorer.slowlog import SlowLogView
from svckit.widgets.kv_explorer.streams import MonitorView, PubSubView
from svckit.widgets.kv_explorer.value_view import ValueState, ValueView

#: ipywidgets gives every box ``overflow: auto``, so a child of width 100% plus its 2 px margins makes its
#: box draw a scrollbar for 4 px. Here a box scrolls only where its layout says so (an inline
#: ``overflow``, which wins over this rule): the value table, the bulk sample.
EXPLORER_STYLE = "<style>.svc-kv-explorer .widget-box { overflow: visible; }</style>"
TABS = ("Browse", "Key tree", "Console", "Monitor", "Pub/Sub", "Bulk", "Slow log")
#: the views whose state the explorer shows as traits of its own, and the traits of each
LINKED = {
    "browser": ScanState.class_trait_names(),
    "value_pane": ValueState.class_trait_names(),
    "key_tree": ["delimiter", "pattern"],
    "console": ["history"],
    "bulk": [*BulkState.class_trait_names(), "readonly", "type_filter"],
    "messages": ["message", "message_kind"],
}


class KVExplorer(ScanState, ValueState, BulkState, StaticView, W.VBox):
    """Explore a key-value database: ``KVExplorer(kv)`` (an ``svckit.kv.KV`` client).

    State lives in traits (``pattern``, ``type_filter``, ``matches``, ``selected``, ``message`` ...) and
    the public methods (``refresh()``, ``scan_all()``, ``select(key)``, ``save_value()``,
    ``delete_key()``, ``run_command()``, ``subscribe()``, ``bulk_dry_run()`` ...) are separate from the
    button handlers, so tests drive the widget without a browser. Each view is an attribute
    (``browser``, ``value_pane``, ``key_tree``, ``console``, ``monitor_pane``, ``pubsub_pane``, ``bulk``,
    ``slowlog``), and its controls are reached through it: ``explorer.browser.key_list``."""

    delimiter = T.Unicode(":")
    history = T.List(T.Unicode())
    message = T.Unicode("")
    message_kind = T.Unicode("info")

    def __init__(self, kv: KV[Any], *, pattern: str = "*", autorefresh: bool = True, **traits: Any) -> None:
        self.kv = kv
        self.messages = MessageBar()
        self.browser = KeyBrowser(kv, self.messages, layout=W.Layout(width="44%", min_width="420px"))
        self.value_pane = ValueView(kv, self.messages, layout=W.Layout(flex="1 1 0%", min_width="0",
                                                                       padding="0 0 0 10px"))
        self.key_tree = KeyTree(kv)
        self.console = Console(kv)
        self.monitor_pane = MonitorView(kv)
        self.pubsub_pane = PubSubView(kv, self.messages)
        self.bulk = BulkPanel(kv)
        self.slowlog = SlowLogView(kv)  # read when its tab is first opened (or refresh() is called)
        self.header = W.HTML()
        browse = W.HBox([self.browser, self.value_pane])
        self.tabs = W.Tab(children=[browse, self.key_tree, self.console, self.monitor_pane, self.pubsub_pane, self.bulk,
                                    self.slowlog], titles=TABS)
        self.tabs.observe(lambda c: c["new"] == TABS.index("Slow log") and self.slowlog.frame.empty
                          and self.slowlog.refresh(background=True), names="selected_index")
        explorer_style = W.HTML(EXPLORER_STYLE, layout=W.Layout(height="0px", margin="0"))
        super().__init__([style_widget(), explorer_style, self.header, self.browser.toolbar, self.browser.status,
                          self.messages, self.tabs])
        self.add_class("svc-kv-explorer")
        for view, names in LINKED.items():
            for name in names:  # the view's state is the start; the traits given here then reach it
                T.link((getattr(self, view), name), (self, name))
        for name, value in traits.items():
            setattr(self, name, value)
        self.readonly = bool(getattr(kv, "readonly", False))
        T.dlink((self.browser, "matches"), (self.key_tree, "matches"))
        self.key_tree.scan_state = lambda: (self.browser.scan_state, self.browser.dbsize)
        T.dlink((self, "scan_all_count"), (self.bulk, "scan_count"))
        T.dlink((self, "scan_all_count"), (self.key_tree, "scan_count"))
        self.browser.on_pick = self.select
        self.value_pane.on_written = lambda _key: self.browser.describe_visible()
        self.value_pane.on_deleted = self.browser.remove
        self.key_tree.on_node = self.bulk_node
        self.bulk.on_deleted = self.refresh
        self.pattern = pattern
        self.observe(self._on_pattern, names=["pattern", "type_filter"])
        self.observe(self._on_readonly, names="readonly")
        self._on_readonly()
        if autorefresh:
            self.refresh()
        self.bulk_pattern = search_glob(self.pattern)

    # -- public: the key browser and the value view --------------------------------------------------
    @property
    def visible_frame(self) -> pd.DataFrame:
        """The rows of the key list shown: key, type, TTL, memory and length."""
        return self.browser.visible_frame

    @property
    def value_frame(self) -> pd.DataFrame:
        """The page of the selected value shown, as a table."""
        return self.value_pane.value_frame

    def refresh(self) -> None:
        """Start over: DBSIZE, then the first page of matches (or a direct lookup of an exact name)."""
        self.browser.refresh()

    def scan_all(self) -> None:
        """Scan to the end of the keyspace, stopping at ``scan_cap`` matches."""
        self.browser.scan_all()

    def describe_visible(self) -> pd.DataFrame:
        """TYPE, PTTL and MEMORY USAGE of the visible keys in one pipeline, then their lengths."""
        return self.browser.describe_visible()

    def select(self, key: str) -> pd.DataFrame:
        """Show ``key``: type, TTL, memory and the first page of its value as a table."""
        return self.value_pane.select(key)

    def value_next_page(self) -> pd.DataFrame:
        return self.value_pane.value_next_page()

    def value_previous_page(self) -> pd.DataFrame:
        return self.value_pane.value_previous_page()

    def save_value(self, text: str) -> bool:
        return self.value_pane.save_value(text)

    def delete_key(self) -> bool:
        return self.value_pane.delete_key()

    # -- public: the key tree, the console, the streams ------------------------------------------------
    def tree(self) -> list[tuple[str, int]]:
        """The namespaces (by ``delimiter``) and keys right under the search's prefix, with key counts:
        of the keys found so far, or of every matching key after the tree's Scan all."""
        return self.key_tree.tree()

    def tree_frame(self) -> pd.DataFrame:
        """The namespaces under the search's prefix with their key counts and memory, as a frame."""
        return self.key_tree.tree_frame()

    def tree_scan_all(self, background: bool = False) -> None:
        """Count every key of the search in the key tree, measuring memory (progress bar, Cancel)."""
        self.key_tree.scan_all(background)

    def run_command(self, text: str, mode: str = "single") -> Any:
        """Run ``text`` (one command, or one per line) and show the reply; returns it."""
        return self.console.run_command(text, mode)

    def subscribe(self, channel: str | None = None) -> None:
        self.pubsub_pane.subscribe(channel)

    def unsubscribe(self) -> bool:
        return self.pubsub_pane.unsubscribe()

    def publish(self, channel: str, message: str) -> int | None:
        return self.pubsub_pane.publish(channel, message)

    def pubsub_frame(self) -> pd.DataFrame:
        """The messages received on the Pub/Sub tab, newest first."""
        return self.pubsub_pane.pubsub_frame()

    # -- public: bulk actions ---------------------------------------------------------------------------
    @property
    def bulk_summary(self) -> Any:
        """What the last bulk run did (None before one)."""
        return self.bulk.bulk_summary

    @property
    def bulk_frame(self) -> pd.DataFrame | None:
        """The keys and values the last DataFrame export read (None before one)."""
        return self.bulk.bulk_frame

    def bulk_dry_run(self, background: bool = False) -> Any:
        return self.bulk.bulk_dry_run(background)

    def bulk_run(self, background: bool = False) -> Any:
        return self.bulk.bulk_run(background)

    def bulk_cancel(self) -> None:
        self.bulk.bulk_cancel()

    def bulk_wait(self, timeout: float | None = None) -> bool:
        return self.bulk.bulk_wait(timeout)

    def bulk_node(self, prefix: str) -> None:
        """Aim the Bulk tab at a key-tree node: every key under ``prefix`` (glob characters escaped)."""
        self.bulk.bulk_node(prefix, self.delimiter)

    def close(self) -> None:
        """Stop the streams, any bulk run, scan or slow-log read, then close the widget."""
        self.monitor_pane.monitor.stop()
        self.pubsub_pane.pubsub.stop()
        for job in (self.bulk.job, self.key_tree.job, self.browser.job, self.slowlog.job):
            job.close()
        super().close()

    # -- wiring ------------------------------------------------------------------------------------------
    def _on_pattern(self, change: Any) -> None:
        self.refresh()
        if change["name"] == "pattern":  # the Bulk tab acts on what the list searched: the same glob
            self.bulk_pattern = self.browser.glob

    def _on_readonly(self, _change: Any = None) -> None:
        token = badge("Read Only token", "#b45309") if self.readonly else badge("Standard token", "#15803d")
        self.header.value = f"<div>{badge('KV explorer', '#111827')}{token}</div>"
