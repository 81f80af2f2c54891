"""Monitor profiler: commands per second, command mix, hottest keys and prefixes, refreshed live.

``MonitorProfiler(kv)``: Start opens ``kv.monitor()`` in a :class:`~svckit.widgets._jobs.StreamPump`
that feeds a :class:`svckit.kv.MonitorProfile`; a background job reads the profile every
``interval`` seconds (1 s). Stop closes the stream (which ends a blocked read) and ends both, and
draws the last state: the rate of the last window before the stop, "stopped at <time>".

What the browser is sent costs it what it shows: the headline, the tables and the figure are drawn
together, as one frame, only when the page asked for one (:class:`~svckit.widgets._live.FrameGate`:
a visible page that painted the previous frame) and at most once per ``interval``. A hidden tab
asks for nothing, so nothing waits for it; it gets the latest frame when shown again. The figure
has no fixed width: it fits the output it is drawn in.

Bounded memory: the profile keeps Space-Saving counters (``capacity`` keys and prefixes, 256
command names) and ``history`` seconds of rates, whatever the traffic (see
:mod:`svckit.kv.profiler`); the widget keeps only the latest snapshot. With the defaults that is
under 2 MB.

Public methods (``start()``, ``stop()``, ``refresh()``, ``reset()``) are separate from the button
handlers; state is in traits (``running``, ``events``, ``commands_per_second``, ``message``).
"""

from __future__ import annotations

import functools
import html
import threading
import time
from datetime import UTC, datetime
from typing import Any

import ipywidgets as W
import traitlets as T

from svckit.kv.profiler import MonitorProfile, ProfileSnapshot
from svckit.widgets._chart import Chart
from svckit.widgets._common import MessageBar, frame_html, positive, style_widget
from svckit.widgets._jobs import BackgroundJob, StreamPump
from svckit.widgets._live import FrameGate
from svckit.widgets._plots import profile_figure
from svckit.widgets._static import StaticView


class MonitorProfiler(StaticView, W.VBox):
    """Profile live traffic: ``MonitorProfiler(kv)`` (an ``svckit.kv.KV`` client)."""

    running = T.Bool(False)
    events = T.Int(0)
    commands_per_second = T.Float(0.0)
    interval = T.Float(1.0, help="seconds between redraws (at least)")
    top = T.Int(10, help="rows per table and bars per panel")
    message = T.Unicode("")
    message_kind = T.Unicode("info")

    @T.validate("interval", "top")
    def _positive(self, proposal: Any) -> Any:
        return positive(proposal)

    def __init__(self, kv: Any, *, window: float = 10.0, capacity: int = 1000, history: int = 300,
                 delimiter: str = ":", prefix_depth: int = 1, **traits: Any) -> None:
        self.kv = kv
        self._new_profile = functools.partial(MonitorProfile, window=window, capacity=capacity, history=history,
                                              delimiter=delimiter, prefix_depth=prefix_depth)
        self.profile = self._new_profile()
        self.snapshot: ProfileSnapshot | None = None
        self.toggle = W.ToggleButton(description="Start", icon="play", value=False, layout=W.Layout(width="100px"))
        self.reset_button = W.Button(description="Reset", icon="eraser", layout=W.Layout(width="90px"))
        self.controls = W.HBox([self.toggle, self.reset_button])
        self.message_view = MessageBar()
        self.status = W.HTML()
        self.figure = Chart()
        self.table_views = {name: W.HTML() for name in ("commands", "keys", "prefixes")}
        self.tables = W.HBox([W.VBox([W.HTML(f"<h4>{name}</h4>"), view], layout=W.Layout(width="33%"))
                              for name, view in self.table_views.items()])
        self.tables.add_class("svc-card")
        self.reader = StreamPump(None, on_event=lambda event: self.profile.feed(event))
        self.painter = BackgroundJob(name="svckit-profiler-paint")
        self.gate = FrameGate()
        super().__init__([style_widget(), self.controls, self.message_view, self.status, self.figure, self.tables,
                          self.gate], **traits)
        self.gate.interval = self.interval
        self.observe(lambda change: setattr(self.gate, "interval", change["new"]), names="interval")
        self.add_class("svc-monitor-profiler")
        T.link((self, "message"), (self.message_view, "message"))
        T.link((self, "message_kind"), (self.message_view, "message_kind"))
        self.toggle.observe(self._on_toggle, names="value")
        self.reset_button.on_click(lambda _b: self.reset())
        self.refresh()

    # ------------------------------------------------------------------ public

    def start(self) -> None:
        """Open the monitor stream and start profiling (returns once the stream is open)."""
        if self.running:
            return
        self.message = ""
        self.reader.start(self.kv.monitor)
        self.profile.start()
        self.painter.start(self._paint)
        self.running = True
        self.toggle.description, self.toggle.icon = "Stop", "stop"
        self.toggle.value = True

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop reading and redrawing; True when both ended. The profile is kept."""
        ended = self.reader.stop(timeout)
        self.profile.stop()
        self.painter.cancel()
        ended = self.painter.wait(timeout) and ended
        self.running = False
        self.toggle.description, self.toggle.icon = "Start", "play"
        self.toggle.value = False
        self.refresh()
        return ended

    def close(self) -> None:
        """Close the monitor stream and stop redrawing, then close the widget."""
        self.reader.stop()
        self.painter.close()
        super().close()

    def reset(self) -> None:
        """Forget what was counted (a running profile goes on counting from zero)."""
        self.profile = self._new_profile()
        if self.running:
            self.profile.start()
        self.refresh()

    def refresh(self) -> ProfileSnapshot:
        """Read the profile and draw it now: the headline, the figure and the tables, one frame."""
        snap = self.read()
        self._draw(snap)
        return snap

    def read(self) -> ProfileSnapshot:
        """Read the profile into ``snapshot``, ``events`` and ``commands_per_second`` (the kernel's
        side only: nothing is sent to the browser)."""
        snap = self.profile.snapshot(top=self.top)
        self.snapshot = snap
        self.events = snap.events
        self.commands_per_second = snap.commands_per_second
        return snap

    def _draw(self, snap: ProfileSnapshot) -> None:
        if self.reader.error:
            self.message_view.say(f"The monitor stream failed: {self.reader.error}", "error")
        self.status.value = self._headline(snap)
        self.figure.show(profile_figure(snap.rate, snap.commands, snap.keys, snap.prefixes, top=self.top,
                                        mean=(snap.commands_per_second, snap.rate_seconds)))
        for name, frame in (("commands", snap.commands), ("keys", snap.keys), ("prefixes", snap.prefixes)):
            shown = frame.assign(share=frame["share"].map("{:.1%}".format))
            self.table_views[name].value = frame_html(shown, max_rows=self.top) if len(frame) else \
                '<div class="svc-muted">nothing yet</div>'

    def _headline(self, snap: ProfileSnapshot) -> str:
        exact = "exact" if snap.distinct_keys_exact else "Space-Saving estimates (count − error ≤ true ≤ count)"
        if snap.stopped_at is not None:
            state = f"stopped at {datetime.fromtimestamp(snap.stopped_at, UTC):%H:%M:%S} UTC"
        else:
            state = "profiling" if self.reader.running else "not running"
        # the mean the figure draws as its dashed line: the same seconds, the same counts
        over = f"over the last {snap.rate_seconds} s" if snap.rate_seconds else "(nothing profiled yet)"
        return (f'<div class="svc-msg info"><b>{snap.commands_per_second:,.1f}</b> commands/s {over} · '
                f"{snap.events:,} commands seen · {state} · key counts: {html.escape(exact)} · "
                f"memory bounded: {self.profile.keys.capacity:,} key and prefix counters, "
                f"{self.profile.history} s of rates</div>")

    def tick(self, now: float | None = None) -> bool:
        """What the painter does every ``interval``: read the profile, and draw it when the page
        asked for a frame (see the module); True when it drew."""
        snap = self.read()
        if not self.gate.due(time.monotonic() if now is None else now):
            return False
        self._draw(snap)
        self.gate.sent()
        return True

    # ------------------------------------------------------------------ the painter

    def _paint(self, _progress: Any, cancel: threading.Event) -> None:
        while not cancel.wait(self.interval):
            try:
                self.tick()
            except Exception as exc:  # noqa: BLE001 - keep painting; say what failed
                self.message_view.say(f"Redraw failed: {exc}", "error")

    def _on_toggle(self, change: Any) -> None:
        if change["new"] and not self.running:
            self.start()
        elif not change["new"] and self.running:
            self.stop()
