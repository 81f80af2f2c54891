"""Talking RESP2 to the backing Redis without losing what the REST reply needs.

redis-py's parser drops two things the gateway must keep: whether a string was a *simple* string
(``+OK``; needed to write the ``resp2`` response format faithfully and to leave ``OK`` alone in base64
mode) and the error code of an error reply (``WRONGTYPE ...``; redis-py moves it to an attribute). The
parser :func:`tcp_pool` gives its connections keeps both, and so does the fakeredis connection of the
in-process backend; both subclass private parts of their library, so they live in
svckit/sandbox/seams.py. :func:`to_resp2` writes a parsed reply back as the bytes a TCP client would
have read. :func:`read_replies` reads a batch of replies under one timer.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any, Protocol

from redis.asyncio.connection import BlockingConnectionPool, ConnectionPool
from redis.exceptions import AuthenticationError, BusyLoadingError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError

from svckit.sandbox.kv.budget import SLICE_COMMANDS
from svckit.sandbox.seams import Status, status_keeping_parser


def error_text(exc: BaseException) -> str:
    """The protocol error text of an error reply, code included (``ERR ...``, ``WRONGTYPE ...``)."""
    message = str(exc.args[0]) if exc.args else str(exc)
    code = getattr(exc, "status_code", None)
    if code and not message.startswith(code):
        return f"{code} {message}"
    return message


#: connections one gateway pool opens to Redis at most; a request that finds them all busy waits for
#: one (up to POOL_WAIT seconds) instead of failing with "Too many connections".
MAX_CONNECTIONS = 512
POOL_WAIT = 20.0
#: seconds a command may run in Redis before the gateway answers 504 (redis-py's default, made explicit)
SOCKET_TIMEOUT = 5.0


def tcp_pool(url: str, **kwargs: Any) -> ConnectionPool:
    """A pool of RESP2 connections to a real Redis that keeps status strings and error codes."""
    return BlockingConnectionPool.from_url(url, protocol=2, parser_class=status_keeping_parser(SLICE_COMMANDS),
                                           decode_responses=False, max_connections=MAX_CONNECTIONS,
                                           timeout=POOL_WAIT, socket_timeout=SOCKET_TIMEOUT,
                                           # a starved machine may take seconds to accept a connection:
                                           # wait as long as for a pooled one rather than fail the request
                                           socket_connect_timeout=POOL_WAIT, **kwargs)


class Watch(Protocol):
    """A batch holding a script (:class:`.runaway.ScriptWatch`): its time limit, and what to do then."""

    limit: float

    async def overrun(self) -> bool: ...


async def read_replies(conn: Any, n: int, watch: Watch | None = None) -> list[Any]:
    """``n`` replies from ``conn`` (errors as values), each within the connection's socket timeout.

    One timer serves the whole batch, moved forward at most once a second: redis-py's own per-read
    timeout creates and cancels a timer for every reply, half the gateway's CPU time per command
    in a pipeline of 100. A reply may so take up to a second longer than the timeout to time out.

    ``watch`` (a batch holding a script): at each ``watch.limit`` without the replies, instead of
    giving up, ``await watch.overrun()``, which stops the running script and says whether to read on
    (the stopped script's error reply comes); the reading is never cut short mid-reply."""
    limit = conn.socket_timeout
    if limit is None:
        return await _replies(conn, n)
    if watch is not None:
        return await _read_watched(conn, n, watch)
    loop = asyncio.get_running_loop()
    out: list[Any] = []
    async with asyncio.timeout(limit) as timer:
        moved = loop.time()
        for i in range(n):
            if i and i % SLICE_COMMANDS == 0:
                await asyncio.sleep(0)  # a slice at a time (.budget): other requests are served between
            now = loop.time()
            if now - moved > 1.0:
                timer.reschedule(now + limit)
                moved = now
            out.append(await _reply(conn))
    return out


async def _read_watched(conn: Any, n: int, watch: Watch) -> list[Any]:
    reading = asyncio.ensure_future(_replies(conn, n))
    try:
        while True:
            done, _ = await asyncio.wait({reading}, timeout=watch.limit)
            if done:
                return reading.result()
            if not await watch.overrun():
                raise TimeoutError(f"no reply within {watch.limit:g} s")
    finally:
        if not reading.done():
            reading.cancel()
            # read to the end when the connection closes, or cancelled: nobody waits for it any more
            reading.add_done_callback(lambda task: task.cancelled() or task.exception())


async def _replies(conn: Any, n: int) -> list[Any]:
    return [await _reply(conn) for _ in range(n)]


async def _reply(conn: Any) -> Any:
    try:
        return await conn.read_response(timeout=math.inf)  # math.inf: no timer of its own
    except ResponseError as exc:
        return exc


class NotRun(RedisConnectionError):
    """Nothing of a batch reached Redis: it may be sent again."""


class StillLoading(NotRun, BusyLoadingError):
    """Redis answered every command of a batch with LOADING (it ran none of them)."""


async def send_batch(pool: ConnectionPool, batch: list[list[bytes]], watch: Watch | None = None) -> list[Any]:
    """Every command of ``batch`` on one connection of ``pool`` in one write (a slice at a time when
    large: :mod:`.budget`), every reply read
    (errors as values; ``watch``: see :func:`read_replies`). :class:`NotRun` when nothing reached
    Redis; AuthenticationError when Redis refused the pool's user."""
    try:
        conn = await pool.get_connection()
    except ResponseError as exc:  # AUTH refused while connecting: the ACL user changed or is gone
        raise AuthenticationError(error_text(exc)) from exc
    except AuthenticationError:  # a ConnectionError to redis-py, yet Redis answered: the same 401
        raise
    except RedisConnectionError as exc:
        raise NotRun(str(exc)) from exc
    try:
        for start in range(0, len(batch), SLICE_COMMANDS):  # a large transaction, a slice at a time (.budget)
            if start:
                await asyncio.sleep(0)
            await conn.send_packed_command(conn.pack_commands(batch[start:start + SLICE_COMMANDS]), check_health=False)
        replies = await read_replies(conn, len(batch), watch)
    except BaseException:
        await conn.disconnect()
        raise
    finally:
        await pool.release(conn)
    # a Redis that has just started answers LOADING while it replays its file: it is not there
    # yet (the gateway's 503), whatever the command
    loading = [r for r in replies if isinstance(r, ResponseError) and error_text(r).startswith("LOADING")]
    if loading:
        raise (StillLoading if len(loading) == len(replies) else BusyLoadingError)(error_text(loading[0]))
    return replies


def to_resp2(reply: Any, out: bytearray | None = None) -> bytearray:
    """Serialize a parsed reply as RESP2 bytes: :class:`Status` as a simple string, other bytes as bulk."""
    buf = bytearray() if out is None else out
    if reply is None:
        buf += b"$-1\r\n"
    elif isinstance(reply, Status):
        buf += b"+" + bytes(reply) + b"\r\n"
    elif isinstance(reply, (bytes, bytearray)):
        buf += b"$%d\r\n%s\r\n" % (len(reply), reply)
    elif isinstance(reply, bool):
        buf += b":1\r\n" if reply else b":0\r\n"
    elif isinstance(reply, int):
        buf += b":%d\r\n" % reply
    elif isinstance(reply, BaseException):
        buf += b"-" + error_text(reply).replace("\r", " ").replace("\n", " ").encode() + b"\r\n"
    elif isinstance(reply, (list, tuple)):
        buf += b"*%d\r\n" % len(reply)
        for item in reply:
            to_resp2(item, buf)
    elif isinstance(reply, str):
        data = reply.encode()
        buf += b"$%d\r\n%s\r\n" % (len(data), data)
    elif isinstance(reply, float):
        data = repr(reply).encode()
        buf += b"$%d\r\n%s\r\n" % (len(data), data)
    else:
        raise TypeError(f"cannot write a {type(reply).__name__} reply as RESP2")
    return buf
