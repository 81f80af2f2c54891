"""Monitor profiler: commands per second, command mix, hottest keys and prefixes, refreshed live.

``MonitorProfiler(kv)``: Start opens ``kv.monitor()`` in a reader thread that feeds a
:class:`svckit.kv.MonitorProfile`; a second thread redraws the table and the figure every
``interval`` seconds (1 s). Stop closes the stream (which ends a blocked read) and joins both.

Bounded memory: the profile keeps Space-Saving counters (``capacity`` keys and prefixes, 256
command names) and ``history`` seconds of rates, whatever the traffic (see
:mod:`svckit.kv.profiler`); the widget keeps only the latest snapshot. With the defaults that is
under 2 MB.

Public methods (``start()``, ``stop()``, ``refresh()``, ``reset()``) are separate from the button
handlers; state is in traits (``running``, ``events``, ``commands_per_second``, ``message``).
"""

from __future__ import annotations

import contextlib
import functools
import html
import threading
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go
import traitlets as T

from svckit.kv.profiler import MonitorProfile, ProfileSnapshot
from svckit.widgets._common import frame_html, message_html, style_widget
from svckit.widgets._plots import profile_figure, show_in

#: pixels: a FigureWidget does not follow its box's width
FIGURE_WIDTH = 1000


class MonitorProfiler(W.VBox):
    """Profile live traffic: ``MonitorProfiler(kv)`` (an ``svckit.kv.KV`` client)."""

    running = T.Bool(False)
    events = T.Int(0)
    commands_per_second = T.Float(0.0)
    interval = T.Float(1.0, help="seconds between redraws")
    top = T.Int(10, help="rows per table and bars per panel")
    message = T.Unicode("")
    message_kind = T.Unicode("info")

    def __init__(self, kv: Any, *, window: float = 10.0, capacity: int = 1000, history: int = 300,
                 delimiter: str = ":", prefix_depth: int = 1, **traits: Any) -> None:
        self.kv = kv
        self._new_profile = functools.partial(MonitorProfile, window=window, capacity=capacity, history=history,
                                              delimiter=delimiter, prefix_depth=prefix_depth)
        self.profile = self._new_profile()
        self.snapshot: ProfileSnapshot | None = None
        self._stop = threading.Event()
        self._stream: Any = None
        self._reader: threading.Thread | None = None
        self._painter: threading.Thread | None = None
        self._build()
        super().__init__([style_widget(), self.controls, self.message_view, self.status, self.figure, self.tables],
                         **traits)
        self.add_class("svc-monitor-profiler")
        self.observe(self._on_message, names=["message", "message_kind"])
        self.refresh()

    def _build(self) -> None:
        self.toggle = W.ToggleButton(description="Start", icon="play", value=False, layout=W.Layout(width="100px"))
        self.reset_button = W.Button(description="Reset", icon="eraser", layout=W.Layout(width="90px"))
        self.toggle.observe(self._on_toggle, names="value")
        self.reset_button.on_click(lambda _b: self.reset())
        self.controls = W.HBox([self.toggle, self.reset_button])
        self.message_view = W.HTML()
        self.status = W.HTML()
        self.figure = go.FigureWidget()
        self.table_views = {name: W.HTML() for name in ("commands", "keys", "prefixes")}
        self.tables = W.HBox([W.VBox([W.HTML(f"<h4>{name}</h4>"), view], layout=W.Layout(width="33%"))
                              for name, view in self.table_views.items()])
        self.tables.add_class("svc-card")

    # ------------------------------------------------------------------ public

    def start(self) -> None:
        """Open the monitor stream and start profiling (returns once the stream is open)."""
        if self.running:
            return
        self._stop.clear()
        self.message = ""
        opened = threading.Event()
        self._reader = threading.Thread(target=self._read, args=(opened,), daemon=True, name="svckit-profiler")
        self._reader.start()
        opened.wait(10)
        self._painter = threading.Thread(target=self._paint, daemon=True, name="svckit-profiler-paint")
        self._painter.start()
        self.running = True
        self.toggle.description, self.toggle.icon = "Stop", "stop"
        if not self.toggle.value:
            self.toggle.value = True

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop reading and redrawing; True when both threads ended. The profile is kept."""
        self._stop.set()
        stream = self._stream
        if stream is not None:
            with contextlib.suppress(Exception):  # a stream that already ended
                stream.close()
        for thread in (self._reader, self._painter):
            if thread is not None:
                thread.join(timeout)
        ended = not any(t is not None and t.is_alive() for t in (self._reader, self._painter))
        self.running = False
        self.toggle.description, self.toggle.icon = "Start", "play"
        if self.toggle.value:
            self.toggle.value = False
        self.refresh()
        return ended

    def reset(self) -> None:
        """Forget what was counted (a running profile goes on counting from zero)."""
        self.profile = self._new_profile()
        self.refresh()

    def refresh(self) -> ProfileSnapshot:
        """Redraw from the profile now (the paint thread calls this every ``interval`` seconds)."""
        snap = self.profile.snapshot(top=self.top)
        self.snapshot = snap
        self.events = snap.events
        self.commands_per_second = snap.commands_per_second
        exact = "exact" if snap.distinct_keys_exact else "Space-Saving estimates (count − error ≤ true ≤ count)"
        state = "profiling" if self.running or (self._reader is not None and self._reader.is_alive()) else "stopped"
        self.status.value = (
            f'<div class="svc-msg info"><b>{snap.commands_per_second:,.1f}</b> commands/s over the last '
            f"{snap.window:g} s · {snap.events:,} commands seen · {state} · key counts: {html.escape(exact)} · "
            f"memory bounded: {self.profile.keys.capacity:,} key and prefix counters, "
            f"{self.profile.history} s of rates</div>")
        show_in(self.figure, profile_figure(snap.rate, snap.commands, snap.keys, snap.prefixes, top=self.top)
                .update_layout(width=FIGURE_WIDTH))
        for name, frame in (("commands", snap.commands), ("keys", snap.keys), ("prefixes", snap.prefixes)):
            shown = frame.assign(share=frame["share"].map("{:.1%}".format))
            self.table_views[name].value = frame_html(shown, max_rows=self.top) if len(frame) else \
                '<div class="svc-muted">nothing yet</div>'
        return snap

    # ------------------------------------------------------------------ threads

    def _read(self, opened: threading.Event) -> None:
        try:
            self._stream = self.kv.monitor()
            opened.set()
            for event in self._stream:
                if self._stop.is_set():
                    break
                self.profile.feed(event)
        except Exception as exc:  # noqa: BLE001 - shown in the widget, the thread ends
            if not self._stop.is_set():
                self.message_kind, self.message = "error", f"The monitor stream failed: {exc}"
        finally:
            opened.set()
            stream, self._stream = self._stream, None
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()

    def _paint(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.refresh()
            except Exception as exc:  # noqa: BLE001 - keep painting; say what failed
                self.message_kind, self.message = "error", f"Redraw failed: {exc}"

    # ------------------------------------------------------------------ handlers

    def _on_toggle(self, change: Any) -> None:
        if change["new"] and not self.running:
            self.start()
        elif not change["new"] and self.running:
            self.stop()

    def _on_message(self, _change: Any = None) -> None:
        self.message_view.value = message_html(self.message, self.message_kind)
