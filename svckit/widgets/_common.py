"""Pieces every svckit widget shares: HTML tables from frames, badges, a confirmation bar and a
background pump that streams events into a widget.

Kept free of protocol logic (docs/architecture.md): these only draw and run callbacks.
"""

from __future__ import annotations

import contextlib
import html
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as W
import pandas as pd

#: One small stylesheet, injected once per widget (an HTML widget with a <style> tag), so tables and
#: badges look the same in JupyterLab, in exported HTML and in screenshots.
STYLE = """
<style>
.svc-table { border-collapse: collapse; font: 12px/1.4 var(--jp-code-font-family, monospace); width: 100%; }
.svc-table th { text-align: left; background: #f3f4f6; color: #374151; padding: 3px 8px;
  border-bottom: 1px solid #d1d5db; position: sticky; top: 0; }
.svc-table td { padding: 2px 8px; border-bottom: 1px solid #eef0f3; vertical-align: top;
  max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.svc-table tr:hover td { background: #f9fafb; }
.svc-badge { display: inline-block; padding: 1px 8px; margin-right: 6px; border-radius: 10px;
  font: 600 11px/1.6 var(--jp-ui-font-family, sans-serif); color: white; }
.svc-muted { color: #6b7280; font: 12px var(--jp-ui-font-family, sans-serif); }
.svc-msg { font: 12px var(--jp-ui-font-family, sans-serif); padding: 2px 0; }
.svc-msg.error { color: #b91c1c; } .svc-msg.ok { color: #15803d; } .svc-msg.info { color: #374151; }
.svc-card { border: 1px solid #e5e7eb; border-radius: 6px; padding: 6px 10px; background: white; }
.svc-card .svc-table td { white-space: normal; }
.svc-card h4 { margin: 0 0 4px 0; font: 600 13px var(--jp-ui-font-family, sans-serif); color: #111827; }
.svc-kv-explorer .widget-hbox, .svc-account-dashboard .widget-hbox { gap: 6px; }
.svc-confirm { background: #fef2f2; border-radius: 4px; }
.svc-log { font: 11px/1.45 var(--jp-code-font-family, monospace); white-space: pre-wrap;
  max-height: 260px; overflow-y: auto; background: #111827; color: #e5e7eb; padding: 6px 8px;
  border-radius: 4px; }
</style>
"""

BADGE_COLORS: dict[str, str] = {
    "string": "#2563eb", "hash": "#7c3aed", "list": "#0891b2", "set": "#059669", "zset": "#d97706",
    "stream": "#db2777", "ReJSON-RL": "#4b5563", "none": "#9ca3af",
    "active": "#16a34a", "passive": "#9ca3af", "free": "#6b7280", "paid": "#2563eb",
    "queue_enterprise_1m": "#7c3aed", "queue_enterprise_10m": "#6d28d9", "readonly": "#b45309",
}


def style_widget() -> W.HTML:
    return W.HTML(STYLE, layout=W.Layout(height="0px", margin="0"))


def badge(text: str, color: str | None = None, title: str | None = None) -> str:
    color = color or BADGE_COLORS.get(text, "#4b5563")
    tip = f' title="{html.escape(title)}"' if title else ""
    return f'<span class="svc-badge" style="background:{color}"{tip}>{html.escape(str(text))}</span>'


def message_html(text: str, kind: str = "info") -> str:
    return f'<div class="svc-msg {kind}">{html.escape(text)}</div>' if text else ""


def format_duration(seconds: float) -> str:
    """3725 -> '1 h 02 min'; 95 -> '1 min 35 s'; the two largest units, as people read a TTL."""
    s = max(0, round(seconds))
    days, rest = divmod(s, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours:02d} h"
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def _cell(value: Any) -> str:
    if value is None or (not isinstance(value, (list, dict, tuple, set)) and pd.isna(value)):
        return '<span class="svc-muted">—</span>'
    if isinstance(value, pd.Timedelta):
        return html.escape(str(value).split(".")[0])
    if isinstance(value, pd.Timestamp):
        return html.escape(value.strftime("%Y-%m-%d %H:%M:%S"))
    text = str(value)
    if len(text) > 300:
        text = text[:300] + "…"
    return html.escape(text)


def frame_html(frame: pd.DataFrame, max_rows: int = 200, formatters: dict[str, Callable[[Any], str]] | None = None,
               row_attrs: Callable[[int], str] | None = None) -> str:
    """A DataFrame as a compact HTML table (escaped; long cells cut)."""
    formatters = formatters or {}
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for i, (_, row) in enumerate(frame.head(max_rows).iterrows()):
        cells = "".join(
            f"<td>{formatters[c](row[c]) if c in formatters else _cell(row[c])}</td>" for c in frame.columns
        )
        attrs = row_attrs(i) if row_attrs else ""
        body.append(f"<tr{attrs}>{cells}</tr>")
    more = ""
    if len(frame) > max_rows:
        more = f'<div class="svc-muted">… {len(frame) - max_rows:,} more rows</div>'
    return f'<table class="svc-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{more}'


class ConfirmBar(W.HBox):
    """"Delete key X?  [Confirm] [Cancel]": an action runs only after an explicit second click.

    ``ask(question, action)`` shows the bar; ``confirm()`` runs the pending action, ``cancel()``
    drops it. Both are public so tests (and other widgets) drive the bar without clicking.
    """

    def __init__(self) -> None:
        self.question = W.HTML()
        self.confirm_button = W.Button(description="Confirm", button_style="danger", icon="check",
                                       layout=W.Layout(width="110px"))
        self.cancel_button = W.Button(description="Cancel", layout=W.Layout(width="90px"))
        super().__init__([self.question, self.confirm_button, self.cancel_button],
                         layout=W.Layout(display="none", align_items="center",
                                         padding="4px 8px", border="1px solid #fca5a5"))
        self.add_class("svc-confirm")
        self._action: Callable[[], Any] | None = None
        self.confirm_button.on_click(lambda _b: self.confirm())
        self.cancel_button.on_click(lambda _b: self.cancel())

    @property
    def pending(self) -> bool:
        return self._action is not None

    def ask(self, question: str, action: Callable[[], Any], confirm_label: str = "Confirm") -> None:
        self._action = action
        self.question.value = f'<span class="svc-msg">{html.escape(question)}</span>'
        self.confirm_button.description = confirm_label
        self.layout.display = "flex"

    def confirm(self) -> Any:
        action, self._action = self._action, None
        self.layout.display = "none"
        return action() if action is not None else None

    def cancel(self) -> None:
        self._action = None
        self.layout.display = "none"


class StreamPump:
    """Read an event iterator in a background thread and show the newest lines in an HTML widget.

    Stopping must not leave a thread blocked in a network read: ``stop()`` sets a flag, closes the
    stream and joins the thread. The stream's ``close()`` must be safe from another thread and end
    a blocked read (the clients' SSE streams, ``kv.monitor()`` and ``kv.subscribe()``, are); a
    stream that cannot be interrupted that way makes ``stop()`` return False after ``timeout``.
    """

    def __init__(self, target: W.HTML, fmt: Callable[[Any], str], max_lines: int = 200,
                 on_event: Callable[[Any], None] | None = None) -> None:
        self.target = target
        self.fmt = fmt
        self.lines: deque[str] = deque(maxlen=max_lines)
        self.count = 0
        self.error: str | None = None
        self.on_event = on_event
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._stream: Any = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, open_stream: Callable[[], Iterable[Any]]) -> None:
        if self.running:
            return
        self._stop.clear()
        self.error = None
        self._stream = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(open_stream,), daemon=True,
                                        name="svckit-stream")
        self._thread.start()
        # wait until the stream is open so an event sent right after start() is not missed
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
