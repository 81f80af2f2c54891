"""The MonitorProfiler widget against the demo key-value sandbox over real HTTP: Start, traffic from
another client, the live table and figure, Stop; Reset. Its frames: drawn when the page asks, at
most one a second, none queued for a hidden page; its headline is the mean its chart draws, and
after a stop it keeps the last window's rate."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from svckit.kv import KV, MonitorEvent
from svckit.widgets import MonitorProfiler
from tests.conftest import eventually


def page_asks(w: MonitorProfiler) -> None:
    """What the profiler's page does once it is visible and has painted: its gate asks for a frame."""
    w.gate._handle_custom_msg({"event": "ready"}, [])


def headline_rate(w: MonitorProfiler) -> float:
    return float(re.search(r"<b>([\d,.]+)</b> commands/s", w.status.value).group(1).replace(",", ""))


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
    # the paint thread reads the profile every second and draws it when the page asks: no refresh() here
    eventually(lambda: w.events >= 26, "the profiler to count 26 commands")
    eventually(lambda: page_asks(w) or "profiler:hits" in w.table_views["keys"].value,
               "the keys table to show the hot key")
    assert w.stop() and not w.running and w.toggle.description == "Start"
    snap = w.snapshot
    assert snap is not None
    keys = dict(zip(snap.keys["key"], snap.keys["count"]))
    assert keys["profiler:hits"] == 25 and keys["profiler:cold"] == 1
    assert dict(zip(snap.commands["command"], snap.commands["count"]))["INCR"] == 25
    assert "commands/s" in w.status.value and "100 key and prefix counters" in w.status.value
    # the figure: rate line, command mix, hottest keys, hottest prefixes
    kinds = [trace.type for trace in w.figure.data]
    assert kinds == ["scatter", "bar", "bar", "bar", "scatter"]  # the last: the headline's mean
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


def traffic(w: MonitorProfiler, seconds: list[int], t0: int = 1_700_000_000) -> None:
    """Feed the profile ``seconds[i]`` SETs in second ``i`` after ``t0`` (recorded traffic)."""
    for i, count in enumerate(seconds):
        for j in range(count):
            w.profile.feed(MonitorEvent(time=datetime.fromtimestamp(t0 + i + j / (count + 1), UTC), db=0,
                                        client="127.0.0.1:1", command="SET", args=[f"frames:{i}", "v"]))


def counting_redraws(w: MonitorProfiler) -> list[object]:
    drawn: list[object] = []
    w.figure.observe(lambda change: drawn.append(change["new"]), names="outputs")
    return drawn


def test_ten_ticks_within_a_second_draw_one_frame() -> None:
    w = MonitorProfiler(None)
    drawn = counting_redraws(w)
    traffic(w, [5, 7])
    for i in range(10):  # an eager page: it asks again before every tick
        page_asks(w)
        w.tick(now=100.0 + i / 10)
    assert len(drawn) == 1
    traffic(w, [9], t0=1_700_000_002)
    page_asks(w)
    assert w.tick(now=101.0) and len(drawn) == 2


def test_ticks_while_the_page_is_hidden_queue_no_frame() -> None:
    w = MonitorProfiler(None)
    drawn = counting_redraws(w)
    traffic(w, [4], t0=1_699_999_999)
    page_asks(w)
    assert w.tick(now=100.0) and len(drawn) == 1
    # hidden: the page paints nothing, so it asks for nothing; a minute of ticks sends nothing
    for i in range(60):
        traffic(w, [3], t0=1_700_000_000 + i)
        assert not w.tick(now=101.0 + i)
    assert len(drawn) == 1 and w.events == 184  # the kernel kept counting
    # shown again: one frame, the latest, not the sixty it missed
    page_asks(w)
    assert w.tick(now=161.0) and len(drawn) == 2
    assert "184 commands seen" in w.status.value
    assert not w.tick(now=162.0) and len(drawn) == 2


def test_the_headline_is_the_mean_the_chart_draws_and_stays_after_stop(kv: KV[str], clients, monkeypatch) -> None:
    w = MonitorProfiler(kv)
    w.start()
    other = KV.from_settings(clients.settings)
    try:
        for _ in range(30):
            other.incr("frames:headline")
    finally:
        other.close()
    eventually(lambda: w.profile.events >= 30, "the profiler to count 30 commands")
    assert w.stop()
    stopped = w.snapshot.stopped_at
    assert stopped is not None and f"stopped at {datetime.fromtimestamp(stopped, UTC):%H:%M:%S} UTC" in w.status.value
    rate, mean = w.figure.data[0], w.figure.data[-1]
    shown = w.snapshot.rate_seconds
    assert 1 <= shown <= 10 and f"over the last {shown} s" in w.status.value
    # the headline, the dashed mean on the chart and the chart's own last seconds: one number
    assert headline_rate(w) == round(sum(rate.y[-shown:]) / shown, 1) == round(mean.y[0], 1)
    assert headline_rate(w) >= 30 / shown - 0.1
    # a minute later the stopped profile still says what the last window was, not 0.0
    later = stopped + 60
    monkeypatch.setattr("svckit.kv.profiler.time.time", lambda: later)
    before = w.status.value
    w.refresh()
    assert w.status.value == before and headline_rate(w) > 0


def test_while_a_cell_runs_a_frame_goes_every_five_seconds_unasked() -> None:
    # ipykernel reads the page's requests only between cells: during a long cell the profile still
    # moves, at the static view's pace, not every second
    from svckit.widgets import _live

    w = MonitorProfiler(None)
    drawn = counting_redraws(w)
    _live._CELLS._began()
    try:
        for i in range(10):
            traffic(w, [2], t0=1_700_000_000 + i)
            w.tick(now=100.0 + i)
    finally:
        _live._CELLS._ended()
    assert len(drawn) == 2  # at 100 s and 105 s
    traffic(w, [2], t0=1_700_000_010)
    assert not w.tick(now=120.0) and len(drawn) == 2  # between cells: only when the page asks
