"""KV and AsyncKV: thin I/O shells over the sans-I/O core (:mod:`svckit.kv.protocol`) and the shared
command helpers (:mod:`svckit.kv.commands`).

Each client owns one pooled transport (connection reuse), a 10 s default timeout and a retry
policy that repeats only idempotent (read-only) commands after a reset connection or a 5xx, unless
``retry=RetryPolicy(retry_non_idempotent=True)``.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast, overload

import httpx

from svckit._client import AsyncClient, ClientBase, ClientOptions, SyncClient
from svckit._cursor import ARun, Pages, Run, alisting, listing
from svckit._http import (
    DEFAULT_TIMEOUT,
    ApiRequest,
    AsyncEventStream,
    BearerAuth,
    EventStream,
    StreamRefused,
)
from svckit._json import loads
from svckit._progress import Cancel, ProgressArg
from svckit.config import DotEnv, Settings
from svckit.errors import InvalidArgument, ProtocolError, StreamClosed, SvcError, mask
from svckit.kv.commands import Cmd, Commands
from svckit.kv.keyspace import SCAN_COUNT, akey_listing, key_listing
from svckit.kv.protocol import (
    Arg,
    Message,
    MonitorEvent,
    WireFormat,
    build_batch,
    build_command,
    command_error,
    decode_batch,
    decode_reply,
    encode_arg,
    json_args,
    parse_message,
    parse_monitor,
    quote_segment,
)

if TYPE_CHECKING:
    from typing import Self, Unpack

S = TypeVar("S", str, bytes)
_Str = TypeVar("_Str")  # the client's class with str values (decode=True): KV[str] or AsyncKV[str]
_Bytes = TypeVar("_Bytes")  # and with bytes values (decode=False)

#: Streams wait for events as long as it takes; only opening them is bounded.
_STREAM_HEADERS = {"Accept": "text/event-stream"}


def _stream_timeout(timeout: float | None) -> float:
    # ApiRequest.timeout is passed straight to httpx, which takes a Timeout object too. The read timeout
    # covers the response headers: the transport lifts it once the stream is open (events may be rare).
    return cast(float, httpx.Timeout(timeout))


def _element_pages(command: str, progress: ProgressArg, cancel: Cancel, limit: int | None) -> Pages:
    """The cursor chain of ``hscan_iter`` / ``sscan_iter`` / ``zscan_iter``: replies ``(cursor,
    elements)`` from cursor 0 until it comes back to 0 (a hash's page is a dict: its items)."""
    return Pages(lambda reply: reply[1].items() if isinstance(reply[1], dict) else reply[1],
                 lambda reply: int(reply[0]), start=0, progress=progress, cancel=cancel, limit=limit,
                 unit={"hscan": "fields", "sscan": "members", "zscan": "members"}[command])


class _Base(ClientBase, Commands, Generic[S]):
    """What KV and AsyncKV share (:mod:`svckit._client`): configuration, the wire format, construction
    from settings. KV adds :class:`~svckit._client.SyncClient`, AsyncKV
    :class:`~svckit._client.AsyncClient`: the only thing construction does differently."""

    _format: WireFormat

    def __init__(
        self, url: str, token: str, *, encoding: str | None = None, response_format: str = "json",
        decode: bool = True, readonly: bool = False, **options: Unpack[ClientOptions],
    ) -> None:
        if not url:
            raise InvalidArgument("url", "the key-value URL is empty (SVC_KV_URL)")
        if not token:
            raise InvalidArgument("token", "the key-value token is empty (SVC_KV_TOKEN)")
        if encoding not in (None, "base64"):
            raise InvalidArgument("encoding", f'must be None or "base64", not {encoding!r}')
        if response_format not in ("json", "resp2"):
            raise InvalidArgument("response_format", f'must be "json" or "resp2", not {response_format!r}')
        resp2 = response_format == "resp2"
        # decode=False asks for bytes: base64 makes the JSON format lossless for binary values.
        base64 = encoding == "base64" or (encoding is None and not decode and not resp2)
        self._format = WireFormat(base64=base64, resp2=resp2, decode=decode)
        self.encoding = "base64" if base64 else None
        self.response_format = response_format
        self.decode = decode
        self._readonly = readonly
        self._token_hint = mask(token)
        super().__init__(url, BearerAuth(token), **options)

    @classmethod
    def from_settings(cls, settings: Settings, readonly: bool = False, *, decode: bool = True,
                      **options: Any) -> Any:
        """Build from Settings; ``readonly=True`` uses SVC_KV_READONLY_TOKEN. ``from_env`` (the
        SVC_KV_* variables) is :class:`~svckit._client.ClientBase`'s, over this."""
        url, token = settings.require("kv_url", "kv_readonly_token" if readonly else "kv_token")
        return cls(url, token, decode=decode, readonly=readonly, **settings.client_options(options))

    def as_bytes(self) -> Any:
        """The same client (same connections, same token) with replies as ``bytes``: what a value
        formatter needs for binary values, which ``decode=True`` turns into U+FFFD. A client that
        already answers in bytes is returned as is. Closing either one closes both."""
        if not self.decode:
            return self
        view = copy.copy(self)
        # command helpers bind themselves to the instance on first use (kv.commands): the view must
        # bind its own, or its calls would decode as the original does
        for name in [n for n, v in vars(view).items() if callable(v) and not n.startswith("_")]:
            del view.__dict__[name]
        view._format = WireFormat(base64=not self._format.resp2, resp2=self._format.resp2, decode=False)
        view.decode = False
        view.encoding = view._format.base64 and "base64" or None
        return view

    @property
    def readonly(self) -> bool:
        """True when the client was built with the Read Only token."""
        return self._readonly

    def _decode(self, response: httpx.Response, cmd: Cmd[Any, Any]) -> Any:
        value = decode_reply(self._format, response.status_code, response.headers.get("content-type", ""),
                             response.content, cmd.args)
        return value if cmd.convert is None else cmd.convert(value)

    def _refused(self, refused: StreamRefused, what: str) -> SvcError:
        response = refused.response
        try:
            body = loads(response.content)
        except ValueError:
            body = {"error": response.text[:200] or f"HTTP {response.status_code}"}
        return command_error(response.status_code, body, [what])

    def __repr__(self) -> str:
        extra = "".join(
            f", {k}={v!r}" for k, v in (("encoding", self.encoding), ("response_format", self.response_format))
            if v not in (None, "json")
        )
        ro = ", readonly=True" if self._readonly else ""
        return f"{type(self).__name__}({self.url!r}, token={self._token_hint}{extra}{ro})"


class _Typed(_Base[S], Generic[S, _Str, _Bytes]):
    """Typing only: the decode flag picks the type of values, KV[str] or KV[bytes] (AsyncKV alike).
    Written once for both kinds: ``_Str`` and ``_Bytes`` name the kind's two classes; at run time
    the constructor, ``from_settings`` and ``as_bytes`` are :class:`_Base`'s, ``from_env``
    :class:`~svckit._client.ClientBase`'s."""

    if TYPE_CHECKING:
        @overload
        def __new__(  # type: ignore[misc]
            cls, url: str, token: str, *, encoding: str | None = None, response_format: str = "json",
            decode: Literal[True] = True, readonly: bool = False, **options: Unpack[ClientOptions],
        ) -> _Str: ...
        @overload
        def __new__(  # type: ignore[misc]
            cls, url: str, token: str, *, encoding: str | None = None, response_format: str = "json",
            decode: Literal[False], readonly: bool = False, **options: Unpack[ClientOptions],
        ) -> _Bytes: ...
        def __new__(cls, *args: Any, **kwargs: Any) -> Any: ...
        @overload  # type: ignore[override]
        @classmethod
        def from_settings(cls, settings: Settings, readonly: bool = False, *, decode: Literal[True] = True,
                          **options: Any) -> _Str: ...
        @overload
        @classmethod
        def from_settings(cls, settings: Settings, readonly: bool = False, *, decode: Literal[False],
                          **options: Any) -> _Bytes: ...
        @classmethod
        def from_settings(cls, *args: Any, **kwargs: Any) -> Any: ...
        @overload  # type: ignore[override]
        @classmethod
        def from_env(cls, *, readonly: bool = False, decode: Literal[True] = True, dotenv: DotEnv = False,
                     **options: Any) -> _Str: ...
        @overload
        @classmethod
        def from_env(cls, *, readonly: bool = False, decode: Literal[False], dotenv: DotEnv = False,
                     **options: Any) -> _Bytes: ...
        @classmethod
        def from_env(cls, **kwargs: Any) -> Any: ...
        def as_bytes(self) -> _Bytes: ...


class KV(_Typed[S, "KV[str]", "KV[bytes]"], SyncClient):
    """Key-value client (sync). ``KV[str]`` with ``decode=True`` (default), ``KV[bytes]`` otherwise.

    >>> kv = KV.from_env()                              # doctest: +SKIP
    >>> kv.set("greeting", "hello"); kv.get("greeting")  # doctest: +SKIP
    'hello'
    """

    # -- running commands --------------------------------------------------------------------
    def _invoke(self, cmd: Cmd[Any, Any], *, private: bool = False) -> Any:
        return self._decode(self._http.send(build_command(self._format, cmd.args, private=private)), cmd)

    def execute(self, *args: Arg) -> Any:
        """Send one raw command (``kv.execute("SET", "a", b"\\x00")``) and return its decoded reply."""
        return self._invoke(Cmd(args))

    def scan_iter(self, match: Arg | None = None, count: int | None = None, type: str | None = None, *,
                  progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None) -> Run[S]:
        """Every key, SCAN page by page (:func:`~svckit.kv.walk_keys` without de-duplication, as
        redis-py's: memory stays flat, and a key may repeat if the keyspace changes meanwhile).
        ``count`` defaults to :data:`~svckit.kv.keyspace.SCAN_COUNT` (1,000), not Redis's 10: each
        call is a round trip to the service. ``progress``, ``cancel`` and ``limit`` as every
        ``iter_*`` (:mod:`svckit._cursor`): a cancelled walk stops before its next call."""
        return key_listing(self, match, type, count, progress=progress, cancel=cancel, limit=limit)

    def _scan_elements(self, command: str, key: Arg, match: Arg | None, count: int | None,
                       progress: ProgressArg, cancel: Cancel, limit: int | None) -> Run[Any]:
        scan = getattr(self, command)
        return listing(lambda at: scan(key, at, match=match, count=count or SCAN_COUNT),
                       _element_pages(command, progress, cancel, limit))

    def hscan_iter(self, key: Arg, match: Arg | None = None, count: int | None = None, *,
                   progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None
                   ) -> Run[tuple[S, S]]:
        """Every ``(field, value)`` of a hash, HSCAN page by page (COUNT, ``progress``, ``cancel``
        and ``limit`` as :meth:`scan_iter`'s)."""
        return self._scan_elements("hscan", key, match, count, progress, cancel, limit)

    def sscan_iter(self, key: Arg, match: Arg | None = None, count: int | None = None, *,
                   progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None) -> Run[S]:
        """Every member of a set, SSCAN page by page (as :meth:`hscan_iter`)."""
        return self._scan_elements("sscan", key, match, count, progress, cancel, limit)

    def zscan_iter(self, key: Arg, match: Arg | None = None, count: int | None = None, *,
                   progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None
                   ) -> Run[tuple[S, float]]:
        """Every ``(member, score)`` of a sorted set, ZSCAN page by page (as :meth:`hscan_iter`)."""
        return self._scan_elements("zscan", key, match, count, progress, cancel, limit)

    def rest_token(self, user: str, password: str) -> str:
        """``ACL RESTTOKEN``: a REST token with that ACL user's permissions. Sent as a JSON body, so
        the password never appears in a URL."""
        token = self._invoke(Cmd(("ACL", "RESTTOKEN", user, password)), private=True)
        return token.decode() if isinstance(token, bytes) else str(token)

    def pipeline(self) -> Pipeline:
        """Queue commands, send them in one request; not atomic, one failure does not stop the rest."""
        return Pipeline(self)

    def multi_exec(self) -> Transaction:
        """Queue commands, run them atomically with ``exec()``."""
        return Transaction(self)

    def monitor(self, *, timeout: float | None = DEFAULT_TIMEOUT) -> Monitor:
        """Open a MONITOR stream now (so later commands are seen) and iterate its events. ``timeout``
        bounds the opening (connect, the answer's headers); once open, the stream waits for events
        as long as they take."""
        return Monitor(self, timeout)

    def subscribe(self, channel: str, *, timeout: float | None = DEFAULT_TIMEOUT) -> Subscription:
        """Subscribe now; iterate ``Message`` events (first the ``subscribe`` confirmation).
        ``timeout`` bounds the opening, as for :meth:`monitor`."""
        return Subscription(self, channel, timeout)


class AsyncKV(_Typed[S, "AsyncKV[str]", "AsyncKV[bytes]"], AsyncClient):
    """Key-value client (asyncio): the same helpers as :class:`KV`, awaited; ``aclose()`` closes it."""

    async def _invoke(self, cmd: Cmd[Any, Any], *, private: bool = False) -> Any:
        return self._decode(await self._http.send(build_command(self._format, cmd.args, private=private)), cmd)

    async def execute(self, *args: Arg) -> Any:
        return await self._invoke(Cmd(args))

    def scan_iter(self, match: Arg | None = None, count: int | None = None, type: str | None = None, *,
                  progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None) -> ARun[S]:
        return akey_listing(self, match, type, count, progress=progress, cancel=cancel, limit=limit)

    def _scan_elements(self, command: str, key: Arg, match: Arg | None, count: int | None,
                       progress: ProgressArg, cancel: Cancel, limit: int | None) -> ARun[Any]:
        scan = getattr(self, command)
        return alisting(lambda at: scan(key, at, match=match, count=count or SCAN_COUNT),
                        _element_pages(command, progress, cancel, limit))

    def hscan_iter(self, key: Arg, match: Arg | None = None, count: int | None = None, *,
                   progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None
                   ) -> ARun[tuple[S, S]]:
        return self._scan_elements("hscan", key, match, count, progress, cancel, limit)

    def sscan_iter(self, key: Arg, match: Arg | None = None, count: int | None = None, *,
                   progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None) -> ARun[S]:
        return self._scan_elements("sscan", key, match, count, progress, cancel, limit)

    def zscan_iter(self, key: Arg, match: Arg | None = None, count: int | None = None, *,
                   progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None
                   ) -> ARun[tuple[S, float]]:
        return self._scan_elements("zscan", key, match, count, progress, cancel, limit)

    async def rest_token(self, user: str, password: str) -> str:
        token = await self._invoke(Cmd(("ACL", "RESTTOKEN", user, password)), private=True)
        return token.decode() if isinstance(token, bytes) else str(token)

    def pipeline(self) -> AsyncPipeline:
        return AsyncPipeline(self)

    def multi_exec(self) -> AsyncTransaction:
        return AsyncTransaction(self)

    def monitor(self, *, timeout: float | None = DEFAULT_TIMEOUT) -> AsyncMonitor:
        """``async for ev in akv.monitor()``; use ``async with akv.monitor() as mon`` to have the
        stream open (and the first ``OK`` consumed) before sending commands."""
        return AsyncMonitor(self, timeout)

    def subscribe(self, channel: str, *, timeout: float | None = DEFAULT_TIMEOUT) -> AsyncSubscription:
        return AsyncSubscription(self, channel, timeout)


# -- pipelines and transactions ------------------------------------------------------------------


class BasePipeline(Commands):
    """Queued commands; every helper of :class:`Commands` queues and returns the pipeline."""

    transaction = False

    def __init__(self, client: _Base[Any]) -> None:
        self._client = client
        #: queued commands; helpers append to this very list (see ``command.__get__``).
        self._queue: list[Cmd[Any, Any]] = []

    def _invoke(self, cmd: Cmd[Any, Any]) -> Self:
        self._queue.append(cmd)
        return self

    def command(self, *args: Arg) -> Self:
        """Queue a raw command."""
        json_args(args)  # refuse what JSON cannot carry here, at the line that queued it
        return self._invoke(Cmd(args))

    def __len__(self) -> int:
        return len(self._queue)

    def _take(self) -> tuple[list[Cmd[Any, Any]], ApiRequest]:
        """Empty the queue (the same list object stays) and build the request for what it held."""
        commands = self._queue[:]
        rows = [json_args(cmd.args) for cmd in commands]  # may refuse raw bytes: queue kept then
        self._queue.clear()
        request = build_batch(self._client._format, rows, transaction=self.transaction)
        return commands, request

    def _results(self, commands: list[Cmd[Any, Any]], request: ApiRequest, response: httpx.Response) -> list[Any]:
        values = decode_batch(
            self._client._format, response.status_code, response.headers.get("content-type", ""), response.content,
            [cmd.args for cmd in commands], transaction=self.transaction,
        )
        for index, cmd in enumerate(commands):
            convert = cmd.convert
            if convert is not None:
                value = values[index]
                if not isinstance(value, SvcError):
                    try:
                        values[index] = convert(value)
                    except (TypeError, ValueError) as exc:
                        values[index] = ProtocolError(f"unexpected reply to {cmd.args[0]!r}: {exc}")
        return values


class Pipeline(BasePipeline):
    """``results = kv.pipeline().set("a", "1").incr("n").exec()``: one value per command, a failed
    command's slot holds its :class:`~svckit.errors.CommandError` (not raised)."""

    def exec(self) -> list[Any]:
        """Send every queued command in one request; the queue is empty afterwards."""
        if not self._queue:
            return []
        commands, request = self._take()
        client = cast(KV[Any], self._client)
        return self._results(commands, request, client._http.send(request))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._queue.clear()


class Transaction(Pipeline):
    """``kv.multi_exec()``: atomic. A discarded transaction raises
    :class:`~svckit.errors.TransactionDiscarded`; a command that failed while running still yields
    its CommandError in its slot. Always JSON (``resp2`` does not apply to /multi-exec)."""

    transaction = True


class AsyncPipeline(BasePipeline):
    async def exec(self) -> list[Any]:
        if not self._queue:
            return []
        commands, request = self._take()
        client = cast(AsyncKV[Any], self._client)
        return self._results(commands, request, await client._http.send(request))

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._queue.clear()


class AsyncTransaction(AsyncPipeline):
    transaction = True


# -- event streams -------------------------------------------------------------------------------


def _is_ok(payload: str) -> bool:
    return payload.strip() in ('"OK"', "OK")


class _SyncStream:
    """Opened when built (a refusal raises the client's APIError). ``close()`` is safe from any
    thread: a thread blocked waiting for the next event then ends its iteration quietly."""

    def __init__(self, client: KV[Any], path: str, what: str, timeout: float | None) -> None:
        self._client = client
        self._what = what
        request = ApiRequest("POST", path, headers=_STREAM_HEADERS, idempotent=True,
                             timeout=_stream_timeout(timeout))
        try:
            self._lines: EventStream = client._http.stream_lines(request)
        except StreamRefused as refused:
            raise client._refused(refused, what) from None

    def _next_payload(self) -> str:
        return next(self._lines)

    def _first_payload(self) -> str:
        try:
            return self._next_payload()
        except StopIteration:
            raise StreamClosed(f"the {self._what} stream ended before its first event") from None

    @property
    def closed(self) -> bool:
        return self._lines.closed

    def close(self) -> None:
        self._lines.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Self:
        return self


class Monitor(_SyncStream):
    """Every command the server runs, as :class:`MonitorEvent`; the stream is open once built."""

    def __init__(self, client: KV[Any], timeout: float | None) -> None:
        super().__init__(client, "/monitor", "MONITOR", timeout)
        first = self._first_payload()
        if not _is_ok(first):
            self.close()
            raise ProtocolError(f'monitor stream did not start with "OK": {first[:80]!r}')

    def __next__(self) -> MonitorEvent:
        return parse_monitor(self._next_payload())


class Subscription(_SyncStream):
    """Messages of one channel; the subscription is active once built (its confirmation is the
    first event the iteration yields)."""

    def __init__(self, client: KV[Any], channel: str, timeout: float | None) -> None:
        super().__init__(client, "/subscribe/" + quote_segment(encode_arg(channel)), "SUBSCRIBE", timeout)
        self.channel = channel
        self._first: Message | None = parse_message(self._first_payload(), channel)

    def __next__(self) -> Message:
        if self._first is not None:
            first, self._first = self._first, None
            return first
        return parse_message(self._next_payload(), self.channel)


class _AsyncStream:
    def __init__(self, client: AsyncKV[Any], path: str, what: str, timeout: float | None) -> None:
        self._client = client
        self._what = what
        request = ApiRequest("POST", path, headers=_STREAM_HEADERS, idempotent=True,
                             timeout=_stream_timeout(timeout))
        self._lines: AsyncEventStream = client._http.stream_lines(request)
        self._started = False

    async def _next_payload(self) -> str:
        try:
            return await self._lines.__anext__()
        except StreamRefused as refused:
            raise self._client._refused(refused, self._what) from None

    async def _open(self) -> None:
        """Hook: read what the stream sends first."""

    async def _first_payload(self) -> str:
        try:
            return await self._next_payload()
        except StopAsyncIteration:
            raise StreamClosed(f"the {self._what} stream ended before its first event") from None

    async def start(self) -> Self:
        """Open the stream now (``async with`` does this)."""
        if not self._started:
            self._started = True
            await self._open()
        return self

    async def aclose(self) -> None:
        await self._lines.aclose()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __aiter__(self) -> Self:
        return self


class AsyncMonitor(_AsyncStream):
    def __init__(self, client: AsyncKV[Any], timeout: float | None) -> None:
        super().__init__(client, "/monitor", "MONITOR", timeout)

    async def _open(self) -> None:
        first = await self._first_payload()
        if not _is_ok(first):
            await self.aclose()
            raise ProtocolError(f'monitor stream did not start with "OK": {first[:80]!r}')

    async def __anext__(self) -> MonitorEvent:
        await self.start()
        return parse_monitor(await self._next_payload())


class AsyncSubscription(_AsyncStream):
    def __init__(self, client: AsyncKV[Any], channel: str, timeout: float | None) -> None:
        super().__init__(client, "/subscribe/" + quote_segment(encode_arg(channel)), "SUBSCRIBE", timeout)
        self.channel = channel
        self._first: Message | None = None

    async def _open(self) -> None:
        self._first = parse_message(await self._first_payload(), self.channel)

    async def __anext__(self) -> Message:
        await self.start()
        if self._first is not None:
            first, self._first = self._first, None
            return first
        return parse_message(await self._next_payload(), self.channel)


__all__ = [
    "KV", "AsyncKV", "AsyncMonitor", "AsyncPipeline", "AsyncSubscription", "AsyncTransaction",
    "Monitor", "Pipeline", "Subscription", "Transaction",
]
