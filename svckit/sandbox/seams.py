"""Every use the sandbox makes of a library's private or undocumented parts, in one place.

The rest of the sandbox uses no private (underscore) name of redis-py, fakeredis, uvicorn, starlette or
httpx; kv/cluster.py reads redis-py's cluster client through attributes that are not private but not
documented either (``commands_parser``, ``nodes_manager``), checked in tests/sandbox/test_seams.py too.
What follows has no public equivalent; each use says what it is, why, and which versions were read.
pyproject.toml bounds each library above (the next major, or the next minor of a 0.x) and
tests/sandbox/test_seams.py checks every name and shape used here, so a release that changes one
fails that test first, with the name in its message.

- **redis-py** (read: 8.2.0): :func:`status_keeping_parser` subclasses ``redis._parsers.resp2.
  _AsyncRESP2Parser`` (no public RESP2 parser exists; ``parser_class=`` that takes it is public), and
  uses its ``_readline()`` and ``_read(n)`` and overrides ``_read_response`` and ``parse_error``.
  redis-py's parser turns ``+OK`` and ``$2 OK`` into the same bytes and moves an error's code to an
  attribute; the gateway must keep both (kv/resp.py). hiredis cannot tell the two strings apart.
- **fakeredis** (read: 2.41.0): :func:`status_keeping_fake_connection` subclasses the public
  ``fakeredis.aioredis.FakeAsyncRedisConnection``, overrides its ``_connect()`` and shadows the
  ``_decode_result`` of the fake socket it keeps in ``_sock``, to turn ``fakeredis._helpers.
  SimpleString`` into :class:`Status` as the parser above does; fakeredis makes them plain bytes.
  :func:`fake_socket` reads ``_sock`` to close it: fakeredis forgets a connection's subscriptions
  only then, and keeps a connection authenticated after its ACL user is gone (kv/backends.py).
- **uvicorn** (read: 0.55.0): :data:`HttpToolsProtocol` is ``uvicorn.protocols.http.httptools_impl.
  HttpToolsProtocol``, which :class:`svckit.sandbox.limits.SandboxProtocol` subclasses (``Config(http=
  a class)`` is public, the class is not documented): uvicorn has no read timeout before a request
  has arrived and no cap on its head, and no Config option sets one. The subclass relies on the
  hooks in :data:`HTTPTOOLS_HOOKS` and the state in :data:`HTTPTOOLS_STATE`.

:class:`Status`, the type the redis-py and fakeredis seams hand back, is defined here so that this
module imports nothing of svckit; kv/resp.py re-exports it.
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import Any

from redis._parsers.resp2 import _AsyncRESP2Parser
from redis.exceptions import InvalidResponse, ResponseError
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["HTTPTOOLS_HOOKS", "HTTPTOOLS_STATE", "HttpToolsProtocol", "Status", "fake_socket",
           "status_keeping_fake_connection", "status_keeping_parser"]

#: uvicorn's protocol methods SandboxProtocol overrides (each calls the original)
HTTPTOOLS_HOOKS = ("connection_made", "connection_lost", "data_received", "on_message_begin",
                   "on_headers_complete", "on_message_complete")
#: uvicorn's protocol state SandboxProtocol reads: the event loop, the transport, the request being
#: served (its ``response_started`` and ``response_complete``) and the requests pipelined behind it
HTTPTOOLS_STATE = ("loop", "transport", "cycle", "pipeline")


class Status(bytes):
    """A RESP2 simple string (``+OK``, ``+PONG``, ``+QUEUED``), as opposed to a bulk string."""

    __slots__ = ()


@cache
def status_keeping_parser(slice_commands: int) -> type[_AsyncRESP2Parser]:
    """redis-py's pure-Python RESP2 parser, except that simple strings come back as :class:`Status`
    and error replies keep their full text; an array is read ``slice_commands`` items at a time,
    the event loop serving others between (kv/budget.py)."""

    class StatusKeepingParser(_AsyncRESP2Parser):
        def parse_error(self, response: str) -> ResponseError:  # type: ignore[override]
            return ResponseError(response)

        async def _read_response(self, disable_decoding: bool = False) -> Any:
            raw = await self._readline()
            byte, rest = raw[:1], raw[1:]
            if byte == b"+":
                return Status(rest)
            if byte == b"$":
                return None if rest == b"-1" else await self._read(int(rest))
            if byte == b":":
                return int(rest)
            if byte == b"*":
                if rest == b"-1":
                    return None
                out = []
                for n in range(int(rest)):
                    if n and n % slice_commands == 0:
                        await asyncio.sleep(0)
                    out.append(await self._read_response(disable_decoding))
                return out
            if byte == b"-":
                return ResponseError(rest.decode("utf-8", errors="replace"))
            raise InvalidResponse(f"Protocol Error: {raw!r}")

    return StatusKeepingParser


@cache
def status_keeping_fake_connection() -> type:
    """fakeredis's async connection, keeping simple strings as :class:`Status` like the parser above
    (its fake socket's decoder is wrapped right after connecting). fakeredis is imported only here."""
    from fakeredis._helpers import SimpleString
    from fakeredis.aioredis import FakeAsyncRedisConnection

    class StatusKeepingFakeConnection(FakeAsyncRedisConnection):
        async def _connect(self) -> None:
            await super()._connect()
            sock: Any = self._sock
            plain = sock._decode_result

            def decode(result: Any) -> Any:
                if isinstance(result, SimpleString):
                    return Status(result.value)
                if isinstance(result, list):
                    return [decode(item) for item in result]
                return plain(result)

            sock._decode_result = decode  # instance attribute shadows the method

    return StatusKeepingFakeConnection


def fake_socket(connection: Any) -> Any | None:
    """The fake socket of a fakeredis connection (something with ``close()``); None for any other
    connection, or one not connected."""
    sock = getattr(connection, "_sock", None)
    return sock if sock is not None and hasattr(sock, "close") else None
