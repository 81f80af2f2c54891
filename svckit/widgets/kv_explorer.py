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
from collections import Counter
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit.errors import SvcError, TransactionDiscarded
from svckit.kv.keyspace import KeyInfo, KeyScan, describe_keys, read_page, scan_keys
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
TYPE_CHOICES = [("any type", ""), ("string", "string"), ("hash", "hash"), ("list", "list"), ("set", "set"),
                ("zset", "zset"), ("stream", "stream"), ("JSON", "ReJSON-RL")]
READONLY_REFUSAL = "This explorer uses a Read Only token: editing, TTL changes and deletes are disabled."


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

    def __init__(self, kv: Any, *, pattern: str = "*", autorefresh: bool = True, **traits: Any) -> None:
        self.kv = kv
        self.visible_frame = frames.keys_frame([])
        self.value = None
        self.value_page: Any = None
        self.value_frame = pd.DataFrame()
        self._scan = KeyScan()
        self.last_result: Any = None
        self._build()
        super().__init__(self._root_children(), **traits)
        self.add_class("svc-kv-explorer")
        self.readonly = bool(getattr(kv, "readonly", False))
        self.set_trait("pattern", pattern)
        self.pattern_box.value = pattern
        self.observe(self._on_pattern, names=["pattern", "type_filter"])
        self.observe(self._on_message, names=["message", "message_kind"])
        self.observe(self._on_readonly, names=["readonly"])
        self._on_readonly()
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

    def _root_children(self) -> list[W.Widget]:
        toolbar = W.HBox([self.pattern_box, self.type_box, self.refresh_button, self.more_button, self.all_button],
                         layout=W.Layout(flex_flow="row wrap", align_items="center"))
        pager = W.HBox([self.prev_button, self.page_label, self.next_button],
                       layout=W.Layout(align_items="center"))
        left = W.VBox([self.key_list, pager], layout=W.Layout(width="36%", min_width="260px"))
        actions = W.HBox([self.save_button, self.ttl_box, self.ttl_button, self.persist_button, self.delete_button],
                         layout=W.Layout(flex_flow="row wrap", align_items="center"))
        right = W.VBox([self.detail_header,
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
        self.tabs = W.Tab(children=[browse, tree, console, monitor, pubsub])
        for i, title in enumerate(["Browse", "Key tree", "Console", "Monitor", "Pub/Sub"]):
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
        """Show ``key``: type, TTL, memory and its value as a table."""
        self.confirm_bar.cancel()
        self.selected = key
        if self.key_list.value != key and key in self.visible_keys:
            self._setting_list = True
            self.key_list.value = key
            self._setting_list = False
        try:
            (info,) = describe_keys(self.kv, [key])
            key_type = info.type or "none"
            self.selected_type = key_type
            self.value_page = read_page(self.kv, key, key_type, count=self.value_limit)
            self.value = self.value_page.items
            self.value_frame = frames.value_frame(self.value_page)
            shown_type = key_type
            doc = json_document(self.value) if key_type == "string" else None
            if doc is not None:
                # a JSON document kept in a string (what the sandbox's JSON.* emulation stores, and
                # what many apps do): show it flattened by path, edit it as a string
                self.value_frame = frames.value_frame("json", doc)
                shown_type = "string · JSON"
        except SvcError as exc:
            self._say(f"Reading {key!r} failed: {_err(exc)}", "error")
            self.value_frame = pd.DataFrame()
            self.value_view.value = ""
            return self.value_frame
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
            if not self.value_page.complete and info.length is not None:
                size += f" of {info.length:,}"
        # the value first, the header last: a viewer that sees the new name sees the new value too
        self.value_view.value = frame_html(self.value_frame, max_rows=self.value_limit)
        self.detail_header.value = (f"<div><b style='font-size:14px'>{html.escape(key)}</b> "
                                    f"{badge(shown_type, BADGE_COLORS.get(key_type))}"
                                    f"<span class='svc-muted'>{ttl}{mem}{size}</span></div>")
        self.edit_box.value = self._edit_text(key_type, self.value)
        editable = key_type in ("string", "hash", "ReJSON-RL")
        self._on_readonly()
        self.save_button.disabled = self.readonly or not editable
        return self.value_frame

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
        super().close()
