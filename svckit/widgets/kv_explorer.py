"""KV explorer: browse a keyspace of any size, view and edit values, run commands, watch traffic.

Staying responsive on millions of keys comes down to never asking for "everything":
- SCAN runs in bounded steps (``count`` per call, at most ``max_steps`` calls per "scan more") and
  stops as soon as a page of matches is found; "scan all" stops at ``scan_cap`` matches.
- TYPE, PTTL and MEMORY USAGE are fetched only for the visible page, in one pipeline (plus one more
  pipeline for the lengths, whose command depends on the type).
- A pattern without glob characters is an exact key name: it is looked up directly (no SCAN).
- Values are read one page at a time (``value_limit`` elements).

The keyspace work is :mod:`svckit.kv.keyspace` (``scan_keys``, ``describe_keys``, ``read_page``);
this module keeps the layout and the handlers.

State lives in traits (``pattern``, ``type_filter``, ``matches``, ``selected``, ``message`` ...) and
the public methods (``refresh()``, ``scan_more()``, ``scan_all()``, ``select(key)``, ``save_value()``,
``set_ttl()``, ``delete_key()``, ``run_command()``, ``start_monitor()`` ...) are separate from the
button handlers, so tests drive the widget without a browser.
"""

from __future__ import annotations

import html
import json
import shlex
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit.errors import SvcError, TransactionDiscarded
from svckit.kv.bulk import BulkPlan, BulkSummary, pattern_for_prefix, plan_bulk, run_bulk
from svckit.kv.client import KV
from svckit.kv.formats import available_encodings, format_value
from svckit.kv.keyspace import PAGED_TYPES, KeyInfo, KeyScan, describe_keys, read_page, scan_keys
from svckit.widgets._common import (
    BADGE_COLORS,
    ConfirmBar,
    StreamPump,
    badge,
    format_duration,
    frame_html,
    message_html,
    style_widget,
)

GLOB_CHARS = set("*?[")
#: key types whose value (a string) or page elements a formatter applies to
FORMATTED_TYPES = ("string", "hash", "list", "set", "zset")
TYPE_CHOICES = [("any type", ""), ("string", "string"), ("hash", "hash"), ("list", "list"), ("set", "set"),
                ("zset", "zset"), ("stream", "stream"), ("JSON", "ReJSON-RL")]
READONLY_REFUSAL = "This explorer uses a Read Only token: editing, TTL changes and deletes are disabled."
BULK_READONLY_REFUSAL = ("Bulk actions are disabled: the Read Only token may not SCAN the keyspace nor write keys. "
                         "Connect with the Standard token (SVC_KV_TOKEN) to use them.")
#: The Bulk tab's actions: label -> (bulk action, export format)
BULK_ACTIONS: dict[str, tuple[str, str | None]] = {
    "delete": ("delete", None), "set TTL": ("expire", None), "clear TTL": ("persist", None),
    "export CSV": ("export", "csv"), "export JSON lines": ("export", "jsonl"), "export DataFrame": ("export", "frame"),
}


def is_exact_key(pattern: str) -> bool:
    """A pattern with no glob characters names one key."""
    return bool(pattern) and not (set(pattern) & GLOB_CHARS)


def json_document(text: Any) -> Any:
    """The parsed document when ``text`` is a JSON object or array, else None."""
    if not isinstance(text, str) or not text[:1] in ("{", "["):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, (dict, list)) else None


def _text(value: Any) -> Any:
    """Bytes of a value read for a formatter, as text for the cells that are not formatted."""
    return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value


def _formatted_block(shown: Any) -> str:
    """A string value through a formatter: its text, or the note saying why it is not valid."""
    if not shown.ok:
        return message_html(shown.note, "error")
    note = f'<div class="svc-muted">{html.escape(shown.note)}</div>' if shown.note else ""
    return (f'{note}<pre class="svc-formatted" style="margin:0;font-size:12px;white-space:pre-wrap">'
            f'{html.escape(shown.text)}</pre>')


def _err(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) < 300 else text[:300] + "…"


class KVExplorer(W.VBox):
    """Explore a key-value database: ``KVExplorer(kv)`` (an ``svckit.kv.KV`` client)."""

    pattern = T.Unicode("*").tag(sync=False)
    type_filter = T.Unicode("").tag(sync=False)
    count = T.Int(1000, help="COUNT hint per SCAN call")
    scan_all_count = T.Int(10_000, help="COUNT hint per SCAN call of 'scan all' (fewer round trips)")
    page_size = T.Int(25, help="rows shown (and described) at once")
    max_steps = T.Int(50, help="SCAN calls per 'scan more' at most")
    scan_cap = T.Int(10_000, help="matches at which 'scan all' stops")
    delimiter = T.Unicode(":")
    value_limit = T.Int(500, help="elements read from a hash/list/set/zset/stream value (one page)")

    # no per-element trait: validating a million strings on every assignment would dominate scan-all
    matches = T.List(help="matching keys found so far, in SCAN order")
    page = T.Int(0)
    cursor = T.Int(0)
    complete = T.Bool(False)
    scanned = T.Int(0, help="keys SCAN walked over (approximate: steps x COUNT, capped at DBSIZE)")
    dbsize = T.Int(0)
    selected = T.Unicode("")
    selected_type = T.Unicode("")
    message = T.Unicode("")
    message_kind = T.Unicode("info")
    readonly = T.Bool(False)
    history = T.List(T.Unicode())

    # value viewer paging and formatting
    value_format = T.Unicode("raw", help="formatter of string values and page elements (svckit.kv.formats)")
    value_page_number = T.Int(0, help="0-based page of the selected value shown")

    # bulk actions: the target, the state of the dry run / run, and what they found
    bulk_pattern = T.Unicode("*", help="pattern the Bulk tab acts on: the current pattern or a key-tree node")
    bulk_action = T.Unicode("delete", help="a key of BULK_ACTIONS")
    bulk_ttl = T.Int(3600)
    bulk_batch = T.Int(500, help="keys per pipeline")
    bulk_state = T.Unicode("idle", help="idle, planning, planned, running, done, cancelled or failed")
    bulk_text = T.Unicode("", help="the dry run's or the run's summary, as shown")

    def __init__(self, kv: KV[Any], *, pattern: str = "*", autorefresh: bool = True, **traits: Any) -> None:
        self.kv = kv
        self.visible_frame = frames.keys_frame([])
        self.value = None
        self.value_page: Any = None
        self.value_frame = pd.DataFrame()
        self._scan = KeyScan()
        self.last_result: Any = None
        self._value_cursors: list[Any] = [None]
        self.formatted_value: Any = None
        self.bulk_plan: BulkPlan | None = None
        self.bulk_summary: BulkSummary | None = None
        self.bulk_frame: pd.DataFrame | None = None
        self.bulk_error: str = ""
        self._bulk_cancel = threading.Event()
        self._bulk_thread: threading.Thread | None = None
        self._build()
        super().__init__(self._root_children(), **traits)
        self.add_class("svc-kv-explorer")
        self.readonly = bool(getattr(kv, "readonly", False))
        self.value_page_size.value = self.value_limit  # traits given to the constructor land after _build
        self.set_trait("pattern", pattern)
        self.pattern_box.value = pattern
        self.observe(self._on_pattern, names=["pattern", "type_filter"])
        self.observe(self._on_message, names=["message", "message_kind"])
        self.observe(self._on_readonly, names=["readonly"])
        self.observe(self._on_bulk_target, names=["pattern"])
        self._on_readonly()
        self._on_bulk_target()
        if autorefresh:
            self.refresh()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.pattern_box = W.Text(description="Pattern", placeholder="user:* or an exact key",
                                  continuous_update=False, layout=W.Layout(width="320px"))
        self.pattern_box.add_class("svc-pattern")
        self.type_box = W.Dropdown(options=TYPE_CHOICES, value="", description="Type",
                                   layout=W.Layout(width="190px"))
        self.refresh_button = W.Button(description="Refresh", icon="refresh", layout=W.Layout(width="100px"))
        self.more_button = W.Button(description="Scan more", icon="forward", layout=W.Layout(width="110px"))
        self.all_button = W.Button(description="Scan all (capped)", icon="fast-forward",
                                   layout=W.Layout(width="170px"))
        self.status = W.HTML()
        self.status.add_class("svc-scan-status")
        self.msg = W.HTML()
        self.msg.add_class("svc-message")

        self.key_list = W.Select(options=[], rows=18, layout=W.Layout(width="100%"))
        self.key_list.add_class("svc-key-list")
        self.prev_button = W.Button(icon="chevron-left", layout=W.Layout(width="36px"), tooltip="previous page")
        self.next_button = W.Button(icon="chevron-right", layout=W.Layout(width="36px"), tooltip="next page")
        self.page_label = W.HTML()
        self.keys_table = W.HTML()

        self.detail_header = W.HTML('<div class="svc-muted">Select a key to see its value.</div>')
        self.detail_header.add_class("svc-detail-header")
        self.value_view = W.HTML()
        self.value_view.add_class("svc-value")
        self.edit_box = W.Textarea(placeholder="new value (string, JSON document, or a JSON object of hash fields)",
                                   layout=W.Layout(width="100%", height="70px"))
        self.save_button = W.Button(description="Save", icon="save", button_style="primary",
                                    layout=W.Layout(width="90px"))
        self.ttl_box = W.IntText(value=3600, description="TTL (s)", layout=W.Layout(width="170px"))
        self.ttl_button = W.Button(description="Set TTL", icon="clock-o", layout=W.Layout(width="95px"))
        self.persist_button = W.Button(description="Persist", layout=W.Layout(width="85px"),
                                       tooltip="remove the expiry")
        self.delete_button = W.Button(description="Delete", icon="trash", button_style="danger",
                                      layout=W.Layout(width="90px"))
        self.confirm_bar = ConfirmBar()
        self.value_prev = W.Button(icon="chevron-left", layout=W.Layout(width="36px"), tooltip="previous page",
                                   disabled=True)
        self.value_next = W.Button(icon="chevron-right", layout=W.Layout(width="36px"), tooltip="next page",
                                   disabled=True)
        self.value_page_label = W.HTML()
        self.value_page_size = W.BoundedIntText(value=self.value_limit, min=1, max=100_000, description="Page size",
                                                layout=W.Layout(width="170px"))
        self.format_box = W.Dropdown(options=available_encodings(), value="raw", description="Format",
                                     layout=W.Layout(width="180px"))
        self.format_box.add_class("svc-format")

        self.bulk_target = W.HTML()
        self.bulk_target.add_class("svc-bulk-target")
        self.bulk_action_box = W.Dropdown(options=list(BULK_ACTIONS), value="delete", description="Action",
                                          layout=W.Layout(width="250px"))
        self.bulk_ttl_box = W.BoundedIntText(value=3600, min=1, max=10**9, description="TTL (s)",
                                             layout=W.Layout(width="170px"))
        self.bulk_path_box = W.Text(value="kv-export.csv", description="File", layout=W.Layout(width="280px"))
        self.bulk_dry_button = W.Button(description="Dry run", icon="search", layout=W.Layout(width="100px"))
        self.bulk_run_button = W.Button(description="Run…", icon="play", button_style="danger",
                                        layout=W.Layout(width="90px"))
        self.bulk_cancel_button = W.Button(description="Cancel", icon="stop", disabled=True,
                                           layout=W.Layout(width="90px"))
        self.bulk_progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="260px"))
        self.bulk_progress_label = W.HTML()
        self.bulk_confirm = ConfirmBar()
        self.bulk_sample = W.HTML()
        self.bulk_sample.add_class("svc-bulk-sample")
        self.bulk_result = W.HTML()
        self.bulk_result.add_class("svc-bulk-result")

        self.delimiter_box = W.Text(value=":", description="Delimiter", layout=W.Layout(width="160px"))
        self.tree_list = W.Select(options=[], rows=14, layout=W.Layout(width="100%"))
        self.tree_list.add_class("svc-tree")
        self.tree_up = W.Button(description="Up", icon="level-up", layout=W.Layout(width="80px"))

        self.console_input = W.Textarea(placeholder="GET greeting\n(one command per line for pipeline / transaction)",
                                        layout=W.Layout(width="100%", height="80px"))
        self.console_mode = W.ToggleButtons(options=["single", "pipeline", "transaction"], value="single",
                                            style={"button_width": "95px"})
        self.console_run = W.Button(description="Run", icon="play", button_style="primary",
                                    layout=W.Layout(width="90px"))
        self.console_out = W.HTML()
        self.console_history = W.Select(options=[], rows=6, description="History", layout=W.Layout(width="100%"))

        self.monitor_toggle = W.ToggleButton(description="Start monitor", icon="eye", value=False,
                                             layout=W.Layout(width="140px"))
        self.monitor_clear = W.Button(description="Clear", layout=W.Layout(width="80px"))
        self.monitor_view = W.HTML('<div class="svc-muted">Monitor is stopped.</div>')
        self.monitor = StreamPump(self.monitor_view, self._format_monitor_event)

        self.channel_box = W.Text(value="news", description="Channel", layout=W.Layout(width="240px"))
        self.subscribe_toggle = W.ToggleButton(description="Subscribe", icon="rss", value=False,
                                               layout=W.Layout(width="120px"))
        self.publish_box = W.Text(placeholder="message", layout=W.Layout(width="260px"))
        self.publish_button = W.Button(description="Publish", icon="send", layout=W.Layout(width="95px"))
        self.pubsub_view = W.HTML('<div class="svc-muted">Not subscribed.</div>')
        self.pubsub = StreamPump(self.pubsub_view, self._format_message)

        # handlers: thin, they call the public methods
        self.pattern_box.observe(lambda ch: setattr(self, "pattern", ch["new"].strip() or "*"), names="value")
        self.type_box.observe(lambda ch: setattr(self, "type_filter", ch["new"]), names="value")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.more_button.on_click(lambda _b: self.scan_more())
        self.all_button.on_click(lambda _b: self.scan_all())
        self.prev_button.on_click(lambda _b: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _b: self.show_page(self.page + 1))
        self.key_list.observe(self._on_key_clicked, names="value")
        self.save_button.on_click(lambda _b: self._ask(f"Save the new value of {self.selected!r}?",
                                                       lambda: self.save_value(self.edit_box.value), "Save"))
        self.ttl_button.on_click(lambda _b: self._ask(
            f"Set the TTL of {self.selected!r} to {self.ttl_box.value} s?", lambda: self.set_ttl(self.ttl_box.value),
            "Set TTL"))
        self.persist_button.on_click(lambda _b: self._ask(
            f"Remove the expiry of {self.selected!r}?", lambda: self.set_ttl(None), "Persist"))
        self.delete_button.on_click(lambda _b: self._ask(f"Delete {self.selected!r}? This cannot be undone.",
                                                         self.delete_key, "Delete"))
        self.delimiter_box.observe(lambda ch: setattr(self, "delimiter", ch["new"]), names="value")
        self.tree_list.observe(self._on_tree_clicked, names="value")
        self.tree_up.on_click(lambda _b: self.tree_up_level())
        self.console_run.on_click(lambda _b: self.run_command(self.console_input.value, self.console_mode.value))
        self.console_history.observe(self._on_history_clicked, names="value")
        self.monitor_toggle.observe(self._on_monitor_toggle, names="value")
        self.monitor_clear.on_click(lambda _b: self.monitor.clear())
        self.subscribe_toggle.observe(self._on_subscribe_toggle, names="value")
        self.publish_button.on_click(lambda _b: self.publish(self.channel_box.value, self.publish_box.value))
        self.value_prev.on_click(lambda _b: self.value_previous_page())
        self.value_next.on_click(lambda _b: self.value_next_page())
        self.value_page_size.observe(lambda ch: ch["new"] != self.value_limit and self.set_value_page_size(ch["new"]),
                                     names="value")
        self.format_box.observe(lambda ch: setattr(self, "value_format", ch["new"]), names="value")
        self.bulk_action_box.observe(lambda ch: setattr(self, "bulk_action", ch["new"]), names="value")
        self.bulk_ttl_box.observe(lambda ch: setattr(self, "bulk_ttl", ch["new"]), names="value")
        self.bulk_dry_button.on_click(lambda _b: self.bulk_dry_run(background=True))
        self.bulk_run_button.on_click(lambda _b: self._ask_bulk())
        self.bulk_cancel_button.on_click(lambda _b: self.bulk_cancel())

    def _root_children(self) -> list[W.Widget]:
        toolbar = W.HBox([self.pattern_box, self.type_box, self.refresh_button, self.more_button, self.all_button],
                         layout=W.Layout(flex_flow="row wrap", align_items="center"))
        pager = W.HBox([self.prev_button, self.page_label, self.next_button],
                       layout=W.Layout(align_items="center"))
        left = W.VBox([self.key_list, pager], layout=W.Layout(width="36%", min_width="260px"))
        actions = W.HBox([self.save_button, self.ttl_box, self.ttl_button, self.persist_button, self.delete_button],
                         layout=W.Layout(flex_flow="row wrap", align_items="center"))
        value_bar = W.HBox([self.value_prev, self.value_page_label, self.value_next, self.value_page_size,
                            self.format_box], layout=W.Layout(flex_flow="row wrap", align_items="center"))
        right = W.VBox([self.detail_header, value_bar,
                        W.Box([self.value_view], layout=W.Layout(max_height="330px", overflow="auto")),
                        self.edit_box, actions, self.confirm_bar],
                       layout=W.Layout(width="64%", padding="0 0 0 10px"))
        browse = W.VBox([W.HBox([left, right]),
                         W.HTML("<b class='svc-muted'>Visible keys</b>"),
                         W.Box([self.keys_table], layout=W.Layout(max_height="260px", overflow="auto"))])
        tree = W.VBox([W.HBox([self.delimiter_box, self.tree_up]),
                       W.HTML("<span class='svc-muted'>Prefixes among the keys scanned so far; "
                              "pick one to narrow the pattern.</span>"), self.tree_list])
        console = W.VBox([self.console_input,
                          W.HBox([self.console_mode, self.console_run]),
                          self.console_out, self.console_history])
        monitor = W.VBox([W.HBox([self.monitor_toggle, self.monitor_clear]),
                          self.monitor_view])
        pubsub = W.VBox([W.HBox([self.channel_box, self.subscribe_toggle]),
                         W.HBox([self.publish_box, self.publish_button]),
                         self.pubsub_view])
        bulk = W.VBox([self.bulk_target,
                       W.HBox([self.bulk_action_box, self.bulk_ttl_box, self.bulk_path_box],
                              layout=W.Layout(flex_flow="row wrap", align_items="center")),
                       W.HBox([self.bulk_dry_button, self.bulk_run_button, self.bulk_cancel_button,
                               self.bulk_progress, self.bulk_progress_label],
                              layout=W.Layout(flex_flow="row wrap", align_items="center")),
                       self.bulk_confirm, self.bulk_result,
                       W.Box([self.bulk_sample], layout=W.Layout(max_height="300px", overflow="auto"))])
        self.tabs = W.Tab(children=[browse, tree, console, monitor, pubsub, bulk])
        for i, title in enumerate(["Browse", "Key tree", "Console", "Monitor", "Pub/Sub", "Bulk"]):
            self.tabs.set_title(i, title)
        self.header = W.HTML()
        return [style_widget(), self.header, toolbar, self.status, self.msg, self.tabs]

    # ------------------------------------------------------------------ messages
    def _say(self, text: str, kind: str = "info") -> None:
        self.message_kind = kind
        self.message = text

    def _on_message(self, _change: Any = None) -> None:
        self.msg.value = message_html(self.message, self.message_kind)

    def _on_readonly(self, _change: Any = None) -> None:
        for b in (self.save_button, self.ttl_button, self.persist_button, self.delete_button):
            b.disabled = self.readonly or not self.selected
            b.tooltip = READONLY_REFUSAL if self.readonly else ""
        self.edit_box.disabled = self.readonly
        if hasattr(self, "bulk_run_button"):
            self._update_bulk_buttons()
        token = badge("Read Only token", "#b45309") if self.readonly else badge("Standard token", "#15803d")
        self.header.value = f"<div>{badge('KV explorer', '#111827')}{token}</div>"

    def _refuse_readonly(self) -> bool:
        if self.readonly:
            self._say(READONLY_REFUSAL, "error")
            return True
        return False

    # ------------------------------------------------------------------ scanning
    def _on_pattern(self, _change: Any = None) -> None:
        if self.pattern_box.value != self.pattern:
            self.pattern_box.value = self.pattern
        if self.type_box.value != self.type_filter:
            self.type_box.value = self.type_filter
        self.refresh()

    def refresh(self) -> None:
        """Start over: DBSIZE, then the first page of matches (or a direct lookup of an exact name)."""
        self._scan = KeyScan(self.pattern or None, self.type_filter or None, self.count)
        self.cursor, self.complete, self.scanned, self.page = 0, False, 0, 0
        self.matches = []
        self._say("")
        try:
            self.dbsize = int(self.kv.dbsize())
        except SvcError as exc:
            self.dbsize = 0
            self._say(f"DBSIZE failed: {_err(exc)}", "error")
        if is_exact_key(self.pattern):
            self._lookup_exact(self.pattern)
        else:
            self.scan_more()

    def _lookup_exact(self, key: str) -> None:
        try:
            found = bool(self.kv.exists(key))
        except SvcError as exc:
            self._say(f"Lookup of {key!r} failed: {_err(exc)}", "error")
            found = False
        self.complete = True
        self.matches = [key] if found else []
        if not found and not self.message:
            self._say(f"No key named {key!r}.", "info")
        self.show_page(0)
        if found:
            self.select(key)

    def _scan_steps(self, want: int, max_steps: int, count: int | None = None) -> None:
        scan = self._scan
        try:
            scan_keys(self.kv, scan, count=count or self.count, limit=want, max_calls=max_steps)
        except SvcError as exc:
            hint = " SCAN is refused for Read Only tokens: type an exact key name instead." if self.readonly else ""
            self._say(f"SCAN failed: {_err(exc)}.{hint}", "error")
            scan.complete = True
        self.cursor, self.complete = scan.cursor, scan.complete
        # COUNT hints add up past the keyspace's size: show at most DBSIZE, and all of it once complete
        walked = min(scan.scanned, self.dbsize) if self.dbsize else len(scan.keys)
        self.scanned = self.dbsize if scan.complete and self.dbsize else walked
        self.matches = list(scan.keys)
        self._update_status()

    def scan_more(self) -> None:
        """Scan until one more page of matches is found (at most ``max_steps`` SCAN calls)."""
        if self.complete:
            self._update_status()
            return
        target = (len(self.matches) // self.page_size + 1) * self.page_size
        first_fill = not self.matches
        self._scan_steps(target, self.max_steps)
        self.show_page(self.page if not first_fill else 0)

    def scan_all(self) -> None:
        """Scan to the end of the keyspace, stopping at ``scan_cap`` matches."""
        self._scan_steps(self.scan_cap, max_steps=10**9, count=max(self.count, self.scan_all_count))
        if not self.complete and len(self.matches) >= self.scan_cap:
            self._say(f"Stopped at the cap of {self.scan_cap:,} matching keys; narrow the pattern to see the rest.",
                      "info")
        self.show_page(self.page)

    def _update_status(self) -> None:
        if is_exact_key(self.pattern):
            text = f"exact lookup · {len(self.matches)} key"
        else:
            more = "" if self.complete else " · more to scan"
            text = (f"<b>{len(self.matches):,}</b> matching · scanned {self.scanned:,} of ~{self.dbsize:,} keys{more}")
        self.status.value = f'<span class="svc-muted">{text}</span>'
        self.more_button.disabled = self.complete
        self.all_button.disabled = self.complete
        self._update_tree()

    # ------------------------------------------------------------------ page + metadata
    @property
    def visible_keys(self) -> list[str]:
        start = self.page * self.page_size
        return self.matches[start:start + self.page_size]

    def show_page(self, page: int) -> None:
        pages = max(1, -(-len(self.matches) // self.page_size))
        self.page = max(0, min(page, pages - 1))
        self.describe_visible()
        self.page_label.value = f'<span class="svc-muted">page {self.page + 1} of {pages}</span>'
        self.prev_button.disabled = self.page == 0
        self.next_button.disabled = self.page >= pages - 1
        self._update_status()

    def describe_visible(self) -> pd.DataFrame:
        """TYPE, PTTL and MEMORY USAGE of the visible keys in one pipeline, then their lengths."""
        keys = self.visible_keys
        rows: list[KeyInfo] = [KeyInfo(k) for k in keys]
        try:
            rows = describe_keys(self.kv, keys)
        except SvcError as exc:
            self._say(f"Reading key metadata failed: {_err(exc)}", "error")
        self.visible_frame = frames.keys_frame(rows)
        labels = []
        for _, r in self.visible_frame.iterrows():
            t = r["type"] if isinstance(r["type"], str) else "?"
            labels.append((f"{r['key']}   [{t}]", r["key"]))
        self._setting_list = True
        try:
            self.key_list.options = labels
            self.key_list.value = self.selected if self.selected in keys else None
        finally:
            self._setting_list = False
        shown = self.visible_frame.assign(memory=self.visible_frame["memory_bytes"].map(frames.format_bytes))
        shown = shown.drop(columns=["memory_bytes", "ttl_s"])
        self.keys_table.value = frame_html(shown, max_rows=self.page_size, formatters={
            "type": lambda t: badge(t) if isinstance(t, str) else "—",
            "expires": lambda d: "no expiry" if pd.isna(d) else html.escape(format_duration(d.total_seconds())),
        })
        return self.visible_frame

    # ------------------------------------------------------------------ value viewer
    def _on_key_clicked(self, change: Any) -> None:
        if getattr(self, "_setting_list", False) or not change["new"]:
            return
        self.select(change["new"])

    def select(self, key: str) -> pd.DataFrame:
        """Show ``key``: type, TTL, memory and the first page of its value as a table."""
        self.confirm_bar.cancel()
        self.selected = key
        if self.key_list.value != key and key in self.visible_keys:
            self._setting_list = True
            self.key_list.value = key
            self._setting_list = False
        self._value_cursors = [None]
        self.value_page_number = 0
        return self._show_value()

    def value_next_page(self) -> pd.DataFrame:
        """The next page of the selected value (HSCAN / SSCAN cursor, ZRANGE / LRANGE rank, XRANGE id)."""
        if self.value_page is None or self.value_page.complete:
            return self.value_frame
        del self._value_cursors[self.value_page_number + 1:]
        self._value_cursors.append(self.value_page.next_cursor)
        self.value_page_number += 1
        return self._show_value()

    def value_previous_page(self) -> pd.DataFrame:
        """The page before, from the stack of cursors the pages so far started at."""
        if self.value_page_number == 0:
            return self.value_frame
        self.value_page_number -= 1
        return self._show_value()

    def set_value_page_size(self, size: int) -> pd.DataFrame:
        """Elements per page; the selected value starts again at its first page."""
        self.value_limit = max(1, int(size))
        return self.select(self.selected) if self.selected else self.value_frame

    @T.observe("value_limit")
    def _value_limit_changed(self, change: Any) -> None:
        if hasattr(self, "value_page_size") and self.value_page_size.value != change["new"]:
            self.value_page_size.value = change["new"]

    @T.observe("value_format")
    def _value_format_changed(self, change: Any) -> None:
        if hasattr(self, "format_box") and self.format_box.value != change["new"]:
            self.format_box.value = change["new"]
        if getattr(self, "selected", "") and hasattr(self, "value_view"):
            self._show_value()

    def _show_value(self) -> pd.DataFrame:
        key = self.selected
        cursor = self._value_cursors[self.value_page_number]
        self.formatted_value = None
        try:
            (info,) = describe_keys(self.kv, [key])
            key_type = info.type or "none"
            self.selected_type = key_type
            self.value_page = read_page(self.kv, key, key_type, cursor=cursor, count=self.value_limit)
            self.value = self.value_page.items
            self.value_frame = frames.value_frame(self.value_page)
            shown_type = key_type
            doc = json_document(self.value) if key_type == "string" else None
            if doc is not None:
                # a JSON document kept in a string (what the sandbox's JSON.* emulation stores, and
                # what many apps do): show it flattened by path, edit it as a string
                self.value_frame = frames.value_frame("json", doc)
                shown_type = "string · JSON"
            shown = self._formatted_html(key, key_type, cursor)
        except SvcError as exc:
            self._say(f"Reading {key!r} failed: {_err(exc)}", "error")
            self.value_frame = pd.DataFrame()
            self.value_view.value = ""
            return self.value_frame
        self._update_value_pager(key_type)
        if key_type == "none":
            self.detail_header.value = f"<b>{html.escape(key)}</b> {badge('none')} <span class='svc-muted'>" \
                                       "(the key does not exist any more)</span>"
            self.value_view.value = ""
            return self.value_frame
        ttl = "no expiry" if info.pttl is None or info.pttl < 0 else f"expires in {format_duration(info.pttl / 1000)}"
        mem = "" if info.memory is None else f" · {frames.format_bytes(info.memory)}"
        size = ""
        if key_type != "string":
            size = f" · {len(self.value_frame):,} rows shown"
            if not (self.value_page.complete and self.value_page_number == 0) and info.length is not None:
                size += f" of {info.length:,}"
        # the value first, the header last: a viewer that sees the new name sees the new value too
        self.value_view.value = shown if shown is not None else frame_html(self.value_frame, max_rows=self.value_limit)
        self.detail_header.value = (f"<div><b style='font-size:14px'>{html.escape(key)}</b> "
                                    f"{badge(shown_type, BADGE_COLORS.get(key_type))}"
                                    f"<span class='svc-muted'>{ttl}{mem}{size}</span></div>")
        self.edit_box.value = self._edit_text(key_type, self.value)
        editable = key_type in ("string", "hash", "ReJSON-RL")
        self._on_readonly()
        self.save_button.disabled = self.readonly or not editable
        return self.value_frame

    def _update_value_pager(self, key_type: str) -> None:
        paged = key_type in PAGED_TYPES
        page = self.value_page
        self.value_prev.disabled = not paged or self.value_page_number == 0
        self.value_next.disabled = not paged or page is None or page.complete
        if not paged:
            self.value_page_label.value = ""
            return
        first = page.start + 1 if key_type in ("list", "zset") else None
        rows = f" · rows {first:,}–{page.start + len(page):,}" if first is not None and len(page) else ""
        last = " · last page" if page.complete else ""
        self.value_page_label.value = (f'<span class="svc-muted">page {self.value_page_number + 1}'
                                       f'{rows}{last}</span>')

    def _formatted_html(self, key: str, key_type: str, cursor: Any) -> str | None:
        """The value shown through ``value_format`` (None: the plain table). Strings and the elements
        of hashes, lists, sets and sorted sets are read again as bytes, so binary encodings survive."""
        fmt = self.value_format
        if fmt == "raw" or key_type not in FORMATTED_TYPES:
            return None
        raw_kv = self.kv.as_bytes()
        if key_type == "string":
            self.formatted_value = format_value(raw_kv.get(key), fmt)
            return _formatted_block(self.formatted_value)
        page = read_page(raw_kv, key, key_type, cursor=cursor, count=self.value_limit)
        frame = frames.value_frame(page)
        column = "value" if "value" in frame.columns else "member"
        results = [format_value(v, fmt) for v in frame[column]]
        shown = frame.assign(**{c: frame[c].map(_text) for c in frame.columns if frame[c].dtype == object})
        shown[column] = [r.text if r.ok else f"⚠ {r.note}" for r in results]
        self.formatted_value = shown
        bad = sum(not r.ok for r in results)
        note = message_html(f"{bad:,} of {len(results):,} elements are not valid {fmt}.", "error") if bad else ""
        return note + frame_html(shown, max_rows=self.value_limit)

    @staticmethod
    def _edit_text(key_type: str, value: Any) -> str:
        if key_type == "string":
            return "" if value is None else str(value)
        if key_type == "hash":
            return json.dumps(value, indent=1, ensure_ascii=False)
        if key_type == "ReJSON-RL":
            doc = json.loads(value) if isinstance(value, str) else value
            if isinstance(doc, list) and len(doc) == 1:
                doc = doc[0]
            return json.dumps(doc, indent=1, ensure_ascii=False)
        return ""

    # ------------------------------------------------------------------ edits (confirmed)
    def _ask(self, question: str, action: Any, label: str) -> None:
        if not self.selected:
            self._say("Select a key first.", "error")
            return
        if self._refuse_readonly():
            return
        self.confirm_bar.ask(question, action, label)

    def _write(self, description: str, action: Any) -> bool:
        if self._refuse_readonly():
            return False
        try:
            action()
        except SvcError as exc:
            self._say(f"{description} was refused: {_err(exc)}", "error")
            return False
        self._say(f"{description}: done.", "ok")
        return True

    def save_value(self, text: str) -> bool:
        """Write ``text`` as the new value of the selected string, JSON or hash key (TTL kept)."""
        key, t = self.selected, self.selected_type
        if t == "string" and json_document(self.value) is not None and json_document(text) is None:
            self._say("Not valid JSON: this key holds a JSON document; write a JSON object or array.", "error")
            return False
        if t == "string":
            ok = self._write(f"SET {key}", lambda: self.kv.set(key, text, keepttl=True))
        elif t == "ReJSON-RL":
            try:
                doc = json.loads(text)
            except ValueError as exc:
                self._say(f"Not valid JSON: {exc}", "error")
                return False
            ok = self._write(f"JSON.SET {key}", lambda: self.kv.json_set(key, "$", doc))
        elif t == "hash":
            fields = json_document(text.strip())
            if not isinstance(fields, dict) or not fields:
                self._say("A hash is edited as a JSON object of field: value pairs.", "error")
                return False
            mapping = {str(f): str(v) for f, v in fields.items()}
            ok = self._write(f"HSET {key}", lambda: self.kv.hset(key, mapping=mapping))
        else:
            self._say(f"Values of type {t or 'unknown'} are edited in the Console tab.", "error")
            return False
        if ok:
            self.select(key)
        return ok

    def set_ttl(self, seconds: int | None) -> bool:
        """EXPIRE the selected key (``None`` or a negative value: PERSIST)."""
        key = self.selected
        if seconds is None or seconds < 0:
            ok = self._write(f"PERSIST {key}", lambda: self.kv.persist(key))
        else:
            ok = self._write(f"EXPIRE {key} {seconds}", lambda: self.kv.expire(key, int(seconds)))
        if ok:
            self.select(key)
            self.describe_visible()
        return ok

    def delete_key(self) -> bool:
        key = self.selected
        ok = self._write(f"DEL {key}", lambda: self.kv.delete(key))
        if ok:
            if key in self._scan.keys:
                self._scan.keys.remove(key)
            self.matches = [k for k in self.matches if k != key]
            self.selected = ""
            self._on_readonly()
            self.detail_header.value = f"<span class='svc-muted'>{html.escape(key)} was deleted.</span>"
            self.value_view.value = ""
            self.edit_box.value = ""
            self.show_page(self.page)
        return ok

    # ------------------------------------------------------------------ key tree
    def tree(self) -> list[tuple[str, int]]:
        """Next-level prefixes (by ``delimiter``) among the keys found so far, with counts."""
        base = self.pattern[:-1] if self.pattern.endswith("*") and not (set(self.pattern[:-1]) & GLOB_CHARS) else ""
        counts: Counter[str] = Counter()
        d = self.delimiter
        for k in self.matches:
            rest = k.removeprefix(base)
            head, sep, _ = rest.partition(d) if d else (rest, "", "")
            counts[base + head + (sep if sep else "")] += 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def _update_tree(self) -> None:
        options = [(f"{prefix}{'*' if prefix.endswith(self.delimiter) and self.delimiter else ''}   ({n:,})", prefix)
                   for prefix, n in self.tree()[:500]]
        self._setting_tree = True
        try:
            self.tree_list.options = options
            self.tree_list.value = None
        finally:
            self._setting_tree = False

    def _on_tree_clicked(self, change: Any) -> None:
        if getattr(self, "_setting_tree", False) or not change["new"]:
            return
        prefix = change["new"]
        self.pattern = prefix + "*" if self.delimiter and prefix.endswith(self.delimiter) else prefix
        if self.delimiter and prefix.endswith(self.delimiter):
            self.bulk_node(prefix)

    def tree_up_level(self) -> None:
        base = self.pattern.rstrip("*")
        d = self.delimiter
        if d and base.endswith(d):
            base = base[: -len(d)]
        cut = base.rfind(d) if d else -1
        self.pattern = base[: cut + len(d)] + "*" if cut >= 0 else "*"

    @T.observe("delimiter")
    def _delimiter_changed(self, _change: Any) -> None:
        if hasattr(self, "tree_list"):
            self._update_tree()

    # ------------------------------------------------------------------ bulk actions
    def _on_bulk_target(self, _change: Any = None) -> None:
        self.bulk_pattern = self.pattern or "*"

    def bulk_node(self, prefix: str) -> None:
        """Aim the Bulk tab at a key-tree node: every key under ``prefix`` (glob characters escaped)."""
        self.bulk_pattern = pattern_for_prefix(prefix, self.delimiter)

    @T.observe("bulk_pattern")
    def _bulk_pattern_changed(self, _change: Any) -> None:
        if not hasattr(self, "bulk_target"):
            return
        # a dry run counted another pattern: it says nothing about this one
        self.bulk_plan = None
        if self.bulk_state in ("planned", "done", "cancelled", "failed"):
            self.bulk_state = "idle"
            self.bulk_text = ""
            self.bulk_sample.value = ""
            self.bulk_result.value = ""
        self.bulk_target.value = (f"<div>Bulk actions on every key matching <code>{html.escape(self.bulk_pattern)}"
                                  "</code> <span class='svc-muted'>(the pattern above, or the node picked in the "
                                  "Key tree). Dry run first: it counts and samples what will be touched.</span></div>")

    @T.observe("bulk_action")
    def _bulk_action_changed(self, change: Any) -> None:
        if not hasattr(self, "bulk_action_box"):
            return
        if change["new"] not in BULK_ACTIONS:
            self.bulk_action = change["old"]
            self._say(f"Unknown bulk action {change['new']!r}: choose one of {', '.join(BULK_ACTIONS)}.", "error")
            return
        if self.bulk_action_box.value != change["new"]:
            self.bulk_action_box.value = change["new"]
        action, fmt = BULK_ACTIONS[change["new"]]
        self.bulk_ttl_box.layout.display = "flex" if action == "expire" else "none"
        self.bulk_path_box.layout.display = "flex" if fmt in ("csv", "jsonl") else "none"
        if fmt in ("csv", "jsonl"):
            self.bulk_path_box.value = str(Path(self.bulk_path_box.value or "kv-export").with_suffix(f".{fmt}"))

    @T.observe("bulk_ttl")
    def _bulk_ttl_changed(self, change: Any) -> None:
        if hasattr(self, "bulk_ttl_box") and self.bulk_ttl_box.value != change["new"]:
            self.bulk_ttl_box.value = change["new"]

    @T.observe("bulk_state")
    def _bulk_state_changed(self, _change: Any) -> None:
        if hasattr(self, "bulk_run_button"):
            self._update_bulk_buttons()

    @T.observe("bulk_text")
    def _bulk_text_changed(self, _change: Any) -> None:
        if hasattr(self, "bulk_result"):
            kind = {"failed": "error", "cancelled": "error", "done": "ok"}.get(self.bulk_state, "info")
            if self.bulk_summary is not None and self.bulk_state == "done" and self.bulk_summary.failed:
                kind = "error"
            self.bulk_result.value = message_html(self.bulk_text, kind)

    def _update_bulk_buttons(self) -> None:
        busy = self.bulk_state in ("planning", "running")
        for b in (self.bulk_dry_button, self.bulk_run_button):
            b.disabled = self.readonly or busy
            b.tooltip = BULK_READONLY_REFUSAL if self.readonly else ""
        self.bulk_action_box.disabled = busy
        self.bulk_cancel_button.disabled = not busy
        if self.readonly:
            self.bulk_result.value = message_html(BULK_READONLY_REFUSAL, "error")

    @property
    def bulk_running(self) -> bool:
        return self._bulk_thread is not None and self._bulk_thread.is_alive()

    def _bulk_refused(self) -> bool:
        if self.readonly:
            self.bulk_state = "failed"
            self.bulk_error = BULK_READONLY_REFUSAL
            self.bulk_text = BULK_READONLY_REFUSAL
            return True
        if self.bulk_running:
            self._say("A bulk dry run or run is already in progress: wait for it or cancel it.", "error")
            return True
        return False

    def _in_background(self, work: Any, background: bool) -> None:
        self._bulk_cancel.clear()

        def guarded() -> None:
            # an unexpected failure must not leave the tab "running" with its buttons disabled
            try:
                work()
            except Exception as exc:  # noqa: BLE001 - shown in the tab, the thread ends
                self.bulk_error = f"{type(exc).__name__}: {_err(exc)}"
                self.bulk_state = "failed"
                self.bulk_text = f"Bulk {self.bulk_action} failed: {self.bulk_error}"

        if not background:
            guarded()
            return
        self._bulk_thread = threading.Thread(target=guarded, daemon=True, name="svckit-bulk")
        self._bulk_thread.start()

    def bulk_wait(self, timeout: float | None = None) -> bool:
        """Wait for a background dry run or run; True when none is running any more."""
        if self._bulk_thread is not None:
            self._bulk_thread.join(timeout)
        return not self.bulk_running

    def bulk_cancel(self) -> None:
        """Stop the dry run or run in progress between two SCAN calls or batches."""
        self._bulk_cancel.set()

    def bulk_dry_run(self, background: bool = False) -> BulkPlan | None:
        """Count and sample the keys matching ``bulk_pattern`` (SCAN in bounded steps, progress in
        ``bulk_progress``); writes nothing. ``background=True`` runs it in a thread (the button does)."""
        if self._bulk_refused():
            return None
        pattern = self.bulk_pattern
        self.bulk_state, self.bulk_error, self.bulk_plan = "planning", "", None
        self.bulk_text = f"Dry run: scanning for {pattern}…"
        self.bulk_sample.value = ""
        try:
            total = max(1, int(self.kv.dbsize()))
        except SvcError:
            total = 1
        self.bulk_progress.max, self.bulk_progress.value = total, 0

        def progress(plan: BulkPlan) -> None:
            self.bulk_progress.value = min(total, plan.calls * self.scan_all_count)
            self.bulk_progress_label.value = f'<span class="svc-muted">{plan.count:,} matching so far</span>'

        def work() -> None:
            try:
                plan = plan_bulk(self.kv, pattern, type=self.type_filter or None, sample=20,
                                 scan_count=self.scan_all_count, cancel=self._bulk_cancel, progress=progress)
                infos = describe_keys(self.kv, plan.sample, lengths=False)
            except SvcError as exc:
                self.bulk_error = _err(exc)
                self.bulk_state = "failed"
                self.bulk_text = f"Dry run failed: {self.bulk_error}"
                return
            self.bulk_plan = plan
            self.bulk_progress.value = total if plan.complete else self.bulk_progress.value
            sample = frames.keys_frame(infos).drop(columns=["memory_bytes", "ttl_s", "length"], errors="ignore")
            self.bulk_sample.value = ("<b class='svc-muted'>Sample of the keys it will touch</b>"
                                      + frame_html(sample, formatters={
                                          "type": lambda t: badge(t) if isinstance(t, str) else "—",
                                          "expires": lambda d: "no expiry" if pd.isna(d)
                                          else html.escape(format_duration(d.total_seconds()))}))
            self.bulk_state = "planned" if plan.complete else "cancelled"
            stopped = "" if plan.complete else " (cancelled before the end: at least that many)"
            calls = f"{plan.calls:,} SCAN call{'' if plan.calls == 1 else 's'}"
            self.bulk_text = (f"Dry run: {plan.count:,} keys match {pattern}{stopped} · {calls} "
                              f"in {plan.elapsed:.1f} s. Choose an action and Run.")
            self.bulk_progress_label.value = f'<span class="svc-muted">{plan.count:,} matching</span>'

        self._in_background(work, background)
        return self.bulk_plan

    def _bulk_question(self) -> str:
        action, fmt = BULK_ACTIONS[self.bulk_action]
        n = f"{self.bulk_plan.count:,}" if self.bulk_plan is not None else "every"
        what = {"delete": f"Delete {n} keys", "expire": f"Set a TTL of {self.bulk_ttl:,} s on {n} keys",
                "persist": f"Clear the TTL of {n} keys", "export": f"Export {n} keys"}[action]
        where = f" to {self.bulk_path_box.value}" if fmt in ("csv", "jsonl") else ""
        undo = " This cannot be undone." if action == "delete" else ""
        return f"{what} matching {self.bulk_pattern}{where}?{undo}"

    def _ask_bulk(self) -> None:
        if self._bulk_refused():
            return
        if self.bulk_plan is None:
            self.bulk_text = "Run a dry run first: it counts and samples what the action will touch."
            return
        self.bulk_confirm.ask(self._bulk_question(), lambda: self.bulk_run(background=True), "Run")

    def bulk_run(self, background: bool = False) -> BulkSummary | None:
        """Run ``bulk_action`` on every key matching ``bulk_pattern`` in pipelines of ``bulk_batch``
        keys (progress in ``bulk_progress``; ``bulk_cancel()`` stops between batches). The result
        lands in ``bulk_summary`` / ``bulk_text`` (and ``bulk_frame`` for a DataFrame export).
        Refused under a Read Only token. Not confirmed here: the Run button asks first."""
        if self._bulk_refused():
            return None
        action, fmt = BULK_ACTIONS[self.bulk_action]
        plan = self.bulk_plan if self.bulk_plan is not None and self.bulk_plan.pattern == self.bulk_pattern else None
        target: str | BulkPlan = plan if plan is not None else self.bulk_pattern
        self.bulk_state, self.bulk_error, self.bulk_summary = "running", "", None
        self.bulk_text = f"Running {self.bulk_action} on {self.bulk_pattern}…"
        self.bulk_progress.max = max(1, plan.count if plan is not None else int(self.dbsize or 1))
        self.bulk_progress.value = 0
        path = self.bulk_path_box.value if fmt in ("csv", "jsonl") else None

        def progress(summary: BulkSummary) -> None:
            touched = summary.done + summary.skipped + summary.failed
            self.bulk_progress.max = max(self.bulk_progress.max, touched)
            self.bulk_progress.value = touched
            self.bulk_progress_label.value = (f'<span class="svc-muted">{touched:,} of '
                                              f'{self.bulk_progress.max:,} · {summary.batches:,} batches</span>')

        def work() -> None:
            try:
                summary = run_bulk(self.kv, action, target, type=None if plan is not None else self.type_filter or None,
                                   seconds=self.bulk_ttl, format=fmt or "jsonl", path=path, batch=self.bulk_batch,
                                   scan_count=self.scan_all_count, cancel=self._bulk_cancel, progress=progress)
            except SvcError as exc:
                self.bulk_error = _err(exc)
                self.bulk_state = "failed"
                self.bulk_text = f"{self.bulk_action} failed: {self.bulk_error}"
                return
            self.bulk_summary = summary
            self.bulk_frame = summary.frame
            if summary.frame is not None:
                self.bulk_sample.value = ("<b class='svc-muted'>Exported (first rows)</b>"
                                          + frame_html(summary.frame, max_rows=20))
            errors = "".join(f"<br>{html.escape(str(k))}: {html.escape(v)}" for k, v in
                             list(summary.errors.items())[:5])
            self.bulk_state = "cancelled" if summary.cancelled else "done"
            self.bulk_text = summary.text()
            if errors:
                self.bulk_result.value += f'<div class="svc-msg error">First errors:{errors}</div>'
            self.bulk_plan = None  # the keyspace changed: a new run needs a new dry run
            if action == "delete":
                self.refresh()

        self._in_background(work, background)
        return self.bulk_summary

    # ------------------------------------------------------------------ console
    def run_command(self, text: str, mode: str = "single") -> Any:
        """Run ``text`` (one command, or one per line) and show the reply; returns it."""
        lines = [line for line in (text or "").splitlines() if line.strip()]
        if not lines:
            self.console_out.value = message_html("Type a command, e.g. GET greeting", "info")
            return None
        try:
            commands = [shlex.split(line) for line in lines]
        except ValueError as exc:
            self.console_out.value = message_html(f"Cannot parse the command: {exc}", "error")
            return None
        self.history = [text, *[h for h in self.history if h != text]][:50]
        self._setting_history = True
        self.console_history.options = self.history
        self.console_history.value = None
        self._setting_history = False
        try:
            if mode == "single":
                if len(commands) > 1:
                    self.console_out.value = message_html("Single mode runs one command; choose pipeline.", "error")
                    return None
                result = self.kv.execute(*commands[0])
                self.last_result = result
                shown = json.dumps(result, indent=1, ensure_ascii=False, default=str)
                self.console_out.value = f'<pre class="svc-log">{html.escape(shown)}</pre>'
                return result
            batch = self.kv.pipeline() if mode == "pipeline" else self.kv.multi_exec()
            for cmd in commands:
                batch.command(*cmd)
            results = batch.exec()
            frame = frames.pipeline_frame(results, commands)
            self.last_result = frame
            self.console_out.value = frame_html(frame, formatters={
                "ok": lambda ok: badge("ok", "#16a34a") if ok else badge("error", "#dc2626")})
            return frame
        except TransactionDiscarded as exc:
            self.last_result = exc
            self.console_out.value = message_html(f"Transaction discarded, nothing ran: {_err(exc)}", "error")
        except SvcError as exc:
            self.last_result = exc
            self.console_out.value = message_html(f"Error: {_err(exc)}", "error")
        return None

    def _on_history_clicked(self, change: Any) -> None:
        if getattr(self, "_setting_history", False) or not change["new"]:
            return
        self.console_input.value = change["new"]

    # ------------------------------------------------------------------ monitor + pub/sub
    @staticmethod
    def _format_monitor_event(ev: Any) -> str:
        when = ev.time.strftime("%H:%M:%S.%f")[:-3] if getattr(ev, "time", None) else ""
        args = " ".join(json.dumps(str(a), ensure_ascii=False) for a in (ev.args or []))
        return f"{when} [{ev.db} {ev.client}] {ev.command} {args}".rstrip()

    @staticmethod
    def _format_message(msg: Any) -> str:
        if msg.kind == "subscribe":
            return f"subscribed to {msg.channel} ({msg.count} subscription(s))"
        return f"{msg.channel} ← {msg.data}"

    def start_monitor(self) -> None:
        self.monitor_view.value = '<div class="svc-muted">Monitor is starting…</div>'
        self.monitor.start(self.kv.monitor)
        self.monitor_toggle.description = "Stop monitor"
        if not self.monitor_toggle.value:
            self.monitor_toggle.value = True

    def stop_monitor(self) -> bool:
        ended = self.monitor.stop()
        self.monitor_toggle.description = "Start monitor"
        if self.monitor_toggle.value:
            self.monitor_toggle.value = False
        return ended

    def _on_monitor_toggle(self, change: Any) -> None:
        if change["new"] and not self.monitor.running:
            self.start_monitor()
        elif not change["new"] and self.monitor.running:
            self.stop_monitor()

    def subscribe(self, channel: str | None = None) -> None:
        channel = channel or self.channel_box.value
        self.channel_box.value = channel
        self.pubsub_view.value = f'<div class="svc-muted">Subscribing to {html.escape(channel)}…</div>'
        self.pubsub.start(lambda: self.kv.subscribe(channel))
        self.subscribe_toggle.description = "Unsubscribe"
        if not self.subscribe_toggle.value:
            self.subscribe_toggle.value = True

    def unsubscribe(self) -> bool:
        ended = self.pubsub.stop()
        self.subscribe_toggle.description = "Subscribe"
        if self.subscribe_toggle.value:
            self.subscribe_toggle.value = False
        return ended

    def _on_subscribe_toggle(self, change: Any) -> None:
        if change["new"] and not self.pubsub.running:
            self.subscribe()
        elif not change["new"] and self.pubsub.running:
            self.unsubscribe()

    def publish(self, channel: str, message: str) -> int | None:
        try:
            n = self.kv.publish(channel, message)
        except SvcError as exc:
            self._say(f"PUBLISH failed: {_err(exc)}", "error")
            return None
        self._say(f"Published to {channel}: {n} subscriber(s) received it.", "ok")
        return n

    def close(self) -> None:
        """Stop the streams, then close the widget."""
        self.monitor.stop()
        self.pubsub.stop()
        self.bulk_cancel()
        super().close()
