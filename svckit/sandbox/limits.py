"""Bounds on every request the sandbox serves: how large a body may be, and how slowly a client may
send a request.

- :class:`BodyLimit` (pure ASGI, one in front of each area): a request body over the area's
  ``max_body_bytes`` is answered 413 with the area's error body. A Content-Length over the cap is
  answered at once, before any byte of the body is read; a body without one (chunked) is counted as
  it arrives and answered as soon as it grows past the cap. Nothing over the cap is ever held.
- :class:`SandboxProtocol` (uvicorn's httptools protocol, subclassed: an undocumented class, so it
  comes through svckit/sandbox/seams.py, which lists what is relied on): uvicorn has no timer before a
  request's headers are complete (its keep-alive timer only runs between requests, and any byte
  received stops it) and none on the body, so a client trickling either holds its connection
  forever. This class closes a connection whose request line and headers take longer than
  ``header_timeout`` or whose body takes longer than ``body_timeout`` (408 when nothing was answered
  yet), and answers 431 when the request line and headers grow past ``max_header_bytes`` (httptools
  itself has no limit: their bytes are kept in memory until the headers end). Once a request has
  arrived no timer runs, so event streams and other long responses are never cut.

After an early 413 the connection is kept: uvicorn reads the rest of the body and discards it (the
body timeout still bounds how long that may take), so a client that sends its whole body before
reading the answer (httpx, requests) gets the 413 instead of a broken pipe.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from svckit.sandbox.http import ApiError, error_reply
from svckit.sandbox.seams import HttpToolsProtocol

if TYPE_CHECKING:
    from svckit.sandbox.area import Area
    from svckit.sandbox.options import SandboxOptions


class _BodyTooLarge(Exception):
    """Unwinds an area that was reading a body the limit has already answered."""


def _framing(scope: Scope) -> tuple[int | None, bool]:
    """(Content-Length, whether the body is chunked): the first of each header, as the parser took them."""
    headers = dict(reversed(scope["headers"]))  # one pass in C; reversed: the first of a repeated name wins
    length = headers.get(b"content-length")
    try:
        declared = None if length is None else int(length)
    except ValueError:
        declared = None  # httptools refuses such a request before it gets here
    return declared, b"transfer-encoding" in headers


class BodyLimit:
    """The body cap of one area, in front of its app (module docstring)."""

    def __init__(self, app: ASGIApp, area: Area) -> None:
        self.app, self.area = app, area

    def _too_large(self, limit: int) -> JSONResponse:
        return error_reply(ApiError(413, self.area.body_too_large(limit)), self.area.error_body)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared, chunked = _framing(scope)
        if not chunked:
            # the parser delivers exactly Content-Length bytes (none without one): one look decides
            if declared:
                cap = self.area.max_body_bytes  # read only now: it may query the store
                if declared > cap:
                    await self._too_large(cap)(scope, receive, send)
                    return
            await self.app(scope, receive, send)
            return
        limit: int | None = None
        received = 0
        started = answered = False

        async def counted_receive() -> Message:
            nonlocal received, limit, answered
            message = await receive()
            if message["type"] == "http.request" and message.get("body"):
                received += len(message["body"])
                if limit is None:
                    limit = self.area.max_body_bytes
                if received > limit:
                    answered = True
                    if not started:
                        await self._too_large(limit)(scope, receive, send)
                    raise _BodyTooLarge
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if answered:
                return  # the 413 is the answer; whatever the area makes of the unwinding is dropped
            started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except _BodyTooLarge:
            pass
        except ClientDisconnect:
            pass  # the client went (or its read timed out): there is no one to answer


class SandboxProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with read timeouts and a request-head size cap (module docstring).

    Each phase of a request sets a deadline: the request line and headers (``header_timeout``, from
    the connection's opening or the request's first byte), then the body (``body_timeout``); none
    once the request has arrived (idle keep-alive connections are uvicorn's own timer's job). One
    timer per connection checks the deadline: it is armed once and moved only when it fires early,
    so a request costs three attribute writes, not a timer of its own (which cost the gateway about
    a tenth of its time per request). The head size is counted in received bytes before they reach
    the parser, so it is exact to within one read (a read that ends the headers may carry the start
    of the body too).
    """

    def __init__(self, *args: Any, header_timeout: float, body_timeout: float, max_header_bytes: int,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout, self.body_timeout, self.max_header_bytes = header_timeout, body_timeout, max_header_bytes
        self._read_timer: asyncio.TimerHandle | None = None
        self._deadline: float | None = None  # loop time the current phase must end by
        self._phase = ""  # what must arrive by then
        self._in_head = True  # waiting for (the rest of) a request line and headers
        self._head_bytes = 0

    # -- the deadline ------------------------------------------------------------------------
    def _expect(self, seconds: float, what: str) -> None:
        self._deadline, self._phase = self.loop.time() + seconds, what
        if self._read_timer is not None and self._read_timer.when() > self._deadline:
            self._read_timer.cancel()  # set for a later deadline (a body's, when bodies may take longer)
            self._read_timer = None
        if self._read_timer is None:
            self._read_timer = self.loop.call_at(self._deadline, self._check)

    def _check(self) -> None:
        self._read_timer = None
        if self._deadline is None or self.transport.is_closing():
            return  # the request arrived; the next one arms the timer again
        left = self._deadline - self.loop.time()
        if left > 0:  # the deadline moved on since the timer was set (a later request, or its body)
            self._read_timer = self.loop.call_later(left, self._check)
            return
        seconds = self.header_timeout if self._in_head else self.body_timeout
        # Say why, unless the connection is idle (no byte of a request yet) or another answer is
        # on the wire (a request pipelined behind a response still being sent).
        cycle = self.cycle
        if self._in_head:
            say = self._head_bytes > 0 and (cycle is None or not cycle.response_started or cycle.response_complete)
        else:
            say = not cycle.response_started and not self.pipeline
        if say:
            self._answer(408, f"request timeout: the {self._phase} did not arrive within {seconds:g} s")
        self.transport.close()

    def _answer(self, status: int, message: str) -> None:
        """Write a final JSON error answer straight to the transport (no request is being served)."""
        body = json.dumps({"error": message}).encode()
        phrase = {408: "Request Timeout", 431: "Request Header Fields Too Large"}[status]
        self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                             b"connection: close\r\n\r\n%s" % (status, phrase.encode(), len(body), body))

    # -- uvicorn's hooks -------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._expect(self.header_timeout, "request line and headers")

    def connection_lost(self, exc: Exception | None) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
            if self._head_bytes > self.max_header_bytes:
                self._deadline = None
                self._answer(431, f"request line and headers too large: over {self.max_header_bytes} bytes")
                self.transport.close()
                return
        super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # a new request on a kept-alive connection
            self._expect(self.header_timeout, "request line and headers")

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._expect(self.body_timeout, "request body")
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._deadline = None
        self._in_head, self._head_bytes = True, 0
        super().on_message_complete()


def protocol_factory(options: SandboxOptions) -> Callable[..., SandboxProtocol]:
    """The protocol uvicorn builds per connection, with the timeouts and cap of these Sandbox options."""
    return functools.partial(SandboxProtocol, header_timeout=options.header_timeout,
                             body_timeout=options.body_timeout, max_header_bytes=options.max_header_bytes)
