"""The explorer's key browser: a pattern and a type, SCAN in bounded steps, the keys one page at a time
with their type, TTL, memory and length.

Staying responsive on millions of keys comes down to never asking for "everything":
- SCAN runs in bounded steps (``count`` per call, at most ``max_steps`` calls per "scan more") and
  stops as soon as a page of matches is found; "scan all" stops at ``scan_cap`` matches.
- TYPE, PTTL and MEMORY USAGE are fetched only for the visible page, in one pipeline (plus one more
  pipeline for the lengths, whose command depends on the type).
- A word without glob characters is searched for as RedisInsight does, anywhere in the key name
  (``user`` scans ``*user*``, and the status says so); a key of exactly that name is also looked
  up directly beside the first SCAN and picked. Under a Read Only token, which may not SCAN, the
  word is only looked up by its exact name.
- The keys found are listed once, in natural order (``user:2`` before ``user:10``), each with its
  type, TTL, memory and length, in one selectable list.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit._inflight import InFlight
from svckit._progress import Cancel
from svckit._units import plural
from svckit.errors import SvcError
from svckit.kv.keyspace import KeyInfo, KeyScan, describe_keys, scan_keys
from svckit.widgets._common import MessageBar, Quiet, error_text, muted_html, one_of, positive
from svckit.widgets._jobs import BackgroundJob
from svckit.widgets.kv_explorer.listing import (
    LIST_STYLE,
    TYPE_CHOICES,
    is_exact_key,
    key_list_labels,
    keys_table_html,
    natural_key,
    scan_text,
    search_glob,
)

__all__ = ["KeyBrowser", "ScanState"]

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
    matches = T.List(help="matching keys found so far, in natural order")
    glob = T.Unicode("*", help="the SCAN pattern of ``pattern``: a plain word w is searched as *w*")
    page = T.Int(0)
    cursor = T.Int(0)
    complete = T.Bool(False)
    scanned = T.Int(0, help="keys SCAN walked over (approximate: steps x COUNT, capped at DBSIZE)")
    dbsize = T.Int(0)
    selected = T.Unicode("")
    readonly = T.Bool(False)

    @T.validate("count", "scan_all_count", "page_size", "max_steps", "scan_cap")
    def _positive(self, proposal: Any) -> int:
        return positive(proposal)

    @T.validate("type_filter")
    def _known_type(self, proposal: Any) -> str:
        return one_of(proposal, [value for _label, value in TYPE_CHOICES])


class KeyBrowser(ScanState, W.VBox):
    """The toolbar (pattern, type, Refresh, Scan more, Scan all) and the one list of the keys found,
    a page at a time, each with its type, TTL, memory and length. ``selected`` is the key shown as
    picked; ``on_pick(key)`` is called when the user picks one (or the key named exactly is found)."""

    def __init__(self, kv: Any, messages: MessageBar, **kwargs: Any) -> None:
        self.kv = kv
        self.messages = messages
        self.on_pick: Callable[[str], Any] = lambda key: setattr(self, "selected", key)
        self.visible_frame = frames.keys_frame([])
        self._scan = KeyScan()
        self._quiet = Quiet()
        self.job = BackgroundJob(name="svckit-key-scan")  # Scan more / Scan all: SCAN calls off the kernel's thread
        self.pattern_box = W.Text(description="Search", placeholder="a word (user) or a pattern (user:*)",
                                  continuous_update=False, layout=W.Layout(width="320px"))
        self.type_box = W.Dropdown(options=TYPE_CHOICES, value="", description="Type", layout=W.Layout(width="190px"))
        self.refresh_button = W.Button(description="Refresh", icon="refresh", layout=W.Layout(width="100px"))
        self.more_button = W.Button(description="Scan more", icon="forward", layout=W.Layout(width="110px"))
        self.all_button = W.Button(description="Scan all (capped)", icon="fast-forward", layout=W.Layout(width="170px"))
        self.status = W.HTML()
        self.list_header = W.HTML()
        self.key_list = W.Select(options=[], rows=18, layout=W.Layout(width="auto"))
        self.prev_button = W.Button(icon="chevron-left", layout=W.Layout(width="36px"), tooltip="previous page")
        self.next_button = W.Button(icon="chevron-right", layout=W.Layout(width="36px"), tooltip="next page")
        self.page_label = W.HTML()
        self.keys_table = W.HTML()  # the visible page as a table (not shown: the list shows the same)
        for w, css in ((self.pattern_box, "svc-pattern"), (self.status, "svc-scan-status"),
                       (self.key_list, "svc-key-list"), (self.list_header, "svc-key-list-header")):
            w.add_class(css)
        self.toolbar = W.HBox([self.pattern_box, self.type_box, self.refresh_button, self.more_button,
                               self.all_button], layout=W.Layout(flex_flow="row wrap", align_items="center"))
        pager = W.HBox([self.prev_button, self.page_label, self.next_button], layout=W.Layout(align_items="center"))
        style = W.HTML(LIST_STYLE, layout=W.Layout(height="0px", margin="0"))
        super().__init__([style, self.list_header, self.key_list, pager], **kwargs)
        T.dlink((self.pattern_box, "value"), (self, "pattern"), lambda text: text.strip() or "*")
        T.dlink((self, "pattern"), (self.pattern_box, "value"))
        T.link((self.type_box, "value"), (self, "type_filter"))
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.more_button.on_click(lambda _b: self.scan_more(background=True))
        self.all_button.on_click(lambda _b: self.scan_all(background=True))
        self.prev_button.on_click(lambda _b: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _b: self.show_page(self.page + 1))
        self.key_list.observe(self._on_key_clicked, names="value")

    # -- scanning ------------------------------------------------------------------------------------
    @property
    def scan_state(self) -> KeyScan:
        """The walk the list shows (pattern, type, cursor, keys found): what the key tree counts."""
        return self._scan

    def refresh(self) -> None:
        """Start over: the first page of matches, with DBSIZE asked beside the first SCAN, not before
        it (one round trip fewer far from the service). A word is searched for anywhere in key names,
        and a key named exactly that is looked up beside it (alone under a Read Only token)."""
        self.glob = search_glob(self.pattern)
        self._scan = KeyScan(self.glob, self.type_filter or None, self.count)
        self.cursor, self.complete, self.scanned, self.page = 0, False, 0, 0
        self.matches = []
        self.messages.say("")
        word = is_exact_key(self.pattern)
        found = False
        with InFlight(1) as beside:
            beside.submit(self._dbsize, then=self._took_dbsize)
            if word:
                found = self._exists(self.pattern)
            if not (word and self.readonly):
                self._scan_steps(self.page_size, self.max_steps)
        if word and self.readonly:
            self._show_exact(self.pattern, found)
            return
        if found and self.pattern not in self.matches:
            self._scan.keys.append(self.pattern)
            self._scan._seen.add(self.pattern)
            self._sort()
        self.show_page(self._page_of(self.pattern) if found else 0)
        if found:
            self.on_pick(self.pattern)

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
            self.messages.say(f"No key named {key!r} (the Read Only token may not SCAN, so only an exact key name "
                              "is looked up).", "info")
        self.show_page(0)
        if found:
            self.on_pick(key)

    def _sort(self) -> None:
        self.matches = sorted(self._scan.keys, key=natural_key)

    def _page_of(self, key: str) -> int:
        return self.matches.index(key) // self.page_size if key in self.matches else 0

    def _scan_steps(self, want: int, max_steps: int, count: int | None = None) -> None:
        self._took_scan(self._scan, self._scan_keys(self._scan, want, max_steps, count))

    def _scan_keys(self, scan: KeyScan, want: int, max_steps: int, count: int | None,
                   cancel: Cancel = None) -> SvcError | None:
        """The SCAN calls (in the caller's thread or the job's, which ``cancel`` stops): the error, or None."""
        try:
            scan_keys(self.kv, scan, count=count or self.count, limit=want, max_calls=max_steps, cancel=cancel)
        except SvcError as exc:
            return exc
        return None

    def _took_scan(self, scan: KeyScan, error: SvcError | None) -> None:
        if error is not None:
            hint = " SCAN is refused for Read Only tokens: type an exact key name instead." if self.readonly else ""
            self.messages.say(f"SCAN failed: {error_text(error)}.{hint}", "error")
            scan.complete = True
        self.cursor, self.complete = scan.cursor, scan.complete
        self._sort()

    def _scan_on_job(self, want: int, max_steps: int, count: int | None, then: Callable[[], Any],
                     background: bool) -> None:
        """SCAN on the browser's job, then ``then()`` on the kernel's thread (a search started over in
        the meantime makes the result stale: dropped)."""
        if self.job.running:
            return
        scan = self._scan
        self.more_button.disabled = self.all_button.disabled = True

        def done(error: SvcError | None) -> None:
            if scan is not self._scan:
                return
            self._took_scan(scan, error)
            then()

        self.job.start(lambda _progress, cancel: self._scan_keys(scan, want, max_steps, count, cancel), on_done=done,
                       background=background)

    def scan_more(self, background: bool = False) -> None:
        """Scan until one more page of matches is found (at most ``max_steps`` SCAN calls); in a
        background job with ``background`` (what the button does)."""
        if self.complete:
            self._update_status()
            return
        target = (len(self.matches) // self.page_size + 1) * self.page_size
        first_fill = not self.matches
        self._scan_on_job(target, self.max_steps, None, lambda: self.show_page(self.page if not first_fill else 0),
                          background)

    def scan_all(self, background: bool = False) -> None:
        """Scan to the end of the keyspace, stopping at ``scan_cap`` matches; in a background job with
        ``background`` (what the button does)."""
        def shown() -> None:
            if not self.complete and len(self.matches) >= self.scan_cap:
                self.messages.say(f"Stopped at the cap of {self.scan_cap:,} matching keys; narrow the pattern to "
                                  "see the rest.", "info")
            self.show_page(self.page)

        self._scan_on_job(self.scan_cap, 10**9, max(self.count, self.scan_all_count), shown, background)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a Scan more / Scan all under way to be shown; True once none is running."""
        return self.job.wait(timeout)

    def remove(self, key: str) -> None:
        """Forget a key that was deleted."""
        if key in self._scan.keys:
            self._scan.keys.remove(key)
        self.matches = [k for k in self.matches if k != key]
        self.show_page(self.page)

    def status_text(self) -> str:
        """The status line as plain text (:func:`scan_text`'s words)."""
        if is_exact_key(self.pattern) and self.readonly:
            return f"exact lookup of {self.pattern} · {plural(len(self.matches), 'key')}"
        return scan_text(len(self.matches), self.glob, self.scanned, self.dbsize, self.complete)

    def _update_status(self) -> None:
        # COUNT hints add up past the keyspace's size: show at most DBSIZE, and all of it once complete
        self.scanned = self._scan.walked(self.dbsize) if self.dbsize else len(self._scan.keys)
        self.status.value = muted_html(self.status_text())
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
        header, labels = key_list_labels(self.visible_frame)
        with self._quiet:
            self.key_list.options = labels
            self.key_list.value = self.selected if self.selected in keys else None
        self.list_header.value = f"<pre class='svc-key-columns'>{html.escape(header)}</pre>" if labels else ""
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
