"""The widgets' threads: one :class:`BackgroundJob` for long work (a bulk run, a keyspace analysis, an
evaluation, a profiler's redraws) and one :class:`StreamPump` for event streams (monitor, pub/sub).

A notebook must stay usable while a widget works, so long work runs in a thread. What comes back
from that thread is handed over in one place: progress goes to a progress bar and its label as
:class:`svckit._progress.Progress` steps; the result (or the error) goes to ``on_done`` (or
``on_error``), called once, on the kernel's event loop when the job was started from it, so it never
races the user's next click; :meth:`BackgroundJob.wait` runs it at once if it is still pending, so
code that waits for a job reads its result.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as W

from svckit._progress import Progress
from svckit.widgets._common import message_html

#: ``work(progress, cancel)``: report steps to ``progress``, stop when ``cancel`` is set
Work = Callable[[Callable[[Progress], None], threading.Event], Any]


class BackgroundJob:
    """Runs ``work`` in a thread (or in the caller, ``background=False``) with a progress bar, a
    Cancel, and its result or error handed back safely (see the module)."""

    def __init__(self, bar: W.IntProgress | None = None, label: W.HTML | None = None, *, name: str = "svckit-job"
                 ) -> None:
        self.bar, self.label, self.name = bar, label, name
        self.cancel_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._busy = False
        self._closed = False
        self._finish: Callable[[], None] | None = None

    @property
    def running(self) -> bool:
        """True from :meth:`start` until the result or error has been handed back."""
        return self._busy

    @property
    def thread(self) -> threading.Thread | None:
        """The thread of the last background run (None before one, or for a run in the caller)."""
        return self._thread

    def start(self, work: Work, *, on_done: Callable[[Any], None] | None = None,
              on_error: Callable[[BaseException], None] | None = None, background: bool = True) -> None:
        """Run ``work``; refused (ValueError) while another run of this job is under way, or once the
        job is closed."""
        if self._closed:
            raise ValueError(f"{self.name} is closed: its widget is gone")
        if self._busy:
            raise ValueError(f"{self.name} is already running: wait for it or cancel it")
        self._busy = True
        self.cancel_event.clear()
        self.show(None)
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop() if background else None
        except RuntimeError:
            loop = None

        def run() -> None:
            try:
                result = work(self.show, self.cancel_event)
            except Exception as exc:  # noqa: BLE001 - handed to on_error, never lost in the thread
                self._hand_back(on_error, exc)
            else:
                self._hand_back(on_done, result)
            if loop is not None:
                with contextlib.suppress(RuntimeError):  # a closed loop: wait() hands it back
                    loop.call_soon_threadsafe(self._run_finish)
                    return
            self._run_finish()

        if background:
            self._thread = threading.Thread(target=run, daemon=True, name=self.name)
            self._thread.start()
        else:
            self._thread = None
            run()

    def _hand_back(self, callback: Callable[[Any], None] | None, value: Any) -> None:
        def finish() -> None:
            if callback is not None:
                callback(value)
            elif isinstance(value, BaseException):
                raise value
        with self._lock:
            self._finish = finish

    def _run_finish(self) -> None:
        with self._lock:
            finish, self._finish = self._finish, None
        if finish is None:
            return
        try:
            if not self._closed:
                finish()
        finally:
            self._busy = False

    def cancel(self) -> None:
        """Ask the work to stop at its next check (between two requests)."""
        self.cancel_event.set()

    def close(self) -> None:
        """The job's widget is closed (or the job superseded): stop the work at its next check, and
        hand nothing back, so no callback draws on a closed widget or builds widgets nothing will
        close; the job takes no new work."""
        self._closed = True
        self.cancel_event.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the work to end and hand its result back; True when the job is no longer running."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if thread is None or not thread.is_alive():
            self._run_finish()
        return not self.running

    def show(self, step: Progress | None) -> None:
        """Draw a step on the bar and its label (None: reset them); a closed job draws nothing."""
        if self._closed:
            return
        if self.bar is not None:
            if step is None:
                self.bar.max, self.bar.value = 1, 0
            else:
                self.bar.max = max(step.total or 0, step.done, 1)
                self.bar.value = min(step.done, self.bar.max)
        if self.label is not None:
            self.label.value = "" if step is None else f'<span class="svc-muted">{html.escape(step.text())}</span>'


class StreamPump:
    """Read an event iterator in a background thread: keep the newest lines (rendered into ``target``
    when one is given) and pass each event to ``on_event``.

    Stopping must not leave a thread blocked in a network read: ``stop()`` sets a flag, closes the
    stream and joins the thread. The stream's ``close()`` must be safe from another thread and end
    a blocked read (the clients' SSE streams, ``kv.monitor()`` and ``kv.subscribe()``, are); a
    stream that cannot be interrupted that way makes ``stop()`` return False after ``timeout``.
    """

    def __init__(self, target: W.HTML | None, fmt: Callable[[Any], str] = str, max_lines: int = 200,
                 on_event: Callable[[Any], None] | None = None) -> None:
        self.target = target
        self.fmt = fmt
        self.lines: deque[str] = deque(maxlen=max_lines)
        self.count = 0
        self.error: str | None = None
        self.on_event = on_event
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._stream: Any = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, open_stream: Callable[[], Iterable[Any]]) -> None:
        """Open the stream in the reader thread; returns once it is open (an event sent right after
        ``start()`` is not missed)."""
        if self.running:
            return
        self._stop.clear()
        self._ready.clear()
        self.error = None
        self._stream = None
        self._thread = threading.Thread(target=self._run, args=(open_stream,), daemon=True, name="svckit-stream")
        self._thread.start()
        self._ready.wait(timeout=10)

    def _run(self, open_stream: Callable[[], Iterable[Any]]) -> None:
        try:
            self._stream = open_stream()
            iterator = iter(self._stream)
            self._ready.set()
            if self._stop.is_set():  # stop() came while the stream was opening
                _close(self._stream)
                return
            for event in iterator:
                if self._stop.is_set():
                    break
                self.count += 1
                if self.target is not None:
                    self.lines.append(self.fmt(event))
                if self.on_event is not None:
                    self.on_event(event)
                self._render()
            _close(iterator)
        except Exception as exc:  # noqa: BLE001 - shown in the widget, the thread ends
            if not self._stop.is_set():
                self.error = f"{type(exc).__name__}: {exc}"
                self._render()
        finally:
            self._ready.set()

    def _render(self) -> None:
        if self.target is None:
            return
        body = "\n".join(html.escape(line) for line in self.lines) or "waiting for events…"
        err = message_html(self.error, "error") if self.error else ""
        self.target.value = f'{err}<div class="svc-log">{body}</div>'

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop reading; True when the thread has ended."""
        self._stop.set()
        if self._stream is not None:
            with contextlib.suppress(Exception):  # a stream that already ended
                _close(self._stream)
        if self._thread is not None:
            self._thread.join(timeout)
        ended = not self.running
        if ended:
            self._thread = None
        return ended

    def clear(self) -> None:
        self.lines.clear()
        self._render()


def _close(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if callable(close):
        close()
