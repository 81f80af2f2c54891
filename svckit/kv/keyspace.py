"""Keyspace inspection: bounded scanning, describing keys, reading values of any type in pages.

What the KV explorer, :mod:`svckit.frames` and a notebook user call alike::

    from svckit.kv import KV, KeyScan, scan_keys, describe_keys, read_page
    kv = KV.from_env()
    scan = scan_keys(kv, KeyScan("user:*"), limit=100, max_calls=20)  # stops at 100 keys or 20 SCANs
    scan.keys, scan.calls, scan.complete                                # progress so far
    scan_keys(kv, scan, limit=200)                                      # ... carries on from its cursor
    infos = describe_keys(kv, scan.keys[:25])      # type, PTTL, memory (one pipeline) + lengths
    page = read_page(kv, "user:1", "hash", count=100)
    while page.next_cursor is not None:
        page = read_page(kv, "user:1", "hash", cursor=page.next_cursor, count=100)

Every operation is a sans-I/O core (:class:`KeyScan` and the ``_*_page`` / ``_queue_*`` / ``_decode_*``
functions decide what to send and what a reply means) with two thin shells: ``scan_keys``,
``describe_keys``, ``read_page`` for :class:`~svckit.kv.KV` and ``ascan_keys``, ``adescribe_keys``,
``aread_page`` for :class:`~svckit.kv.AsyncKV`. They use only the typed command helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from svckit.errors import InvalidArgument, SvcError
from svckit.kv.protocol import Arg

if TYPE_CHECKING:
    from svckit.kv.client import KV, AsyncKV, BasePipeline

#: The length helper of each TYPE reply (ReJSON-RL has no single length command).
LENGTH_HELPERS: dict[str, str] = {
    "string": "strlen", "hash": "hlen", "list": "llen", "set": "scard", "zset": "zcard", "stream": "xlen",
}
#: Types read in pages; a string or a JSON document is read whole (one page).
PAGED_TYPES: tuple[str, ...] = ("hash", "set", "zset", "list", "stream")
DEFAULT_PAGE = 100

Cursor = int | str


# -- bounded scanning ---------------------------------------------------------------------------


@dataclass
class KeyScan:
    """The state of one SCAN over the keyspace: what was found so far and where to go on.

    ``keys`` holds every matching key once, in SCAN order (SCAN may return a key twice across a
    rehash; the repeat is dropped). ``calls`` counts SCAN requests, ``scanned`` adds up their COUNT
    hints: the number of keys walked so far, approximately (SCAN's COUNT is a hint, not a promise).
    ``complete`` is True once the cursor came back to 0."""

    match: str | None = "*"
    type: str | None = None
    count: int = 1000
    keys: list[Any] = field(default_factory=list)
    cursor: int = 0
    calls: int = 0
    scanned: int = 0
    complete: bool = False
    _seen: set[Any] = field(default_factory=set, repr=False, init=False, compare=False)

    def __post_init__(self) -> None:
        if self.count < 1:
            raise InvalidArgument("count", f"KeyScan needs a COUNT >= 1, got {self.count!r}")
        self._seen = set(self.keys)

    def next_call(self, count: int | None = None) -> dict[str, Any]:
        """Keyword arguments of the next ``scan()`` call."""
        return {"cursor": self.cursor, "match": self.match or None, "count": count or self.count,
                "type": self.type or None}

    def feed(self, reply: tuple[int, list[Any]], count: int | None = None) -> int:
        """Take one ``scan()`` reply; returns how many new keys it brought."""
        cursor, batch = reply
        self.cursor = int(cursor)
        self.calls += 1
        self.scanned += count or self.count
        self.complete = self.cursor == 0
        new = 0
        for key in batch:
            if key not in self._seen:
                self._seen.add(key)
                self.keys.append(key)
                new += 1
        return new

    def wants_more(self, limit: int | None, calls: int, max_calls: int | None) -> bool:
        """True while the scan is not complete, under ``limit`` keys and under ``max_calls`` calls."""
        return (not self.complete and (limit is None or len(self.keys) < limit)
                and (max_calls is None or calls < max_calls))


def _scan_of(scan: KeyScan | str | None, type: str | None, count: int | None) -> KeyScan:
    if isinstance(scan, KeyScan):
        return scan
    return KeyScan(scan, type, count or 1000)


def scan_keys(kv: KV[Any], scan: KeyScan | str | None = "*", *, type: str | None = None,
              count: int | None = None, limit: int | None = None, max_calls: int | None = None,
              progress: Callable[[KeyScan], None] | None = None) -> KeyScan:
    """SCAN until ``limit`` keys are known, ``max_calls`` calls were made in this run, or the
    keyspace ends. ``scan`` is a match pattern (a new scan) or a :class:`KeyScan` to carry on;
    ``count`` overrides its COUNT hint for this run; ``progress`` is called after every call."""
    state = _scan_of(scan, type, count)
    calls = 0
    while state.wants_more(limit, calls, max_calls):
        state.feed(kv.scan(**state.next_call(count)), count)
        calls += 1
        if progress is not None:
            progress(state)
    return state


async def ascan_keys(kv: AsyncKV[Any], scan: KeyScan | str | None = "*", *, type: str | None = None,
                     count: int | None = None, limit: int | None = None, max_calls: int | None = None,
                     progress: Callable[[KeyScan], None] | None = None) -> KeyScan:
    """:func:`scan_keys` for :class:`~svckit.kv.AsyncKV`."""
    state = _scan_of(scan, type, count)
    calls = 0
    while state.wants_more(limit, calls, max_calls):
        state.feed(await kv.scan(**state.next_call(count)), count)
        calls += 1
        if progress is not None:
            progress(state)
    return state


# -- describing keys ----------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyInfo:
    """What one key is: ``type`` (a TYPE reply, ``none`` when the key is gone, None when TYPE
    failed), ``pttl`` (ms; -1 no expiry, -2 missing), ``memory`` (bytes) and ``length`` (elements,
    or bytes of a string; None when not measured). A failed command leaves its field None."""

    key: Any
    type: str | None = None
    pttl: int | None = None
    memory: int | None = None
    length: int | None = None


def _ok(reply: Any) -> Any:
    return None if isinstance(reply, SvcError) else reply


def _queue_describe(pipe: BasePipeline, keys: Sequence[Arg]) -> None:
    for key in keys:
        pipe.type(key).pttl(key).memory_usage(key)


def _decode_describe(keys: Sequence[Any], replies: Sequence[Any]) -> list[KeyInfo]:
    return [KeyInfo(key, _ok(replies[3 * i]), _ok(replies[3 * i + 1]), _ok(replies[3 * i + 2]))
            for i, key in enumerate(keys)]


def _queue_lengths(pipe: BasePipeline, infos: Sequence[KeyInfo]) -> list[int]:
    """Queue the length helper of every key whose type has one; the indexes of those keys."""
    measured = []
    for i, info in enumerate(infos):
        helper = LENGTH_HELPERS.get(info.type or "")
        if helper is not None:
            getattr(pipe, helper)(info.key)
            measured.append(i)
    return measured


def _decode_lengths(infos: list[KeyInfo], measured: list[int], replies: Sequence[Any]) -> list[KeyInfo]:
    for i, reply in zip(measured, replies, strict=True):
        infos[i] = replace(infos[i], length=_ok(reply))
    return infos


def describe_keys(kv: KV[Any], keys: Sequence[Arg], *, lengths: bool = True) -> list[KeyInfo]:
    """TYPE, PTTL and MEMORY USAGE of every key in one pipeline (one request), then, with
    ``lengths``, each key's length in a second one (its command depends on the type just read)."""
    if not keys:
        return []
    pipe = kv.pipeline()
    _queue_describe(pipe, keys)
    infos = _decode_describe(keys, pipe.exec())
    if lengths:
        pipe = kv.pipeline()
        measured = _queue_lengths(pipe, infos)
        if measured:
            infos = _decode_lengths(infos, measured, pipe.exec())
    return infos


async def adescribe_keys(kv: AsyncKV[Any], keys: Sequence[Arg], *, lengths: bool = True) -> list[KeyInfo]:
    """:func:`describe_keys` for :class:`~svckit.kv.AsyncKV`."""
    if not keys:
        return []
    pipe = kv.pipeline()
    _queue_describe(pipe, keys)
    infos = _decode_describe(keys, await pipe.exec())
    if lengths:
        pipe = kv.pipeline()
        measured = _queue_lengths(pipe, infos)
        if measured:
            infos = _decode_lengths(infos, measured, await pipe.exec())
    return infos


# -- reading values in pages --------------------------------------------------------------------


@dataclass(frozen=True)
class ValuePage:
    """One page of a value. ``items`` has the shape of the type's reply: a string; a dict of hash
    fields; a list of list elements, of set members, of ``(member, score)`` or of stream
    ``(id, {field: value})``; a JSON document. ``start`` is the index of the first item (list and
    sorted-set ranks; 0 for the others). ``next_cursor`` goes to :func:`read_page` for the next
    page; None when this page is the last."""

    key: Any
    type: str
    items: Any
    start: int = 0
    next_cursor: Cursor | None = None

    @property
    def complete(self) -> bool:
        return self.next_cursor is None

    def __len__(self) -> int:
        if self.type in PAGED_TYPES:
            return len(self.items)
        return 0 if self.items is None else 1


def _next_int(cursor: int) -> int | None:
    return None if cursor == 0 else cursor


def _page_call(kv: Any, key: Arg, key_type: str, cursor: Cursor | None, count: int
               ) -> tuple[Any, Callable[[Any], ValuePage]]:
    """The reply-producing call for one page (a helper's result: a value or an awaitable) and the
    function that turns its reply into the :class:`ValuePage`."""
    if count < 1:
        raise InvalidArgument("count", f"a page needs a count >= 1, got {count!r}")
    if key_type in ("hash", "set"):
        at = int(cursor or 0)
        call = kv.hscan(key, at, count=count) if key_type == "hash" else kv.sscan(key, at, count=count)
        return call, lambda r: ValuePage(key, key_type, r[1] if key_type == "hash" else list(r[1]),
                                         0, _next_int(r[0]))
    if key_type in ("list", "zset"):
        at = int(cursor or 0)
        stop = at + count - 1
        call = kv.lrange(key, at, stop) if key_type == "list" else kv.zrange(key, at, stop, withscores=True)
        return call, lambda r: ValuePage(key, key_type, r, at, at + count if len(r) == count else None)
    if key_type == "stream":
        # the next page starts after the last id read: "(" makes XRANGE's start exclusive
        start = "-" if cursor is None else f"({cursor}"
        call = kv.xrange(key, start, "+", count=count)

        def stream_page(r: Any) -> ValuePage:
            last = r[-1][0] if len(r) == count else None
            return ValuePage(key, key_type, r, 0, last.decode() if isinstance(last, bytes) else last)
        return call, stream_page
    if key_type == "string":
        return kv.get(key), lambda r: ValuePage(key, key_type, r)
    if key_type == "ReJSON-RL":
        return kv.json_get(key, "$"), lambda r: ValuePage(key, key_type, r)
    raise InvalidArgument("key_type", f"no value to read for type {key_type!r} of key {key!r}")


def read_page(kv: KV[Any], key: Arg, key_type: str | None = None, *, cursor: Cursor | None = None,
              count: int = DEFAULT_PAGE) -> ValuePage:
    """One page of ``key``'s value: HSCAN / SSCAN (a COUNT hint: a page may hold more or fewer),
    LRANGE / ZRANGE by rank and XRANGE by id (exactly ``count``), or the whole string / JSON
    document. ``key_type`` is read with TYPE when not given; a missing key is an empty page."""
    key_type = key_type or kv.type(key)
    if key_type == "none":
        return ValuePage(key, key_type, None)
    call, decode = _page_call(kv, key, key_type, cursor, count)
    return decode(call)


async def aread_page(kv: AsyncKV[Any], key: Arg, key_type: str | None = None, *, cursor: Cursor | None = None,
                     count: int = DEFAULT_PAGE) -> ValuePage:
    """:func:`read_page` for :class:`~svckit.kv.AsyncKV`."""
    key_type = key_type or await kv.type(key)
    if key_type == "none":
        return ValuePage(key, key_type, None)
    call, decode = _page_call(kv, key, key_type, cursor, count)
    return decode(await call)


__all__ = [
    "KeyInfo",
    "KeyScan",
    "ValuePage",
    "adescribe_keys",
    "aread_page",
    "ascan_keys",
    "describe_keys",
    "read_page",
    "scan_keys",
]
