"""The KV explorer's value editor, as a person uses it: the edit box of each type says what it writes
(and a value is not shown twice), the element editor lists the page the table shows and writes one
element with one command, deletes wait for a confirmation, a JSON document is a collapsible tree
edited at a path, and a Read Only token disables all of it with the reason. Keys of each test's own,
in the demo sandbox (a redis-server child) over real HTTP; clicks are the widgets' own ``click()``."""

from __future__ import annotations

import html
import json
import re
import uuid

import ipywidgets as W
import pytest

from svckit.widgets import KVExplorer


def seen_text(widget: W.Widget) -> str:
    """The text a person sees in ``widget``: HTML and labels, text boxes, descriptions and placeholders
    of the widgets displayed (not those whose layout hides them), tags stripped."""
    if getattr(getattr(widget, "layout", None), "display", None) == "none":
        return ""
    parts = [str(getattr(widget, name, "") or "") for name in ("description", "placeholder")]
    if isinstance(widget, (W.HTML, W.Label)):
        parts.append(html.unescape(re.sub(r"<[^>]+>", " ", widget.value)))
    elif isinstance(widget, (W.Text, W.Textarea)):
        parts.append(widget.value)
    for child in getattr(widget, "children", ()):
        parts.append(seen_text(child))
    return " ".join(p for p in parts if p)


@pytest.fixture
def keys(kv):
    """A prefix of this test's own; every key under it is deleted after."""
    prefix = f"editor:{uuid.uuid4().hex[:8]}:"
    yield prefix
    kv.delete(*kv.keys(prefix + "*") or [prefix + "none"])


def test_the_edit_help_of_each_type_says_what_it_writes(kv, keys):
    kv.set(keys + "s", "hello")
    kv.zadd(keys + "z", {"a": 1.0})
    kv.xadd(keys + "x", {"event": "login"})
    kv.hset(keys + "h", "f", "v")
    kv.rpush(keys + "l", "one")
    kv.sadd(keys + "t", "m")
    w = KVExplorer(kv, pattern=keys + "s", autorefresh=False)
    expected = {"z": ("score", "ZADD"), "x": ("append-only", "XADD"), "h": ("field", "HSET"),
                "l": ("item", "RPUSH"), "t": ("member", "SADD")}
    for suffix, words in expected.items():
        w.select(keys + suffix)
        shown = seen_text(w.value_pane)
        assert "hash fields" not in shown and "JSON document" not in shown, (suffix, shown)
        assert all(word in shown for word in words), (suffix, shown)
    w.select(keys + "s")
    assert "hello" in seen_text(w.value_pane.value_view)
    assert "hello" not in seen_text(w.value_pane.edit_box)  # the value is shown once, not repeated in an edit box
    w.value_pane.edit_toggle.value = True  # the Edit value button, pressed
    assert w.value_pane.edit_box.value == "hello" and w.value_pane.value_box.layout.display == "none"  # edited in place
    assert "SET" in seen_text(w.value_pane) and "TTL is kept" in seen_text(w.value_pane)


def test_the_edit_box_takes_the_values_place_without_both_showing_at_once(kv, keys):
    kv.set(keys + "s", "hello")
    w = KVExplorer(kv, pattern=keys + "s", autorefresh=False)
    w.select(keys + "s")
    pane = w.value_pane
    panes = (pane.edit_box, pane.value_box)
    shown_at_once: list[int] = []  # after each change the front end applies: how many of the two it shows
    for part in panes:
        part.layout.observe(lambda _c: shown_at_once.append(sum(p.layout.display != "none" for p in panes)),
                            names="display")
    pane.edit_toggle.value = True
    assert pane.value_box.layout.display == "none" and pane.edit_box.layout.display is None
    pane.edit_toggle.value = False
    assert pane.edit_box.layout.display == "none" and pane.value_box.layout.display is None
    assert shown_at_once and max(shown_at_once) == 1


def test_the_element_editor_edits_the_page_the_table_shows(kv, keys):
    key = keys + "list"
    kv.rpush(key, *[f"item-{i}" for i in range(25)])
    w = KVExplorer(kv, pattern=key, value_limit=10)
    w.value_pane.value_next.click()
    assert w.value_frame["index"].tolist() == list(range(10, 20))
    picks = [o for o in w.value_pane.element_editor.element_pick.options if o != "(new)"]
    assert picks[0].startswith("#10 ") and picks[-1].startswith("#19 ") and len(picks) == 10
    w.value_pane.element_editor.element_pick.value = picks[2]
    assert w.value_pane.element_editor.element_value.value == "item-12"
    w.value_pane.element_editor.element_value.value = "changed"
    assert "LSET " + key + " 12 changed" in seen_text(w.value_pane)  # what Save writes, said before
    w.value_pane.element_editor.element_save.click()
    assert kv.lindex(key, 12) == "changed" and kv.llen(key) == 25
    assert w.value_page_number == 1 and "changed" in w.value_pane.value_view.value  # still page 2, re-read
    assert "LSET" in w.message and w.message_kind == "ok"


def test_hash_fields_are_added_edited_and_deleted_one_by_one(kv, keys):
    key = keys + "hash"
    kv.hset(key, mapping={"name": "Ada", "city": "London"})
    w = KVExplorer(kv, pattern=key)
    w.value_pane.element_editor.element_name.value, w.value_pane.element_editor.element_value.value = "lang", "en"
    w.value_pane.element_editor.element_add.click()
    assert kv.hgetall(key) == {"name": "Ada", "city": "London", "lang": "en"}
    assert f"HSET {key} lang en: done (field added)" in w.message
    w.value_pane.element_editor.element_pick.value = "city"
    w.value_pane.element_editor.element_value.value = "Paris"
    w.value_pane.element_editor.element_save.click()
    assert kv.hget(key, "city") == "Paris" and "(field updated)" in w.message
    assert w.value_pane.element_editor.element_pick.value == "city" and w.value_pane.element_editor.element_value.value == "Paris"  # still picked, as read again
    w.value_pane.element_editor.element_pick.value = "name"
    w.value_pane.element_editor.element_delete.click()
    assert w.value_pane.confirm_bar.pending and kv.hexists(key, "name")  # nothing deleted before the confirmation
    assert "HDEL " + key + " name" in seen_text(w.value_pane.confirm_bar)
    w.value_pane.confirm_bar.confirm_button.click()
    assert kv.hgetall(key) == {"city": "Paris", "lang": "en"}
    assert "name" not in w.value_frame["field"].tolist()


def test_list_set_zset_and_stream_elements(kv, keys):
    w = KVExplorer(kv, pattern=keys + "none", autorefresh=False)
    kv.rpush(keys + "l", "a", "b", "a")
    w.select(keys + "l")
    w.value_pane.element_editor.list_end.value, w.value_pane.element_editor.element_value.value = "head", "first"
    w.value_pane.element_editor.element_add.click()
    assert kv.lrange(keys + "l", 0, -1) == ["first", "a", "b", "a"]
    w.value_pane.element_editor.element_pick.value = next(o for o in w.value_pane.element_editor.element_pick.options if o.startswith("#3 "))
    w.value_pane.element_editor.element_delete.click()
    assert "LREM" in seen_text(w.value_pane.confirm_bar) and "first item equal" in seen_text(w.value_pane.confirm_bar)
    w.value_pane.confirm_bar.confirm()
    assert kv.lrange(keys + "l", 0, -1) == ["first", "b", "a"]

    kv.sadd(keys + "s", "x", "y")
    w.select(keys + "s")
    assert w.value_pane.element_editor.element_save.disabled and "not edited in place" in w.value_pane.element_editor.element_help.value
    w.value_pane.element_editor.element_name.value = "z"
    w.value_pane.element_editor.element_add.click()
    w.value_pane.element_editor.element_pick.value = "x"
    w.value_pane.element_editor.element_delete.click()
    w.value_pane.confirm_bar.confirm()
    assert kv.smembers(keys + "s") == {"y", "z"} and "SREM" in w.message

    kv.zadd(keys + "z", {"m": 1.0})
    w.select(keys + "z")
    w.value_pane.element_editor.element_name.value, w.value_pane.element_editor.element_value.value = "n", "2.5"
    w.value_pane.element_editor.element_add.click()
    w.value_pane.element_editor.element_pick.value = "m · 1"
    w.value_pane.element_editor.element_value.value = "7"
    w.value_pane.element_editor.element_save.click()
    assert kv.zrange(keys + "z", 0, -1, withscores=True) == [("n", 2.5), ("m", 7.0)]
    w.value_pane.element_editor.element_pick.value = "n · 2.5"
    w.value_pane.element_editor.element_delete.click()
    w.value_pane.confirm_bar.confirm()
    assert kv.zrange(keys + "z", 0, -1, withscores=True) == [("m", 7.0)] and "ZREM" in w.message

    first = kv.xadd(keys + "x", {"event": "login"})
    w.select(keys + "x")
    assert w.value_pane.element_editor.element_save.disabled and "append-only" in w.value_pane.element_editor.element_save.tooltip
    w.value_pane.element_editor.element_value.value = '{"event": "logout", "user": "ada"}'
    w.value_pane.element_editor.element_add.click()
    assert kv.xlen(keys + "x") == 2 and "XADD" in w.message
    w.value_pane.element_editor.element_pick.value = str(first)
    w.value_pane.element_editor.element_delete.click()
    w.value_pane.confirm_bar.confirm()
    entries = kv.xrange(keys + "x")
    assert len(entries) == 1 and dict(entries[0][1]) == {"event": "logout", "user": "ada"} and "XDEL" in w.message


def test_a_json_document_is_a_tree_edited_at_a_path(kv, keys):
    key = keys + "doc"
    kv.json_set(key, "$", {"name": "Lamp", "tags": ["home"], "size": {"w": 10, "h": 20}})
    w = KVExplorer(kv, pattern=key)
    assert "<details" in w.value_pane.json_editor.json_tree.value and "size" in w.value_pane.json_editor.json_tree.value  # collapsible nodes
    assert {"$", "$.name", "$.tags[0]", "$.size.w"} <= set(w.value_pane.json_editor.json_path.options)
    w.value_pane.json_editor.json_path.value = "$.size.w"
    assert w.value_pane.json_editor.json_value.value == "10"
    w.value_pane.json_editor.json_value.value = "12"
    assert f"JSON.SET {key} $.size.w 12" in seen_text(w.value_pane.json_editor)
    w.value_pane.json_editor.json_set.click()
    w.value_pane.json_editor.json_path.value = "$.size"
    w.value_pane.json_editor.json_new_key.value, w.value_pane.json_editor.json_value.value = "depth", "5"
    w.value_pane.json_editor.json_add.click()
    w.value_pane.json_editor.json_path.value = "$.tags"
    w.value_pane.json_editor.json_value.value = '"office"'
    w.value_pane.json_editor.json_add.click()
    w.value_pane.json_editor.json_path.value = "$.name"
    w.value_pane.json_editor.json_delete.click()
    assert w.value_pane.confirm_bar.pending and "JSON.DEL" in seen_text(w.value_pane.confirm_bar)
    w.value_pane.confirm_bar.confirm()
    assert json.loads(kv.get(key)) == {"tags": ["home", "office"], "size": {"w": 12, "h": 20, "depth": 5}}
    assert "$.name" not in w.value_pane.json_editor.json_path.options and "depth" in w.value_pane.json_editor.json_tree.value
    w.value_pane.json_editor.json_path.value = "$.size.h"
    w.value_pane.json_editor.json_value.value = "not json"
    assert not w.value_pane.json_editor.set_path("$.size.h", "not json") and "Not valid JSON" in w.message


def test_a_read_only_token_disables_every_edit_with_its_reason(clients, keys):
    kv, ro = clients.kv, clients.kv_readonly
    kv.hset(keys + "h", "f", "v")
    kv.json_set(keys + "j", "$", {"a": 1})
    w = KVExplorer(ro, pattern=keys + "h")
    assert w.readonly and w.selected == keys + "h"
    assert all(b.disabled for b in (w.value_pane.element_editor.element_add, w.value_pane.element_editor.element_save, w.value_pane.element_editor.element_delete))
    assert "Read Only token" in w.value_pane.element_editor.element_add.tooltip and "Read Only token" in seen_text(w.value_pane.element_editor)
    assert not w.value_pane.element_editor.add_element("g", "w") and kv.hgetall(keys + "h") == {"f": "v"}
    w.select(keys + "j")
    assert all(b.disabled for b in (w.value_pane.json_editor.json_set, w.value_pane.json_editor.json_add, w.value_pane.json_editor.json_delete, w.value_pane.edit_toggle))
    assert "Read Only token" in seen_text(w.value_pane.json_editor)
    assert not w.value_pane.json_editor.set_path("$.a", "2") and kv.get(keys + "j") == '{"a":1}'


def test_a_picked_score_reads_back_exactly(kv, keys):
    """The score box holds the score as stored, so Save without a change writes the same score."""
    key = keys + "scores"
    kv.zadd(key, {"big": 1234567.891, "small": 0.1})
    w = KVExplorer(kv, pattern=key)
    w.value_pane.element_editor.element_pick.value = "big · 1234567.891"
    assert w.value_pane.element_editor.element_value.value == "1234567.891"
    w.value_pane.element_editor.element_save.click()
    assert kv.zscore(key, "big") == 1234567.891 and "ZADD " + key + " XX 1234567.891 big" in w.message
