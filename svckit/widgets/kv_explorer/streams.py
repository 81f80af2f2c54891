"""The explorer's live streams: the monitor (every command the server runs) and pub/sub (subscribe
to a channel, publish to it), each read by a :class:`~svckit.widgets._jobs.StreamPump` and shown as
its newest lines. Pub/sub shows its messages as a table (received, channel, message), newest first,
as RedisInsight's pub/sub page does; ``pubsub_frame()`` is the same table as a DataFrame."""

from __future__ import annotations

import html
import json
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ipywidgets as W
import pandas as pd

from svckit._units import mark, plural
from svckit.widgets._common import MessageBar, frame_html, message_html, muted_html
from svckit.widgets._jobs import StreamPump


def monitor_line(ev: Any) -> str:
    when = ev.time.strftime("%H:%M:%S.%f")[:-3] if getattr(ev, "time", None) else ""
    args = " ".join(json.dumps(str(a), ensure_ascii=False) for a in (ev.args or []))
    return f"{when} [{ev.db} {ev.client}] {ev.command} {args}".rstrip()


def message_line(msg: Any) -> str:
    if msg.kind == "subscribe":
        n = msg.count or 0
        return f"subscribed to {msg.channel} ({plural(n, 'subscription')})"
    return f"{msg.channel} ← {msg.data}"


class MessagePump(StreamPump):
    """A pub/sub stream's pump: each message kept with the time it came (``rows``, newest last, at
    most ``max_lines``) and shown as a table, newest first."""

    def __init__(self, target: W.HTML, max_lines: int = 200) -> None:
        self.rows: deque[tuple[pd.Timestamp, str, str]] = deque(maxlen=max_lines)
        self.note = ""
        super().__init__(target, message_line, max_lines, on_event=self._took)

    def _took(self, msg: Any) -> None:
        if msg.kind == "subscribe":
            self.note = message_line(msg)
        else:
            self.rows.append((pd.Timestamp.now(tz="UTC"), str(msg.channel), "" if msg.data is None else str(msg.data)))

    def frame(self) -> pd.DataFrame:
        """The messages received, newest first: ``received`` (UTC), ``channel``, ``message``."""
        rows = list(reversed(self.rows))
        return mark(pd.DataFrame({
            "received": pd.to_datetime(pd.Series([r[0] for r in rows], dtype="object"), utc=True),
            "channel": pd.array([r[1] for r in rows], dtype="string"),
            "message": pd.array([r[2] for r in rows], dtype="string"),
        }))

    def _render(self) -> None:
        if self.target is None:
            return
        err = message_html(self.error, "error") if self.error else ""
        note = muted_html(self.note) if self.note else ""
        if not self.rows:
            body = muted_html("No messages yet.")
        else:
            shown = self.frame()
            body = frame_html(shown, max_rows=len(shown), formatters={
                "received": lambda t: html.escape(t.strftime("%H:%M:%S.%f")[:-3])})
        self.target.value = f"{err}<div>{note}</div><div class='svc-pubsub-messages'>{body}</div>"

    def clear(self) -> None:
        self.rows.clear()
        super().clear()


class StreamView(W.VBox):
    """A stream's newest lines, and a toggle that starts it (label ``labels[0]``) and stops it
    (``labels[1]``); ``before`` and ``after`` sit beside the toggle, ``below`` under that row."""

    def __init__(self, labels: tuple[str, str], icon: str, idle: str, line: Callable[[Any], str],
                 before: Sequence[W.Widget] = (), after: Sequence[W.Widget] = (), below: Sequence[W.Widget] = (),
                 table: bool = False, **kwargs: Any) -> None:
        self.labels = labels
        self.toggle = W.ToggleButton(description=labels[0], icon=icon, value=False, layout=W.Layout(width="140px"))
        self.lines_view = W.HTML(f"<div>{muted_html(idle)}</div>")
        self.pump = MessagePump(self.lines_view) if table else StreamPump(self.lines_view, line)
        super().__init__([W.HBox([*before, self.toggle, *after]), *below, self.lines_view], **kwargs)
        self.toggle.observe(self._on_toggle, names="value")

    def _start(self, open_stream: Callable[[], Iterable[Any]], note: str) -> None:
        self.lines_view.value = f"<div>{muted_html(note)}</div>"
        self.pump.start(open_stream)
        self.toggle.description, self.toggle.value = self.labels[1], True

    def _stop(self) -> bool:
        ended = self.pump.stop()
        self.toggle.description, self.toggle.value = self.labels[0], False
        return ended

    def start(self) -> None:
        raise NotImplementedError

    def _on_toggle(self, change: Any) -> None:
        if change["new"] and not self.pump.running:
            self.start()
        elif not change["new"] and self.pump.running:
            self._stop()


class MonitorView(StreamView):
    def __init__(self, kv: Any, **kwargs: Any) -> None:
        self.kv = kv
        self.monitor_clear = W.Button(description="Clear", layout=W.Layout(width="80px"))
        super().__init__(("Start monitor", "Stop monitor"), "eye", "Monitor is stopped.", monitor_line,
                         after=[self.monitor_clear], **kwargs)
        self.monitor_toggle, self.monitor_view, self.monitor = self.toggle, self.lines_view, self.pump
        self.monitor_clear.on_click(lambda _b: self.monitor.clear())

    def start(self) -> None:
        self._start(self.kv.monitor, "Monitor is starting…")

    def start_monitor(self) -> None:
        self.start()

    def stop_monitor(self) -> bool:
        return self._stop()


class PubSubView(StreamView):
    def __init__(self, kv: Any, messages: MessageBar, **kwargs: Any) -> None:
        self.kv = kv
        self.messages = messages
        self.channel_box = W.Text(value="news", description="Channel", layout=W.Layout(width="240px"))
        self.publish_box = W.Text(placeholder="message", layout=W.Layout(width="260px"))
        self.publish_button = W.Button(description="Publish", icon="send", layout=W.Layout(width="95px"))
        super().__init__(("Subscribe", "Unsubscribe"), "rss", "Not subscribed.", message_line,
                         before=[self.channel_box], below=[W.HBox([self.publish_box, self.publish_button])],
                         table=True, **kwargs)
        self.subscribe_toggle, self.pubsub_view, self.pubsub = self.toggle, self.lines_view, self.pump
        self.publish_button.on_click(lambda _b: self.publish(self.channel_box.value, self.publish_box.value))

    def start(self) -> None:
        self.subscribe()

    def subscribe(self, channel: str | None = None) -> None:
        channel = channel or self.channel_box.value
        self.channel_box.value = channel
        self._start(lambda: self.kv.subscribe(channel), f"Subscribing to {channel}…")

    def unsubscribe(self) -> bool:
        return self._stop()

    def pubsub_frame(self) -> pd.DataFrame:
        """The messages received, newest first (time, channel, message)."""
        return self.pubsub.frame()

    def publish(self, channel: str, message: str) -> int | None:
        ok, n = self.messages.attempt(lambda: self.kv.publish(channel, message), "PUBLISH failed",
                                      lambda n: f"Published to {channel}: {plural(n, 'subscriber')} received it.")
        return n if ok else None
