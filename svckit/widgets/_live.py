"""Live redraws that cost the browser what it shows: a frame is sent only when the page asks for one.

A live widget (the monitor profiler) changes every second. Sent every second, each change is a
whole plotly figure that the notebook draws again (and copies to a PNG for the saved notebook);
a tab that is hidden, or busy, does not draw them as they come, so they wait in a queue, and the
browser works through all of them later while the kernel is long idle.

:class:`FrameGate` is flow control in a few hundred bytes of JavaScript: its view sends ``ready``
from ``requestAnimationFrame``, which the browser runs only for a visible page that has painted
what came before, and again after each frame it is told was sent. The kernel draws a frame only
when a ``ready`` came since the last one, and at most once per ``interval`` seconds
(:meth:`FrameGate.due`, then :meth:`FrameGate.sent` after the frame); while no view asks (a hidden tab, a closed page, no front end at all),
nothing is sent and nothing waits. Whatever must be drawn in any case (the final state after a
stop) is drawn directly, not through the gate.

One exception: ipykernel reads widget messages only between cells, so while a cell runs the page's
``ready`` cannot arrive. Then a frame goes at most every ``BUSY_INTERVAL`` seconds unasked (the pace
of the static view's rewrites), so a profile watched during a long cell still moves, and a page
hidden meanwhile has at most one such frame per ``BUSY_INTERVAL`` to draw when shown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import anywidget
import ipywidgets as W
import traitlets as T

from svckit.widgets._common import CellHooks

_GATE_ESM = """
export default {
  render({ model }) {
    let frame = 0;
    const ask = () => { if (!frame) frame = requestAnimationFrame(() => { frame = 0; model.send({event: 'ready'}); }); };
    const sent = (msg) => { if (msg && msg.event === 'sent') ask(); };
    model.on('msg:custom', sent);
    ask();
    return () => { model.off('msg:custom', sent); if (frame) cancelAnimationFrame(frame); };
  }
};
"""


#: seconds between unasked frames while a cell runs (the page's requests wait for the cell's end)
BUSY_INTERVAL = 5.0


class _Cells(CellHooks):
    """Whether IPython is running a cell now: its pre/post_run_cell events, hooked once, when a
    gate is first made in an IPython shell."""

    def __init__(self) -> None:
        self.since: float | None = None  # time.monotonic() the running cell began, None between cells

    def events(self) -> dict[str, Callable[..., None]]:
        return {"pre_run_cell": self._began, "post_run_cell": self._ended}

    def _began(self, *_args: Any) -> None:
        self.since = time.monotonic()

    def _ended(self, *_args: Any) -> None:
        self.since = None


_CELLS = _Cells()


class FrameGate(anywidget.AnyWidget):
    """Lets a live widget redraw only when a visible page asks, at most once per ``interval`` s."""

    _esm = T.Unicode(_GATE_ESM).tag(sync=True)

    def __init__(self, interval: float = 1.0, **kwargs: Any) -> None:
        kwargs.setdefault("layout", W.Layout(width="0px", height="0px"))
        super().__init__(**kwargs)
        self.interval = interval
        self.asked = False  # a view asked since the last frame
        self.last: float | None = None  # the clock's time of the last frame sent
        self.frames = 0  # frames let through
        self._lock = threading.Lock()  # asked from the kernel's comm handler, taken by a paint thread
        self.on_msg(self._on_msg)
        _CELLS.hook()

    def ask(self) -> None:
        """What a visible page's view does when it can draw another frame."""
        with self._lock:
            self.asked = True

    def due(self, now: float) -> bool:
        """True (and the frame counted as sent at ``now``) when a view asked since the last frame
        and ``interval`` seconds have passed since it, or, while a cell runs (no request can arrive),
        when ``BUSY_INTERVAL`` seconds have. Draw the frame, then call :meth:`sent`."""
        with self._lock:
            since = None if self.last is None else now - self.last
            unasked = _CELLS.since is not None and (since is None or since >= BUSY_INTERVAL)
            if not (self.asked or unasked) or (since is not None and since < self.interval):
                return False
            self.asked, self.last = False, now
            self.frames += 1
            return True

    def sent(self) -> None:
        """Tell the views a frame was sent after it: each asks again once the page has painted it."""
        if getattr(self, "comm", None) is not None:
            self.send({"event": "sent"})

    def _on_msg(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "ready":
            self.ask()
