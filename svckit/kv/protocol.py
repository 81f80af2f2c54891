"""The key-value protocol core, sans-I/O: command -> :class:`~svckit._http.ApiRequest`, reply -> value.

Nothing here touches a socket, so the sync and async clients are thin shells over it and every rule
can be tested (and fuzzed) without a server.

Request forms (spec, Endpoints A), and when each one is used
-----------------------------------------------------------
1. **Path form** ``POST /SET/a/b`` -- the default. Every argument is one path segment,
   percent-encoded so that the server gets exactly its bytes: ``/``, ``%``, ``?``, ``#``, spaces,
   unicode, arbitrary (non-UTF-8) bytes, and ``.``/``..`` (encoded as ``%2E`` so no URL library
   collapses them). An empty argument is an empty segment (``/SET/a/``). This is the only form that
   carries every byte string, so it is also used for long arguments when no other form fits, up to
   httpx's URL limit (:data:`MAX_URL`; past it the command is refused before sending).
2. **Body form** ``POST /SET/a?EX=10`` with the value as the body -- when the path would be longer
   than :data:`MAX_PATH` and one argument is long: that argument becomes the body, the arguments
   before it stay in the path, and those after it (which must come in ``NAME value`` pairs, like
   ``EX 10``) become query parameters. Raw bytes survive (the body is not JSON).
3. **JSON-array form** ``POST /`` with ``["SET", "a", "b"]`` -- when the path would be too long and the
   body form does not fit, provided every argument is valid UTF-8 (JSON cannot carry other bytes).
   Also for any argument holding a line feed: percent-encoded it is legal in a path, but regex-based
   routers (Starlette's ``Mount``: ``.`` does not match ``\n``) stop matching at it. Raw bytes with a
   line feed use the body form when that takes the line feed out of the path.
   Also used for ``ACL RESTTOKEN`` so a password never appears in a URL (URLs end up in logs).

Pipelines and transactions are always JSON (``/pipeline``, ``/multi-exec``), so their arguments
must be valid UTF-8; raw bytes go through :meth:`KV.execute`.

Replies
-------
JSON envelopes ``{"result": ...}`` / ``{"error": ...}``; with ``Service-Encoding: base64`` every
string but the literal ``OK`` reply is base64 (valid base64 is never 2 characters long, so ``OK`` is
unambiguous at any depth); with ``Service-Response-Format: resp2`` the body is raw RESP2, parsed by
:mod:`svckit.kv.resp2`. ``decode=True`` turns every string into ``str`` (invalid UTF-8 becomes
U+FFFD, as the JSON format does on the server), ``decode=False`` gives ``bytes``.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, unquote_to_bytes

from svckit._http import ApiRequest
from svckit._json import JSON_HEADERS, dumps, loads
from svckit.core.wire import STREAM_ERROR
from svckit.errors import (
    APIError,
    CommandError,
    InvalidArgument,
    ProtocolError,
    StreamClosed,
    SvcError,
    TransactionDiscarded,
    error_for_status,
)
from svckit.kv import resp2

Arg = str | bytes | bytearray | memoryview | int | float

#: Longest path (in characters, after percent-encoding) sent in the path form before a body or
#: JSON form is preferred. Servers commonly cap the request line at 8 KiB.
MAX_PATH = 4096
#: Longest URL httpx sends (it refuses a longer one with ``InvalidURL: URL too long``): a command
#: only the path form can carry (several long non-UTF-8 arguments) must fit in it.
MAX_URL = 65_536

ENCODING_HEADER = "Service-Encoding"
FORMAT_HEADER = "Service-Response-Format"
JSON_TYPE = "application/json"

#: Commands that only read (or whose repetition cannot change the outcome): a request made only of
#: these is marked idempotent, so the transport may retry it after a reset connection or a 5xx.
READ_ONLY_COMMANDS = frozenset(
    ["GET", "MGET", "STRLEN", "GETRANGE", "SUBSTR", "LCS", "EXISTS", "TYPE", "TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "SCAN", "KEYS", "DBSIZE", "RANDOMKEY", "DUMP", "OBJECT", "MEMORY", "HGET", "HGETALL", "HMGET", "HKEYS", "HVALS", "HLEN", "HEXISTS", "HSTRLEN", "HSCAN", "HRANDFIELD", "LRANGE", "LLEN", "LINDEX", "LPOS", "SMEMBERS", "SISMEMBER", "SMISMEMBER", "SCARD", "SRANDMEMBER", "SINTER", "SINTERCARD", "SUNION", "SDIFF", "SSCAN", "ZRANGE", "ZRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGE", "ZREVRANGEBYSCORE", "ZREVRANGEBYLEX", "ZSCORE", "ZMSCORE", "ZCARD", "ZCOUNT", "ZLEXCOUNT", "ZRANK", "ZREVRANK", "ZSCAN", "ZRANDMEMBER", "ZDIFF", "ZINTER", "ZUNION", "ZINTERCARD", "XRANGE", "XREVRANGE", "XLEN", "XREAD", "XINFO", "XPENDING", "GEOPOS", "GEODIST", "GEOHASH", "GEOSEARCH", "GEORADIUS_RO", "GEORADIUSBYMEMBER_RO", "PFCOUNT", "GETBIT", "BITCOUNT", "BITPOS", "BITFIELD_RO", "PING", "ECHO", "TIME", "INFO", "LASTSAVE", "EVAL_RO", "EVALSHA_RO", "FCALL_RO", "JSON.GET", "JSON.MGET", "JSON.TYPE", "JSON.STRLEN", "JSON.OBJKEYS", "JSON.OBJLEN", "JSON.ARRLEN", "JSON.ARRINDEX", "JSON.RESP"]
)
#: Multi-word commands whose first word is not read-only as a whole.
READ_ONLY_SUBCOMMANDS = frozenset({("SCRIPT", "EXISTS"), ("PUBSUB", "CHANNELS"), ("PUBSUB", "NUMSUB")})


# -- arguments ---------------------------------------------------------------------------------


def encode_arg(arg: Arg) -> bytes:
    """One command argument as the bytes the server receives. ``int``/``float`` use their repr
    (what redis-py sends); ``bool`` and ``None`` are refused because their meaning is ambiguous."""
    if isinstance(arg, str):
        return arg.encode("utf-8", "surrogateescape")
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, (bytearray, memoryview)):
        return bytes(arg)
    if isinstance(arg, bool) or arg is None:
        raise InvalidArgument("args", f"{arg!r} is not a command argument; send 0/1 or a string")
    if isinstance(arg, int):
        return b"%d" % arg
    if isinstance(arg, float):
        return repr(arg).encode("ascii")
    raise InvalidArgument("args", f"{type(arg).__name__} is not a command argument (str, bytes, int, float)")


_BATCH_WHY = (
    "pipelines and transactions are sent as JSON, which cannot carry raw bytes; "
    "send binary values with execute() or a single-command helper"
)


def json_args(args: Sequence[Arg]) -> list[str]:
    """A command as the strings of a JSON-array request (pipelines, transactions, ``POST /``).

    Refuses bytes that are not UTF-8 (JSON cannot carry them). Written for speed: it runs once per
    queued pipeline command.
    """
    for arg in args:
        if type(arg) is not str:
            break
    else:
        return list(args)  # type: ignore[arg-type]  # all str: the common case
    out: list[str] = []
    for arg in args:
        kind = type(arg)
        if kind is str:
            out.append(arg)  # type: ignore[arg-type]
        elif kind is int:
            out.append(str(arg))
        else:
            raw = encode_arg(arg)
            try:
                out.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise InvalidArgument("args", f"{raw[:20]!r} is not valid UTF-8: {_BATCH_WHY}") from None
    return out


_NEEDS_QUOTING = re.compile(rb"[^A-Za-z0-9_~-]").search


def quote_segment(raw: bytes) -> str:
    """Percent-encode bytes as one path segment. Only ``A-Z a-z 0-9 - _ ~`` stay literal; ``.`` is
    encoded too, because URL libraries remove ``.`` and ``..`` segments."""
    if not _NEEDS_QUOTING(raw):
        return raw.decode("ascii")  # the common case (command names, plain keys), kept cheap
    return quote(raw, safe="").replace(".", "%2E")


def unquote_segment(segment: str) -> bytes:
    """Inverse of :func:`quote_segment` (what a server does with each segment of the raw path)."""
    return unquote_to_bytes(segment)


def command_path(args: Sequence[bytes]) -> str:
    return "/" + "/".join([quote_segment(a) for a in args])


def command_name(args: Sequence[Any]) -> str:
    first = args[0] if args else b""
    text = first.decode("utf-8", "replace") if isinstance(first, (bytes, bytearray)) else str(first)
    return text.upper()


def is_read_only(args: Sequence[Any]) -> bool:
    name = command_name(args)
    if name in READ_ONLY_COMMANDS:
        return True
    if len(args) > 1:
        return (name, command_name(args[1:])) in READ_ONLY_SUBCOMMANDS
    return False


#: commands whose arguments carry a password: sent as a JSON body, never in a URL (URLs get logged,
#: e.g. by httpx at INFO level).
SECRET_COMMANDS = frozenset({"AUTH", "HELLO", "MIGRATE"})
SECRET_SUBCOMMANDS = frozenset({("ACL", "RESTTOKEN"), ("ACL", "SETUSER"), ("CONFIG", "SET")})


def carries_secret(args: Sequence[Any]) -> bool:
    name = command_name(args)
    return name in SECRET_COMMANDS or (len(args) > 1 and (name, command_name(args[1:])) in SECRET_SUBCOMMANDS)


def _utf8(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


# -- streams -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MonitorEvent:
    """One command seen by ``MONITOR``: ``1700000000.123456 [0 127.0.0.1:5000] "SET" "a" "b"``."""

    time: datetime
    db: int
    client: str
    command: str
    args: list[str] = field(default_factory=list)
    raw: str = ""


@dataclass(frozen=True)
class Message:
    """One pub/sub event: ``kind`` is ``subscribe`` (then ``count`` is the number of subscriptions)
    or ``message`` (then ``data`` is the published message)."""

    kind: str
    channel: str
    data: str | None = None
    count: int | None = None
    raw: str = ""


_MONITOR = re.compile(r"^(\d+(?:\.\d+)?) \[(\d+) ([^\]]*)\] ?(.*)$", re.DOTALL)
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b", '"': '"', "\\": "\\"}


def _monitor_args(text: str) -> list[str]:
    """Split the quoted, backslash-escaped arguments of a MONITOR line (Redis' sdscatrepr format)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == " ":
            i += 1
            continue
        if text[i] != '"':
            end = text.find(" ", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end
            continue
        i += 1
        buf = bytearray()
        while i < n and text[i] != '"':
            ch = text[i]
            if ch == "\\" and i + 1 < n:
                nxt = text[i + 1]
                if nxt == "x" and i + 3 < n and re.fullmatch(r"[0-9a-fA-F]{2}", text[i + 2 : i + 4]):
                    buf.append(int(text[i + 2 : i + 4], 16))
                    i += 4
                    continue
                buf += _ESCAPES.get(nxt, nxt).encode()
                i += 2
                continue
            buf += ch.encode("utf-8", "surrogateescape")
            i += 1
        i += 1  # closing quote
        out.append(buf.decode("utf-8", "replace"))
    return out


def parse_monitor(payload: str) -> MonitorEvent:
    """One monitor line; :class:`StreamClosed` with the server's reason when the stream ends on an
    error (a reader that fell too far behind is dropped with such a last event)."""
    if payload.startswith(STREAM_ERROR):
        raise StreamClosed(f"the MONITOR stream was ended by the server: {payload[len(STREAM_ERROR):]}")
    match = _MONITOR.match(payload.strip())
    if not match:
        raise ProtocolError(f"monitor event does not follow '<time> [<db> <client>] \"CMD\" ...': {payload[:80]!r}")
    stamp, db, client, rest = match.groups()
    words = _monitor_args(rest)
    time = datetime.fromtimestamp(float(stamp), tz=timezone.utc)
    return MonitorEvent(time, int(db), client, words[0] if words else "", words[1:], payload)


def parse_message(payload: str, channel: str | None = None) -> Message:
    """``subscribe,<channel>,<count>`` or ``message,<channel>,<message>``. The message may contain
    commas; when the subscribed channel is known, it is used to split exactly."""
    kind, sep, rest = payload.partition(",")
    if not sep:
        raise ProtocolError(f"pub/sub event has no kind: {payload[:80]!r}")
    if channel is not None and rest.startswith(channel + ","):
        chan, tail = channel, rest[len(channel) + 1 :]
    else:
        chan, _, tail = rest.rpartition(",") if kind != "message" else rest.partition(",")
    if kind in ("subscribe", "unsubscribe", "psubscribe", "punsubscribe"):
        try:
            return Message(kind, chan, count=int(tail), raw=payload)
        except ValueError:
            raise ProtocolError(f"pub/sub {kind} event has no count: {payload[:80]!r}") from None
    return Message(kind, chan, data=tail, raw=payload)


# -- requests and replies ------------------------------------------------------------------------


@dataclass(frozen=True)
class WireFormat:
    """How one client talks: values base64-encoded on the wire, RESP2 replies, and whether the user
    gets ``str`` (``decode=True``) or ``bytes``. The headers each request carries follow from it."""

    base64: bool
    resp2: bool
    decode: bool
    #: single-command requests
    headers: dict[str, str] = field(init=False, compare=False)
    #: ``/pipeline`` and ``/multi-exec`` (always answered in JSON), with the JSON content type
    batch_headers: dict[str, str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.base64 and self.resp2:
            raise InvalidArgument("encoding", 'encoding="base64" cannot be combined with response_format="resp2"')
        encoding = {ENCODING_HEADER: "base64"} if self.base64 else {}
        object.__setattr__(self, "batch_headers", {**encoding, **JSON_HEADERS})
        object.__setattr__(self, "headers", {**encoding, FORMAT_HEADER: "resp2"} if self.resp2 else encoding)


def build_command(fmt: WireFormat, args: Sequence[Arg], *, private: bool = False) -> ApiRequest:
    """The request for one command; ``private=True`` keeps the arguments out of the URL."""
    if not args:
        raise InvalidArgument("args", "a command needs at least its name")
    raw = [encode_arg(a) for a in args]
    idempotent = is_read_only(args)
    if private or carries_secret(args):
        return _json_request(fmt, raw, idempotent)
    path = command_path(raw)
    # A line feed in a path is legal once percent-encoded, but routers that match paths with
    # regular expressions often stop at it (Starlette's Mount does): keep it out of the path.
    breaks = "%0A" in path
    if len(path) <= MAX_PATH and not breaks:
        return ApiRequest("POST", path, headers=fmt.headers, idempotent=idempotent)
    if breaks and all(_utf8(a) is not None for a in raw):
        return _json_request(fmt, raw, idempotent)
    body_form = _body_request(fmt, raw, idempotent)
    if body_form is not None and not (breaks and "%0A" in body_form.path):
        return body_form
    if all(_utf8(a) is not None for a in raw):
        return _json_request(fmt, raw, idempotent)
    if len(path) > MAX_URL:
        raise InvalidArgument("args", (
            f"the command's arguments are {sum(map(len, raw)):,} bytes with more than one long value that is not "
            f"UTF-8: the JSON form cannot carry such bytes, the body form carries one long value, and in the "
            f"path they would take {len(path):,} characters, over the URL limit of {MAX_URL:,}; send one long "
            f"binary value per command (HSET a field at a time, RPUSH an element at a time) or encode the values"))
    return ApiRequest("POST", path, headers=fmt.headers, idempotent=idempotent)


def _body_request(fmt: WireFormat, raw: list[bytes], idempotent: bool) -> ApiRequest | None:
    # The longest argument (not the command name) whose followers pair up goes in the body.
    fits = [i for i in range(1, len(raw)) if (len(raw) - i - 1) % 2 == 0]
    if not fits:
        return None
    index = max(reversed(fits), key=lambda i: len(raw[i]))
    tail = raw[index + 1 :]
    names = [_utf8(n) for n in tail[0::2]]
    if any(n is None or n == "" for n in names):
        return None
    path = command_path(raw[:index])
    query = "&".join(f"{quote_segment(n)}={quote_segment(v)}" for n, v in zip(tail[0::2], tail[1::2]))
    if len(path) + len(query) > MAX_PATH:
        return None
    if query:
        path = f"{path}?{query}"
    return ApiRequest("POST", path, headers=fmt.headers, content=raw[index], idempotent=idempotent)


def _json_request(fmt: WireFormat, raw: list[bytes], idempotent: bool) -> ApiRequest:
    texts = _texts(raw, "arguments must be valid UTF-8")
    # JSON replies only for this form would be surprising; keep the configured format.
    return ApiRequest("POST", "/", headers={**fmt.headers, **JSON_HEADERS}, content=dumps(texts),
                      idempotent=idempotent)


def _texts(raw: list[bytes], why: str) -> list[str]:
    texts = []
    for arg in raw:
        text = _utf8(arg)
        if text is None:
            raise InvalidArgument("args", f"{arg[:20]!r}... is not valid UTF-8: {why}")
        texts.append(text)
    return texts


def build_batch(fmt: WireFormat, rows: Sequence[Sequence[str]], *, transaction: bool) -> ApiRequest:
    """``/pipeline`` or ``/multi-exec``: a JSON array of command arrays (see :func:`json_args`)."""
    idempotent = all(is_read_only(row) for row in rows)
    path = "/multi-exec" if transaction else "/pipeline"
    return ApiRequest("POST", path, headers=fmt.batch_headers, content=dumps(rows), idempotent=idempotent)


def decode_value(fmt: WireFormat, item: Any, *, b64: bool) -> Any:
    """Turn one decoded JSON result (str / int / None / nested lists) into the user's types."""
    if isinstance(item, str):
        if b64 and item != "OK":
            try:
                raw = binascii.a2b_base64(item, strict_mode=True)
            except (binascii.Error, ValueError):
                raw = item.encode("utf-8")  # not base64: a status reply the server left as is
            return raw.decode("utf-8", "replace") if fmt.decode else raw
        return item if fmt.decode else item.encode("utf-8")
    if isinstance(item, list):
        return [decode_value(fmt, v, b64=b64) for v in item]
    return item


def decode_resp2_value(fmt: WireFormat, item: resp2.Reply) -> Any:
    """Turn one parsed RESP2 reply into the user's types (an error element becomes a CommandError)."""
    if isinstance(item, bytes):
        return item.decode("utf-8", "replace") if fmt.decode else item
    if isinstance(item, resp2.SimpleString):
        return str(item) if fmt.decode else item.encode("utf-8")
    if isinstance(item, list):
        return [decode_resp2_value(fmt, v) for v in item]
    if isinstance(item, resp2.ErrorReply):
        return CommandError(item.message, status=200, body=item.message)
    return item


def decode_reply(fmt: WireFormat, status: int, content_type: str, body: bytes, args: Sequence[Arg]) -> Any:
    """The value of a single-command reply, or raise the matching error."""
    if status == 200 and fmt.resp2 and not content_type.startswith(JSON_TYPE):
        reply = resp2.parse(body)
        if isinstance(reply, resp2.ErrorReply):
            raise CommandError(reply.message, status=status, body=reply.message)
        return decode_resp2_value(fmt, reply)
    envelope = _envelope(fmt, status, body, args)
    if isinstance(envelope, dict) and "result" in envelope and status == 200:
        return decode_value(fmt, envelope["result"], b64=fmt.base64)
    raise command_error(status, envelope, args)


def decode_batch(fmt: WireFormat, status: int, content_type: str, body: bytes,
                 commands: Sequence[Sequence[Arg]], *, transaction: bool) -> list[Any]:
    """Pipeline / transaction replies: one value per command, a failed one as a CommandError."""
    envelope = _envelope(fmt, status, body, ["MULTI" if transaction else "PIPELINE"])
    if isinstance(envelope, dict) and "error" in envelope and status in (200, 400):
        if transaction:
            raise TransactionDiscarded(
                f"transaction discarded, no command of it ran: {envelope['error']}",
                status=status, body=envelope,
            )
        raise command_error(status, envelope, ["PIPELINE"])
    if status != 200 or not isinstance(envelope, list):
        raise command_error(status, envelope, ["MULTI" if transaction else "PIPELINE"])
    if len(envelope) != len(commands):
        raise ProtocolError(f"{len(commands)} commands sent, {len(envelope)} replies received")
    out: list[Any] = []
    plain = fmt.decode and not fmt.base64  # JSON strings are already what the user gets
    for element, cmd in zip(envelope, commands):
        if type(element) is dict and "result" in element:
            result = element["result"]
            out.append(result if plain else decode_value(fmt, result, b64=fmt.base64))
        elif isinstance(element, dict) and "error" in element:
            out.append(CommandError(str(element["error"]), status=200, body=element))
            out[-1].command = command_name(cmd)  # type: ignore[attr-defined]
        else:
            raise ProtocolError(f"reply element is not an envelope: {str(element)[:80]!r}")
    return out


def _envelope(fmt: WireFormat, status: int, body: bytes, args: Sequence[Arg]) -> Any:
    try:
        return loads(body)
    except ValueError:
        pass
    if fmt.resp2 and body[:1] == b"-":
        try:
            reply = resp2.parse(body)
        except ProtocolError:
            reply = None
        if isinstance(reply, resp2.ErrorReply):
            return {"error": reply.message}
    if status == 200:
        raise ProtocolError(f"{command_name(args)} reply is not JSON: {body[:80]!r}")
    return {"error": body[:200].decode("utf-8", "replace") or f"HTTP {status}"}


def command_error(status: int, envelope: Any, args: Sequence[Arg]) -> SvcError:
    """The error for a failed reply: 200/400 with ``{error}`` is a CommandError carrying the
    protocol text; other statuses map through :func:`error_for_status`."""
    text = envelope.get("error") if isinstance(envelope, dict) else None
    if text is None:
        if status == 200:
            return ProtocolError(f"reply is neither {{result}} nor {{error}}: {str(envelope)[:80]!r}")
        text = str(envelope)[:200]
    if status in (200, 400):
        err: APIError = CommandError(str(text), status=status, body=envelope)
    else:
        err = error_for_status(status, str(text), envelope, what=f"{command_name(args)} command")
    err.command = command_name(args)  # type: ignore[attr-defined]
    return err
