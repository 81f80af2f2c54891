"""What the key browser, the key tree and the Bulk tab say about keys, in one set of words: the SCAN
pattern of what was typed (a word is searched anywhere in key names, as RedisInsight does), counts
with their plurals, how much of the keyspace a walk covered, natural order, and the key list's
columns (key, type, TTL, memory, length) in a fixed-width font."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from svckit import frames
from svckit._units import duration_text, plural
from svckit.widgets._common import badge, frame_html

GLOB_CHARS = set("*?[")
TYPE_CHOICES = [("any type", ""), ("string", "string"), ("hash", "hash"), ("list", "list"), ("set", "set"),
                ("zset", "zset"), ("stream", "stream"), ("JSON", "ReJSON-RL")]


GLOB_SPECIALS = "\\*?[]"


def is_exact_key(pattern: str) -> bool:
    """A pattern with no glob characters: a word searched for anywhere in key names (and a key of
    exactly that name)."""
    return bool(pattern) and not (set(pattern) & GLOB_CHARS)


def search_glob(pattern: str) -> str:
    """The SCAN pattern of what the user typed: a word without glob characters matches anywhere in
    the key name (``user`` -> ``*user*``, glob characters escaped); a pattern stays as it is."""
    if not is_exact_key(pattern):
        return pattern or "*"
    return "*" + "".join("\\" + ch if ch in GLOB_SPECIALS else ch for ch in pattern) + "*"


def scan_text(matched: int, pattern: str, walked: int, total: int, complete: bool) -> str:
    """What a walk found, in the words the browser, the key tree and the Bulk tab share:
    ``52 keys matching *user* so far · scanned 1,000 of ~3,405 keys`` while it goes on,
    ``200 keys matching *user* · scanned all 3,405 keys`` once it has walked everything."""
    if complete:
        return f"{plural(matched, 'key')} matching {pattern} · scanned all {plural(total, 'key')}"
    return f"{plural(matched, 'key')} matching {pattern} so far · scanned {walked:,} of ~{plural(total, 'key')}"


def natural_key(key: Any) -> list[Any]:
    """Sort key of natural order: ``user:2`` before ``user:10`` (digit runs compared as numbers)."""
    text = key.decode("utf-8", "replace") if isinstance(key, bytes) else str(key)
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part]


def keys_table_html(frame: pd.DataFrame, max_rows: int = 200, drop: Sequence[str] = ()) -> str:
    """Keys with their metadata (:func:`svckit.frames.keys_frame`) as a table: type badges, readable TTL
    and memory (``drop``: columns left out)."""
    shown = frame.assign(memory=frame["memory_bytes"].map(frames.format_bytes))
    shown = shown.drop(columns=["memory_bytes", "ttl_s", *drop])
    return frame_html(shown, max_rows=max_rows, formatters={
        "type": lambda t: badge(t) if isinstance(t, str) else "—",
        "expires": lambda d: "no expiry" if pd.isna(d) else html.escape(duration_text(d.total_seconds())),
    })


KEY_WIDTH = 40
#: the type as the list names it (the Type menu's words)
TYPE_LABELS = {value: label for label, value in TYPE_CHOICES if value}
#: the list and its header in one fixed-width font, so the columns line up
LIST_STYLE = ("<style>.svc-key-list select, .svc-key-columns { font: 12px/1.5 var(--jp-code-font-family, monospace); }"
              " .svc-key-columns { margin: 0 0 2px 4px; color: #6b7280; white-space: pre !important;"
              " overflow: hidden; }</style>")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def key_list_labels(frame: pd.DataFrame) -> tuple[str, list[tuple[str, str]]]:
    """The list's header and its rows, in columns of a fixed-width font: key, type, TTL, memory,
    length (a dash where not known)."""
    width = min(KEY_WIDTH, max([len("key"), *(len(str(k)) for k in frame["key"])]))

    def ttl(d: Any) -> str:
        return "no expiry" if pd.isna(d) else duration_text(d.total_seconds())

    def cell(value: Any, text: Callable[[Any], str]) -> str:
        return "—" if value is None or pd.isna(value) else text(value)

    def line(key: str, type_: str, expires: str, memory: str, length: str) -> str:
        return f"{_cut(key, width):<{width}} {type_:<6} {expires:>10} {memory:>8} {length:>6}"

    rows = [(line(str(r.key), cell(r.type, lambda t: TYPE_LABELS.get(t, t)), ttl(r.expires), cell(r.memory_bytes, frames.format_bytes),
                  cell(r.length, lambda n: f"{int(n):,}")), r.key) for r in frame.itertuples()]
    return line("key", "type", "TTL", "memory", "length"), rows
