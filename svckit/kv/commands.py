"""Typed command helpers, grouped by family, written once for every client shape.

Each helper is a plain function that *describes* a command: it returns a :class:`Cmd` (the
arguments plus a converter for the reply) and does no I/O. The :class:`command` decorator turns it
into a descriptor, and the class it is looked up on decides what calling it does:

* on :class:`~svckit.kv.KV` it runs the command and returns the converted reply;
* on :class:`~svckit.kv.AsyncKV` it returns a coroutine of that reply;
* on a pipeline or transaction it queues the command and returns the pipeline (for chaining).

The static types follow the same rule, through overloads of ``command.__get__`` on the type of the
instance: ``await akv.get("k")`` is ``str | None`` -- never a union with an awaitable -- and a client
built with ``decode=False`` (``KV[bytes]``) gets ``bytes | None``. That is why every helper states
two reply types, ``Cmd[<as str>, <as bytes>]``. ``tests/kv_client/test_typing.py`` checks this
with mypy.
"""

from __future__ import annotations

import functools
import inspect
import json
import types
import typing
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Generic, NamedTuple, ParamSpec, TypeVar, overload

from svckit.errors import InvalidArgument
from svckit.kv.protocol import Arg

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self needs Python 3.11

    from svckit.kv.client import KV, AsyncKV, BasePipeline

P = ParamSpec("P")
Rs = TypeVar("Rs")  # reply type on a decode=True client (strings are str)
Rb = TypeVar("Rb")  # reply type on a decode=False client (strings are bytes)
PipeT = TypeVar("PipeT", bound="BasePipeline")


class Cmd(Generic[Rs, Rb]):
    """A command to send: its arguments and the function that shapes its reply."""

    __slots__ = ("args", "convert")

    def __init__(self, args: tuple[Arg, ...], convert: Callable[[Any], Any] | None = None) -> None:
        self.args = args
        self.convert = convert

    def __repr__(self) -> str:
        return f"Cmd{self.args[:1]!r}"


# -- argument checks ---------------------------------------------------------------------------
#
# Every helper's arguments are checked against its annotations before the command is built, so a
# wrong type is refused with an InvalidArgument naming the parameter instead of going over the wire.
# The checks are built once per helper (at decoration time); a call costs one set lookup of the
# argument's class per argument, and the full isinstance/bounds check runs only when that misses.


class AtLeast(NamedTuple):
    """``Annotated[int, AtLeast(n)]``: the argument must be an int >= n (a SCAN COUNT, a MAXLEN)."""

    minimum: int


NonNegative = Annotated[int, AtLeast(0)]
Positive = Annotated[int, AtLeast(1)]

#: annotation -> (accepted classes, description); bool is refused wherever it is not named itself
_ARG_CLASSES: tuple[type, ...] = typing.get_args(Arg)
_UNDERSTOOD: dict[Any, tuple[tuple[type, ...], str]] = {
    Arg: (_ARG_CLASSES, "str, bytes, int or float"),
    int: ((int,), "an int"),
    float: ((int, float), "a number"),
    str: ((str,), "a str"),
    bool: ((bool,), "a bool"),
}


class _Spec(NamedTuple):
    """How one parameter is checked. ``fast`` holds the classes accepted without a closer look."""

    name: str
    fast: frozenset[type]
    accept: tuple[type, ...]
    none_ok: bool
    bool_ok: bool
    minimum: int | None
    what: str

    def refuse_if_bad(self, helper: str, value: Any) -> None:
        """The slow path (subclasses, bounds): raise InvalidArgument unless ``value`` fits."""
        if value is None:
            if self.none_ok:
                return
        elif isinstance(value, self.accept) and (self.bool_ok or not isinstance(value, bool)):
            if self.minimum is None or value >= self.minimum:  # type: ignore[operator]
                return
            raise InvalidArgument(self.name, f"{helper}() needs an int >= {self.minimum}, got {value!r}")
        shown = repr(value) if len(repr(value)) <= 40 else type(value).__name__
        raise InvalidArgument(self.name, f"{helper}() needs {self.what}, got {shown}")


def _spec(name: str, hint: Any) -> _Spec | None:
    """The check for one annotation, or None when the mechanism does not understand it."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    if set(_ARG_CLASSES) <= set(options):  # ``Arg`` and ``Arg | None`` arrive flattened
        options = (Arg, *(o for o in options if o not in _ARG_CLASSES))
    accept: list[type] = []
    whats: list[str] = []
    none_ok = bool_ok = False
    minimum: int | None = None
    for option in options:
        if option is type(None):
            none_ok = True
            continue
        if typing.get_origin(option) is Annotated:
            base, *extras = typing.get_args(option)
            bounds = [e.minimum for e in extras if isinstance(e, AtLeast)]
            if base is not int or not bounds:
                return None
            minimum = max(bounds)
            option = base
        known = _UNDERSTOOD.get(option)
        if known is None:
            return None  # Mapping, Sequence, tuple[...], Any: passed through unchanged
        accept.extend(known[0])
        whats.append(known[1])
        bool_ok = bool_ok or option is bool
    if not accept:
        return None
    what = " or ".join(whats) + (" or None" if none_ok else "")
    fast = set() if minimum is not None else {*accept} - ({bool} if not bool_ok else set())
    if none_ok:
        fast.add(type(None))
    return _Spec(name, frozenset(fast), tuple(accept), none_ok, bool_ok, minimum, what)


def _build_checks(describe: Callable[..., Any]) -> Callable[[tuple[Any, ...], dict[str, Any]], None] | None:
    """A function checking a call's arguments against ``describe``'s annotations, or None when
    there is nothing to check."""
    hints = typing.get_type_hints(describe, include_extras=True)  # fails at import on a typo: wanted
    helper = describe.__name__
    positional: list[_Spec | None] = []
    variadic: _Spec | None = None
    by_name: dict[str, _Spec] = {}
    for p in inspect.signature(describe).parameters.values():
        spec = _spec(p.name, hints[p.name]) if p.name in hints else None
        if p.kind is p.VAR_POSITIONAL:
            variadic = spec
        elif p.kind is p.VAR_KEYWORD:
            continue
        else:
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                positional.append(spec)
            if spec is not None and p.kind is not p.POSITIONAL_ONLY:
                by_name[p.name] = spec
    if variadic is None and not by_name and not any(positional):
        return None
    # Built once per helper, so a call costs one class lookup per argument (see _Spec.fast).
    checked = tuple((i, spec.fast, spec.minimum, spec) for i, spec in enumerate(positional) if spec is not None)
    first_extra = len(positional)
    by_name_fast = {k: (spec.fast, spec.minimum, spec) for k, spec in by_name.items()}

    def fits(value: Any, fast: frozenset[type], minimum: int | None) -> bool:
        # an int at or above the bound is the fast path of a bounded parameter (its ``fast`` is empty)
        return value.__class__ in fast or (minimum is not None and value.__class__ is int and value >= minimum)

    def check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        n = len(args)
        for i, fast, minimum, spec in checked:
            if i >= n:
                break
            if not fits(args[i], fast, minimum):
                spec.refuse_if_bad(helper, args[i])
        if variadic is not None and n > first_extra:
            for value in args[first_extra:]:
                if value.__class__ not in variadic.fast:
                    variadic.refuse_if_bad(helper, value)
        if kwargs:
            for name, value in kwargs.items():
                entry = by_name_fast.get(name)
                if entry is not None and not fits(value, entry[0], entry[1]):
                    entry[2].refuse_if_bad(helper, value)

    return check


class command(Generic[P, Rs, Rb]):
    """Descriptor turning a command-describing function into a method of every client shape.

    Arguments are checked against the helper's annotations before the command is built (see
    :func:`_build_checks`): ``Arg`` takes str, bytes, int or float; ``int`` an int, ``float`` a
    number (never a bool); ``X | None`` also None; ``NonNegative``/``Positive`` bound an int.
    Anything else (mappings, sequences, ``Any``) is passed through unchanged."""

    def __init__(self, describe: Callable[P, Cmd[Rs, Rb]]) -> None:
        self.describe = describe
        self.name = describe.__name__
        self.check = _build_checks(describe)
        functools.update_wrapper(self, describe)  # type: ignore[arg-type]

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, obj: KV[str], owner: type | None = None) -> Callable[P, Rs]: ...
    @overload
    def __get__(self, obj: KV[bytes], owner: type | None = None) -> Callable[P, Rb]: ...
    @overload
    def __get__(self, obj: AsyncKV[str], owner: type | None = None) -> Callable[P, Coroutine[Any, Any, Rs]]: ...
    @overload
    def __get__(self, obj: AsyncKV[bytes], owner: type | None = None) -> Callable[P, Coroutine[Any, Any, Rb]]: ...
    @overload
    def __get__(self, obj: PipeT, owner: type | None = None) -> Callable[P, PipeT]: ...
    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        describe = self.describe
        check = self.check
        queue: list[Cmd[Any, Any]] | None = getattr(obj, "_queue", None)
        if queue is not None:  # a pipeline: queue the command (the hot path of a large pipeline)
            append = queue.append
            if check is None:
                @functools.wraps(describe)
                def bound(*args: Any, **kwargs: Any) -> Any:
                    append(describe(*args, **kwargs))
                    return obj
            else:
                @functools.wraps(describe)
                def bound(*args: Any, **kwargs: Any) -> Any:
                    check(args, kwargs)
                    append(describe(*args, **kwargs))
                    return obj
        else:
            invoke = obj._invoke
            if check is None:
                @functools.wraps(describe)
                def bound(*args: Any, **kwargs: Any) -> Any:
                    return invoke(describe(*args, **kwargs))
            else:
                @functools.wraps(describe)
                def bound(*args: Any, **kwargs: Any) -> Any:
                    check(args, kwargs)
                    return invoke(describe(*args, **kwargs))

        # Cache on the instance: the next lookup is a plain attribute read (no descriptor call).
        obj.__dict__[self.name] = bound
        return bound


# -- reply converters (they accept str and bytes alike) ------------------------------------------


def _ok(reply: Any) -> bool:
    return reply in ("OK", b"OK")


def _bool(reply: Any) -> bool:
    return bool(reply)


def _bools(reply: Any) -> list[bool]:
    return [bool(v) for v in reply]


def _int_or_none(reply: Any) -> int | None:
    return None if reply is None else int(reply)


def _float(reply: Any) -> float:
    return float(reply)


def _float_or_none(reply: Any) -> float | None:
    return None if reply is None else float(reply)


def _floats_or_none(reply: Any) -> list[float | None]:
    return [None if v is None else float(v) for v in reply]


def _pairs(reply: Any) -> dict[Any, Any]:
    return dict(zip(reply[0::2], reply[1::2]))


def _set(reply: Any) -> set[Any]:
    return set(reply)


def _scored(reply: Any) -> list[tuple[Any, float]]:
    return [(m, float(s)) for m, s in zip(reply[0::2], reply[1::2])]


def _scan(reply: Any) -> tuple[int, list[Any]]:
    return int(reply[0]), list(reply[1])


def _hscan(reply: Any) -> tuple[int, dict[Any, Any]]:
    return int(reply[0]), _pairs(reply[1])


def _zscan(reply: Any) -> tuple[int, list[tuple[Any, float]]]:
    return int(reply[0]), _scored(reply[1])


def _entries(reply: Any) -> list[tuple[Any, dict[Any, Any]]]:
    return [(entry[0], _pairs(entry[1] or [])) for entry in reply or []]


def _streams(reply: Any) -> dict[Any, list[tuple[Any, dict[Any, Any]]]]:
    return {name: _entries(entries) for name, entries in reply or []}


def _positions(reply: Any) -> list[tuple[float, float] | None]:
    return [None if p is None else (float(p[0]), float(p[1])) for p in reply]


def _json(reply: Any) -> Any:
    return None if reply is None else json.loads(reply)


def _zrange_bound(name: str, value: Arg, byscore: bool, bylex: bool) -> None:
    """ZRANGE start/stop by mode: an index (int), a score (number, ``(1.5``, ``-inf``) or a lex
    bound (``[a``, ``(a``, ``-``, ``+``). The annotations cannot say which, so it is checked here."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if bylex or (not byscore and isinstance(value, float)):
            raise InvalidArgument(name, f"zrange() needs {'a lex bound like [a' if bylex else 'an int index'}, got {value!r}")
        return
    if not isinstance(value, (str, bytes)):
        return  # the annotation check already refused anything that is not an argument
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    if bylex:
        ok = text in ("-", "+") or text[:1] in ("[", "(")
    else:
        try:
            (float if byscore else int)(text[1:] if byscore and text[:1] == "(" else text)
            ok = True
        except ValueError:
            ok = False
    if not ok:
        want = "a lex bound ([a, (a, - or +)" if bylex else "a score (1.5, (1.5, -inf)" if byscore else "an int index"
        raise InvalidArgument(name, f"zrange() needs {want}, got {value!r}")


def _flag(args: list[Arg], name: str, on: bool) -> None:
    if on:
        args.append(name)


def _opt(args: list[Arg], name: str, value: Arg | None) -> None:
    if value is not None:
        args.extend((name, value))


# Short names for the reply types used below: (decode=True form, decode=False form).
OptValue = Cmd[str | None, bytes | None]
Value = Cmd[str, bytes]
Values = Cmd[list[str], list[bytes]]
OptValues = Cmd[list[str | None], list[bytes | None]]
SetCmd = Cmd[set[str], set[bytes]]
IntCmd = Cmd[int, int]
BoolCmd = Cmd[bool, bool]
FloatCmd = Cmd[float, float]


class Commands:
    """The command helpers; mixed into KV, AsyncKV and the pipelines. Keys and values may be
    ``str`` or ``bytes``; numbers are sent as their decimal text."""

    # -- strings -------------------------------------------------------------------------------
    @command
    def get(key: Arg) -> OptValue:
        """GET: the value, or None when the key does not exist."""
        return Cmd(("GET", key))

    @command
    def set(
        key: Arg, value: Arg, *, ex: Positive | None = None, px: Positive | None = None,
        exat: Positive | None = None, pxat: Positive | None = None, nx: bool = False, xx: bool = False, keepttl: bool = False,
    ) -> BoolCmd:
        """SET: True when the value was set (False when ``nx``/``xx`` prevented it)."""
        if ex is None and px is None and exat is None and pxat is None and not (nx or xx or keepttl):
            return Cmd(("SET", key, value), _ok)  # the common case, kept cheap for pipelines
        args: list[Arg] = ["SET", key, value]
        _opt(args, "EX", ex)
        _opt(args, "PX", px)
        _opt(args, "EXAT", exat)
        _opt(args, "PXAT", pxat)
        _flag(args, "NX", nx)
        _flag(args, "XX", xx)
        _flag(args, "KEEPTTL", keepttl)
        return Cmd(tuple(args), _ok)

    @command
    def setex(key: Arg, seconds: Positive, value: Arg) -> BoolCmd:
        return Cmd(("SETEX", key, seconds, value), _ok)

    @command
    def setnx(key: Arg, value: Arg) -> BoolCmd:
        return Cmd(("SETNX", key, value), _bool)

    @command
    def getset(key: Arg, value: Arg) -> OptValue:
        """SET ... GET: set the value and return the old one."""
        return Cmd(("SET", key, value, "GET"))

    @command
    def getdel(key: Arg) -> OptValue:
        return Cmd(("GETDEL", key))

    @command
    def getex(key: Arg, *, ex: Positive | None = None, px: Positive | None = None, persist: bool = False) -> OptValue:
        args: list[Arg] = ["GETEX", key]
        _opt(args, "EX", ex)
        _opt(args, "PX", px)
        _flag(args, "PERSIST", persist)
        return Cmd(tuple(args))

    @command
    def mget(*keys: Arg) -> OptValues:
        return Cmd(("MGET", *keys))

    @command
    def mset(mapping: Mapping[Any, Arg]) -> BoolCmd:
        args: list[Arg] = ["MSET"]
        for k, v in mapping.items():
            args.extend((k, v))
        return Cmd(tuple(args), _ok)

    @command
    def incr(key: Arg) -> IntCmd:
        return Cmd(("INCR", key))

    @command
    def incrby(key: Arg, amount: int) -> IntCmd:
        return Cmd(("INCRBY", key, amount))

    @command
    def incrbyfloat(key: Arg, amount: float) -> FloatCmd:
        return Cmd(("INCRBYFLOAT", key, amount), _float)

    @command
    def decr(key: Arg) -> IntCmd:
        return Cmd(("DECR", key))

    @command
    def decrby(key: Arg, amount: int) -> IntCmd:
        return Cmd(("DECRBY", key, amount))

    @command
    def append(key: Arg, value: Arg) -> IntCmd:
        return Cmd(("APPEND", key, value))

    @command
    def strlen(key: Arg) -> IntCmd:
        return Cmd(("STRLEN", key))

    @command
    def getrange(key: Arg, start: int, end: int) -> Value:
        return Cmd(("GETRANGE", key, start, end))

    @command
    def setrange(key: Arg, offset: int, value: Arg) -> IntCmd:
        return Cmd(("SETRANGE", key, offset, value))

    # -- keys ----------------------------------------------------------------------------------
    @command
    def delete(*keys: Arg) -> IntCmd:
        """DEL: the number of keys removed."""
        return Cmd(("DEL", *keys))

    @command
    def unlink(*keys: Arg) -> IntCmd:
        return Cmd(("UNLINK", *keys))

    @command
    def exists(*keys: Arg) -> IntCmd:
        """EXISTS: how many of the keys exist (a key named twice counts twice)."""
        return Cmd(("EXISTS", *keys))

    @command
    def type(key: Arg) -> Cmd[str, str]:
        """TYPE: ``string``, ``list``, ``set``, ``zset``, ``hash``, ``stream``, ``ReJSON-RL`` or ``none``."""
        return Cmd(("TYPE", key), _text)

    @command
    def ttl(key: Arg) -> IntCmd:
        """TTL in seconds; -1 when the key has no expiry, -2 when it does not exist."""
        return Cmd(("TTL", key))

    @command
    def pttl(key: Arg) -> IntCmd:
        return Cmd(("PTTL", key))

    @command
    def expire(key: Arg, seconds: int, *, nx: bool = False, xx: bool = False, gt: bool = False,
               lt: bool = False) -> BoolCmd:
        args: list[Arg] = ["EXPIRE", key, seconds]
        for name, on in (("NX", nx), ("XX", xx), ("GT", gt), ("LT", lt)):
            _flag(args, name, on)
        return Cmd(tuple(args), _bool)

    @command
    def pexpire(key: Arg, milliseconds: int) -> BoolCmd:
        return Cmd(("PEXPIRE", key, milliseconds), _bool)

    @command
    def expireat(key: Arg, timestamp: int) -> BoolCmd:
        return Cmd(("EXPIREAT", key, timestamp), _bool)

    @command
    def persist(key: Arg) -> BoolCmd:
        return Cmd(("PERSIST", key), _bool)

    @command
    def rename(key: Arg, new_key: Arg) -> BoolCmd:
        return Cmd(("RENAME", key, new_key), _ok)

    @command
    def renamenx(key: Arg, new_key: Arg) -> BoolCmd:
        return Cmd(("RENAMENX", key, new_key), _bool)

    @command
    def copy(source: Arg, destination: Arg, *, replace: bool = False) -> BoolCmd:
        args: list[Arg] = ["COPY", source, destination]
        _flag(args, "REPLACE", replace)
        return Cmd(tuple(args), _bool)

    @command
    def touch(*keys: Arg) -> IntCmd:
        return Cmd(("TOUCH", *keys))

    @command
    def keys(pattern: Arg = "*") -> Values:
        """KEYS (blocks the server on a large database: prefer :meth:`scan_iter`)."""
        return Cmd(("KEYS", pattern))

    @command
    def randomkey() -> OptValue:
        return Cmd(("RANDOMKEY",))

    @command
    def scan(cursor: NonNegative = 0, match: Arg | None = None, count: Positive | None = None,
             type: str | None = None) -> Cmd[tuple[int, list[str]], tuple[int, list[bytes]]]:
        """SCAN: ``(next_cursor, keys)``; the iteration is complete when ``next_cursor`` is 0."""
        args: list[Arg] = ["SCAN", cursor]
        _opt(args, "MATCH", match)
        _opt(args, "COUNT", count)
        _opt(args, "TYPE", type)
        return Cmd(tuple(args), _scan)

    @command
    def dbsize() -> IntCmd:
        return Cmd(("DBSIZE",))

    @command
    def memory_usage(key: Arg, *, samples: NonNegative | None = None) -> Cmd[int | None, int | None]:
        """MEMORY USAGE: bytes the key takes, or None when it does not exist."""
        args: list[Arg] = ["MEMORY", "USAGE", key]
        _opt(args, "SAMPLES", samples)
        return Cmd(tuple(args), _int_or_none)

    # -- server --------------------------------------------------------------------------------
    @command
    def ping(message: Arg | None = None) -> Value:
        return Cmd(("PING",) if message is None else ("PING", message))

    @command
    def echo(message: Arg) -> Value:
        return Cmd(("ECHO", message))

    @command
    def flushdb() -> BoolCmd:
        return Cmd(("FLUSHDB",), _ok)

    @command
    def flushall() -> BoolCmd:
        return Cmd(("FLUSHALL",), _ok)

    @command
    def time() -> Cmd[tuple[int, int], tuple[int, int]]:
        """TIME: (unix seconds, microseconds)."""
        return Cmd(("TIME",), lambda r: (int(r[0]), int(r[1])))

    # -- hashes --------------------------------------------------------------------------------
    @command
    def hset(key: Arg, field: Arg | None = None, value: Arg | None = None, *,
             mapping: Mapping[Any, Arg] | None = None) -> IntCmd:
        """HSET: the number of fields added (updated ones do not count)."""
        args: list[Arg] = ["HSET", key]
        if field is not None:
            if value is None:
                raise InvalidArgument("value", "hset(key, field, value) needs a value")
            args.extend((field, value))
        for k, v in (mapping or {}).items():
            args.extend((k, v))
        if len(args) == 2:
            raise InvalidArgument("mapping", "hset needs a field and value, or a non-empty mapping")
        return Cmd(tuple(args))

    @command
    def hsetnx(key: Arg, field: Arg, value: Arg) -> BoolCmd:
        return Cmd(("HSETNX", key, field, value), _bool)

    @command
    def hget(key: Arg, field: Arg) -> OptValue:
        return Cmd(("HGET", key, field))

    @command
    def hmget(key: Arg, *fields: Arg) -> OptValues:
        return Cmd(("HMGET", key, *fields))

    @command
    def hgetall(key: Arg) -> Cmd[dict[str, str], dict[bytes, bytes]]:
        return Cmd(("HGETALL", key), _pairs)

    @command
    def hdel(key: Arg, *fields: Arg) -> IntCmd:
        return Cmd(("HDEL", key, *fields))

    @command
    def hexists(key: Arg, field: Arg) -> BoolCmd:
        return Cmd(("HEXISTS", key, field), _bool)

    @command
    def hincrby(key: Arg, field: Arg, amount: int = 1) -> IntCmd:
        return Cmd(("HINCRBY", key, field, amount))

    @command
    def hincrbyfloat(key: Arg, field: Arg, amount: float) -> FloatCmd:
        return Cmd(("HINCRBYFLOAT", key, field, amount), _float)

    @command
    def hkeys(key: Arg) -> Values:
        return Cmd(("HKEYS", key))

    @command
    def hvals(key: Arg) -> Values:
        return Cmd(("HVALS", key))

    @command
    def hlen(key: Arg) -> IntCmd:
        return Cmd(("HLEN", key))

    @command
    def hstrlen(key: Arg, field: Arg) -> IntCmd:
        return Cmd(("HSTRLEN", key, field))

    @command
    def hscan(key: Arg, cursor: NonNegative = 0, match: Arg | None = None, count: Positive | None = None
              ) -> Cmd[tuple[int, dict[str, str]], tuple[int, dict[bytes, bytes]]]:
        args: list[Arg] = ["HSCAN", key, cursor]
        _opt(args, "MATCH", match)
        _opt(args, "COUNT", count)
        return Cmd(tuple(args), _hscan)

    # -- lists ---------------------------------------------------------------------------------
    @command
    def lpush(key: Arg, *values: Arg) -> IntCmd:
        return Cmd(("LPUSH", key, *values))

    @command
    def rpush(key: Arg, *values: Arg) -> IntCmd:
        return Cmd(("RPUSH", key, *values))

    @command
    def lpop(key: Arg) -> OptValue:
        return Cmd(("LPOP", key))

    @command
    def rpop(key: Arg) -> OptValue:
        return Cmd(("RPOP", key))

    @command
    def lpop_count(key: Arg, count: NonNegative) -> Cmd[list[str] | None, list[bytes] | None]:
        """LPOP key count: up to ``count`` elements, None when the list does not exist."""
        return Cmd(("LPOP", key, count))

    @command
    def rpop_count(key: Arg, count: NonNegative) -> Cmd[list[str] | None, list[bytes] | None]:
        return Cmd(("RPOP", key, count))

    @command
    def lrange(key: Arg, start: int, stop: int) -> Values:
        return Cmd(("LRANGE", key, start, stop))

    @command
    def llen(key: Arg) -> IntCmd:
        return Cmd(("LLEN", key))

    @command
    def lindex(key: Arg, index: int) -> OptValue:
        return Cmd(("LINDEX", key, index))

    @command
    def lset(key: Arg, index: int, value: Arg) -> BoolCmd:
        return Cmd(("LSET", key, index, value), _ok)

    @command
    def lrem(key: Arg, count: int, value: Arg) -> IntCmd:
        return Cmd(("LREM", key, count, value))

    @command
    def ltrim(key: Arg, start: int, stop: int) -> BoolCmd:
        return Cmd(("LTRIM", key, start, stop), _ok)

    @command
    def linsert(key: Arg, where: str, pivot: Arg, value: Arg) -> IntCmd:
        """LINSERT: ``where`` is ``BEFORE`` or ``AFTER``."""
        return Cmd(("LINSERT", key, where, pivot, value))

    @command
    def lpos(key: Arg, value: Arg) -> Cmd[int | None, int | None]:
        return Cmd(("LPOS", key, value))

    @command
    def lmove(source: Arg, destination: Arg, src: str = "LEFT", dest: str = "RIGHT") -> OptValue:
        return Cmd(("LMOVE", source, destination, src, dest))

    # -- sets ----------------------------------------------------------------------------------
    @command
    def sadd(key: Arg, *members: Arg) -> IntCmd:
        return Cmd(("SADD", key, *members))

    @command
    def srem(key: Arg, *members: Arg) -> IntCmd:
        return Cmd(("SREM", key, *members))

    @command
    def smembers(key: Arg) -> SetCmd:
        return Cmd(("SMEMBERS", key), _set)

    @command
    def sismember(key: Arg, member: Arg) -> BoolCmd:
        return Cmd(("SISMEMBER", key, member), _bool)

    @command
    def smismember(key: Arg, *members: Arg) -> Cmd[list[bool], list[bool]]:
        return Cmd(("SMISMEMBER", key, *members), _bools)

    @command
    def scard(key: Arg) -> IntCmd:
        return Cmd(("SCARD", key))

    @command
    def spop(key: Arg) -> OptValue:
        return Cmd(("SPOP", key))

    @command
    def srandmember(key: Arg) -> OptValue:
        return Cmd(("SRANDMEMBER", key))

    @command
    def sinter(*keys: Arg) -> SetCmd:
        return Cmd(("SINTER", *keys), _set)

    @command
    def sunion(*keys: Arg) -> SetCmd:
        return Cmd(("SUNION", *keys), _set)

    @command
    def sdiff(*keys: Arg) -> SetCmd:
        return Cmd(("SDIFF", *keys), _set)

    @command
    def sscan(key: Arg, cursor: NonNegative = 0, match: Arg | None = None, count: Positive | None = None
              ) -> Cmd[tuple[int, list[str]], tuple[int, list[bytes]]]:
        args: list[Arg] = ["SSCAN", key, cursor]
        _opt(args, "MATCH", match)
        _opt(args, "COUNT", count)
        return Cmd(tuple(args), _scan)

    # -- sorted sets ---------------------------------------------------------------------------
    @command
    def zadd(key: Arg, mapping: Mapping[Any, float], *, nx: bool = False, xx: bool = False,
             gt: bool = False, lt: bool = False, ch: bool = False) -> IntCmd:
        """ZADD: ``mapping`` is member -> score; returns the number of members added."""
        args: list[Arg] = ["ZADD", key]
        for name, on in (("NX", nx), ("XX", xx), ("GT", gt), ("LT", lt), ("CH", ch)):
            _flag(args, name, on)
        for member, score in mapping.items():
            args.extend((score, member))
        return Cmd(tuple(args))

    @command
    def zrange(key: Arg, start: Arg, stop: Arg, *, withscores: bool = True, rev: bool = False,
               byscore: bool = False, bylex: bool = False, offset: NonNegative | None = None,
               count: int | None = None) -> Cmd[list[Any], list[Any]]:
        """ZRANGE: ``[(member, score), ...]`` with ``withscores=True`` (the default), else members."""
        if bylex or start.__class__ is not int or stop.__class__ is not int:  # ints: an index or score
            _zrange_bound("start", start, byscore, bylex)
            _zrange_bound("stop", stop, byscore, bylex)
        args: list[Arg] = ["ZRANGE", key, start, stop]
        _flag(args, "BYSCORE", byscore)
        _flag(args, "BYLEX", bylex)
        _flag(args, "REV", rev)
        if offset is not None or count is not None:
            args.extend(("LIMIT", offset or 0, -1 if count is None else count))
        _flag(args, "WITHSCORES", withscores)
        return Cmd(tuple(args), _scored if withscores else None)

    @command
    def zrangebyscore(key: Arg, minimum: Arg, maximum: Arg) -> Cmd[list[tuple[str, float]], list[tuple[bytes, float]]]:
        return Cmd(("ZRANGEBYSCORE", key, minimum, maximum, "WITHSCORES"), _scored)

    @command
    def zscore(key: Arg, member: Arg) -> Cmd[float | None, float | None]:
        return Cmd(("ZSCORE", key, member), _float_or_none)

    @command
    def zmscore(key: Arg, *members: Arg) -> Cmd[list[float | None], list[float | None]]:
        return Cmd(("ZMSCORE", key, *members), _floats_or_none)

    @command
    def zincrby(key: Arg, amount: float, member: Arg) -> FloatCmd:
        return Cmd(("ZINCRBY", key, amount, member), _float)

    @command
    def zrem(key: Arg, *members: Arg) -> IntCmd:
        return Cmd(("ZREM", key, *members))

    @command
    def zcard(key: Arg) -> IntCmd:
        return Cmd(("ZCARD", key))

    @command
    def zcount(key: Arg, minimum: Arg, maximum: Arg) -> IntCmd:
        return Cmd(("ZCOUNT", key, minimum, maximum))

    @command
    def zrank(key: Arg, member: Arg) -> Cmd[int | None, int | None]:
        return Cmd(("ZRANK", key, member))

    @command
    def zrevrank(key: Arg, member: Arg) -> Cmd[int | None, int | None]:
        return Cmd(("ZREVRANK", key, member))

    @command
    def zpopmin(key: Arg, count: NonNegative = 1) -> Cmd[list[tuple[str, float]], list[tuple[bytes, float]]]:
        return Cmd(("ZPOPMIN", key, count), _scored)

    @command
    def zpopmax(key: Arg, count: NonNegative = 1) -> Cmd[list[tuple[str, float]], list[tuple[bytes, float]]]:
        return Cmd(("ZPOPMAX", key, count), _scored)

    @command
    def zscan(key: Arg, cursor: NonNegative = 0, match: Arg | None = None, count: Positive | None = None
              ) -> Cmd[tuple[int, list[tuple[str, float]]], tuple[int, list[tuple[bytes, float]]]]:
        args: list[Arg] = ["ZSCAN", key, cursor]
        _opt(args, "MATCH", match)
        _opt(args, "COUNT", count)
        return Cmd(tuple(args), _zscan)

    # -- streams -------------------------------------------------------------------------------
    @command
    def xadd(key: Arg, fields: Mapping[Any, Arg], id: Arg = "*", *, maxlen: NonNegative | None = None,
             approximate: bool = True) -> Value:
        """XADD: the id of the new entry."""
        args: list[Arg] = ["XADD", key]
        if maxlen is not None:
            args.extend(("MAXLEN", "~" if approximate else "=", maxlen))
        args.append(id)
        for k, v in fields.items():
            args.extend((k, v))
        return Cmd(tuple(args))

    @command
    def xrange(key: Arg, start: Arg = "-", end: Arg = "+", count: NonNegative | None = None
               ) -> Cmd[list[tuple[str, dict[str, str]]], list[tuple[bytes, dict[bytes, bytes]]]]:
        """XRANGE: ``[(id, {field: value}), ...]``."""
        args: list[Arg] = ["XRANGE", key, start, end]
        _opt(args, "COUNT", count)
        return Cmd(tuple(args), _entries)

    @command
    def xrevrange(key: Arg, end: Arg = "+", start: Arg = "-", count: NonNegative | None = None
                  ) -> Cmd[list[tuple[str, dict[str, str]]], list[tuple[bytes, dict[bytes, bytes]]]]:
        args: list[Arg] = ["XREVRANGE", key, end, start]
        _opt(args, "COUNT", count)
        return Cmd(tuple(args), _entries)

    @command
    def xlen(key: Arg) -> IntCmd:
        return Cmd(("XLEN", key))

    @command
    def xdel(key: Arg, *ids: Arg) -> IntCmd:
        return Cmd(("XDEL", key, *ids))

    @command
    def xtrim(key: Arg, maxlen: NonNegative, *, approximate: bool = False) -> IntCmd:
        return Cmd(("XTRIM", key, "MAXLEN", "~" if approximate else "=", maxlen))

    @command
    def xread(streams: Mapping[Any, Arg], count: NonNegative | None = None
              ) -> Cmd[dict[str, list[tuple[str, dict[str, str]]]], dict[bytes, list[tuple[bytes, dict[bytes, bytes]]]]]:
        """XREAD (non-blocking; BLOCK is not supported by the interface): stream -> entries after the id."""
        args: list[Arg] = ["XREAD"]
        _opt(args, "COUNT", count)
        args.append("STREAMS")
        args.extend(streams.keys())
        args.extend(streams.values())
        return Cmd(tuple(args), _streams)

    @command
    def xgroup_create(key: Arg, group: Arg, id: Arg = "$", *, mkstream: bool = False) -> BoolCmd:
        args: list[Arg] = ["XGROUP", "CREATE", key, group, id]
        _flag(args, "MKSTREAM", mkstream)
        return Cmd(tuple(args), _ok)

    @command
    def xreadgroup(group: Arg, consumer: Arg, streams: Mapping[Any, Arg], count: NonNegative | None = None
                   ) -> Cmd[dict[str, list[tuple[str, dict[str, str]]]], dict[bytes, list[tuple[bytes, dict[bytes, bytes]]]]]:
        args: list[Arg] = ["XREADGROUP", "GROUP", group, consumer]
        _opt(args, "COUNT", count)
        args.append("STREAMS")
        args.extend(streams.keys())
        args.extend(streams.values())
        return Cmd(tuple(args), _streams)

    @command
    def xack(key: Arg, group: Arg, *ids: Arg) -> IntCmd:
        return Cmd(("XACK", key, group, *ids))

    # -- geo -----------------------------------------------------------------------------------
    @command
    def geoadd(key: Arg, *items: tuple[float, float, Arg]) -> IntCmd:
        """GEOADD key (longitude, latitude, member) ..."""
        args: list[Arg] = ["GEOADD", key]
        for lon, lat, member in items:
            args.extend((lon, lat, member))
        return Cmd(tuple(args))

    @command
    def geodist(key: Arg, member1: Arg, member2: Arg, unit: str = "m") -> Cmd[float | None, float | None]:
        return Cmd(("GEODIST", key, member1, member2, unit), _float_or_none)

    @command
    def geopos(key: Arg, *members: Arg) -> Cmd[list[tuple[float, float] | None], list[tuple[float, float] | None]]:
        return Cmd(("GEOPOS", key, *members), _positions)

    @command
    def geohash(key: Arg, *members: Arg) -> OptValues:
        return Cmd(("GEOHASH", key, *members))

    @command
    def geosearch(key: Arg, longitude: float, latitude: float, radius: float, unit: str = "m",
                  *, count: Positive | None = None, asc: bool = True) -> Values:
        """GEOSEARCH FROMLONLAT ... BYRADIUS ...: members within the radius, nearest first."""
        args: list[Arg] = ["GEOSEARCH", key, "FROMLONLAT", longitude, latitude, "BYRADIUS", radius, unit]
        args.append("ASC" if asc else "DESC")
        _opt(args, "COUNT", count)
        return Cmd(tuple(args))

    # -- HyperLogLog ---------------------------------------------------------------------------
    @command
    def pfadd(key: Arg, *elements: Arg) -> BoolCmd:
        return Cmd(("PFADD", key, *elements), _bool)

    @command
    def pfcount(*keys: Arg) -> IntCmd:
        return Cmd(("PFCOUNT", *keys))

    @command
    def pfmerge(destination: Arg, *sources: Arg) -> BoolCmd:
        return Cmd(("PFMERGE", destination, *sources), _ok)

    # -- bitmaps -------------------------------------------------------------------------------
    @command
    def setbit(key: Arg, offset: int, value: int) -> IntCmd:
        return Cmd(("SETBIT", key, offset, value))

    @command
    def getbit(key: Arg, offset: int) -> IntCmd:
        return Cmd(("GETBIT", key, offset))

    @command
    def bitcount(key: Arg, start: int | None = None, end: int | None = None) -> IntCmd:
        args: list[Arg] = ["BITCOUNT", key]
        if start is not None:
            args.extend((start, -1 if end is None else end))
        return Cmd(tuple(args))

    @command
    def bitop(operation: str, destination: Arg, *keys: Arg) -> IntCmd:
        """BITOP AND|OR|XOR|NOT: the length of the result. Read it with a ``decode=False`` client
        (or ``encoding="base64"``): the JSON format replaces invalid UTF-8 with U+FFFD."""
        return Cmd(("BITOP", operation, destination, *keys))

    @command
    def bitpos(key: Arg, bit: int) -> IntCmd:
        return Cmd(("BITPOS", key, bit))

    # -- scripting -----------------------------------------------------------------------------
    @command
    def eval(script: str, keys: Sequence[Arg] = (), args: Sequence[Arg] = ()) -> Cmd[Any, Any]:
        return Cmd(("EVAL", script, len(keys), *keys, *args))

    @command
    def eval_ro(script: str, keys: Sequence[Arg] = (), args: Sequence[Arg] = ()) -> Cmd[Any, Any]:
        return Cmd(("EVAL_RO", script, len(keys), *keys, *args))

    @command
    def evalsha(sha1: str, keys: Sequence[Arg] = (), args: Sequence[Arg] = ()) -> Cmd[Any, Any]:
        return Cmd(("EVALSHA", sha1, len(keys), *keys, *args))

    @command
    def evalsha_ro(sha1: str, keys: Sequence[Arg] = (), args: Sequence[Arg] = ()) -> Cmd[Any, Any]:
        return Cmd(("EVALSHA_RO", sha1, len(keys), *keys, *args))

    @command
    def script_load(script: str) -> Cmd[str, str]:
        return Cmd(("SCRIPT", "LOAD", script), _text)

    @command
    def script_exists(*sha1s: str) -> Cmd[list[bool], list[bool]]:
        return Cmd(("SCRIPT", "EXISTS", *sha1s), _bools)

    @command
    def script_flush() -> BoolCmd:
        return Cmd(("SCRIPT", "FLUSH"), _ok)

    # -- pub/sub -------------------------------------------------------------------------------
    @command
    def publish(channel: Arg, message: Arg) -> IntCmd:
        """PUBLISH: the number of subscribers that received the message."""
        return Cmd(("PUBLISH", channel, message))

    # -- JSON ----------------------------------------------------------------------------------
    @command
    def json_set(key: Arg, path: str, value: Any, *, nx: bool = False, xx: bool = False) -> BoolCmd:
        """JSON.SET: ``value`` is any JSON-serialisable Python value."""
        args: list[Arg] = ["JSON.SET", key, path, json.dumps(value, separators=(",", ":"))]
        _flag(args, "NX", nx)
        _flag(args, "XX", xx)
        return Cmd(tuple(args), _ok)

    @command
    def json_get(key: Arg, path: str = "$") -> Cmd[Any, Any]:
        """JSON.GET: the parsed value (a list of matches for a ``$`` path), None when missing."""
        return Cmd(("JSON.GET", key, path), _json)

    @command
    def json_mget(keys: Sequence[Arg], path: str = "$") -> Cmd[list[Any], list[Any]]:
        return Cmd(("JSON.MGET", *keys, path), lambda r: [_json(v) for v in r])

    @command
    def json_del(key: Arg, path: str = "$") -> IntCmd:
        return Cmd(("JSON.DEL", key, path))

    @command
    def json_type(key: Arg, path: str = "$") -> Cmd[Any, Any]:
        return Cmd(("JSON.TYPE", key, path), _texts)

    @command
    def json_numincrby(key: Arg, path: str, amount: float) -> Cmd[Any, Any]:
        return Cmd(("JSON.NUMINCRBY", key, path, amount), _json)

    @command
    def json_arrappend(key: Arg, path: str, *values: Any) -> Cmd[Any, Any]:
        return Cmd(("JSON.ARRAPPEND", key, path, *(json.dumps(v) for v in values)))

    @command
    def json_strlen(key: Arg, path: str = "$") -> Cmd[Any, Any]:
        return Cmd(("JSON.STRLEN", key, path))

    @command
    def json_objkeys(key: Arg, path: str = "$") -> Cmd[Any, Any]:
        return Cmd(("JSON.OBJKEYS", key, path), _texts)


def _text(reply: Any) -> str:
    """Replies that are names, never user data (TYPE, SCRIPT LOAD): always ``str``."""
    return reply.decode("utf-8", "replace") if isinstance(reply, bytes) else reply


def _texts(reply: Any) -> Any:
    if isinstance(reply, list):
        return [_texts(v) for v in reply]
    return _text(reply) if reply is not None else None
