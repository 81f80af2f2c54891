"""The KV explorer's browsing half as a RedisInsight user reads it: a word searched anywhere in key
names, keys once and in natural order with their type, TTL and size, a namespace tree with counts
and memory, pub/sub as a table, the Read Only note. Against the demo sandbox over real HTTP; every
test writes keys under a prefix of its own."""

from __future__ import annotations

import threading
import uuid

import pytest

from svckit.widgets import KVExplorer
from tests.conftest import eventually


@pytest.fixture
def own(kv):
    """A prefix no other test uses; its keys are deleted afterwards."""
    prefix = f"br{uuid.uuid4().hex[:8]}"
    yield prefix
    for key in kv.scan_iter(f"{prefix}*", count=1000):
        kv.delete(key)


def _fill(kv, names: list[str]) -> None:
    pipe = kv.pipeline()
    for name in names:
        pipe.set(name, "x")
    pipe.exec()


def test_a_word_is_searched_anywhere_in_key_names_and_the_glob_is_shown(kv, own) -> None:
    _fill(kv, [f"{own}:user:1", f"{own}:old:{own}:user", f"{own}:users:list", f"{own}:other"])
    w = KVExplorer(kv, pattern=f"{own}:user")
    w.scan_all()
    assert w.matches == [f"{own}:old:{own}:user", f"{own}:user:1", f"{own}:users:list"]
    assert f"3 keys matching *{own}:user* · scanned all {kv.dbsize():,} keys" in w.browser.status.value
    assert "exact lookup" not in w.browser.status.value
    w.pattern = f"{own}:other"  # one key: "1 key matches", and it is shown at once
    w.scan_all()
    assert f"1 key matching *{own}:other* · scanned all" in w.browser.status.value and w.selected == f"{own}:other"
    w.pattern = f"{own}:nothing"
    w.scan_all()
    assert f"0 keys matching *{own}:nothing* · scanned all" in w.browser.status.value
    w.pattern = f"{own}:user:*"  # a pattern stays a pattern
    w.scan_all()
    assert w.matches == [f"{own}:user:1"] and f"1 key matching {own}:user:* ·" in w.browser.status.value


class HeldScans:
    """A KV client whose SCAN calls wait, once ``hold`` is set, for the test to let them answer."""

    def __init__(self, real) -> None:
        self.real = real
        self.hold, self.release = threading.Event(), threading.Event()
        self.threads: list[threading.Thread] = []

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def scan(self, *args, **kwargs):
        if self.hold.is_set():
            self.threads.append(threading.current_thread())
            self.release.wait(10)
        return self.real.scan(*args, **kwargs)


def test_the_scan_buttons_read_the_keys_off_the_kernels_thread(kv, own) -> None:
    _fill(kv, [f"{own}:k:{i}" for i in range(60)])
    held = HeldScans(kv)
    w = KVExplorer(held, pattern=f"{own}:k:*", count=10, page_size=10, max_steps=1)
    first = len(w.matches)
    held.hold.set()
    w.browser.all_button.click()  # returns at once: the SCAN calls wait in the job's thread
    assert w.browser.job.running and len(w.matches) == first and w.browser.all_button.disabled
    held.release.set()
    assert w.browser.wait(30) and w.complete and len(w.matches) == 60
    assert held.threads and threading.current_thread() not in held.threads


def test_closing_the_explorer_stops_a_scan_all_under_way(kv, own) -> None:
    _fill(kv, [f"{own}:c:{i}" for i in range(60)])
    held = HeldScans(kv)
    w = KVExplorer(held, pattern=f"{own}:c:*", count=10, page_size=10, max_steps=1, scan_all_count=10)
    held.hold.set()
    w.browser.all_button.click()  # Scan all: one SCAN of COUNT 10 after another, the first one held
    eventually(lambda: len(held.threads) == 1, "the first SCAN of Scan all under way")
    w.close()
    held.release.set()
    assert w.browser.wait(30)
    assert len(held.threads) == 1 and not w.complete  # no SCAN after the one under way at the close


def test_a_partial_scan_says_so_far_and_how_much_it_walked(kv, own) -> None:
    _fill(kv, [f"{own}:k:{i}" for i in range(30)])
    w = KVExplorer(kv, pattern=f"{own}:k:*", count=10, page_size=5, max_steps=1)
    total = kv.dbsize()
    if w.complete:  # SCAN with COUNT 10 may still have walked a small keyspace whole
        pytest.skip("the keyspace was walked in one call")
    assert f"keys matching {own}:k:* so far · scanned 10 of ~{total:,} keys" in w.browser.status.value


def test_keys_are_listed_once_in_natural_order_with_type_ttl_and_size(kv, own) -> None:
    _fill(kv, [f"{own}:item:{i}" for i in (10, 2, 1, 12, 3)])
    kv.hset(f"{own}:item:11", mapping={"a": "1"})
    kv.expire(f"{own}:item:2", 600)
    w = KVExplorer(kv, pattern=f"{own}:item:*")
    assert w.matches == [f"{own}:item:{i}" for i in (1, 2, 3, 10, 11, 12)]
    labels = [label for label, _ in w.browser.key_list.options]
    assert [value for _, value in w.browser.key_list.options] == w.matches
    header = w.browser.list_header.value
    assert all(word in header for word in ("key", "type", "TTL", "memory", "length"))
    row = dict(zip(w.matches, labels))
    assert "hash" in row[f"{own}:item:11"] and "no expiry" in row[f"{own}:item:11"]
    assert "string" in row[f"{own}:item:2"] and ("9 min" in row[f"{own}:item:2"] or "10 min" in row[f"{own}:item:2"])
    assert " B " in row[f"{own}:item:1"] or "KB" in row[f"{own}:item:1"]  # its memory, in bytes
    # one list: the Browse tab holds no second table of the same keys
    browse = w.tabs.children[0]
    assert "Visible keys" not in w.static_html() and w.browser.keys_table not in browse.children
    w.browser.key_list.value = f"{own}:item:11"  # a click on a row shows the key
    assert w.selected == f"{own}:item:11" and w.selected_type == "hash"


def test_the_read_only_token_is_a_note_not_an_error(clients) -> None:
    w = KVExplorer(clients.kv_readonly, pattern="greeting")
    assert "Read Only token" in w.bulk.bulk_result.value
    assert 'class="svc-msg info"' in w.bulk.bulk_result.value and "svc-msg error" not in w.bulk.bulk_result.value


def test_pubsub_messages_are_a_table_newest_first(kv, own) -> None:
    w = KVExplorer(kv, pattern=f"{own}:none")
    channel = f"{own}-news"
    w.subscribe(channel)
    try:
        w.publish(channel, "first message")
        w.publish(channel, "second message")
        eventually(lambda: len(w.pubsub_frame()) == 2, "both messages to arrive", 10)
    finally:
        w.unsubscribe()
    frame = w.pubsub_frame()
    assert list(frame.columns) == ["received", "channel", "message"]
    assert frame["message"].tolist() == ["second message", "first message"]
    shown = w.pubsub_pane.pubsub_view.value
    assert "<table" in shown and "deque(" not in shown and "maxlen" not in shown
    assert shown.index("second message") < shown.index("first message")
    assert "<th>received (UTC)</th><th>channel</th><th>message</th>" in shown


def test_the_key_tree_is_a_namespace_tree_with_counts_memory_and_a_partial_note(kv, own) -> None:
    _fill(kv, [*(f"{own}:user:{i}" for i in range(30)), *(f"{own}:session:{i}" for i in range(12)),
               f"{own}:config"])
    w = KVExplorer(kv, pattern=f"{own}:*", count=10, page_size=5, max_steps=1)
    status = w.key_tree.tree_status.value
    assert "Counts from a partial scan" in status and "so far · scanned 10 of ~" in status
    w.tree_scan_all()  # the tree's own walk of every matching key, with memory
    status = w.key_tree.tree_status.value
    assert f"43 keys matching {own}:* · scanned all {kv.dbsize():,} keys · memory of every key measured" in status
    rows = {value: label for label, value in w.key_tree.tree_list.options}
    # the search's namespace is open; its namespaces show key counts and memory
    assert rows[f"{own}:"].startswith(f"▼ {own}:   43 keys · ")
    assert rows[f"{own}:user:"].startswith("    ► user:   30 keys · ") and rows[f"{own}:user:"].endswith("B")
    assert rows[f"{own}:session:"].startswith("    ► session:   12 keys · ")
    assert f"key\0{own}:config" in rows
    assert dict(w.tree())[f"{own}:user:"] == 30
    frame = w.tree_frame()  # the same as a frame: namespaces under the search's prefix, most keys first
    assert frame["namespace"].tolist() == [f"{own}:user:", f"{own}:session:"] and frame["keys"].tolist() == [30, 12]
    assert (frame["memory"] > 0).all()
    w.key_tree.tree_list.value = f"{own}:user:"  # a click opens the namespace and aims the Bulk tab at it
    rows = [label for label, _ in w.key_tree.tree_list.options]
    assert "      user:7" not in rows and any(label.strip() == "7" for label in rows)
    assert any("… and 10 more keys" in label for label in rows)  # 20 listed, the rest counted
    assert w.bulk_pattern == f"{own}:user:*"
    w.key_tree.tree_list.value = f"{own}:user:"  # a second click closes it
    assert not any(label.strip() == "7" for label, _ in w.key_tree.tree_list.options)


def test_the_key_tree_scan_all_runs_in_the_background_and_can_be_cancelled(kv, own) -> None:
    _fill(kv, [f"{own}:n:{i}" for i in range(50)])
    w = KVExplorer(kv, pattern=f"{own}:*", count=10, page_size=5, max_steps=1, scan_all_count=10)
    while_running: list[tuple[bool, bool]] = []

    def cancel(_change) -> None:  # Cancel clicked once the walk has made a step
        while_running.append((w.key_tree.tree_cancel_button.disabled, w.key_tree.tree_scan_button.disabled))
        w.key_tree.tree_cancel_button.click()

    w.key_tree.tree_progress.observe(cancel, names="value")
    w.key_tree.tree_scan_button.click()
    assert w.key_tree.wait(timeout=30)
    assert while_running[0] == (False, True)  # while it walked: Cancel enabled, Scan all disabled
    assert "Scan all was cancelled: the counts are still those of the partial scan" in w.key_tree.tree_status.value
    w.key_tree.tree_progress.unobserve(cancel, names="value")
    w.key_tree.scan_all(background=True)
    assert w.key_tree.wait(timeout=60)
    assert f"50 keys matching {own}:* · scanned all" in w.key_tree.tree_status.value
    assert w.key_tree.tree_progress.value == w.key_tree.tree_progress.max and not w.key_tree.tree_scan_button.disabled
