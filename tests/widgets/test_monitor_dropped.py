"""The KV explorer's monitor when the sandbox drops its stream (the reader fell further behind than
``kv_monitor_backlog_bytes``): the view says why, and the reader thread ends."""

from __future__ import annotations

from svckit.widgets import KVExplorer
from tests.conftest import eventually, running


def test_the_monitor_view_says_why_the_server_dropped_its_stream(tmp_path):
    # a bound no line fits in: the first command the monitor would show drops it
    with running(tmp_path, areas=["kv"], backend="fakeredis", kv_monitor_backlog_bytes=1) as sb:
        kv = sb.connect().kv
        w = KVExplorer(kv, pattern="nothing")
        w.monitor_pane.monitor_toggle.value = True
        kv.set("dropped:key", "1")
        eventually(lambda: not w.monitor_pane.monitor.running, "the monitor's reader to end", 10)
        assert "StreamClosed" in (w.monitor_pane.monitor.error or "") and "kv_monitor_backlog_bytes" in w.monitor_pane.monitor.error
        assert "fell behind" in w.monitor_pane.monitor_view.value
        w.monitor_pane.monitor_toggle.value = False
