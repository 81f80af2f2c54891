"""Event streams of the key-value area: the monitor fan-out and pub/sub subscriptions, as SSE.

The monitor stream is the gateway's own: every command the gateway executes is offered to a
:class:`MonitorHub`, which formats it the way Redis's MONITOR does only when someone listens. That
way the stream looks the same on every backend (fakeredis has no MONITOR). What one monitor costs
is bounded: a line shows at most :data:`MONITOR_SHOWN_BYTES` of arguments (formatted in one C pass,
never a byte at a time on the event loop), and a reader that falls more than its backlog bound
behind is dropped with a last event saying so (:class:`MonitorHub`).

How many streams may be open is bounded (:class:`StreamLimits`): a subscription holds a Redis
connection for as long as it is open, from a pool of its own, so streams can neither exhaust Redis
nor take the connections that serve commands.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from starlette.types import Receive, Scope, Send

from svckit.core.wire import STREAM_ERROR
from svckit.kv.redact import redact as secret_redact

#: how much of a command's arguments one monitor line shows, in bytes before escaping: a longer
#: argument is cut with ``... (N more bytes)`` inside its quotes and the arguments past it become one
#: ``"... (N more arguments)"``, as Redis's SLOWLOG does. Formatting a line so costs at most this much
#: work on the event loop (an 8 MiB SET took 1.3 s byte by byte), and no line grows past about four
#: times this once escaped (the vendor's JS SDK refuses an SSE line over 1 MB).
MONITOR_SHOWN_BYTES = 64 * 1024

_PLAIN = re.compile(rb'[ !#-\[\]-~]*')  # printable ASCII but the quote and the backslash: shown as is
_NAMED = re.compile(rb"\\(?:\\|x07|x08)")  # unicode_escape's \\, \x07 and \x08 (an escaped backslash first)
_AS_REDIS = {b"\\\\": b"\\\\", b"\\x07": b"\\a", b"\\x08": b"\\b"}


def redis_repr(arg: bytes, cut: int = 0) -> str:
    """Quote one argument as Redis's MONITOR does (sdscatrepr): printable ASCII kept; backslash,
    quote, LF, CR, TAB, BEL and BS escaped by name; every other byte as a hex escape. ``cut``: how many
    bytes of the argument were left out after ``arg`` (said inside the quotes).

    One pass in C over the whole argument (latin-1, then unicode_escape, which writes exactly those
    escapes but for the quote, BEL and BS), not a Python step per byte."""
    if _PLAIN.fullmatch(arg):
        text = arg.decode("ascii")
    else:
        out = arg.decode("latin-1").encode("unicode_escape")
        if b'"' in arg:
            out = out.replace(b'"', b'\\"')  # no escape unicode_escape writes holds a quote
        if b"\x07" in arg or b"\x08" in arg:
            out = _NAMED.sub(lambda m: _AS_REDIS[m[0]], out)
        text = out.decode("ascii")
    return f'"{text}... ({cut} more bytes)"' if cut else f'"{text}"'


def shown_arguments(argv: Sequence[bytes]) -> str:
    """The quoted arguments of one monitor line, at most MONITOR_SHOWN_BYTES of them shown."""
    left = MONITOR_SHOWN_BYTES
    out = []
    for i, arg in enumerate(argv):
        if left <= 0:
            out.append(f'"... ({len(argv) - i} more arguments)"')
            break
        out.append(redis_repr(arg[:left], len(arg) - left) if len(arg) > left else redis_repr(arg))
        left -= len(arg)
    return " ".join(out)


REDACTED = b"(redacted)"


def redact(argv: Sequence[bytes]) -> list[bytes]:
    """Replace the secrets a command carries with ``(redacted)``, as Redis's own MONITOR does (the rule
    is :mod:`svckit.kv.redact`'s, which the KV explorer's console follows too)."""
    return secret_redact(argv, lambda _arg: REDACTED)


def monitor_line(argv: Sequence[bytes], client: str, db: int = 0, now: float | None = None) -> str:
    """``<unix_time.microseconds> [<db> <client_address>] "<COMMAND>" "<arg>"...`` (secrets redacted)"""
    stamp = f"{time.time() if now is None else now:.6f}"
    return f"{stamp} [{db} {client}] " + shown_arguments(redact(argv))


#: the default of ``Sandbox(kv_monitor_backlog_bytes=...)``: how far one monitor reader may fall
#: behind, in bytes of lines waiting for it (Redis's own hard limit for a pub/sub client is 32 MB)
MONITOR_BACKLOG_BYTES = 16 * 1024 * 1024
#: what a waiting line costs beyond its characters (the str object and its slot in the backlog), so
#: that many short lines count for what they hold too
LINE_OVERHEAD = 64


class _Listener:
    """One monitor stream's backlog: lines the hub formatted that its reader has not taken yet."""

    __slots__ = ("ended", "held", "lines", "ready")

    def __init__(self) -> None:
        self.lines: collections.deque[str] = collections.deque()
        self.held = 0  # bytes in ``lines``, LINE_OVERHEAD each included
        self.ready = asyncio.Event()  # set when a line (or the end) is waiting
        self.ended: str | None = None  # why the hub dropped this reader: its last event


class MonitorHub:
    """Fans executed commands out to every open monitor stream.

    Each reader's backlog is bounded in bytes (``backlog_bytes``): a reader that falls further
    behind (it stopped reading, or reads slower than commands run) is dropped, its backlog freed at
    once, and its stream ends with one last event saying so (``error,ERR ...``, the form a
    subscription's error takes), so that it knows it missed lines rather than seeing a gap."""

    def __init__(self, backlog_bytes: int = MONITOR_BACKLOG_BYTES) -> None:
        self._listeners: set[_Listener] = set()
        self.backlog_bytes = backlog_bytes

    @property
    def active(self) -> bool:
        return bool(self._listeners)

    def offer(self, argv: Sequence[bytes], client: str) -> None:
        if not self._listeners:
            return
        line = monitor_line(argv, client)
        cost = len(line) + LINE_OVERHEAD
        for listener in list(self._listeners):
            if listener.held + cost > self.backlog_bytes:
                self._drop(listener)
                continue
            listener.lines.append(line)
            listener.held += cost
            listener.ready.set()

    def offer_many(self, rows: Sequence[Sequence[bytes]], client: str) -> None:
        if self._listeners:
            for argv in rows:
                self.offer(argv, client)

    def _drop(self, listener: _Listener) -> None:
        self._listeners.discard(listener)
        listener.lines.clear()
        listener.held = 0
        listener.ended = (f"{STREAM_ERROR}ERR monitor stream closed: this reader fell behind by more than "
                          f"{self.backlog_bytes} bytes of lines (Sandbox(kv_monitor_backlog_bytes=...)), and "
                          "the lines after the last one it received were not kept; read faster, or open a "
                          "new monitor")
        listener.ready.set()

    async def opened(self) -> AsyncIterator[str]:
        """A new listener's lines (nothing to connect to: the hub is the gateway's own)."""
        return self.stream()

    async def stream(self) -> AsyncIterator[str]:
        listener = _Listener()
        self._listeners.add(listener)
        try:
            yield '"OK"'
            while True:
                await listener.ready.wait()
                if listener.lines:
                    line = listener.lines.popleft()
                    listener.held -= len(line) + LINE_OVERHEAD
                    yield line
                elif listener.ended is not None:
                    yield listener.ended
                    return
                else:
                    listener.ready.clear()
        finally:
            self._listeners.discard(listener)


class StreamLimits:
    """Open event streams (subscriptions and monitors): at most ``total`` in the sandbox and
    ``per_token`` for one token. A holder is the token's principal, whose ``streams`` attribute
    counts its open streams."""

    def __init__(self, total: int, per_token: int) -> None:
        self.total, self.per_token = total, per_token
        self.open = 0

    def take(self, holder: Any) -> str | None:
        """Count one more stream for ``holder``; the error text instead when a limit is reached."""
        if holder.streams >= self.per_token:
            return (f"ERR too many open event streams for this token: {holder.streams} of "
                    f"{self.per_token} (Sandbox(kv_max_streams_per_token=...)); close one first")
        if self.open >= self.total:
            return (f"ERR too many open event streams in the sandbox: {self.open} of {self.total} "
                    f"(Sandbox(kv_max_streams=...)); close one first")
        holder.streams += 1
        self.open += 1
        return None

    def release(self, holder: Any) -> None:
        holder.streams -= 1
        self.open -= 1


def sse_event(payload: str) -> bytes:
    """One SSE event; a payload with line breaks becomes several ``data:`` lines, as SSE specifies."""
    return "".join(f"data: {line}\n" for line in payload.split("\n")).encode() + b"\n"


class SSEResponse:
    """An event-stream response that stops its source as soon as the client goes away.

    Starlette's StreamingResponse notices a disconnect only when it next writes, so a quiet channel
    would keep its Redis subscription forever; here a second task watches ``http.disconnect``.
    """

    def __init__(self, events: AsyncIterator[str], closing: asyncio.Event | None = None,
                 on_close: Callable[[], None] = lambda: None) -> None:
        self.events = events
        self.closing = closing  # set when the server shuts down: the stream ends cleanly
        self.on_close = on_close  # runs once the response is over, however it ended

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._serve(receive, send)
        finally:
            self.on_close()

    async def _serve(self, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream; charset=utf-8"),
                                (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]})

        async def pump() -> None:
            async for payload in self.events:
                await send({"type": "http.response.body", "body": sse_event(payload), "more_body": True})

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        tasks: set[asyncio.Task[Any]] = {asyncio.create_task(pump()), asyncio.create_task(watch())}
        if self.closing is not None:
            tasks.add(asyncio.create_task(self.closing.wait()))
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self.events.aclose()  # type: ignore[attr-defined]
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
