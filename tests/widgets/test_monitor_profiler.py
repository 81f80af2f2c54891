"""The MonitorProfiler widget against the demo key-value sandbox over real HTTP: Start, traffic from
another client, the live table and figure, Stop; Reset."""

from __future__ import annotations

from svckit.kv import KV
from svckit.widgets import MonitorProfiler
from tests.conftest import eventually


def test_profiles_live_traffic_and_redraws_by_itself(kv: KV[str], clients) -> None:
    w = MonitorProfiler(kv, capacity=100)
    assert "nothing yet" in w.table_views["keys"].value and w.events == 0
    w.toggle.value = True  # what a click on Start does
    assert w.running and w.toggle.description == "Stop"
    other = KV.from_settings(clients.settings)
    try:
        for i in range(25):
            other.incr("profiler:hits")
        other.set("profiler:cold", "1")
    finally:
        other.close()
    # the paint thread redraws every second: no refresh() call here
    eventually(lambda: w.events >= 26, "the profiler to count 26 commands")
    eventually(lambda: "profiler:hits" in w.table_views["keys"].value, "the keys table to show the hot key")
    assert w.stop() and not w.running and w.toggle.description == "Start"
    snap = w.snapshot
    assert snap is not None
    keys = dict(zip(snap.keys["key"], snap.keys["count"]))
    assert keys["profiler:hits"] == 25 and keys["profiler:cold"] == 1
    assert dict(zip(snap.commands["command"], snap.commands["count"]))["INCR"] == 25
    assert "commands/s" in w.status.value and "100 key and prefix counters" in w.status.value
    # the figure: rate line, command mix, hottest keys, hottest prefixes
    kinds = [trace.type for trace in w.figure.data]
    assert kinds == ["scatter", "bar", "bar", "bar"]
    assert tuple(w.figure.data[2].y)[:1] == ("profiler:hits",)
    assert sum(w.figure.data[0].y) >= 26
    # stopped: traffic is no longer counted
    counted = w.events
    kv.get("profiler:hits")
    assert w.refresh().events == counted


def test_reset_forgets_the_counts(kv: KV[str]) -> None:
    w = MonitorProfiler(kv)
    w.start()
    kv.set("profiler:reset", "1")
    eventually(lambda: w.profile.events >= 1, "one command")
    w.stop()
    w.reset()
    assert w.events == 0 and "nothing yet" in w.table_views["keys"].value
