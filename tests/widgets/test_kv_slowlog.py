"""The KV explorer's Slow log tab: opening it reads SLOWLOG GET into a table (id, time, duration in
µs, the command with its secrets masked, the client); Reset empties the log after a confirmation; a
Read Only token, which the service does not let read the slow log, gets a plain explanation. The
module's own demo sandbox (a redis-server child) over real HTTP, its slow-log threshold set to 0 for
the test and put back after."""

from __future__ import annotations

import html
import re
import threading
import uuid

import pytest

from svckit.widgets import KVExplorer
from svckit.widgets.kv_explorer.app import TABS


def text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


@pytest.fixture
def every_command_is_slow(kv):
    before = kv.execute("CONFIG", "GET", "slowlog-log-slower-than")[1]
    kv.execute("CONFIG", "SET", "slowlog-log-slower-than", "0")
    yield
    kv.execute("CONFIG", "SET", "slowlog-log-slower-than", before)


def test_the_slow_log_tab_shows_the_slow_commands_and_resets_them(kv, every_command_is_slow):
    key, user, password = f"slow:{uuid.uuid4().hex[:8]}", f"slow-{uuid.uuid4().hex[:6]}", "pw-" + uuid.uuid4().hex
    kv.set(key, "value")
    kv.execute("ACL", "SETUSER", user, "on", ">" + password)
    try:
        w = KVExplorer(kv, pattern=key)
        assert TABS[w.tabs.selected_index] != "Slow log" and w.slowlog.frame.empty  # not read before it is opened
        w.tabs.selected_index = TABS.index("Slow log")  # a click on the tab: read in the background
        assert w.slowlog.wait(30)
        table = text_of(w.slowlog.slowlog_table.value)
        for column in ("id", "time (UTC)", "duration", "command", "client"):
            assert column in table
        assert f"SET {key} value" in table and " µs" in table
        assert "ACL SETUSER" in table and password not in w.slowlog.slowlog_table.value  # the password masked
        assert "slower than 0 µs" in text_of(w.slowlog.slowlog_status.value)
        w.slowlog.slowlog_reset.click()
        assert w.slowlog.slowlog_confirm.pending and "SLOWLOG RESET" in text_of(w.slowlog.slowlog_confirm.question.value)
        w.slowlog.slowlog_confirm.confirm_button.click()
        assert f"SET {key} value" not in text_of(w.slowlog.slowlog_table.value)
        assert "SLOWLOG RESET: done" in text_of(w.slowlog.slowlog_status.value)
    finally:
        kv.execute("ACL", "DELUSER", user)
        kv.delete(key)


def test_a_read_only_token_is_told_why_there_is_no_slow_log(clients):
    w = KVExplorer(clients.kv_readonly, pattern="greeting")
    w.tabs.selected_index = TABS.index("Slow log")
    assert w.slowlog.wait(30)
    status = text_of(w.slowlog.slowlog_status.value)
    assert "cannot be read with this explorer's Read Only token" in status and "Standard token" in status
    assert "svc-msg info" in w.slowlog.slowlog_status.value and w.slowlog.slowlog_table.value == ""
    assert w.slowlog.slowlog_reset.disabled and "Read Only token" in w.slowlog.slowlog_reset.tooltip


class HeldSlowLog:
    """A KV client whose SLOWLOG GET waits for the test to let it answer."""

    def __init__(self, real) -> None:
        self.real = real
        self.release = threading.Event()

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def execute(self, *command):
        if command[:2] == ("SLOWLOG", "GET"):
            self.release.wait(10)
        return self.real.execute(*command)


def test_the_slow_log_is_read_off_the_kernels_thread(kv):
    held = HeldSlowLog(kv)
    w = KVExplorer(held, pattern="greeting")
    w.tabs.selected_index = TABS.index("Slow log")  # returns at once: SLOWLOG GET waits in the job's thread
    assert w.slowlog.job.running and w.slowlog.slowlog_status.message == ""
    held.release.set()
    assert w.slowlog.wait(30) and w.slowlog.slowlog_status.message  # what the log holds, or why not
    held.release.clear()
    w.slowlog.slowlog_refresh.click()  # the Refresh button too
    assert w.slowlog.job.running
    held.release.set()
    assert w.slowlog.wait(30)
