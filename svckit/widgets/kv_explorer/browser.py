"""The explorer's key browser: a pattern and a type, SCAN in bounded steps, the keys one page at a time
with their type, TTL, memory and length.

Staying responsive on millions of keys comes down to never asking for "everything":
- SCAN runs in bounded steps (``count`` per call, at most ``max_steps`` calls per "scan more") and
  stops as soon as a page of matches is found; "scan all" stops at ``scan_cap`` matches.
- TYPE, PTTL and MEMORY USAGE are fetched only for the visible page, in one pipeline (plus one more
  pipeline for the lengths, whose command depends on the type).
- A pattern without glob characters is an exact key name: it is looked up directly (no SCAN).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit._inflight import InFlight
from svckit._units import duration_text
from svckit.errors import SvcError
from svckit.kv.keyspace import KeyInfo, KeyScan, describe_keys, scan_keys
from svckit.widgets._common import (
    MessageBar,
    Quiet,
    badge,
    error_text,
    frame_html,
    muted_html,
)

GLOB_CHARS = set("*?[")
TYPE_CHOICES = [("any type", ""), ("string", "string"), ("hash", "hash"), ("list", "list"), ("set", "set"),
                ("zset", "zset"), ("stream", "stream"), ("JSON", "ReJSON-RL")]


def is_exact_key(pattern: str) -> bool:
    """A pattern with no glob characters names one key."""
    return bool(pattern) and not (set(pattern) & GLOB_CHARS)


def keys_table_html(frame: pd.DataFrame, max_rows: int = 200, drop: Sequence[str] = ()) -> str:
    """Keys with their metadata (:func:`svckit.frames.keys_frame`) as a table: type badges, readable TTL
    and memory (``drop``: columns left out)."""
    shown = frame.assign(memory=frame["memory_bytes"].map(frames.format_bytes))
    shown = shown.drop(columns=["memory_bytes", "ttl_s", *drop])
    return frame_html(shown, max_rows=max_rows, formatters={
        "type": lambda t: badge(t) if isinstance(t, str) else "—",
        "expires": lambda d: "no expiry" if pd.isna(d) else html.escape(duration_text(d.total_seconds())),
    })


class ScanState(T.HasTraits):
    """What the key browser scans and has found (the explorer shows the same traits)."""

    pattern = T.Unicode("*")
    type_filter = T.Unicode("")
    count = T.Int(1000, help="COUNT hint per SCAN call")
    scan_all_count = T.Int(10_000, help="COUNT hint per SCAN call of 'scan all' (fewer round trips)")
    page_size = T.Int(25, help="rows shown (and described) at once")
    max_steps = T.Int(50, help="SCAN calls per 'scan more' at most")
    scan_cap = T.Int(10_000, help="matches at which 'scan all' stops")
    # no per-element trait: validating a million strings on every assignment would dominate scan-all
    matches = T.List(help="matching keys found so far, in SCAN order")
    page = T.Int(0)
    cursor = T.Int(0)
    complete = T.Bool(False)
    scanned = T.Int(0, help="keys SCAN walked over (approximate: steps x COUNT, capped at DBSIZE)")
    dbsize = T.Int(0)
    selected = T.Unicode("")
    readonly = T.Bool(False)


class KeyBrowser(ScanState, W.VBox):
    """The toolbar (pattern, type, Refresh, Scan more, Scan all), the key list and its pages, and the
    table of the visible keys. ``selected`` is the key shown as picked; ``on_pick(key)`` is called
    when the user picks one (or an exact pattern finds its key)."""

    def __init__(self, kv: Any, messages: MessageBar, **kwargs: Any) -> None:
        self.kv = kv
        self.messages = messages
        self.on_pick: Callable[[str], Any] = lambda key: setattr(self, "selected", key)
        self.visible_frame = frames.keys_frame([])
        self._scan = KeyScan()
        self._quiet = Quiet()
        self.pattern_box = W.Text(description="Pattern", placeholder="user:* or an exact key",
                                  continuous_update=False, layout=W.Layout(width="320px"))
        self.type_box = W.Dropdown(options=TYPE_CHOICES, value="", description="Type", layout=W.Layout(width="190px"))
        self.refresh_button = W.Button(description="Refresh", icon="refresh", layout=W.Layout(width="100px"))
        self.more_button = W.Button(description="Scan more", icon="forward", layout=W.Layout(width="110px"))
        self.all_button = W.Button(description="Scan all (capped)", icon="fast-forward", layout=W.Layout(width="170px"))
        self.status = W.HTML()
        self.key_list = W.Select(options=[], rows=18, layout=W.Layout(width="100%"))
        self.prev_button = W.Button(icon="chevron-left", layout=W.Layout(width="36px"), tooltip="previous page")
        self.next_button = W.Button(icon="chevron-right", layout=W.Layout(width="36px"), tooltip="next page")
        self.page_label = W.HTML()
        self.keys_table = W.HTML()
        for w, css in ((self.pattern_box, "svc-pattern"), (self.status, "svc-scan-status"),
                       (self.key_list, "svc-key-list")):
            w.add_class(css)
        self.toolbar = W.HBox([self.pattern_box, self.type_box, self.refresh_button, self.more_button,
                               self.all_button], layout=W.Layout(flex_flow="row wrap", align_items="center"))
        pager = W.HBox([self.prev_button, self.page_label, self.next_button], layout=W.Layout(align_items="center"))
        super().__init__([self.key_list, pager], **kwargs)
        T.dlink((self.pattern_box, "value"), (self, "pattern"), lambda text: text.strip() or "*")
        T.dlink((self, "pattern"), (self.pattern_box, "value"))
        T.link((self.type_box, "value"), (self, "type_filter"))
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.more_button.on_click(lambda _b: self.scan_more())
        self.all_button.on_click(lambda _b: self.scan_all())
        self.prev_button.on_click(lambda _b: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _b: self.show_page(self.page + 1))
        self.key_list.observe(self._on_key_clicked, names="value")

    # -- scanning ------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Start over: the first page of matches (or a direct lookup of an exact name), with DBSIZE
        asked beside the first SCAN, not before it: one round trip fewer far from the service."""
        self._scan = KeyScan(self.pattern or None, self.type_filter or None, self.count)
        self.cursor, self.complete, self.scanned, self.page = 0, False, 0, 0
        self.matches = []
        self.messages.say("")
        with InFlight(1) as beside:
            beside.submit(self._dbsize, then=self._took_dbsize)
            if is_exact_key(self.pattern):
                found = self._exists(self.pattern)
            else:
                self._scan_steps(self.page_size, self.max_steps)
        if is_exact_key(self.pattern):
            self._show_exact(self.pattern, found)
        else:
            self.show_page(0)

    def _dbsize(self) -> int | SvcError:
        try:
            return int(self.kv.dbsize())
        except SvcError as exc:
            return exc

    def _took_dbsize(self, reply: int | SvcError) -> None:
        self.dbsize = reply if isinstance(reply, int) else 0
        if isinstance(reply, SvcError):
            self.messages.say(f"DBSIZE failed: {error_text(reply)}", "error")

    def _exists(self, key: str) -> bool:
        try:
            return bool(self.kv.exists(key))
        except SvcError as exc:
            self.messages.say(f"Lookup of {key!r} failed: {error_text(exc)}", "error")
            return False

    def _show_exact(self, key: str, found: bool) -> None:
        self.complete = True
        self.matches = [key] if found else []
        if not found and not self.messages.message:
            self.messages.say(f"No key named {key!r}.", "info")
        self.show_page(0)
        if found:
            self.on_pick(key)

    def _scan_steps(self, want: int, max_steps: int, count: int | None = None) -> None:
        scan = self._scan
        try:
            scan_keys(self.kv, scan, count=count or self.count, limit=want, max_calls=max_steps)
        except SvcError as exc:
            hint = " SCAN is refused for Read Only tokens: type an exact key name instead." if self.readonly else ""
            self.messages.say(f"SCAN failed: {error_text(exc)}.{hint}", "error")
            scan.complete = True
        self.cursor, self.complete = scan.cursor, scan.complete
        self.matches = list(scan.keys)

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
            self.messages.say(f"Stopped at the cap of {self.scan_cap:,} matching keys; narrow the pattern to see "
                              "the rest.", "info")
        self.show_page(self.page)

    def remove(self, key: str) -> None:
        """Forget a key that was deleted."""
        if key in self._scan.keys:
            self._scan.keys.remove(key)
        self.matches = [k for k in self.matches if k != key]
        self.show_page(self.page)

    def _update_status(self) -> None:
        # COUNT hints add up past the keyspace's size: show at most DBSIZE, and all of it once complete
        scan = self._scan
        walked = min(scan.scanned, self.dbsize) if self.dbsize else len(scan.keys)
        self.scanned = self.dbsize if scan.complete and self.dbsize else walked
        if is_exact_key(self.pattern):
            text = f"exact lookup · {len(self.matches)} key"
        else:
            more = "" if self.complete else " · more to scan"
            text = f"<b>{len(self.matches):,}</b> matching · scanned {self.scanned:,} of ~{self.dbsize:,} keys{more}"
        self.status.value = f'<span class="svc-muted">{text}</span>'
        self.more_button.disabled = self.complete
        self.all_button.disabled = self.complete

    # -- the visible page ----------------------------------------------------------------------------
    @property
    def visible_keys(self) -> list[str]:
        start = self.page * self.page_size
        return self.matches[start:start + self.page_size]

    def show_page(self, page: int) -> None:
        pages = max(1, -(-len(self.matches) // self.page_size))
        self.page = max(0, min(page, pages - 1))
        self.describe_visible()
        self.page_label.value = muted_html(f"page {self.page + 1} of {pages}")
        self.prev_button.disabled = self.page == 0
        self.next_button.disabled = self.page >= pages - 1
        self._update_status()

    def describe_visible(self) -> pd.DataFrame:
        """TYPE, PTTL, MEMORY USAGE and length of the visible keys, in one request."""
        keys = self.visible_keys
        rows: list[KeyInfo] = [KeyInfo(k) for k in keys]
        try:
            rows = describe_keys(self.kv, keys)
        except SvcError as exc:
            self.messages.say(f"Reading key metadata failed: {error_text(exc)}", "error")
        self.visible_frame = frames.keys_frame(rows)
        labels = [(f"{r.key}   [{r.type if isinstance(r.type, str) else '?'}]", r.key)
                  for r in self.visible_frame.itertuples()]
        with self._quiet:
            self.key_list.options = labels
            self.key_list.value = self.selected if self.selected in keys else None
        self.keys_table.value = keys_table_html(self.visible_frame, max_rows=self.page_size)
        return self.visible_frame

    def _on_key_clicked(self, change: Any) -> None:
        if not self._quiet and change["new"]:
            self.on_pick(change["new"])

    @T.observe("selected")
    def _selected_changed(self, change: Any) -> None:
        if change["new"] in self.visible_keys and self.key_list.value != change["new"]:
            with self._quiet:
                self.key_list.value = change["new"]
