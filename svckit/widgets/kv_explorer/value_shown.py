"""What the value view shows of one page of a value: the read (:func:`read_value`), its header, its
formatted view, the document a JSON key holds, and the help the edit box gives for each type. Pure
functions of what was read, apart from :func:`read_value`, so the view only wires them."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from svckit import frames
from svckit._units import duration_text
from svckit.kv.formats import Formatted, TooDeep, format_value, json_document, parse_json
from svckit.kv.keyspace import KeyInfo, ValuePage, describe_keys, read_page
from svckit.widgets._common import BADGE_COLORS, badge, frame_html, message_html

#: key types whose value (a string) or page elements a formatter applies to
FORMATTED_TYPES = ("string", "hash", "list", "set", "zset")

#: what the edit box of each type writes (the element types are edited one element at a time)
EDIT_HELP = {
    "string": "The whole string: Save writes it with SET (the TTL is kept).",
    "string · JSON": "The whole JSON document kept in this string: Save writes it with SET (the TTL is kept); "
                     "the tree below edits one path.",
    "ReJSON-RL": "The whole JSON document: Save writes it with JSON.SET at $; the tree below edits one path.",
}


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


def document_of(shown: ShownValue) -> Any:
    """The JSON document a key holds (in a string, or as a JSON key), None for any other value."""
    items = shown.page.items
    if shown.page.type == "string":
        return json_document(items)
    if shown.page.type == "ReJSON-RL":
        doc = parse_json(items) if isinstance(items, str) else items
        return doc[0] if isinstance(doc, list) and len(doc) == 1 else doc
    return None


def read_value(kv: Any, key: str, cursor: Any, count: int, fmt: str) -> ShownValue:
    """One page of ``key``'s value, described, and formatted when a formatter (``fmt``) is chosen."""
    (info,) = describe_keys(kv, [key])
    key_type = info.type or "none"
    page = read_page(kv, key, key_type, cursor=cursor, count=count)
    doc = json_document(page.items) if key_type == "string" else None
    if doc is not None:
        # a JSON document kept in a string (what the sandbox's JSON.* emulation stores, and what
        # many apps do): show it flattened by path, edit it as a string
        shown = ShownValue(info, page, frames.value_frame("json", doc), "string · JSON")
    else:
        shown = ShownValue(info, page, frames.value_frame(page), key_type)
    if fmt != "raw" and key_type in FORMATTED_TYPES:
        raw_kv = kv.as_bytes()  # read again as bytes, so binary encodings survive
        if key_type == "string":
            shown.formatted = format_value(raw_kv.get(key), fmt)
        else:
            raw = frames.value_frame(read_page(raw_kv, key, key_type, cursor=cursor, count=count))
            column = "value" if "value" in raw.columns else "member"
            results = [format_value(v, fmt) for v in raw[column]]
            table = raw.assign(**{c: raw[c].map(_text) for c in raw.columns if raw[c].dtype == object})
            table[column] = [r.text if r.ok else f"invalid: {r.note}" for r in results]
            table.attrs["not_valid"] = sum(not r.ok for r in results)
            shown.formatted = table
    return shown
