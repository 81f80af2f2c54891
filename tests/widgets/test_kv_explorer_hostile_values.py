"""The KV explorer's value view survives any value a key can hold: JSON nested thousands of levels deep
(a 10 KB string of brackets), invalid UTF-8, NUL bytes, a 1 MiB string, in strings and as elements
of a hash or a list, in every format of the value view; each is shown (as text where it cannot be
shown as JSON) and no exception leaves the widget. Keys set in the demo sandbox (a redis-server
child) over real HTTP, selected in the explorer as a click does."""

from __future__ import annotations

import html
import uuid

import pytest

from svckit.kv.formats import MAX_JSON_DEPTH, format_value, json_document
from svckit.widgets import KVExplorer

DEEP_ARRAY = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a":' * 3000 + "1" + "}" * 3000
HOSTILE: dict[str, bytes] = {
    "deep-array": DEEP_ARRAY.encode(),
    "deep-object": DEEP_OBJECT.encode(),
    "deep-mixed": ('[{"k":' * 2000 + "0" + "}]" * 2000).encode(),
    "just-too-deep": ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)).encode(),
    "open-brackets": b"[" * 1_000_000,  # not JSON at all, and a megabyte of nesting on the way to saying so
    "invalid-utf8": b'\xff\xfe{"a": \xc3\x28}\x80',
    "nul-bytes": b'{"a":"\x00"}\x00\x00tail',
    "one-mib": b"x" * (1 << 20),
}


@pytest.fixture
def hostile(kv):
    """Each hostile value as a string key, and all of them as the fields of a hash and a list."""
    prefix = f"hostile:{uuid.uuid4().hex[:8]}:"
    raw = kv.as_bytes()
    for name, value in HOSTILE.items():
        raw.set(prefix + name, value)
    for name, value in HOSTILE.items():  # one long binary argument a command (the body form carries it)
        if name != "open-brackets":
            raw.hset(prefix + "hash", name, value)
            raw.rpush(prefix + "list", value)
    yield prefix
    kv.delete(*(prefix + name for name in [*HOSTILE, "hash", "list"]))


def test_every_hostile_value_is_shown_in_every_format(kv, hostile):
    w = KVExplorer(kv, pattern=hostile + "*")
    w.scan_all()
    assert len(w.matches) == len(HOSTILE) + 2
    for key in w.matches:
        for fmt in w.value_pane.format_box.options:
            w.value_pane.format_box.value = fmt
            w.browser.key_list.value = None
            w.browser.key_list.value = key  # a click in the key list
            assert w.selected == key and w.selected_type in ("string", "hash", "list"), (key, fmt)
            assert w.value_pane.value_view.value, (key, fmt)
            assert "failed" not in w.message, (key, fmt, w.message)
    assert w.static_html()


@pytest.mark.parametrize("name", ["deep-array", "deep-object", "deep-mixed", "just-too-deep"])
def test_too_deep_json_is_shown_as_its_text(kv, hostile, name):
    w = KVExplorer(kv, pattern=hostile + name)  # an exact name: selected at once
    assert w.selected == hostile + name
    assert w.selected_type == "string" and "string · JSON" not in w.value_pane.detail_header.value  # not flattened
    assert w.value_frame["value"].tolist() == [HOSTILE[name].decode()]  # the text itself
    start = html.escape(HOSTILE[name].decode()[:100])
    assert start in w.value_pane.value_view.value
    w.value_pane.format_box.value = "json"
    assert "shown as text" in w.value_pane.value_view.value and start in w.value_pane.value_view.value


def test_a_deep_document_nested_within_the_limit_is_still_json(kv):
    key = f"hostile:{uuid.uuid4().hex[:8]}:deep-ok"
    kv.set(key, "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)
    try:
        w = KVExplorer(kv, pattern=key)
        assert "string · JSON" in w.value_pane.detail_header.value
    finally:
        kv.delete(key)


def test_formatters_never_raise_on_hostile_values():
    for value in HOSTILE.values():
        assert json_document(value.decode("utf-8", "surrogateescape")) is None
        for fmt in ("raw", "json", "hex", "base64", "gzip", "msgpack"):
            shown = format_value(value, fmt)
            assert shown.ok or shown.note
