"""The explorer's value view: the selected key's type, TTL, memory and value, one page at a time (a
cursor stack goes back), shown raw or through a formatter, and edits behind a confirmation.

Reading a value (:meth:`ValueView.read`), drawing it (:func:`value_html`) and the buttons' state
(:meth:`ValueView._update_buttons`) are separate steps."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit._units import duration_text
from svckit.errors import SvcError
from svckit.kv.formats import Formatted, TooDeep, available_encodings, format_value, json_document, parse_json
from svckit.kv.keyspace import PAGED_TYPES, KeyInfo, ValuePage, describe_keys, read_page
from svckit.widgets._common import (
    BADGE_COLORS,
    ConfirmBar,
    MessageBar,
    badge,
    error_text,
    frame_html,
    message_html,
    muted_html,
)

#: key types whose value (a string) or page elements a formatter applies to
FORMATTED_TYPES = ("string", "hash", "list", "set", "zset")
EDITABLE_TYPES = ("string", "hash", "ReJSON-RL")
READONLY_REFUSAL = "This explorer uses a Read Only token: editing, TTL changes and deletes are disabled."


@dataclass
class ShownValue:
    """One page of a value as read: the key's description, the page, the page as a frame, the type as
    shown (``string · JSON`` for a JSON document in a string) and, through a formatter, the formatted
    value (a :class:`Formatted` of a string, or a frame of formatted elements)."""

    info: KeyInfo
    page: ValuePage
    frame: pd.DataFrame
    shown_type: str
    formatted: Any = None


def _text(value: Any) -> Any:
    """Bytes of a value read for a formatter, as text for the cells that are not formatted."""
    return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value


def formatted_html(shown: ShownValue, fmt: str, limit: int) -> str | None:
    """The formatted view of a value (None: show the plain table)."""
    value = shown.formatted
    if value is None:
        return None
    if isinstance(value, Formatted):
        if not value.ok:
            return message_html(value.note, "error")
        note = f'<div class="svc-muted">{html.escape(value.note)}</div>' if value.note else ""
        return (f'{note}<pre class="svc-formatted" style="margin:0;font-size:12px;white-space:pre-wrap">'
                f'{html.escape(value.text)}</pre>')
    bad = int(value.attrs.get("not_valid", 0))
    note = message_html(f"{bad:,} of {len(value):,} elements are not valid {fmt}.", "error") if bad else ""
    return note + frame_html(value, max_rows=limit)


def header_html(key: str, shown: ShownValue, page_number: int) -> str:
    info, key_type = shown.info, shown.page.type
    ttl = "no expiry" if info.pttl is None or info.pttl < 0 else f"expires in {duration_text(info.pttl / 1000)}"
    mem = "" if info.memory is None else f" · {frames.format_bytes(info.memory)}"
    size = ""
    if key_type != "string":
        size = f" · {len(shown.frame):,} rows shown"
        if not (shown.page.complete and page_number == 0) and info.length is not None:
            size += f" of {info.length:,}"
    return (f"<div><b style='font-size:14px'>{html.escape(key)}</b> {badge(shown.shown_type, BADGE_COLORS.get(key_type))}"
            f"<span class='svc-muted'>{ttl}{mem}{size}</span></div>")


def edit_text(key_type: str, value: Any) -> str:
    """A value as the edit box shows it: a string as is, a hash or a JSON document as JSON."""
    if key_type == "string":
        return "" if value is None else str(value)
    if key_type == "hash":
        return json.dumps(value, indent=1, ensure_ascii=False)
    if key_type == "ReJSON-RL":
        try:
            doc = parse_json(value) if isinstance(value, str) else value
        except TooDeep:
            return str(value)
        if isinstance(doc, list) and len(doc) == 1:
            doc = doc[0]
        return json.dumps(doc, indent=1, ensure_ascii=False)
    return ""


class ValueState(T.HasTraits):
    """What the value view shows and how (the explorer shows the same traits)."""

    selected = T.Unicode("")
    selected_type = T.Unicode("")
    readonly = T.Bool(False)
    value_limit = T.Int(500, help="elements read from a hash/list/set/zset/stream value (one page)")
    value_format = T.Unicode("raw", help="formatter of string values and page elements (svckit.kv.formats)")
    value_page_number = T.Int(0, help="0-based page of the selected value shown")


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
        lay = W.Layout
        self.detail_header = W.HTML('<div class="svc-muted">Select a key to see its value.</div>')
        self.value_view = W.HTML()
        self.edit_box = W.Textarea(placeholder="new value (string, JSON document, or a JSON object of hash fields)",
                                   layout=lay(width="100%", height="70px"))
        self.save_button = W.Button(description="Save", icon="save", button_style="primary", layout=lay(width="90px"))
        self.ttl_box = W.IntText(value=3600, description="TTL (s)", layout=lay(width="170px"))
        self.ttl_button = W.Button(description="Set TTL", icon="clock-o", layout=lay(width="95px"))
        self.persist_button = W.Button(description="Persist", layout=lay(width="85px"), tooltip="remove the expiry")
        self.delete_button = W.Button(description="Delete", icon="trash", button_style="danger",
                                      layout=lay(width="90px"))
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
        actions = W.HBox([self.save_button, self.ttl_box, self.ttl_button, self.persist_button, self.delete_button],
                         layout=lay(flex_flow="row wrap", align_items="center"))
        pager = W.HBox([self.value_prev, self.value_page_label, self.value_next, self.value_page_size,
                        self.format_box], layout=lay(flex_flow="row wrap", align_items="center"))
        super().__init__([self.detail_header, pager, W.Box([self.value_view], layout=lay(max_height="330px",
                                                                                        overflow="auto")),
                          self.edit_box, actions, self.confirm_bar], **kwargs)
        T.link((self.value_page_size, "value"), (self, "value_limit"))
        T.link((self.format_box, "value"), (self, "value_format"))
        self.save_button.on_click(lambda _b: self._ask(f"Save the new value of {self.selected!r}?",
                                                       lambda: self.save_value(self.edit_box.value), "Save"))
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
        (info,) = describe_keys(self.kv, [key])
        key_type = info.type or "none"
        page = read_page(self.kv, key, key_type, cursor=cursor, count=self.value_limit)
        doc = json_document(page.items) if key_type == "string" else None
        if doc is not None:
            # a JSON document kept in a string (what the sandbox's JSON.* emulation stores, and what
            # many apps do): show it flattened by path, edit it as a string
            shown = ShownValue(info, page, frames.value_frame("json", doc), "string · JSON")
        else:
            shown = ShownValue(info, page, frames.value_frame(page), key_type)
        fmt = self.value_format
        if fmt != "raw" and key_type in FORMATTED_TYPES:
            raw_kv = self.kv.as_bytes()  # read again as bytes, so binary encodings survive
            if key_type == "string":
                shown.formatted = format_value(raw_kv.get(key), fmt)
            else:
                raw = frames.value_frame(read_page(raw_kv, key, key_type, cursor=cursor, count=self.value_limit))
                column = "value" if "value" in raw.columns else "member"
                results = [format_value(v, fmt) for v in raw[column]]
                table = raw.assign(**{c: raw[c].map(_text) for c in raw.columns if raw[c].dtype == object})
                table[column] = [r.text if r.ok else f"invalid: {r.note}" for r in results]
                table.attrs["not_valid"] = sum(not r.ok for r in results)
                shown.formatted = table
        return shown

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
        self.edit_box.value = edit_text(shown.page.type, self.value)
        self._update_buttons()
        return self.value_frame

    def clear(self, note: str) -> None:
        self.selected = ""
        self.detail_header.value = muted_html(note)
        self.value_view.value = self.edit_box.value = ""
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
        self.save_button.disabled |= self.selected_type not in EDITABLE_TYPES
        self.edit_box.disabled = self.readonly

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
