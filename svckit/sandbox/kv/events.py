"""Event streams of the key-value area: the monitor fan-out and pub/sub subscriptions, as SSE.

The monitor stream is the gateway's own: every command the gateway executes is offered to a
:class:`MonitorHub`, which formats it the way Redis's MONITOR does only when someone listens. That
way the stream looks the same on every backend (fakeredis has no MONITOR).

How many streams may be open is bounded (:class:`StreamLimits`): a subscription holds a Redis
connection for as long as it is open, from a pool of its own, so streams can neither exhaust Redis
nor take the connections that serve commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from starlette.types import Receive, Scope, Send

_ESCAPES = {0x5C: b"\\\\", 0x22: b'\\"', 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t", 0x07: b"\\a", 0x08: b"\\b"}


def redis_repr(arg: bytes) -> str:
    """Quote one argument as Redis's MONITOR does (sdscatrepr): printable ASCII kept, the rest escaped."""
    out = bytearray(b'"')
    for byte in arg:
        if byte in _ESCAPES:
            out += _ESCAPES[byte]
        elif 0x20 <= byte < 0x7F:
            out.append(byte)
        else:
            out += b"\\x%02x" % byte
    out += b'"'
    return out.decode("ascii")


REDACTED = b"(redacted)"
_SECRET_CONFIG = {b"requirepass", b"masterauth", b"masteruser", b"tls-key-file-pass", b"tls-client-key-file-pass"}


def redact(argv: Sequence[bytes]) -> list[bytes]:
    """Replace the secrets a command carries with ``(redacted)``, as Redis's own MONITOR does:
    AUTH's arguments, HELLO's AUTH pair, ACL SETUSER's password rules, ACL RESTTOKEN's password,
    MIGRATE's AUTH/AUTH2 values and CONFIG SET of password settings."""
    out = list(argv)
    name = out[0].upper() if out else b""
    sub = out[1].upper() if len(out) > 1 else b""
    if name == b"AUTH":
        out[1:] = [REDACTED] * (len(out) - 1)
    elif name == b"ACL" and sub == b"RESTTOKEN" and len(out) > 3:
        out[3:] = [REDACTED] * (len(out) - 3)
    elif name == b"ACL" and sub == b"SETUSER":
        out[3:] = [REDACTED if a[:1] in (b">", b"<", b"#", b"!") else a for a in out[3:]]
    elif name in (b"HELLO", b"MIGRATE"):
        for i, arg in enumerate(out):
            upper = arg.upper()
            if upper == b"AUTH" or (name == b"MIGRATE" and upper == b"AUTH2"):
                width = 2 if (name == b"HELLO" or upper == b"AUTH2") else 1
                out[i + 1:i + 1 + width] = [REDACTED] * len(out[i + 1:i + 1 + width])
    elif name == b"CONFIG" and sub == b"SET":
        for i in range(2, len(out) - 1, 2):
            if out[i].lower() in _SECRET_CONFIG:
                out[i + 1] = REDACTED
    return out


def monitor_line(argv: Sequence[bytes], client: str, db: int = 0, now: float | None = None) -> str:
    """``<unix_time.microseconds> [<db> <client_address>] "<COMMAND>" "<arg>"...`` (secrets redacted)"""
    stamp = f"{time.time() if now is None else now:.6f}"
    return f"{stamp} [{db} {client}] " + " ".join(redis_repr(a) for a in redact(argv))


class MonitorHub:
    """Fans executed commands out to every open monitor stream."""

    def __init__(self, queue_size: int = 10_000) -> None:
        self._listeners: set[asyncio.Queue[str]] = set()
        self._queue_size = queue_size

    @property
    def active(self) -> bool:
        return bool(self._listeners)

    def offer(self, argv: Sequence[bytes], client: str) -> None:
        if not self._listeners:
            return
        line = monitor_line(argv, client)
        for queue in self._listeners:
            with contextlib.suppress(asyncio.QueueFull):  # a stalled reader loses lines, not the server
                queue.put_nowait(line)

    def offer_many(self, rows: Sequence[Sequence[bytes]], client: str) -> None:
        if self._listeners:
            for argv in rows:
                self.offer(argv, client)

    async def opened(self) -> AsyncIterator[str]:
        """A new listener's lines (nothing to connect to: the hub is the gateway's own)."""
        return self.stream()

    async def stream(self) -> AsyncIterator[str]:
        queue: asyncio.Queue[str] = asyncio.Queue(self._queue_size)
        self._listeners.add(queue)
        try:
            yield '"OK"'
            while True:
                yield await queue.get()
        finally:
            self._listeners.discard(queue)


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
