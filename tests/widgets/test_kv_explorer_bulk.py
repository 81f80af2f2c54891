"""The KV explorer's Bulk tab and its value viewer's pages and formatters, driven through traits,
public methods and buttons (no browser), against the demo sandbox over real HTTP."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import msgpack
import pytest

from svckit.kv import read_export
from svckit.widgets import KVExplorer


def _fill(kv, prefix: str, n: int) -> None:
    pipe = kv.pipeline()  # one SET per key: a cluster refuses an MSET of keys in several slots
    for i in range(n):
        pipe.set(f"{prefix}{i}", f"v{i}")
    pipe.exec()



@pytest.fixture(scope="module")
def clients(clients_on_each):
    """Every test here on one Redis and on a Redis Cluster (tests/widgets/conftest.py)."""
    return clients_on_each


@pytest.fixture
def bulk_keys(kv):
    """1,500 keys under bulk:a:, 40 under bulk:b:, and one look-alike that no node contains."""
    _fill(kv, "bulk:a:", 1500)
    _fill(kv, "bulk:b:", 40)
    kv.set("bulk:ab", "look-alike")
    yield kv
    for key in kv.scan_iter("bulk:*", count=1000):
        kv.delete(key)


def _run_confirmed(w: KVExplorer) -> None:
    w.bulk.bulk_run_button.click()
    assert w.bulk.bulk_confirm.pending
    w.bulk.bulk_confirm.confirm_button.click()
    assert w.bulk_wait(timeout=60)


def test_dry_run_counts_and_samples_then_delete_waits_for_confirmation(bulk_keys) -> None:
    kv = bulk_keys
    w = KVExplorer(kv, pattern="bulk:a:*")
    assert w.bulk_pattern == "bulk:a:*" and "bulk:a:*" in w.bulk.bulk_target.value
    assert w.bulk.bulk_run_button.disabled
    w.bulk.bulk_run_button.click()  # no dry run yet: nothing to confirm
    assert not w.bulk.bulk_confirm.pending and "dry run first" in w.bulk_text.lower()

    w.bulk_action = "delete"
    plan = w.bulk_dry_run()
    assert plan is not None and (plan.count, plan.complete) == (1500, True)
    assert w.bulk_state == "planned" and "1,500 keys matching bulk:a:*" in w.bulk_text
    assert w.bulk.bulk_progress.value == w.bulk.bulk_progress.max
    assert "<table" in w.bulk.bulk_sample.value and "bulk:a:" in w.bulk.bulk_sample.value and "bulk:b:" not in w.bulk.bulk_sample.value

    assert not w.bulk.bulk_run_button.disabled
    w.bulk.bulk_run_button.click()
    assert w.bulk.bulk_confirm.pending and "Delete 1,500 keys matching bulk:a:*" in w.bulk.bulk_confirm.question.value
    assert kv.exists("bulk:a:0") == 1  # nothing ran before the confirmation
    w.bulk.bulk_confirm.confirm_button.click()
    assert w.bulk_wait(timeout=60)
    s = w.bulk_summary
    assert w.bulk_state == "done" and (s.matched, s.done, s.failed) == (1500, 1500, 0)
    assert s.batches == 3 and w.bulk.bulk_progress.value == 1500
    assert "deleted 1,500" in w.bulk_text and "deleted 1,500" in w.bulk.bulk_result.value
    assert not list(kv.scan_iter("bulk:a:*", count=1000))
    assert len(list(kv.scan_iter("bulk:b:*", count=1000))) == 40 and kv.get("bulk:ab") == "look-alike"
    assert w.bulk.bulk_plan is None  # the keyspace changed: a next run needs a new dry run


def test_the_browser_counts_every_key_it_matches_and_the_whole_keyspace(bulk_keys) -> None:
    # on a cluster the keys live on three masters: DBSIZE adds them up, SCAN walks them all
    kv = bulk_keys
    w = KVExplorer(kv, pattern="bulk:*")
    w.scan_all()
    total = kv.dbsize()
    assert total >= 1541 and w.browser.dbsize == total and w.browser.complete
    assert sorted(w.browser.matches) == sorted([*(f"bulk:a:{i}" for i in range(1500)),
                                                *(f"bulk:b:{i}" for i in range(40)), "bulk:ab"])
    assert f"1,541 keys matching bulk:* · scanned all {total:,} keys</span>" in w.browser.status.value


def test_a_key_tree_node_is_the_target_of_set_and_clear_ttl(bulk_keys) -> None:
    kv = bulk_keys
    w = KVExplorer(kv, pattern="bulk:*")
    w.scan_all()
    assert "bulk:b:" in [v for _, v in w.key_tree.tree_list.options]
    w.key_tree.tree_list.value = "bulk:b:"  # a click on the node: it opens, and the Bulk tab aims at it
    assert w.bulk_pattern == "bulk:b:*" and w.pattern == "bulk:*"
    w.key_tree.tree_filter.click()  # "Filter keys": the browser searches the node too
    assert w.pattern == "bulk:b:*" and w.bulk_pattern == "bulk:b:*"
    w.bulk.bulk_action_box.value = "set TTL"
    w.bulk.bulk_ttl_box.value = 500
    w.bulk_dry_run()
    assert w.bulk.bulk_plan.count == 40
    assert (w.bulk_action, w.bulk_ttl) == ("set TTL", 500)
    assert w.bulk.bulk_ttl_box.layout.display == "flex" and w.bulk.bulk_path_box.layout.display == "none"
    _run_confirmed(w)
    assert w.bulk_summary.done == 40
    assert all(0 < kv.ttl(f"bulk:b:{i}") <= 500 for i in range(40))
    assert kv.ttl("bulk:a:1") == -1 and kv.ttl("bulk:ab") == -1

    w.bulk_action = "clear TTL"
    w.bulk_dry_run()
    _run_confirmed(w)
    assert "TTL cleared on 40" in w.bulk_text
    assert all(kv.ttl(f"bulk:b:{i}") == -1 for i in range(40))


def test_exports_to_a_dataframe_and_to_a_csv_file(bulk_keys, tmp_path: Path) -> None:
    kv = bulk_keys
    w = KVExplorer(kv, pattern="bulk:b:*")
    w.bulk_action = "export DataFrame"
    w.bulk_dry_run()
    _run_confirmed(w)
    frame = w.bulk_frame
    assert len(frame) == 40 and set(frame["type"]) == {"string"}
    assert dict(zip(frame["key"], frame["value"]))["bulk:b:7"] == "v7"
    assert "Exported" in w.bulk.bulk_sample.value

    w.bulk_action = "export CSV"
    assert w.bulk.bulk_path_box.layout.display == "flex" and w.bulk.bulk_path_box.value.endswith(".csv")
    w.bulk.bulk_path_box.value = str(tmp_path / "bulk.csv")
    w.bulk_dry_run()
    _run_confirmed(w)
    assert str(tmp_path / "bulk.csv") in w.bulk_text
    rows = read_export(tmp_path / "bulk.csv")
    assert sorted(r["key"] for r in rows) == sorted(f"bulk:b:{i}" for i in range(40))
    assert kv.dbsize() >= 1541  # exporting deleted nothing


def test_cancel_stops_the_run_between_batches_and_says_what_was_done(bulk_keys) -> None:
    kv = bulk_keys
    w = KVExplorer(kv, pattern="bulk:a:*")
    w.bulk_batch = 10
    w.bulk_action = "delete"
    w.bulk_dry_run()

    def cancel_after_two_batches(change) -> None:
        if change["new"] >= 20:
            w.bulk_cancel()

    w.bulk.bulk_progress.observe(cancel_after_two_batches, names="value")
    assert w.bulk.bulk_cancel_button.disabled
    w.bulk_run(background=True)
    assert w.bulk_wait(timeout=60)
    s = w.bulk_summary
    # the batches in flight when cancel came finish and are counted; the other 150 - n never start
    assert w.bulk_state == "cancelled" and s.cancelled and 2 <= s.batches < 150 and s.done == 10 * s.batches
    assert f"cancelled after {s.batches} batches" in w.bulk_text
    assert len(list(kv.scan_iter("bulk:a:*"))) == 1500 - s.done
    # the keyspace changed: Run… waits for a new dry run, which may be made at once
    assert w.bulk.bulk_cancel_button.disabled and w.bulk.bulk_run_button.disabled and not w.bulk.bulk_dry_button.disabled


def test_read_only_token_disables_bulk_actions_with_the_reason(clients, bulk_keys) -> None:
    w = KVExplorer(clients.kv_readonly, pattern="bulk:a:1")
    assert w.readonly
    assert w.bulk.bulk_dry_button.disabled and w.bulk.bulk_run_button.disabled
    assert "Standard token" in w.bulk.bulk_run_button.tooltip and "Read Only token" in w.bulk.bulk_result.value
    w.bulk_pattern = "bulk:a:*"
    assert w.bulk_run() is None and w.bulk_dry_run() is None
    assert w.bulk_state == "failed" and "Standard token" in w.bulk_text
    assert clients.kv.exists("bulk:a:1") == 1


def test_a_new_pattern_drops_the_dry_run_of_the_old_one(bulk_keys) -> None:
    w = KVExplorer(bulk_keys, pattern="bulk:b:*")
    w.bulk_dry_run()
    assert w.bulk_state == "planned"
    w.pattern = "bulk:a:*"
    assert w.bulk.bulk_plan is None and w.bulk_state == "idle" and w.bulk.bulk_sample.value == ""


# -- the value viewer: pages and formatters -----------------------------------------------------


@pytest.fixture
def large_values(kv):
    kv.hset("lv:hash", mapping={f"f{i:03}": base64.b64encode(f"value {i}".encode()).decode() for i in range(650)})
    kv.zadd("lv:zset", {f"m{i:03}": float(i) for i in range(250)})
    kv.rpush("lv:list", *(f"e{i}" for i in range(230)))
    raw = kv.execute  # the text client cannot write binary; the bytes view can

    kv.as_bytes().set("lv:gz", gzip.compress(json.dumps({"city": "Oslo", "n": [1, 2]}).encode()))
    kv.as_bytes().set("lv:mp", msgpack.packb({"ok": True}))
    kv.set("lv:text", "just text")
    assert raw("EXISTS", "lv:gz") == 1
    yield kv
    for key in ("lv:hash", "lv:zset", "lv:list", "lv:gz", "lv:mp", "lv:text"):
        kv.delete(key)


def test_next_and_previous_page_through_a_sorted_set_and_a_list(large_values) -> None:
    w = KVExplorer(large_values, pattern="lv:zset", value_limit=100)
    assert w.value_pane.value_page_size.value == 100
    assert w.value_frame["rank"].tolist() == list(range(100))
    assert w.value_pane.value_prev.disabled and not w.value_pane.value_next.disabled
    assert "page 1 · rows 1–100" in w.value_pane.value_page_label.value
    w.value_pane.value_next.click()
    assert w.value_frame["rank"].tolist() == list(range(100, 200)) and w.value_page_number == 1
    w.value_next_page()
    assert w.value_frame["member"].tolist() == [f"m{i}" for i in range(200, 250)]
    assert w.value_pane.value_next.disabled and "last page" in w.value_pane.value_page_label.value
    assert "50 rows shown of 250" in w.value_pane.detail_header.value
    w.value_pane.value_prev.click()
    w.value_previous_page()
    assert w.value_frame["rank"].tolist() == list(range(100)) and w.value_pane.value_prev.disabled

    w.select("lv:list")
    w.value_pane.value_page_size.value = 200
    assert w.value_limit == 200 and len(w.value_frame) == 200
    w.value_next_page()
    assert w.value_frame["value"].tolist() == [f"e{i}" for i in range(200, 230)]


def test_a_hash_is_paged_with_hscan_cursors_and_every_field_seen_once(large_values) -> None:
    w = KVExplorer(large_values, pattern="lv:hash", value_limit=100)
    seen: list[str] = []
    pages = [w.value_frame["field"].tolist()]
    seen += pages[0]
    while not w.value_pane.value_next.disabled:
        w.value_next_page()
        pages.append(w.value_frame["field"].tolist())
        seen += pages[-1]
        assert len(pages) < 50
    assert sorted(set(seen)) == [f"f{i:03}" for i in range(650)]
    assert len(pages) > 1
    w.value_previous_page()  # back one page: the same fields as when it was first shown
    assert w.value_frame["field"].tolist() == pages[-2]


def test_formatters_show_values_or_say_why_they_do_not_fit(large_values) -> None:
    w = KVExplorer(large_values, pattern="lv:gz")
    assert w.value_pane.format_box.options == ("raw", "json", "hex", "base64", "gzip", "msgpack")
    w.value_pane.format_box.value = "gzip"
    assert w.value_format == "gzip" and w.value_pane.formatted_value.ok
    assert json.loads(w.value_pane.formatted_value.text) == {"city": "Oslo", "n": [1, 2]}
    assert "Oslo" in w.value_pane.value_view.value
    w.value_format = "json"
    assert not w.value_pane.formatted_value.ok and "not valid json" in w.value_pane.value_view.value
    w.value_format = "hex"
    assert w.value_pane.value_view.value.count("1f 8b") == 1  # the gzip magic number, at offset 0

    w.value_format = "msgpack"
    w.select("lv:mp")
    assert json.loads(w.value_pane.formatted_value.text) == {"ok": True}
    w.select("lv:text")
    assert "not valid msgpack" in w.value_pane.value_view.value

    w.value_format = "base64"
    w.select("lv:hash")
    shown = w.value_pane.formatted_value
    assert shown["value"].str.startswith("value ").all()  # each field's value decoded
    w.value_format = "gzip"
    assert "elements are not valid gzip" in w.value_pane.value_view.value
    assert w.value_pane.formatted_value["value"].str.startswith("invalid: not valid gzip").all()
    w.value_format = "raw"
    assert w.value_pane.formatted_value is None and "<table" in w.value_pane.value_view.value


# -- what a console would do: no destructive default, a dry run before Run, one wording, JSON ----------


def test_run_waits_for_a_dry_run_of_this_pattern_type_and_action(bulk_keys) -> None:
    w = KVExplorer(bulk_keys, pattern="bulk:b:*")
    assert w.bulk_action == w.bulk.bulk_action_box.value == "export DataFrame"  # writes nothing
    assert w.bulk.bulk_run_button.disabled and not w.bulk.bulk_dry_button.disabled
    w.bulk_dry_run()
    assert not w.bulk.bulk_run_button.disabled
    w.bulk.bulk_action_box.value = "delete"  # another action: its own dry run first
    assert w.bulk.bulk_run_button.disabled and "make a dry run of it" in w.bulk_text
    w.bulk_dry_run()
    assert not w.bulk.bulk_run_button.disabled
    w.type_filter = "hash"  # another type: the dry run counted other keys
    assert w.bulk.bulk_run_button.disabled
    w.type_filter = ""
    w.bulk_dry_run()
    w.pattern = "bulk:a:*"  # another pattern
    assert w.bulk.bulk_run_button.disabled and w.bulk.bulk_plan is None
    assert bulk_keys.exists("bulk:b:1") == 1


def test_the_browser_and_the_bulk_tab_count_in_the_same_words(kv) -> None:
    _fill(kv, "same:noise:", 2500)
    _fill(kv, "same:user:", 200)
    try:
        w = KVExplorer(kv, pattern="same:user")  # a word: both search *same:user*
        total = kv.dbsize()
        assert w.bulk_pattern == w.browser.glob == "*same:user*"
        if not w.complete:  # one SCAN of COUNT 1,000 found a page: the browser says it is partial
            assert "keys matching *same:user* so far · scanned " in w.browser.status.value and f"of ~{total:,} keys" in w.browser.status.value
        w.bulk_dry_run()
        counted = f"200 keys matching *same:user* · scanned all {total:,} keys"
        assert counted in w.bulk_text and counted in w.bulk.bulk_progress_label.value
        w.scan_all()
        assert counted in w.browser.status.value
    finally:
        for key in kv.scan_iter("same:*", count=1000):
            kv.delete(key)


def test_exported_values_are_shown_as_json(kv) -> None:
    kv.hset("expjson:user:1", mapping={"name": "Ada", "plan": "paid"})
    kv.rpush("expjson:list", "a", "b")
    try:
        w = KVExplorer(kv, pattern="expjson:*")
        w.bulk_dry_run()
        _run_confirmed(w)
        shown = w.bulk.bulk_sample.value
        assert "{&quot;name&quot;: &quot;Ada&quot;, &quot;plan&quot;: &quot;paid&quot;}" in shown
        assert "[&quot;a&quot;, &quot;b&quot;]" in shown
        assert "{&#x27;name&#x27;" not in shown and "&#x27;a&#x27;" not in shown  # no Python reprs
        assert dict(zip(w.bulk_frame["key"], w.bulk_frame["value"]))["expjson:user:1"] == {"name": "Ada", "plan": "paid"}
    finally:
        kv.delete("expjson:user:1")
        kv.delete("expjson:list")
