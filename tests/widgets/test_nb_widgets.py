"""The KV explorer and the account dashboard, driven through their traits, public methods and buttons
(no browser), against a real sandbox over HTTP."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest

from svckit.errors import mask
from svckit.sandbox.plans import PLAN_PRESETS
from svckit.widgets import AccountDashboard, KVExplorer
from tests.conftest import eventually, running


class Counting:
    """Delegates to a real client and counts the calls the widget makes (SCAN steps, pipelines)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return attr(*args, **kwargs)

        return call


@pytest.fixture(scope="module", autouse=True)
def keyspace(demo_kv_sandbox):
    kv = demo_kv_sandbox.connect().kv
    pipe = kv.pipeline()
    for i in range(600):
        pipe.command("HSET", f"shop:user:{i}", "name", f"user {i}")
    for i in range(300):
        pipe.command("SET", f"shop:session:{i}", "x", "EX", "3600")
    pipe.command("RPUSH", "shop:list", "a", "b", "c")
    pipe.command("SADD", "shop:set", "x", "y")
    pipe.command("XADD", "shop:stream", "1700000000000-0", "kind", "view")
    pipe.exec()
    kv.json_set("shop:doc", "$", {"name": "Lamp", "tags": ["home"]})
    kv.close()


def test_first_page_is_bounded_and_status_counts_scanned_of_dbsize(kv):
    spy = Counting(kv)
    w = KVExplorer(spy, pattern="shop:*", count=100, page_size=25, max_steps=50)
    assert 25 <= len(w.matches) < 950  # one page of matches, not the whole keyspace
    assert not w.complete
    assert spy.calls["scan"] <= w.max_steps
    assert len(w.browser.key_list.options) == 25
    assert "of ~" in w.browser.status.value and f"{w.dbsize:,}" in w.browser.status.value
    assert w.dbsize == kv.dbsize()
    # metadata for the visible page only, in one pipeline (a describe script per key)
    assert spy.calls["pipeline"] == 1
    assert len(w.visible_frame) == 25 and w.visible_frame["type"].notna().all()


def test_typing_a_pattern_changes_the_key_list(kv):
    w = KVExplorer(kv, pattern="shop:user:*")
    assert all(k.startswith("shop:user:") for k in w.matches)
    w.browser.pattern_box.value = "shop:session:*"  # what typing in the box does
    assert w.pattern == "shop:session:*"
    assert w.matches and all(k.startswith("shop:session:") for k in w.matches)
    sessions = w.visible_frame
    assert sessions["ttl_s"].notna().all() and (sessions["ttl_s"] <= 3600).all()


def test_type_filter(kv):
    w = KVExplorer(kv, pattern="shop:*")
    w.browser.type_box.value = "list"
    w.scan_all()
    assert w.matches == ["shop:list"]
    assert w.complete


def test_scan_more_and_scan_all_with_cap(kv):
    w = KVExplorer(kv, pattern="shop:*", count=50, page_size=20, scan_all_count=50)
    first = len(w.matches)
    w.browser.more_button.click()  # the SCAN calls run on the browser's job
    assert w.browser.wait(30) and len(w.matches) > first
    w.scan_cap = 120
    w.scan_all()
    assert 120 <= len(w.matches) < 905 and not w.complete
    assert "cap" in w.message
    w.scan_cap = 100_000
    w.browser.all_button.click()
    assert w.browser.wait(30) and w.complete and len(w.matches) == 600 + 300 + 4
    assert w.scanned == w.dbsize
    assert w.browser.more_button.disabled


def test_a_word_is_searched_anywhere_and_the_key_of_that_name_is_picked(kv):
    w = KVExplorer(kv, pattern="shop:user:7")  # no glob characters: *shop:user:7*, as RedisInsight searches
    w.scan_all()
    assert w.matches == ["shop:user:7", *(f"shop:user:{i}" for i in range(70, 80))]
    assert w.selected == "shop:user:7"
    assert w.value_frame.set_index("field")["value"]["name"] == "user 7"
    w.pattern = "shop:no-such-key"
    assert w.matches == [] and "0 keys matching *shop:no-such-key* · scanned all" in w.browser.status.value


@pytest.mark.parametrize("key,kind,check", [
    ("greeting", "string", lambda f: f["value"].tolist() == ["hello"]),
    ("user:1", "hash", lambda f: dict(zip(f["field"], f["value"]))["name"] == "Ada"),
    ("queue:jobs", "list", lambda f: f["value"].tolist() == ["a", "b", "c"]),
    ("shop:set", "set", lambda f: f["member"].tolist() == ["x", "y"]),
    ("leaderboard", "zset", lambda f: f["member"].tolist() == ["cy", "bob", "ada"]),
    ("shop:stream", "stream", lambda f: f["kind"].tolist() == ["view"]),
    ("shop:doc", None, lambda f: dict(zip(f["path"], f["value"]))["$.name"] == "Lamp"),
])
def test_clicking_a_key_shows_its_value(kv, key, kind, check):
    w = KVExplorer(kv, pattern=key)
    w.browser.key_list.value = None
    w.browser.key_list.value = key  # a click in the list
    assert w.selected == key
    if kind:
        assert w.selected_type == kind
    assert check(w.value_frame)
    assert key in w.value_pane.detail_header.value and "<table" in w.value_pane.value_view.value


def test_a_large_value_is_read_one_page_and_says_how_much_is_shown(kv):
    kv.delete("big:list", "big:zset")
    kv.rpush("big:list", *(f"e{i}" for i in range(1200)))
    kv.zadd("big:zset", {f"m{i:04}": i for i in range(700)})
    w = KVExplorer(kv, pattern="big:list", value_limit=500)
    assert w.value_frame["index"].tolist() == list(range(500))
    assert "500 rows shown of 1,200" in w.value_pane.detail_header.value
    assert not w.value_pane.value_page.complete
    w.select("big:zset")
    assert w.value_frame["rank"].tolist() == list(range(500)) and w.value_frame["member"].iloc[-1] == "m0499"
    assert "500 rows shown of 700" in w.value_pane.detail_header.value
    kv.delete("big:list", "big:zset")


def test_edits_wait_for_confirmation(kv):
    kv.set("shop:edit", "before")
    w = KVExplorer(kv, pattern="shop:edit")
    w.value_pane.edit_box.value = "after"
    w.value_pane.save_button.click()
    assert w.value_pane.confirm_bar.pending and kv.get("shop:edit") == "before"
    w.value_pane.confirm_bar.cancel_button.click()
    assert kv.get("shop:edit") == "before"
    w.value_pane.save_button.click()
    w.value_pane.confirm_bar.confirm_button.click()
    assert kv.get("shop:edit") == "after" and w.message_kind == "ok"
    w.value_pane.ttl_box.value = 120
    w.value_pane.ttl_button.click()
    w.value_pane.confirm_bar.confirm()
    assert 0 < kv.ttl("shop:edit") <= 120
    w.value_pane.persist_button.click()
    w.value_pane.confirm_bar.confirm()
    assert kv.ttl("shop:edit") == -1
    w.value_pane.delete_button.click()
    assert kv.exists("shop:edit") == 1
    w.value_pane.confirm_bar.confirm()
    assert kv.exists("shop:edit") == 0 and "shop:edit" not in w.matches


def test_hash_and_json_edits(kv):
    # keys of this test's own (outside shop:*, whose keys other tests read, in any order)
    kv.hset("edits:user", mapping={"name": "user"})
    kv.json_set("edits:doc", "$", {"name": "Lamp", "tags": ["home"]})
    try:
        w = KVExplorer(kv, pattern="edits:user")
        assert w.save_value('{"name": "renamed", "city": "Lisbon"}')
        assert kv.hgetall("edits:user") == {"name": "renamed", "city": "Lisbon"}
        w.pattern = "edits:doc"
        assert w.save_value('{"name": "Desk"}')
        assert kv.json_get("edits:doc", "$") == [{"name": "Desk"}]
        assert not w.save_value("{not json")
        assert "Not valid JSON" in w.message
    finally:
        kv.delete("edits:user", "edits:doc")


def test_read_only_token_disables_and_refuses_edits(clients):
    ro = clients.kv_readonly
    w = KVExplorer(ro, pattern="greeting")
    assert w.readonly
    assert all(b.disabled for b in (w.value_pane.save_button, w.value_pane.ttl_button, w.value_pane.persist_button, w.value_pane.delete_button))
    assert "Read Only" in w.header.value
    assert w.value_frame["value"].tolist() == ["hello"]  # reading still works
    assert w.delete_key() is False
    assert "Read Only token" in w.message and w.message_kind == "error"
    assert clients.kv.exists("greeting") == 1


def test_read_only_scan_refusal_is_explained(clients):
    w = KVExplorer(clients.kv_readonly, pattern="shop:*")
    assert w.matches == [] and w.complete
    assert "exact key name" in w.message


def test_server_refusal_is_caught(clients):
    """Even if the widget believed it could write, the service's refusal becomes a clear message."""
    w = KVExplorer(clients.kv_readonly, pattern="greeting")
    w.readonly = False
    assert w.delete_key() is False
    assert "refused" in w.message and w.message_kind == "error"
    assert clients.kv.exists("greeting") == 1


def test_key_tree_by_delimiter(kv):
    w = KVExplorer(kv, pattern="shop:*")
    w.scan_all()
    tree = dict(w.tree())
    assert tree["shop:user:"] == 600 and tree["shop:session:"] == 300 and tree["shop:list"] == 1
    w.key_tree.tree_list.value = "shop:user:"  # click a namespace, then "Filter keys": drill down
    w.key_tree.tree_filter.click()
    assert w.pattern == "shop:user:*"
    w.key_tree.tree_up.click()
    assert w.pattern == "shop:*"
    w.key_tree.delimiter_box.value = "/"
    assert all("/" not in prefix for prefix, _ in w.tree())


def test_console_single_pipeline_and_transaction(kv):
    w = KVExplorer(kv, pattern="greeting")
    assert w.run_command("GET greeting") == "hello"
    frame = w.run_command("SET c:1 1\nINCR c:1\nLPUSH c:1 x", "pipeline")
    assert frame["ok"].tolist() == [True, True, False]
    assert "WRONGTYPE" in frame["error"].iloc[2]
    assert w.history[0].startswith("SET c:1 1")
    assert w.run_command("SET c:2 1\nWATCH c:2", "transaction") is None
    assert "discarded" in w.console.console_out.value
    assert kv.exists("c:2") == 0
    w.console.console_input.value = "DBSIZE"
    w.console.console_mode.value = "single"
    w.console.console_run.click()
    assert w.console.last_result == kv.dbsize()


def test_monitor_streams_live_and_stops_cleanly(kv):
    w = KVExplorer(kv, pattern="greeting")
    w.monitor_pane.monitor_toggle.value = True
    assert w.monitor_pane.monitor.running
    kv.set("monitored:key", "1")
    eventually(lambda: any("monitored:key" in line for line in w.monitor_pane.monitor.lines), "the monitor to show the command", 10)
    assert "monitored:key" in w.monitor_pane.monitor_view.value
    w.monitor_pane.monitor_toggle.value = False
    assert not w.monitor_pane.monitor.running
    assert w.monitor_pane.monitor.error is None
    assert not any(t.name == "svckit-stream" and t.is_alive() for t in threading.enumerate())


def test_pubsub_streams_live_and_stops_cleanly(kv):
    w = KVExplorer(kv, pattern="greeting")
    w.subscribe("news")
    assert w.pubsub_pane.pubsub.running
    assert w.publish("news", "hello subscribers") == 1
    eventually(lambda: any("hello subscribers" in line for line in w.pubsub_pane.pubsub.lines), "the subscription to show the message", 10)
    assert w.unsubscribe() is True
    assert not w.pubsub_pane.pubsub.running and w.pubsub_pane.pubsub.error is None


# -- account dashboard --------------------------------------------------------------------------
def test_dashboard_groups_units_badges_and_masked_token(clients):
    d = AccountDashboard(clients.account, page="queue")
    account = clients.account.queue_account()
    token = account.token.get_secret_value()
    titles = [c.value for c in d.queue_view.groups_box.children]
    assert len(titles) == 6
    for title in ("Throughput", "Sizes", "Dead-letter queue", "Scheduling", "Parallelism", "Plan"):
        assert any(f"<h4>{title}</h4>" in t for t in titles)
    assert any("MiB" in t for t in titles) and any("requests/s" in t for t in titles)
    assert "plan: Free" in d.queue_view.header.value and "state: active" in d.queue_view.header.value
    assert d.token_masked == mask(token) and token not in d.queue_view.header.value


def test_dashboard_chart_compares_plans_in_place(clients):
    d = AccountDashboard(clients.account, compare_plan="paid", presets=PLAN_PRESETS, page="queue")
    fig = d.queue_view.figure
    current, other = fig.data
    assert max(current.x) <= 100 and max(other.x) <= 100 and min(other.x) >= 0
    labels = dict(zip(current.y, current.text))
    assert labels["Retries per message"] == "3 retries"
    d.queue_view.compare_box.value = "queue_enterprise_10m"
    assert d.queue_view.figure is fig  # updated in place, not re-created
    assert fig.data[1].name == "Fixed 10M"
    assert dict(zip(fig.data[1].y, fig.data[1].text))["Retries per message"] == "20 retries"


def test_dashboard_without_presets_shows_the_limits_alone(clients):
    d = AccountDashboard(clients.account, page="queue")
    assert d.queue_view.figure not in d.queue_view.children and d.queue_view.compare_box.layout.display == "none"
    assert "compare_display" not in d.queue_view.limits and "Pay as you go</th>" not in d.queue_view.groups_box.children[0].value
    assert list(d.queue_view.upgrade_box.options) == [("Pay as you go", "paid"), ("Fixed 1M", "queue_enterprise_1m"),
                                           ("Fixed 10M", "queue_enterprise_10m")]
    with_presets = AccountDashboard(clients.account, presets=PLAN_PRESETS, page="queue")
    assert with_presets.queue_view.figure in with_presets.queue_view.children and "Pay as you go</th>" in with_presets.queue_view.groups_box.children[0].value


@pytest.fixture
def own_account(tmp_path):
    """Clients of a sandbox of the test's own, for a test that upgrades the plan or rotates the token:
    the module's sandbox is read, in any order, by tests that expect the account as the seed made it."""
    with running(tmp_path, areas=["account"], seed="demo") as sandbox, sandbox.connect() as c:
        yield c


def test_dashboard_refresh_shows_server_changes(own_account):
    clients = own_account
    d = AccountDashboard(clients.account, page="queue")
    before = d.refreshed
    clients.account.upgrade_queue_plan(d.account.customer_id, "queue_enterprise_1m")
    d.queue_view.refresh_button.click()  # read in the background
    assert d.wait(30) and d.refreshed == before + 1
    assert "plan: Fixed 1M" in d.queue_view.header.value


def test_dashboard_upgrade_and_rotate_need_confirmation(own_account):
    clients = own_account
    d = AccountDashboard(clients.account, page="queue")
    old = clients.account.queue_account().token.get_secret_value()
    d.queue_view.rotate_button.click()
    assert d.confirm_bar.pending
    assert clients.account.queue_account().token.get_secret_value() == old
    d.confirm_bar.confirm_button.click()
    new = clients.account.queue_account().token.get_secret_value()
    assert new != old and d.token_masked == mask(new)
    shown = d.queue_view.header.value + d.message + d.queue_view.msg.value
    assert new not in shown and d.token_masked in shown
    d.queue_view.upgrade_box.value = "queue_enterprise_10m"
    d.queue_view.upgrade_button.click()
    assert clients.account.queue_account().plan != "queue_enterprise_10m"
    d.confirm_bar.confirm()
    assert clients.account.queue_account().plan == "queue_enterprise_10m"
    assert d.account.plan == "queue_enterprise_10m"


def test_stream_pump_stop_closes_a_blocked_stream():
    """stop() closes the stream from the caller's thread; a stream whose close() ends a blocked read
    (as the clients' SSE streams do) lets the reading thread end at once."""
    import queue

    import ipywidgets as W

    from svckit.widgets._jobs import StreamPump

    end = object()

    class Stream:
        def __init__(self) -> None:
            self.events: queue.Queue = queue.Queue()
            self.closed = 0

        def __iter__(self):
            return self

        def __next__(self):
            item = self.events.get()  # blocks, like a network read
            if item is end:
                raise StopIteration
            return item

        def close(self) -> None:
            self.closed += 1
            self.events.put(end)

    stream = Stream()
    target = W.HTML()
    pump = StreamPump(target, fmt=str, max_lines=3)
    pump.start(lambda: stream)
    for i in range(5):
        stream.events.put(f"event {i}")
    eventually(lambda: pump.count == 5, "the pump to hand over five events", 10)
    assert list(pump.lines) == ["event 2", "event 3", "event 4"]  # newest lines only
    assert "event 4" in target.value and "event 1" not in target.value
    assert pump.stop() is True
    assert stream.closed >= 1 and not pump.running and pump.error is None


def test_stopping_pubsub_sends_nothing_to_other_subscribers(kv):
    """Unsubscribing the widget must not publish anything to wake its reader: another subscriber of
    the channel sees only real messages."""
    spy = Counting(kv)
    w = KVExplorer(spy, pattern="greeting")
    w.subscribe("shared-news")
    w.monitor_pane.monitor_toggle.value = True
    assert w.pubsub_pane.pubsub.running and w.monitor_pane.monitor.running
    with kv.subscribe("shared-news") as witness:
        assert next(witness).kind == "subscribe"
        before = Counter(spy.calls)
        assert w.unsubscribe() is True
        w.monitor_pane.monitor_toggle.value = False
        assert not w.pubsub_pane.pubsub.running and w.pubsub_pane.pubsub.error is None
        assert not w.monitor_pane.monitor.running and w.monitor_pane.monitor.error is None
        assert spy.calls == before  # stopping sent no command (no PUBLISH, no PING)
        kv.publish("shared-news", "real news")
        message = next(witness)
    assert (message.kind, message.data) == ("message", "real news")

