"""Keyspace inspection: one walk over the keyspace, describing keys, reading values of any type.

What the KV explorer, bulk actions, the keyspace analysis, :mod:`svckit.frames` and a notebook
user call alike::

    from svckit.kv import KV, KeyScan, walk_keys, scan_keys, describe_keys, read_page
    kv = KV.from_env()
    for state, new in walk_keys(kv, "user:*", total=kv.dbsize(), progress=True):
        ...                                                          # one SCAN call per step
    scan = scan_keys(kv, KeyScan("user:*"), limit=100, max_calls=20)  # stops at 100 keys or 20 SCANs
    scan.keys, scan.calls, scan.complete                                # progress so far
    scan_keys(kv, scan, limit=200)                                      # ... carries on from its cursor
    infos = describe_keys(kv, scan.keys[:25])      # type, PTTL, memory (one pipeline) + lengths
    page = read_page(kv, "user:1", "hash", count=100)   # one page (next_cursor None: the last one)
    page = read_page(kv, "user:1", "hash", cursor=page.next_cursor, count=100)   # the next page
    fields = dict(kv.hscan_iter("user:1"))      # every page: the one cursor loop (svckit._cursor)
    whole = read_page(kv, "user:1", "hash", count=None)                 # HGETALL: the whole value

Every operation is a sans-I/O core (:class:`KeyScan`, ``_Walk`` and the ``_read_call`` /
``_queue_*`` / ``_decode_*`` functions decide what to send and what a reply means) with two thin
shells: ``walk_keys``, ``describe_keys``, ``read_page`` for :class:`~svckit.kv.KV` and
``awalk_keys``, ``adescribe_keys``, ``aread_page`` for :class:`~svckit.kv.AsyncKV`. They use only
the typed command helpers. :func:`walk_keys` is the only SCAN loop of :mod:`svckit.kv` (its loop
is the one cursor loop of :mod:`svckit._cursor`, ``_Walk`` its chain of SCAN calls):
``scan_keys``, ``KV.scan_iter``, :func:`~svckit.kv.plan_bulk`, the bulk runs and
:func:`~svckit.kv.analyze_keyspace` all consume it. Progress and cancel follow
:mod:`svckit._progress`.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable, Generator, Sequence
from contextlib import aclosing, closing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from svckit._cursor import ARun, Pages, Run, afollow, follow
from svckit._inflight import InFlight, agather, batches
from svckit._progress import Cancel, ProgressArg
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
#: The COUNT of every SCAN-family call and the size of a value's page when the caller does not say:
#: a page worth a round trip. The server walks a thousand entries in well under a millisecond, so 20-100
#: ms from the service the round trip is the cost; Redis's own default of 10 makes a walk over
#: 20,000 keys 2,000 round trips (80 s at 40 ms) where 1,000 makes it 20.
SCAN_COUNT = 1000
DEFAULT_PAGE = SCAN_COUNT
#: keys described per request (:func:`describe_keys`): a page's worth, well under a request size limit
DESCRIBE_BATCH = SCAN_COUNT

Cursor = int | str
#: the keys a walk goes over (DBSIZE): a number, None (not known), or a callable that gives it, waiting
#: if need be (a DBSIZE sent beside the walk's first SCAN call: its reply comes about when SCAN's does)
Total = int | Callable[[], int | None] | None


# -- walking the keyspace -------------------------------------------------------------------------


@dataclass
class KeyScan:
    """The state of one SCAN over the keyspace: what was found so far and where to go on.

    ``keys`` holds every matching key once, in SCAN order (SCAN may return a key twice across a
    rehash; the repeat is dropped), unless a walk was told not to keep them (``keep=False``) or not
    to drop repeats (``dedupe=False``). ``calls`` counts SCAN requests, ``scanned`` adds up their
    COUNT hints: the number of keys walked so far, approximately (SCAN's COUNT is a hint, not a
    promise). ``complete`` is True once the cursor came back to 0; ``cancelled`` once the last walk
    over it stopped because its ``cancel`` was set (the rule of :mod:`svckit._progress`)."""

    match: str | None = "*"
    type: str | None = None
    count: int = SCAN_COUNT
    keys: list[Any] = field(default_factory=list)
    cursor: int = 0
    calls: int = 0
    scanned: int = 0
    complete: bool = False
    cancelled: bool = False
    _seen: set[Any] = field(default_factory=set, repr=False, init=False, compare=False)

    def __post_init__(self) -> None:
        if self.count < 1:
            raise InvalidArgument("count", f"KeyScan needs a COUNT >= 1, got {self.count!r}")
        self._seen = set(self.keys)

    def next_call(self, count: int | None = None) -> dict[str, Any]:
        """Keyword arguments of the next ``scan()`` call."""
        return {"cursor": self.cursor, "match": self.match or None, "count": count or self.count,
                "type": self.type or None}

    def step(self, reply: tuple[int, list[Any]], count: int | None = None, *, dedupe: bool = True,
             keep: bool = True) -> list[Any]:
        """Take one ``scan()`` reply; returns the keys it brought that are new (with ``dedupe``: not
        seen before in this scan, each once; without: the reply's keys as they are). ``keep`` adds
        them to :attr:`keys`; without it only the seen-set (``dedupe``) remembers them."""
        cursor, batch = reply
        self.cursor = int(cursor)
        self.calls += 1
        self.scanned += count or self.count
        self.complete = self.cursor == 0
        new = list(batch)
        if dedupe:
            new = []
            for key in batch:
                if key not in self._seen:
                    self._seen.add(key)
                    new.append(key)
        if keep:
            self.keys.extend(new)
        return new

    def feed(self, reply: tuple[int, list[Any]], count: int | None = None) -> int:
        """Take one ``scan()`` reply, keeping its new keys; returns how many there were."""
        return len(self.step(reply, count))

    def walked(self, total: int | None = None) -> int:
        """Keys walked so far: :attr:`scanned`, capped at ``total`` (DBSIZE) when given, and all of
        ``total`` once the scan is complete."""
        if total is None:
            return self.scanned
        return total if self.complete else min(self.scanned, total)

    def wants_more(self, limit: int | None, calls: int, max_calls: int | None) -> bool:
        """True while the scan is not complete, under ``limit`` keys and under ``max_calls`` calls."""
        return (not self.complete and (limit is None or len(self.keys) < limit)
                and (max_calls is None or calls < max_calls))


def _scan_of(scan: KeyScan | str | None, type: str | None, count: int | None) -> KeyScan:
    if isinstance(scan, KeyScan):
        return scan
    return KeyScan(scan, type, count or SCAN_COUNT)


class _Walk(Pages):
    """The chain of SCAN calls :func:`walk_keys` and :func:`awalk_keys` follow (the one cursor loop,
    :mod:`svckit._cursor`): what the next call asks (``request``), what its reply brings (``take``:
    the scan state and the keys new to that step, cut to ``limit``), and the progress report. A
    walk stopped by ``cancel`` (checked before each call) marks its :class:`KeyScan` ``cancelled``."""

    def __init__(self, state: KeyScan, count: int | None, total: Total, cancel: Cancel,
                 progress: ProgressArg, dedupe: bool, keep: bool, limit: int | None = None) -> None:
        super().__init__(progress=progress, cancel=cancel, limit=limit)
        self.state, self.hint, self.total = state, count, total
        self.dedupe, self.keep = dedupe, keep
        self.ended, state.cancelled = state.complete, False
        self.matched = len(state.keys)

    def goes_on(self) -> bool:
        going = super().goes_on()
        self.state.cancelled = self.state.cancelled or self.cancelled
        return going

    def request(self) -> dict[str, Any]:
        return self.state.next_call(self.hint)

    def take(self, reply: tuple[int, list[Any]]) -> tuple[KeyScan, list[Any]]:  # type: ignore[override]
        new = self.cut(self.state.step(reply, self.hint, dedupe=self.dedupe, keep=self.keep))
        self.ended = self.state.complete
        self.requests += 1
        self.matched += len(new)
        total = self.total() if callable(self.total) else self.total
        self.report("scan", self.state.walked(total), total, unit="keys", note=f"{self.matched:,} matching",
                    round_trips=self.state.calls)
        return self.state, new


def walk_keys(kv: KV[Any], scan: KeyScan | str | None = "*", *, type: str | None = None, count: int | None = None,
              total: Total = None, cancel: Cancel = None, progress: ProgressArg = False, dedupe: bool = True,
              keep: bool = True) -> Run[tuple[KeyScan, list[Any]]]:
    """Walk the keyspace one SCAN call per step (bounded: a step never holds more than one reply),
    yielding the scan state and the keys new to that step, until the cursor comes back to 0.

    ``scan`` is a match pattern (a new scan, with ``type`` and ``count``) or a :class:`KeyScan` to
    carry on; ``count`` overrides its COUNT hint for this walk. ``cancel`` is checked before every
    SCAN call, so a cancelled walk ends between two calls (``state.complete`` stays False,
    ``state.cancelled`` and the returned run's ``cancelled`` are True). Returns a
    :class:`~svckit._cursor.Run` of the steps (lazy: a SCAN call per step asked for).

    ``dedupe`` (default) drops a key SCAN returned twice (possible across a rehash) by the scan's
    seen-set, which therefore holds every key walked: callers that must stay flat in memory over
    millions of keys and may count a rare repeat twice pass ``dedupe=False`` (the keyspace
    analysis' counting pass, ``KV.scan_iter`` as redis-py's). ``keep`` (default) grows
    ``state.keys`` (what the explorer shows); ``keep=False`` leaves it as it was and hands each
    step's keys to the caller only (bulk actions, the analysis).

    ``progress`` (see :mod:`svckit._progress`) gets, after every call, phase ``"scan"``, ``done``
    the keys walked (:meth:`KeyScan.walked`: COUNT hints added up, capped at ``total``, all of it
    once complete), ``total`` the caller's (DBSIZE; a callable is asked at every step: the future of
    a DBSIZE sent beside the first call) or None, unit ``"keys"``, note ``"1,234
    matching"`` (the keys the walk found, with those ``state.keys`` held when it started),
    ``round_trips`` the scan's SCAN calls."""
    walk = _Walk(_scan_of(scan, type, count), count, total, cancel, progress, dedupe, keep)
    return Run(walk, follow(lambda call: kv.scan(**call), walk))


def awalk_keys(kv: AsyncKV[Any], scan: KeyScan | str | None = "*", *, type: str | None = None,
               count: int | None = None, total: Total = None, cancel: Cancel = None,
               progress: ProgressArg = False, dedupe: bool = True,
               keep: bool = True) -> ARun[tuple[KeyScan, list[Any]]]:
    """:func:`walk_keys` for :class:`~svckit.kv.AsyncKV` (``async for``)."""
    walk = _Walk(_scan_of(scan, type, count), count, total, cancel, progress, dedupe, keep)
    return ARun(walk, afollow(lambda call: kv.scan(**call), walk))


def _new_keys(steps: Run[tuple[KeyScan, list[Any]]]) -> Generator[Any, None, None]:
    with closing(steps):
        for _, keys in steps:
            yield from keys


async def _anew_keys(steps: ARun[tuple[KeyScan, list[Any]]]) -> Any:
    async with aclosing(steps):
        async for _, keys in steps:
            for key in keys:
                yield key


def key_listing(kv: KV[Any], match: Arg | None, type: str | None, count: int | None, *,
                progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None) -> Run[Any]:
    """``KV.scan_iter``: every key a walk finds (no de-duplication, nothing kept: memory stays flat),
    up to ``limit``, as a :class:`~svckit._cursor.Run`."""
    walk = _Walk(KeyScan(match, type, count or SCAN_COUNT), None, None, cancel, progress, False, False, limit)  # type: ignore[arg-type]
    return Run(walk, _new_keys(Run(walk, follow(lambda call: kv.scan(**call), walk))))


def akey_listing(kv: AsyncKV[Any], match: Arg | None, type: str | None, count: int | None, *,
                 progress: ProgressArg = False, cancel: Cancel = None, limit: int | None = None) -> ARun[Any]:
    """:func:`key_listing` for :class:`~svckit.kv.AsyncKV`."""
    walk = _Walk(KeyScan(match, type, count or SCAN_COUNT), None, None, cancel, progress, False, False, limit)  # type: ignore[arg-type]
    return ARun(walk, _anew_keys(ARun(walk, afollow(lambda call: kv.scan(**call), walk))))


def scan_keys(kv: KV[Any], scan: KeyScan | str | None = "*", *, type: str | None = None,
              count: int | None = None, limit: int | None = None, max_calls: int | None = None,
              total: int | None = None, cancel: Cancel = None, progress: ProgressArg = False) -> KeyScan:
    """SCAN until ``limit`` keys are known, ``max_calls`` calls were made in this run, the keyspace
    ends or ``cancel`` is set: :func:`walk_keys` (keys kept, repeats dropped) stopped early.
    ``scan`` is a match pattern (a new scan) or a :class:`KeyScan` to carry on; ``count`` overrides
    its COUNT hint for this run; ``total`` and ``progress`` as for :func:`walk_keys`."""
    state = _scan_of(scan, type, count)
    calls = 0
    with closing(walk_keys(kv, state, count=count, total=total, cancel=cancel, progress=progress)) as steps:
        while state.wants_more(limit, calls, max_calls) and next(steps, None) is not None:
            calls += 1
    return state


async def ascan_keys(kv: AsyncKV[Any], scan: KeyScan | str | None = "*", *, type: str | None = None,
                     count: int | None = None, limit: int | None = None, max_calls: int | None = None,
                     total: int | None = None, cancel: Cancel = None, progress: ProgressArg = False) -> KeyScan:
    """:func:`scan_keys` for :class:`~svckit.kv.AsyncKV`."""
    state = _scan_of(scan, type, count)
    calls = 0
    async with aclosing(awalk_keys(kv, state, count=count, total=total, cancel=cancel, progress=progress)) as steps:
        while state.wants_more(limit, calls, max_calls) and await anext(steps, None) is not None:
            calls += 1
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


#: One key described by one command: TYPE, PTTL, MEMORY USAGE (nil where the server has none) and
#: the type's length, so describing a page is one round trip rather than two (the length command
#: depends on the type). Read-only (EVAL_RO, which the Read Only token may send) and one key per call,
#: so each call stays in one hash slot. A pipeline sends the script once, with its first key (which
#: caches it on the server), and its SHA1 with the others (EVALSHA_RO): 60 bytes a key, not 400. On a
#: Redis Cluster the text reaches only the first key's master: a key on a master that has not seen
#: the script yet answers NOSCRIPT, and is described again with the text (:func:`_unscripted`),
#: which caches it there too; so a master costs that second request once, not once per describe.
DESCRIBE_SCRIPT = """local k = KEYS[1]
local t = redis.call('TYPE', k).ok
local m = redis.pcall('MEMORY', 'USAGE', k)
if type(m) ~= 'number' then m = false end
local n = false
local len = {string='STRLEN', hash='HLEN', list='LLEN', set='SCARD', zset='ZCARD', stream='XLEN'}
if len[t] then n = redis.call(len[t], k) end
return {t, redis.call('PTTL', k), m, n}"""
DESCRIBE_SHA = hashlib.sha1(DESCRIBE_SCRIPT.encode()).hexdigest()

#: clients whose server refused :data:`DESCRIBE_SCRIPT` (no EVAL_RO: fakeredis, a server with
#: scripts off); they describe in two pipelines from then on
_NO_SCRIPT: weakref.WeakSet[Any] = weakref.WeakSet()


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def _queue_script(pipe: BasePipeline, keys: Sequence[Arg]) -> None:
    pipe.eval_ro(DESCRIBE_SCRIPT, keys[:1])
    for key in keys[1:]:
        pipe.evalsha_ro(DESCRIBE_SHA, [key])


def _unscripted(replies: Sequence[Any]) -> list[int]:
    """The indexes of the keys whose EVALSHA_RO found no script on their master (NOSCRIPT: a Redis
    Cluster's other masters), to describe again with the script's text (EVAL_RO)."""
    return [i for i, r in enumerate(replies) if isinstance(r, SvcError) and str(r).startswith("NOSCRIPT")]


def _put_back(replies: Sequence[Any], again: list[int], more: Sequence[Any]) -> list[Any]:
    """``replies`` with the replies of the keys described again in their places."""
    merged = list(replies)
    for i, reply in zip(again, more, strict=True):
        merged[i] = reply
    return merged


def _decode_script(keys: Sequence[Any], replies: Sequence[Any]) -> list[KeyInfo] | None:
    """The infos of a scripted describe; None when a reply failed (describe the two-pipeline way)."""
    if any(isinstance(r, SvcError) for r in replies):
        return None
    return [KeyInfo(key, _text(r[0]), r[1], r[2], r[3]) for key, r in zip(keys, replies, strict=True)]


def _queue_describe(pipe: BasePipeline, keys: Sequence[Arg]) -> None:
    for key in keys:
        pipe.type(key).pttl(key).memory_usage(key)


def _decode_describe(keys: Sequence[Any], replies: Sequence[Any]) -> list[KeyInfo]:
    return [KeyInfo(key, _text(_ok(replies[3 * i])), _ok(replies[3 * i + 1]), _ok(replies[3 * i + 2]))
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


def _scripted(kv: Any, keys: Sequence[Any], replies: Sequence[Any]) -> list[KeyInfo] | None:
    infos = _decode_script(keys, replies)
    if infos is None and all(isinstance(r, SvcError) for r in replies):
        _NO_SCRIPT.add(kv)  # the server refuses the script itself, not one key's call
    return infos


def _describe(kv: KV[Any], keys: Sequence[Arg], lengths: bool) -> list[KeyInfo]:
    if lengths and kv not in _NO_SCRIPT:
        pipe = kv.pipeline()
        _queue_script(pipe, keys)
        replies = pipe.exec()
        again = _unscripted(replies)
        if again:
            pipe = kv.pipeline()
            for i in again:
                pipe.eval_ro(DESCRIBE_SCRIPT, [keys[i]])
            replies = _put_back(replies, again, pipe.exec())
        infos = _scripted(kv, keys, replies)
        if infos is not None:
            return infos
    pipe = kv.pipeline()
    _queue_describe(pipe, keys)
    infos = _decode_describe(keys, pipe.exec())
    if lengths:
        pipe = kv.pipeline()
        measured = _queue_lengths(pipe, infos)
        if measured:
            infos = _decode_lengths(infos, measured, pipe.exec())
    return infos


# A key name that is not UTF-8 cannot be named in a pipeline (a pipeline is JSON): such keys (rare)
# are described one by one, with single commands, which carry any bytes. One sans-I/O recipe, run by
# a sync and an async driver.


def _binary_names(keys: Sequence[Arg]) -> dict[int, Arg]:
    """The keys no pipeline can name (bytes that are not UTF-8), by their index in ``keys``."""
    out: dict[int, Arg] = {}
    for i, key in enumerate(keys):
        if isinstance(key, (bytes, bytearray)):
            try:
                key.decode("utf-8")
            except UnicodeDecodeError:
                out[i] = key
    return out


def _describe_alone(key: Arg, scripted: bool, lengths: bool) -> Generator[tuple[Any, ...], Any, KeyInfo]:
    """Describe one key with single commands: yields each command, is sent its reply (or the error)."""
    if scripted and lengths:
        reply = yield ("EVAL_RO", DESCRIBE_SCRIPT, 1, key)
        if not isinstance(reply, SvcError):
            return KeyInfo(key, _text(reply[0]), reply[1], reply[2], reply[3])
    replies = [(yield ("TYPE", key)), (yield ("PTTL", key)), (yield ("MEMORY", "USAGE", key))]
    info = _decode_describe([key], replies)[0]
    helper = LENGTH_HELPERS.get(info.type or "")
    if lengths and helper is not None:
        info = replace(info, length=_ok((yield (helper.upper(), key))))
    return info


def _merge(keys: Sequence[Arg], alone: dict[int, Arg], piped: list[KeyInfo], singles: list[KeyInfo]) -> list[KeyInfo]:
    """The infos in the order of ``keys``: ``singles`` for the ``alone`` ones, ``piped`` for the rest."""
    if not alone:
        return piped
    by_index = dict(zip(alone, singles, strict=True))
    rest = iter(piped)
    return [by_index[i] if i in by_index else next(rest) for i in range(len(keys))]


def _run_alone(kv: KV[Any], steps: Generator[tuple[Any, ...], Any, KeyInfo]) -> KeyInfo:
    reply: Any = None
    try:
        while True:
            command = steps.send(reply)
            try:
                reply = kv.execute(*command)
            except SvcError as exc:
                reply = exc
    except StopIteration as done:
        return done.value


async def _arun_alone(kv: AsyncKV[Any], steps: Generator[tuple[Any, ...], Any, KeyInfo]) -> KeyInfo:
    reply: Any = None
    try:
        while True:
            command = steps.send(reply)
            try:
                reply = await kv.execute(*command)
            except SvcError as exc:
                reply = exc
    except StopIteration as done:
        return done.value


def describe_keys(kv: KV[Any], keys: Sequence[Arg], *, lengths: bool = True) -> list[KeyInfo]:
    """TYPE, PTTL, MEMORY USAGE and (with ``lengths``) the length of every key, in one request per
    :data:`DESCRIBE_BATCH` keys (those requests side by side: :class:`~svckit._inflight.InFlight`):
    one :data:`DESCRIBE_SCRIPT` call per key in one pipeline (on a Redis Cluster, a second request
    for the keys of masters that had not cached the script yet). Where the server refuses the script,
    TYPE, PTTL and MEMORY USAGE in one pipeline, then the lengths in a second (the length command
    depends on the type just read). A key name that is not UTF-8 is described with single commands."""
    alone = _binary_names(keys)
    piped = [key for i, key in enumerate(keys) if i not in alone] if alone else keys
    singles = [_run_alone(kv, _describe_alone(key, kv not in _NO_SCRIPT, lengths)) for key in alone.values()]
    if len(piped) <= DESCRIBE_BATCH:
        return _merge(keys, alone, _describe(kv, piped, lengths) if piped else [], singles)
    infos: list[KeyInfo] = []
    with InFlight() as beside:
        for batch in batches(piped, DESCRIBE_BATCH):
            beside.submit(_describe, kv, batch, lengths, then=infos.extend)
    return _merge(keys, alone, infos, singles)


async def _adescribe(kv: AsyncKV[Any], keys: Sequence[Arg], lengths: bool) -> list[KeyInfo]:
    if lengths and kv not in _NO_SCRIPT:
        pipe = kv.pipeline()
        _queue_script(pipe, keys)
        replies = await pipe.exec()
        again = _unscripted(replies)
        if again:
            pipe = kv.pipeline()
            for i in again:
                pipe.eval_ro(DESCRIBE_SCRIPT, [keys[i]])
            replies = _put_back(replies, again, await pipe.exec())
        infos = _scripted(kv, keys, replies)
        if infos is not None:
            return infos
    pipe = kv.pipeline()
    _queue_describe(pipe, keys)
    infos = _decode_describe(keys, await pipe.exec())
    if lengths:
        pipe = kv.pipeline()
        measured = _queue_lengths(pipe, infos)
        if measured:
            infos = _decode_lengths(infos, measured, await pipe.exec())
    return infos


async def adescribe_keys(kv: AsyncKV[Any], keys: Sequence[Arg], *, lengths: bool = True) -> list[KeyInfo]:
    """:func:`describe_keys` for :class:`~svckit.kv.AsyncKV` (its batches side by side: ``agather``)."""
    alone = _binary_names(keys)
    piped = [key for i, key in enumerate(keys) if i not in alone] if alone else keys
    singles = [await _arun_alone(kv, _describe_alone(key, kv not in _NO_SCRIPT, lengths)) for key in alone.values()]
    described = await agather(_adescribe(kv, batch, lengths) for batch in batches(piped, DESCRIBE_BATCH))
    return _merge(keys, alone, [info for infos in described for info in infos], singles)


# -- reading values: a page, or the whole value -------------------------------------------------


@dataclass(frozen=True)
class ValuePage:
    """One page of a value. ``items`` has the shape of the type's reply: a string; a dict of hash
    fields; a list of list elements, of set members, of ``(member, score)`` or of stream
    ``(id, {field: value})``; a JSON document. ``start`` is the index of the first item (list and
    sorted-set ranks; 0 for the others). ``next_cursor`` goes to :func:`read_page` for the next
    page; None when this page is the last (always, for a whole value)."""

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


def _read_call(target: Any, key: Arg, key_type: str, cursor: Cursor | None, count: int | None
               ) -> tuple[Any, Callable[[Any], ValuePage]]:
    """The one per-type reader. ``target`` is a client (the call returns the reply, or an awaitable
    of it) or a pipeline (the call queues the read; its reply comes from ``exec()``). Returns the
    call's result and the function that turns the reply into a :class:`ValuePage`.

    ``count`` items per page: HSCAN / SSCAN (a COUNT hint), LRANGE / ZRANGE by rank, XRANGE by id;
    ``count=None`` reads the whole value: HGETALL, SMEMBERS, LRANGE / ZRANGE to -1 and XRANGE to
    ``+`` (these three from ``cursor`` on, when given). A string (GET) or JSON document (JSON.GET)
    is always whole."""
    if count is not None and count < 1:
        raise InvalidArgument("count", f"a page needs a count >= 1 (None: the whole value), got {count!r}")
    if key_type in ("hash", "set") and count is None:
        call = target.hgetall(key) if key_type == "hash" else target.smembers(key)
        return call, lambda r: ValuePage(key, key_type, r if key_type == "hash" else list(r))
    if key_type in ("hash", "set"):
        at = int(cursor or 0)
        call = target.hscan(key, at, count=count) if key_type == "hash" else target.sscan(key, at, count=count)
        return call, lambda r: ValuePage(key, key_type, r[1] if key_type == "hash" else list(r[1]),
                                         0, _next_int(r[0]))
    if key_type in ("list", "zset"):
        at = int(cursor or 0)
        stop = -1 if count is None else at + count - 1
        call = target.lrange(key, at, stop) if key_type == "list" else target.zrange(key, at, stop, withscores=True)
        return call, lambda r: ValuePage(key, key_type, r, at, at + count if count and len(r) == count else None)
    if key_type == "stream":
        # the next page starts after the last id read: "(" makes XRANGE's start exclusive
        call = target.xrange(key, "-" if cursor is None else f"({cursor}", "+", count=count)

        def stream_page(r: Any) -> ValuePage:
            last = r[-1][0] if count and len(r) == count else None
            return ValuePage(key, key_type, r, 0, last.decode() if isinstance(last, bytes) else last)
        return call, stream_page
    if key_type == "string":
        return target.get(key), lambda r: ValuePage(key, key_type, r)
    if key_type == "ReJSON-RL":
        return target.json_get(key, "$"), lambda r: ValuePage(key, key_type, r)
    raise InvalidArgument("key_type", f"no value to read for type {key_type!r} of key {key!r}")


def queue_read(pipe: BasePipeline, key: Arg, key_type: str, *, cursor: Cursor | None = None,
               count: int | None = None) -> Callable[[Any], ValuePage]:
    """Queue the read of ``key``'s value (whole by default, or one page of ``count``) on a pipeline;
    returns the function that turns its reply (from ``pipe.exec()``) into the :class:`ValuePage`.
    Check the reply for an error (a :class:`~svckit.errors.SvcError` in its slot) first."""
    return _read_call(pipe, key, key_type, cursor, count)[1]


def read_page(kv: KV[Any], key: Arg, key_type: str | None = None, *, cursor: Cursor | None = None,
              count: int | None = DEFAULT_PAGE) -> ValuePage:
    """One page of ``key``'s value: HSCAN / SSCAN (a COUNT hint: a page may hold more or fewer),
    LRANGE / ZRANGE by rank and XRANGE by id (exactly ``count``), or the whole string / JSON
    document; ``count=None`` reads the whole value of any type as one page. ``key_type`` is read
    with TYPE when not given; a missing key is an empty page."""
    key_type = key_type or kv.type(key)
    if key_type == "none":
        return ValuePage(key, key_type, None)
    call, decode = _read_call(kv, key, key_type, cursor, count)
    return decode(call)


async def aread_page(kv: AsyncKV[Any], key: Arg, key_type: str | None = None, *, cursor: Cursor | None = None,
                     count: int | None = DEFAULT_PAGE) -> ValuePage:
    """:func:`read_page` for :class:`~svckit.kv.AsyncKV`."""
    key_type = key_type or await kv.type(key)
    if key_type == "none":
        return ValuePage(key, key_type, None)
    call, decode = _read_call(kv, key, key_type, cursor, count)
    return decode(await call)


__all__ = [
    "DEFAULT_PAGE",
    "SCAN_COUNT",
    "KeyInfo",
    "KeyScan",
    "ValuePage",
    "adescribe_keys",
    "aread_page",
    "ascan_keys",
    "awalk_keys",
    "describe_keys",
    "queue_read",
    "read_page",
    "scan_keys",
    "walk_keys",
]
