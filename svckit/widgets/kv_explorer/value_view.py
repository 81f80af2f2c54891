"""The explorer's value view: the selected key's type, TTL, memory and value, one page at a time (a
cursor stack goes back), shown raw or through a formatter, and edits behind a confirmation.

One page is shown and edited: a string or a JSON document is edited whole (Edit opens the value in
the edit box, in place of the view, so it is not shown twice), the elements of a hash, list, set,
sorted set or stream one by one (:mod:`.element_editor`, on the page the table shows), a JSON
document also at a path (:mod:`.json_tree`). What a value looks like is :mod:`.value_shown`."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit.errors import SvcError
from svckit.kv.formats import available_encodings, json_document
from svckit.kv.keyspace import PAGED_TYPES, ValuePage
from svckit.widgets._common import (
    ConfirmBar,
    MessageBar,
    badge,
    error_text,
    frame_html,
    message_html,
    muted_html,
    one_of,
    positive,
    show_one,
)
from svckit.widgets.kv_explorer.element_editor import ElementEditor
from svckit.widgets.kv_explorer.json_tree import JsonTree
from svckit.widgets.kv_explorer.value_shown import (
    EDIT_HELP,
    ShownValue,
    document_of,
    edit_text,
    formatted_html,
    header_html,
    read_value,
)

#: whole values the edit box writes (a hash is also written by ``save_value``: HSET of the given fields)
EDITABLE_TYPES = ("string", "hash", "ReJSON-RL")
EDIT_TIP = "edit the whole value in a text box (strings and JSON documents)"
READONLY_REFUSAL = "This explorer uses a Read Only token: editing, TTL changes and deletes are disabled."


class ValueState(T.HasTraits):
    """What the value view shows and how (the explorer shows the same traits)."""

    selected = T.Unicode("")
    selected_type = T.Unicode("")
    readonly = T.Bool(False)
    value_limit = T.Int(500, help="elements read from a hash/list/set/zset/stream value (one page)")
    value_format = T.Unicode("raw", help="formatter of string values and page elements (svckit.kv.formats)")
    value_page_number = T.Int(0, help="0-based page of the selected value shown")

    @T.validate("value_limit")
    def _positive(self, proposal: Any) -> int:
        return positive(proposal)

    @T.validate("value_format")
    def _known_format(self, proposal: Any) -> str:
        return one_of(proposal, available_encodings())


class ValueView(ValueState, W.VBox):
    """``select(key)`` shows a key; ``value_next_page()`` / ``value_previous_page()`` page through it;
    ``save_value()``, ``set_ttl()``, ``delete_key()`` write (their buttons ask first)."""

    def __init__(self, kv: Any, messages: MessageBar, **kwargs: Any) -> None:
        self.kv = kv
        self.messages = messages
        self.value: Any = None
        self.value_page: ValuePage | None = None
        self.value_frame = pd.DataFrame()
        self.formatted_value: Any = None
        self.on_written: Callable[[str], Any] = lambda key: None  # after a write to ``key``
        self.on_deleted: Callable[[str], Any] = lambda key: None  # after ``key`` was deleted
        self._cursors: list[Any] = [None]
        self._shown: ShownValue | None = None
        lay = W.Layout
        self.detail_header = W.HTML('<div class="svc-muted">Select a key to see its value.</div>')
        self.value_view = W.HTML()
        self.edit_toggle = W.ToggleButton(description="Edit value", icon="pencil", layout=lay(width="110px"),
                                          tooltip=EDIT_TIP)
        self.edit_help = W.HTML()
        self.edit_box = W.Textarea(layout=lay(width="100%", height="120px", display="none"))
        self.save_button = W.Button(description="Save", icon="save", button_style="primary", layout=lay(width="90px"))
        self.ttl_box = W.IntText(value=3600, description="TTL (s)", layout=lay(width="170px"))
        self.ttl_button = W.Button(description="Set TTL", icon="clock-o", layout=lay(width="95px"))
        self.persist_button = W.Button(description="Persist", layout=lay(width="85px"), tooltip="remove the expiry")
        self.delete_button = W.Button(description="Delete key", icon="trash", button_style="danger",
                                      layout=lay(width="115px"))
        self.confirm_bar = ConfirmBar()
        self.value_prev = W.Button(icon="chevron-left", layout=lay(width="36px"), tooltip="previous page", disabled=True)
        self.value_next = W.Button(icon="chevron-right", layout=lay(width="36px"), tooltip="next page", disabled=True)
        self.value_page_label = W.HTML()
        self.value_page_size = W.BoundedIntText(value=self.value_limit, min=1, max=100_000, description="Page size",
                                                layout=lay(width="170px"))
        self.format_box = W.Dropdown(options=available_encodings(), value="raw", description="Format",
                                     layout=lay(width="180px"))
        for w, css in ((self.detail_header, "svc-detail-header"), (self.value_view, "svc-value"),
                       (self.format_box, "svc-format")):
            w.add_class(css)
        self.element_editor = ElementEditor(kv, messages, self.confirm_bar)
        self.json_editor = JsonTree(kv, messages, self.confirm_bar)
        self.element_editor.after_write = self.json_editor.after_write = self._after_element_write
        actions = W.HBox([self.edit_toggle, self.save_button, self.ttl_box, self.ttl_button, self.persist_button, self.delete_button],
                         layout=lay(flex_flow="row wrap", align_items="center"))
        pager = W.HBox([self.value_prev, self.value_page_label, self.value_next, self.value_page_size,
                        self.format_box], layout=lay(flex_flow="row wrap", align_items="center"))
        self.value_box = W.Box([self.value_view], layout=lay(max_height="330px", overflow="auto"))
        super().__init__([self.detail_header, pager, self.value_box, self.edit_help, self.edit_box, actions,
                          self.confirm_bar, self.element_editor, self.json_editor], **kwargs)
        T.link((self.value_page_size, "value"), (self, "value_limit"))
        T.link((self.format_box, "value"), (self, "value_format"))
        self.save_button.on_click(lambda _b: self._ask(self._save_question(self.edit_box.value),
                                                       lambda: self.save_value(self.edit_box.value), "Save"))
        self.edit_toggle.observe(lambda _c: self._on_edit_toggle(), names="value")
        self.ttl_button.on_click(lambda _b: self._ask(f"Set the TTL of {self.selected!r} to {self.ttl_box.value} s?",
                                                      lambda: self.set_ttl(self.ttl_box.value), "Set TTL"))
        self.persist_button.on_click(lambda _b: self._ask(f"Remove the expiry of {self.selected!r}?",
                                                          lambda: self.set_ttl(None), "Persist"))
        self.delete_button.on_click(lambda _b: self._ask(f"Delete {self.selected!r}? This cannot be undone.",
                                                         self.delete_key, "Delete"))
        self.value_prev.on_click(lambda _b: self.value_previous_page())
        self.value_next.on_click(lambda _b: self.value_next_page())
        self.observe(self._on_readonly, names="readonly")
        self.observe(lambda _c: self.selected and self.select(self.selected), names="value_limit")
        self.observe(lambda _c: self.selected and self._show(), names="value_format")
        self._on_readonly()

    # -- showing ------------------------------------------------------------------------------------
    def select(self, key: str) -> pd.DataFrame:
        """Show ``key``: type, TTL, memory and the first page of its value as a table."""
        self.confirm_bar.cancel()
        self.selected = key
        self._cursors = [None]
        self.value_page_number = 0
        return self._show()

    def value_next_page(self) -> pd.DataFrame:
        """The next page of the selected value (HSCAN / SSCAN cursor, ZRANGE / LRANGE rank, XRANGE id)."""
        if self.value_page is None or self.value_page.complete:
            return self.value_frame
        del self._cursors[self.value_page_number + 1:]
        self._cursors.append(self.value_page.next_cursor)
        self.value_page_number += 1
        return self._show()

    def value_previous_page(self) -> pd.DataFrame:
        """The page before, from the stack of cursors the pages so far started at."""
        if self.value_page_number == 0:
            return self.value_frame
        self.value_page_number -= 1
        return self._show()

    def set_value_page_size(self, size: int) -> pd.DataFrame:
        """Elements per page; the selected value starts again at its first page."""
        self.value_limit = max(1, int(size))
        return self.value_frame

    def read(self, key: str, cursor: Any) -> ShownValue:
        """One page of ``key``'s value, described, and formatted when a formatter is chosen."""
        return read_value(self.kv, key, cursor, self.value_limit, self.value_format)

    def _show(self) -> pd.DataFrame:
        key = self.selected
        try:
            shown = self.read(key, self._cursors[self.value_page_number])
        except SvcError as exc:
            self.messages.say(f"Reading {key!r} failed: {error_text(exc)}", "error")
            self.value_frame, self.value_view.value = pd.DataFrame(), ""
            return self.value_frame
        self.selected_type = shown.page.type
        self.value_page, self.value, self.value_frame = shown.page, shown.page.items, shown.frame
        self.formatted_value = shown.formatted
        self._update_pager()
        if shown.page.type == "none":
            self.detail_header.value = (f"<b>{html.escape(key)}</b> {badge('none')} "
                                        f"{muted_html('(the key does not exist any more)')}")
            self.value_view.value = ""
            return self.value_frame
        # the value first, the header last: a viewer that sees the new name sees the new value too
        self.value_view.value = (formatted_html(shown, self.value_format, self.value_limit)
                                 or frame_html(self.value_frame, max_rows=self.value_limit))
        self.detail_header.value = header_html(key, shown, self.value_page_number)
        self._shown = shown
        with self.hold_trait_notifications():
            self.edit_toggle.value = False
        self._on_edit_toggle()
        self.element_editor.show(key, shown.page.type, shown.frame, self.readonly)
        self.json_editor.show(key, document_of(shown), self.readonly)
        self._update_buttons()
        return self.value_frame

    def clear(self, note: str) -> None:
        self.selected = ""
        self.detail_header.value = muted_html(note)
        self.value_view.value = self.edit_box.value = ""
        self._shown = None
        self.edit_toggle.value = False
        self.element_editor.show("", "none", pd.DataFrame(), self.readonly)
        self.json_editor.show("", None, self.readonly)
        self._update_buttons()

    def _update_pager(self) -> None:
        page, key_type = self.value_page, self.selected_type
        paged = key_type in PAGED_TYPES
        self.value_prev.disabled = not paged or self.value_page_number == 0
        self.value_next.disabled = not paged or page is None or page.complete
        if not paged or page is None:
            self.value_page_label.value = ""
            return
        first = page.start + 1 if key_type in ("list", "zset") else None
        rows = f" · rows {first:,}–{page.start + len(page):,}" if first is not None and len(page) else ""
        last = " · last page" if page.complete else ""
        self.value_page_label.value = muted_html(f"page {self.value_page_number + 1}{rows}{last}")

    def _update_buttons(self) -> None:
        for b in (self.save_button, self.ttl_button, self.persist_button, self.delete_button):
            b.disabled = self.readonly or not self.selected
            b.tooltip = READONLY_REFUSAL if self.readonly else ""
        whole = self.selected_type in ("string", "ReJSON-RL")
        self.save_button.disabled |= not whole or not self.edit_toggle.value
        self.edit_toggle.disabled = self.readonly or not whole
        self.edit_toggle.layout.display = None if whole else "none"
        self.save_button.layout.display = None if whole and self.edit_toggle.value else "none"
        self.edit_toggle.tooltip = READONLY_REFUSAL if self.readonly else EDIT_TIP
        self.edit_box.disabled = self.readonly

    def _on_edit_toggle(self) -> None:
        """Edit on: the whole value in the edit box, in place of the view (shown once, not twice)."""
        shown, editing = self._shown, self.edit_toggle.value and self._shown is not None
        if editing:
            self.edit_box.value = edit_text(shown.page.type, self.value)
        shown_type = shown.shown_type if shown is not None else ""
        help_text = EDIT_HELP.get(shown_type, "") if editing else ""
        self.edit_help.value = message_html(help_text, "info")
        show_one(self.edit_box if editing else self.value_box, (self.edit_box, self.value_box))
        self._update_buttons()

    def _save_question(self, text: str) -> str:
        key, t = self.selected, self.selected_type
        if t == "ReJSON-RL":
            return f"Save writes JSON.SET {key} $ with the whole document ({len(text):,} characters). Save it?"
        if t == "hash":
            return f"Save writes HSET {key} with the fields given. Save them?"
        return f"Save writes SET {key} with the whole string ({len(text):,} characters), TTL kept. Save it?"

    def _after_element_write(self, key: str) -> None:
        """After an element or a path was written: the same page again, and the key's new size."""
        self._show()
        self.on_written(key)

    def _on_readonly(self, _change: Any = None) -> None:
        self._update_buttons()

    # -- edits (confirmed) -----------------------------------------------------------------------------
    def _refuse_readonly(self) -> bool:
        if self.readonly:
            self.messages.say(READONLY_REFUSAL, "error")
        return self.readonly

    def _ask(self, question: str, action: Any, label: str) -> None:
        if not self.selected:
            self.messages.say("Select a key first.", "error")
        elif not self._refuse_readonly():
            self.confirm_bar.ask(question, action, label)

    def _write(self, description: str, action: Any) -> bool:
        if self._refuse_readonly():
            return False
        return self.messages.attempt(action, f"{description} was refused", f"{description}: done.")[0]

    def save_value(self, text: str) -> bool:
        """Write ``text`` as the new value of the selected string, JSON or hash key (TTL kept)."""
        key, t = self.selected, self.selected_type
        if t == "string" and json_document(self.value) is not None and json_document(text) is None:
            self.messages.say("Not valid JSON: this key holds a JSON document; write a JSON object or array.", "error")
            return False
        if t == "string":
            ok = self._write(f"SET {key}", lambda: self.kv.set(key, text, keepttl=True))
        elif t == "ReJSON-RL":
            try:
                doc = json.loads(text)
            except ValueError as exc:
                self.messages.say(f"Not valid JSON: {exc}", "error")
                return False
            ok = self._write(f"JSON.SET {key}", lambda: self.kv.json_set(key, "$", doc))
        elif t == "hash":
            fields = json_document(text.strip())
            if not isinstance(fields, dict) or not fields:
                self.messages.say("A hash is edited as a JSON object of field: value pairs.", "error")
                return False
            mapping = {str(f): str(v) for f, v in fields.items()}
            ok = self._write(f"HSET {key}", lambda: self.kv.hset(key, mapping=mapping))
        else:
            self.messages.say(f"Values of type {t or 'unknown'} are edited in the Console tab.", "error")
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
            self.on_written(key)
        return ok

    def delete_key(self) -> bool:
        key = self.selected
        ok = self._write(f"DEL {key}", lambda: self.kv.delete(key))
        if ok:
            self.clear(f"{key} was deleted.")
            self.on_deleted(key)
        return ok
