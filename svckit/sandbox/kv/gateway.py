"""The key-value REST gateway: HTTP requests in, commands on the backing Redis, envelopes out.

Routing is done here rather than by Starlette's path converters because arguments must be
binary-safe: the path is split on ``/`` *before* percent-decoding (``scope["raw_path"]``), so ``%2F``
inside an argument stays inside it.

Choices where the spec leaves room (documented in docs/sandbox.md):
- ``Service-Response-Format: resp2`` on ``/multi-exec`` is answered in JSON (rule 3: transactions
  reply only in JSON); ``resp2`` together with base64 is 400 everywhere.
- A Read Only token inside ``/multi-exec`` with a write discards the whole transaction, like an
  unsupported command; in ``/pipeline`` it yields one ``{error}`` element.
- The daily request limit counts commands (a pipeline of 10 counts 10), in memory, per UTC day.
- Event streams are bounded in all and per token (:class:`.events.StreamLimits`); one more is 429.
- A request's budget (its commands: 413 beyond it; its time: the commands of a pipeline not sent by
  then answer an error) and its work done in slices, so that one request cannot stall the others:
  :mod:`.budget`.
- What a token may not reach (the host, the network, the sandbox's own Redis users) is in
  :mod:`.guard` and docs/security.md; how long a script may run, in :mod:`.runaway`.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_to_bytes

from redis.exceptions import AuthenticationError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.requests import Request
from starlette.responses import Response

from svckit._json import dumps
from svckit.sandbox.area import DailyCounts
from svckit.sandbox.http import ApiError
from svckit.sandbox.kv import commands, guard
from svckit.sandbox.kv.budget import (
    SLICE_COMMANDS,
    Budget,
    TooManyCommands,
    in_slices,
    read_command,
    read_rows,
    slice_end,
)
from svckit.sandbox.kv.cluster import ClusterPool, Pool
from svckit.sandbox.kv.events import SSEResponse, StreamLimits
from svckit.sandbox.kv.resp import SOCKET_TIMEOUT, NotRun, Status, error_text, send_batch, to_resp2
from svckit.sandbox.kv.runaway import ScriptEnded, ScriptWatch, all_busy

if TYPE_CHECKING:
    from svckit.sandbox.kv import KVArea

ALLOWED_METHODS = frozenset({"GET", "HEAD", "POST", "PUT"})
JSON_TYPE = "application/json"
RESP2_TYPE = "application/octet-stream"

#: seconds a request that could not reach Redis waits for a redis-server child being restarted
RESTART_HOLD = 2.0
#: seconds between two tries of a batch that Redis answered BUSY (a script holds it)
BUSY_POLL = 0.05


@dataclass
class Principal:
    """Who a token speaks for: the Standard or Read Only token, or an ACL user's REST token."""

    kind: str  # "standard" | "readonly" | "acl"
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    pool: Pool | None = field(default=None, repr=False)
    #: an ACL user's connections for subscriptions, apart from ``pool`` (see KVArea.stream_pool_of)
    stream_pool: Pool | None = field(default=None, repr=False)
    streams: int = 0  # open event streams, counted by the gateway's StreamLimits

    @property
    def readonly(self) -> bool:
        return self.kind == "readonly"


@dataclass
class ReplyFormat:
    resp2: bool = False
    base64: bool = False


def to_json(value: Any, b64: bool) -> Any:
    """A parsed reply as JSON: bytes become text (invalid UTF-8 -> U+FFFD) or base64, except the
    simple-string reply ``OK`` (a *value* "OK", as GET returns it, is encoded like any other)."""
    if value is None or type(value) is int:
        return value
    if isinstance(value, bytes):
        if b64:
            if isinstance(value, Status) and value == b"OK":
                return "OK"
            return base64.b64encode(value).decode("ascii")
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list):
        return [to_json(item, b64) for item in value]
    if isinstance(value, BaseException):
        return error_text(value)
    return value


def envelope(value: Any, b64: bool) -> dict[str, Any]:
    if isinstance(value, BaseException):
        return {"error": error_text(value)}
    return {"result": to_json(value, b64)}


def json_response(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(dumps(body), status_code=status, media_type=JSON_TYPE, headers=headers)


async def envelopes_response(replies: list[Any], b64: bool) -> Response:
    """A batch's JSON array of envelopes, written a slice at a time (:mod:`.budget`)."""
    parts = await in_slices(replies, lambda piece: dumps([envelope(r, b64) for r in piece])[1:-1])
    return Response(b"[" + b",".join(parts) + b"]", media_type=JSON_TYPE)


def _resp2_of(replies: list[Any]) -> bytes:
    buf = bytearray()
    for reply in replies:
        to_resp2(reply, buf)
    return bytes(buf)


def _query_arguments(query: bytes) -> list[bytes]:
    """``?EX=100&NX`` -> ``EX 100 NX`` (arguments after the body); ``_token`` is not an argument.

    An empty value (``?NX=``) is read as a bare flag, since that is what form encoders produce for
    one; an empty *argument* can still be sent in the path (``/SET/k/``) or in a JSON body."""
    out: list[bytes] = []
    if not query:
        return out
    for item in query.split(b"&"):
        if not item:
            continue
        name, _, value = item.partition(b"=")
        name = unquote_to_bytes(name.replace(b"+", b" "))
        if name == b"_token":
            continue
        out.append(name)
        if value:  # ``?NX`` and ``?NX=`` are both the bare flag NX
            out.append(unquote_to_bytes(value.replace(b"+", b" ")))
    return out


def _headers(raw: list[tuple[bytes, bytes]]) -> tuple[str | None, str | None, str | None]:
    """Authorization, Service-Response-Format and Service-Encoding (the first of each), in one pass
    over the ASGI header list: three ``request.headers.get`` calls scan it three times and raise a
    KeyError for each header that is absent, on every request."""
    auth = fmt = enc = None
    for name, value in raw:
        if name == b"authorization":
            auth = value.decode("latin-1") if auth is None else auth
        elif name == b"service-response-format":
            fmt = value.decode("latin-1") if fmt is None else fmt
        elif name == b"service-encoding":
            enc = value.decode("latin-1") if enc is None else enc
    return auth, fmt, enc


class Gateway:
    """Authenticates, checks and runs commands for one :class:`KVArea`."""

    def __init__(self, area: KVArea) -> None:
        self.area = area
        # the documented sandbox limits (the spec leaves the numbers open): svckit/sandbox/options.py
        options = area.ctx.options
        self.max_request_size = options.kv_max_request_size
        self.daily_limit = options.kv_daily_request_limit
        self.budget = Budget(options.kv_max_request_commands, options.kv_max_request_seconds)
        self.streams = StreamLimits(options.kv_max_streams, options.kv_max_streams_per_token)
        self.daily = DailyCounts()  # commands per UTC day, against daily_limit

    # -- checks ----------------------------------------------------------------------------
    def authenticate(self, request: Request, header: str | None) -> Principal | None:
        """The principal of the bearer token in ``header`` (the Authorization header), else of ``?_token``."""
        token = None
        if header:
            scheme, _, value = header.partition(" ")
            if scheme.lower() == "bearer":
                token = value.strip()
        if token is None:
            token = request.query_params.get("_token")
        if not token:
            return None
        return self.area.principal_for(token)

    def take_quota(self, n: int) -> bool:
        """Count ``n`` commands against the daily limit; False (and nothing counted) when over."""
        return self.daily.take("commands", n, self.daily_limit)

    def commands_today(self) -> int:
        """The commands counted against the daily limit so far this UTC day (the developer API's stats)."""
        return self.daily.today("commands")

    def check(self, argv: list[bytes], principal: Principal) -> str | None:
        """Why this command may not run (unsupported, read-only, out of the sandbox's reach, too
        large), or None."""
        why = (commands.refusal(argv, readonly=principal.readonly) or guard.refusal(argv)
               or guard.library_refusal(argv, acl_user=principal.kind == "acl"))
        if why is not None:
            return why
        if b" " in argv[0]:
            # redis-py splits a command name on spaces: " " would go out as an empty command that Redis
            # never answers (a hung request), "GET k" as two arguments. Neither is a command.
            return f"ERR unknown command '{argv[0].decode('utf-8', 'replace')}'"
        size = sum(len(a) for a in argv)
        if size > self.max_request_size:
            return (f"ERR max request size exceeded: the command is {size} bytes, "
                    f"the limit is {self.max_request_size} bytes")
        return None

    # -- execution -------------------------------------------------------------------------
    async def run_batch(self, pool: Pool, batch: list[list[bytes]], *, hold: bool = True,
                        atomic: bool = False, watch: ScriptWatch | None = None) -> list[Any]:
        """Send every command on one connection in one write, read every reply (errors as values);
        on a cluster, one such batch per node the commands go to (``atomic``: a MULTI ... EXEC
        batch, which a cluster runs on the one node of its one slot).

        A batch that did not run at all (no connection to Redis, or every command answered LOADING)
        waits for a Redis child that is being restarted, up to RESTART_HOLD seconds, and is sent once
        more: a restart of a second is a pause to the client, not an error. One that may have run
        in part is never sent again. ``hold=False``: no wait (what is true now: the health check).

        A batch that comes while the child is known to be away waits before it is sent: a pooled
        connection to the dead child may not look closed yet (the event loop has not read its end),
        and a batch sent on it would fail as one that may have run.

        ``watch``: a batch holding a script, which the gateway stops at the script time limit
        (:mod:`.runaway`). A batch Redis answered BUSY whole (a script holds it, and it ran none of the
        batch) is sent again once the script has ended (:meth:`_once_not_busy`)."""
        backend = self.area.backend
        if hold and not backend.serving() and not await backend.serving_again(RESTART_HOLD):
            raise NotRun("the backing Redis is away")
        try:
            replies = await self._send(pool, batch, atomic, watch)
        except NotRun:
            if not hold or not await backend.serving_again(RESTART_HOLD):
                raise
            replies = await self._send(pool, batch, atomic, watch)
        if hold and not isinstance(pool, ClusterPool) and all_busy(replies):
            replies = await self._once_not_busy(pool, batch, watch, replies)
        return replies

    async def _once_not_busy(self, pool: Pool, batch: list[list[bytes]], watch: ScriptWatch | None,
                             replies: list[Any]) -> list[Any]:
        """The replies of a batch sent again, every BUSY_POLL seconds, until Redis runs it: the gateway
        stops the script that holds Redis at the script time limit (a request that found Redis busy
        waits at most that long, and a restart more); BUSY as before if Redis is busy even then."""
        backend, loop = self.area.backend, asyncio.get_running_loop()
        deadline = loop.time() + self.area.script_limit + RESTART_HOLD
        while all_busy(replies) and loop.time() < deadline:
            await asyncio.sleep(BUSY_POLL)
            try:
                replies = await self._send(pool, batch, False, watch)
            except NotRun:  # the script could not be stopped, and its Redis is being restarted
                if not await backend.serving_again(RESTART_HOLD):
                    raise
        return replies

    @staticmethod
    async def _send(pool: Pool, batch: list[list[bytes]], atomic: bool, watch: ScriptWatch | None) -> list[Any]:
        if isinstance(pool, ClusterPool):  # each node's batch times out on its own (docs/sandbox.md)
            return await pool.send(batch, atomic=atomic)
        return await send_batch(pool, batch, watch)

    async def run_commands(self, principal: Principal, rows: list[list[bytes]], client: str) -> list[Any]:
        """Pipeline semantics: refused rows become errors, the rest run in order on one connection,
        except the commands the gateway runs itself (:meth:`KVArea.runs_aside`), each in its turn.

        A slice at a time (:mod:`.budget`): the event loop serves other requests between two slices,
        and the slices still unsent once the request's time budget is spent are not run."""
        replies: list[Any] = [None] * len(rows)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.budget.seconds
        start = 0
        while start < len(rows):
            if start:
                if loop.time() > deadline:
                    replies[start:] = [ResponseError(self.budget.out_of_time())] * (len(rows) - start)
                    break
                await asyncio.sleep(0)
            end = slice_end(rows, start)
            todo: list[int] = []
            for i in range(start, end):
                argv = rows[i]
                why = self.check(argv, principal)
                if why is None and not self.take_quota(1):
                    why = f"ERR max daily request limit exceeded (limit {self.daily_limit})"
                if why is not None:
                    replies[i] = ResponseError(why)
                elif self.area.runs_aside(argv, principal):
                    await self._run_rows(principal, rows, todo, replies, client)
                    todo = []
                    self.area.monitor.offer(argv, client)
                    replies[i] = await self.area.run_aside(argv)
                else:
                    todo.append(i)
            await self._run_rows(principal, rows, todo, replies, client)
            start = end
        return replies

    async def _run_rows(self, principal: Principal, rows: list[list[bytes]], todo: list[int], replies: list[Any],
                        client: str) -> None:
        """Rows ``todo`` of ``rows`` as one batch on the principal's connection, replies into ``replies``."""
        if not todo:
            return
        self.area.monitor.offer_many([rows[i] for i in todo], client)
        watch = self.area.script_watch([rows[i] for i in todo])
        results = await self.run_batch(self.area.pool_of(principal), [self.area.translate(rows[i]) for i in todo],
                                       watch=watch)
        for i, result in zip(todo, results):
            replies[i] = self.area.translate_reply(rows[i], watch.reply(result) if watch else result)

    async def run_transaction(self, principal: Principal, rows: list[list[bytes]], client: str) -> Any:
        """MULTI/EXEC on one connection. Returns the list of replies, or an exception when discarded."""
        for n, argv in enumerate(rows):
            if n and n % SLICE_COMMANDS == 0:
                await asyncio.sleep(0)  # checked a slice at a time (.budget); Redis runs it in one piece
            why = self.check(argv, principal)
            if why is None and self.area.runs_aside(argv, principal):
                why = (f"ERR {' '.join(a.decode('utf-8', 'replace').upper() for a in argv[:2])} cannot run "
                       f"inside a transaction: the gateway runs it itself, outside Redis; send it on its own")
            if why is not None:
                return ResponseError(f"EXECABORT Transaction discarded: {why}")
        if not self.take_quota(len(rows)):
            return ResponseError(f"EXECABORT Transaction discarded: max daily request limit exceeded "
                                 f"(limit {self.daily_limit})")
        self.area.monitor.offer([b"MULTI"], client)
        translated = await in_slices(rows, lambda piece: self._offered(piece, client))
        self.area.monitor.offer([b"EXEC"], client)
        wire = [[b"MULTI"], *(argv for piece in translated for argv in piece), [b"EXEC"]]
        watch = self.area.script_watch(rows)
        replies = await self.run_batch(self.area.pool_of(principal), wire, atomic=True, watch=watch)
        if watch is not None and isinstance(replies[-1], list):
            replies[-1] = [watch.reply(reply) for reply in replies[-1]]
        result = replies[-1]
        if isinstance(result, BaseException):
            queued_errors = [r for r in replies[1:-1] if isinstance(r, BaseException)]
            detail = f" First error: {error_text(queued_errors[0])}" if queued_errors else ""
            return ResponseError(f"{error_text(result)}{detail}")
        if not isinstance(result, list):  # EXEC answered nil (cannot happen without WATCH)
            return ResponseError("EXECABORT Transaction discarded")
        pieces = await in_slices(list(zip(rows, result)),
                                 lambda piece: [self.area.translate_reply(argv, reply) for argv, reply in piece])
        return [reply for piece in pieces for reply in piece]

    def _offered(self, rows: list[list[bytes]], client: str) -> list[list[bytes]]:
        """``rows`` shown to the monitor, and as sent to Redis."""
        self.area.monitor.offer_many(rows, client)
        return [self.area.translate(argv) for argv in rows]

    # -- HTTP ------------------------------------------------------------------------------
    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """ASGI entry. One handler for every path: routing by raw path happens in :meth:`handle`."""
        if scope["type"] != "http":
            return
        try:
            response = await self.handle(Request(scope, receive))
        except ApiError as exc:  # the one error type (svckit/sandbox/http.py), in this area's body
            response = json_response(self.area.error_body(exc.message, exc.status), exc.status, exc.headers)
        await response(scope, receive, send)

    def reply_format(self, fmt: str | None, enc: str | None) -> ReplyFormat | str:
        """The reply format the Service-Response-Format and Service-Encoding headers ask for."""
        out = ReplyFormat()
        if fmt is not None:
            value = fmt.strip().lower()
            if value not in ("json", "resp2"):
                return f"ERR unsupported Service-Response-Format {fmt!r}: use json or resp2"
            out.resp2 = value == "resp2"
        if enc is not None:
            value = enc.strip().lower()
            if value != "base64":
                return f"ERR unsupported Service-Encoding {enc!r}: the only encoding is base64"
            out.base64 = True
        if out.resp2 and out.base64:
            return "ERR Service-Response-Format resp2 cannot be combined with Service-Encoding base64"
        return out

    async def handle(self, request: Request) -> Any:
        if request.method not in ALLOWED_METHODS:
            raise ApiError(405, f"method {request.method} is not allowed: use GET, HEAD, POST or PUT",
                           {"Allow": "GET, HEAD, POST, PUT"})
        scope = request.scope
        auth, fmt_header, enc_header = _headers(scope["headers"])
        principal = self.authenticate(request, auth)
        if principal is None:
            raise ApiError(401, "Unauthorized: a valid token is required (Authorization: Bearer <token> or "
                           "?_token=<token>)", {"WWW-Authenticate": "Bearer"})
        fmt = self.reply_format(fmt_header, enc_header)
        if isinstance(fmt, str):
            raise ApiError(400, fmt)
        raw_path: bytes = scope.get("raw_path") or scope["path"].encode()
        raw_path = raw_path.split(b"?", 1)[0]
        root = scope.get("root_path", "").encode()
        if root and raw_path.startswith(root):
            raw_path = raw_path[len(root):]
        segments = raw_path[1:].split(b"/") if raw_path.startswith(b"/") else raw_path.split(b"/")
        peer = scope.get("client")
        client = f"{peer[0]}:{peer[1]}" if peer else "127.0.0.1:0"

        try:
            if request.method == "POST":
                special = await self.special(request, segments, principal, fmt, client)
                if special is not None:
                    return special
            argv = [unquote_to_bytes(s) for s in segments]
            if argv == [b""]:
                raise ApiError(400, "ERR empty command: send /COMMAND/arg1/... or POST / with a JSON array")
            if request.method in ("POST", "PUT"):
                body = await request.body()
                if body:
                    argv.append(body)
            argv.extend(_query_arguments(scope.get("query_string", b"")))
            return await self.single(principal, argv, fmt, client)
        except AuthenticationError:
            # an ACL user's REST token whose password changed or whose user was disabled since
            raise ApiError(401, "Unauthorized: WRONGPASS invalid username-password pair or user is disabled.") from None
        except RedisConnectionError as exc:
            # Redis is away (a child being restarted, an external one down): try again shortly
            message, wait = self.area.backend.outage(exc)
            raise ApiError(503, f"ERR {message}", {"Retry-After": str(wait)}) from None
        except ScriptEnded as exc:  # a script that wrote ran past the time limit, and Redis was restarted
            raise ApiError(400, str(exc)) from None
        except (RedisTimeoutError, TimeoutError) as exc:
            # a command that runs longer than the connection's socket timeout (a long script), or a
            # connect that a starved machine could not finish: the JSON error a client can read
            raise ApiError(504, f"ERR the backing Redis did not answer within {SOCKET_TIMEOUT:g} s "
                                f"({exc or 'timed out'}): split a long script or command into shorter ones") from None

    async def single(self, principal: Principal, argv: list[bytes], fmt: ReplyFormat, client: str) -> Response:
        [reply] = await self.run_commands(principal, [argv], client)
        failed = isinstance(reply, BaseException)
        if fmt.resp2:
            return Response(bytes(to_resp2(reply)), status_code=400 if failed else 200, media_type=RESP2_TYPE)
        return json_response(envelope(reply, fmt.base64), 400 if failed else 200)

    async def stream(self, principal: Principal,
                     opened: Callable[[], Awaitable[AsyncIterator[str]]]) -> Response | SSEResponse:
        """An event stream of the events ``opened()`` returns, counted against the stream limits while
        it is open; 429 when one more would exceed them (too many of the caller's own: it can close
        some and try again)."""
        why = self.streams.take(principal)
        if why is not None:
            raise ApiError(429, why)
        try:
            events = await opened()
        except BaseException:
            self.streams.release(principal)
            raise
        return SSEResponse(events, self.area.closing, on_close=lambda: self.streams.release(principal))

    async def special(self, request: Request, segments: list[bytes], principal: Principal,
                      fmt: ReplyFormat, client: str) -> Any:
        """POST /, /pipeline, /multi-exec, /monitor, /subscribe/{channel}, /publish/{channel}/{message}."""
        head = segments[0]
        if segments == [b""]:
            try:
                argv = read_command(await request.body())
            except ValueError as exc:
                raise ApiError(400, str(exc)) from None
            return await self.single(principal, argv, fmt, client)
        if segments == [b"pipeline"] or segments == [b"multi-exec"]:
            try:
                rows = await read_rows(await request.body(), self.budget)
            except TooManyCommands as exc:
                raise ApiError(413, str(exc)) from None
            except ValueError as exc:
                raise ApiError(400, str(exc)) from None
            if head == b"pipeline":
                replies = await self.run_commands(principal, rows, client)
                if fmt.resp2:
                    return Response(b"".join(await in_slices(replies, _resp2_of)), media_type=RESP2_TYPE)
                return await envelopes_response(replies, fmt.base64)
            result = await self.run_transaction(principal, rows, client)
            if isinstance(result, BaseException):
                raise ApiError(400, error_text(result))
            return await envelopes_response(result, fmt.base64)
        if segments == [b"monitor"]:
            if principal.kind != "standard":
                raise ApiError(400, "NOPERM only the Standard token may monitor commands")
            return await self.stream(principal, self.area.monitor.opened)
        if head == b"subscribe" and len(segments) == 2:
            channel = unquote_to_bytes(segments[1])
            return await self.stream(principal, lambda: self.area.subscription(principal, channel))
        if head == b"publish" and len(segments) == 3:
            argv = [b"PUBLISH", unquote_to_bytes(segments[1]), unquote_to_bytes(segments[2])]
            return await self.single(principal, argv, fmt, client)
        return None
