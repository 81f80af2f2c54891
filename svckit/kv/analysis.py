"""Keyspace analysis: memory and key count per key prefix, biggest keys per type, TTL distribution,
keys without expiry and big-value warnings -- sampled (with stated error) or complete.

::

    from svckit.kv import KV, analyze_keyspace
    report = analyze_keyspace(kv, "*", sample=10_000, seed=7)   # sample=None: every key
    report.summary()            # "sampled 10,000 of 1,000,000 keys (1.0%) ..."
    report.by_prefix            # level, prefix, keys, keys ±, memory, memory ±, share, sampled
    report.biggest, report.ttl, report.no_expiry, report.warnings, report.by_type

How the pass works (one design for both modes):

1. SCAN walks every key matching ``pattern`` (``scan_count`` per call: :func:`~svckit.kv.walk_keys`,
   without its de-duplication, so memory stays flat). Key *names* are cheap, so the
   number of matching keys ``N`` and the key count of every prefix are exact in both modes
   (``keys ±`` is 0). Only names are kept per prefix, as counters.
2. The keys to describe: every key (complete pass, described batch by batch while scanning, so
   memory stays bounded by the batch and the aggregates), or ``n = sample`` keys (sampled pass) in
   two strata. *Small prefixes* are described whole: the keys whose own (deepest) prefix holds at
   most :data:`SMALL_PREFIX` keys, as long as they are at most a tenth of the sample (the rarest
   first). A lone ``reports:2025`` or ``queue:backlog`` is often the biggest value of all; a random
   sample misses it most of the time, and then the memory of every prefix above it is
   underestimated by its size while the stated error, computed from the keys the sample saw, is
   small ("1.3 MiB ± 94 KiB" for 1.7 MiB). The rest of ``n`` is a uniform random sample, without
   replacement, of the other keys: a *bottom-k* sample, each key getting a keyed hash
   ``blake2b(key, key=seed)`` and the keys with the smallest hashes kept (a heap of ``n``). That is
   a simple random sample, independent of SCAN order, so the same ``seed`` over the same keyspace
   gives the same sample on every run and every server.
3. Each described key costs one call of the describe script (TYPE, PTTL, MEMORY USAGE and its
   length: :func:`~svckit.kv.describe_keys`), ``batch`` keys (1,000) per request. The requests go
   side by side (:class:`svckit._inflight.InFlight`): beside the walk in a complete pass, after it
   in a sampled one, and DBSIZE goes beside the first SCAN call, so far from the service the pass
   takes about its chain of SCAN calls.

Why SCAN + sample rather than RANDOMKEY: RANDOMKEY cannot honour a pattern, samples with replacement,
cannot be seeded (its randomness is the server's), and Redis's pick is only approximately uniform.
The SCAN pass costs one walk over the key names (about 1/5 of the commands of a complete pass).

The estimates and their error (sampled pass) are :mod:`svckit.kv.estimates`'s over the random
stratum, plus the exact figures of the small prefixes: every ``±`` is the half-width of a normal 95%
interval; a prefix with fewer than 2 sampled keys has no stated error (``±`` is NA), one with none
has no memory estimate. A big value in a big prefix is still found only by a complete pass (or by
chance): :meth:`KeyspaceReport.summary` says so.

The complete pass states ``±`` as 0. ``biggest`` and ``warnings`` of a sampled pass list what the
sample saw; :meth:`KeyspaceReport.summary` says so and estimates how many big values there are.

Memory comes from MEMORY USAGE. The fakeredis backend does not implement it (describe_keys gives
None): then ``report.memory_available`` is False, memory columns are NA and ``biggest`` ranks by
length. A key SCAN returns twice (possible only while Redis resizes its table during the pass, e.g.
when the keyspace grows meanwhile) is counted twice, as in ``redis-cli --bigkeys``; a key that expired
between SCAN and describe is counted in the names but left out of the described figures
(``report.vanished``).
"""

from __future__ import annotations

import hashlib
import heapq
import math
import time
from collections import Counter
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from svckit._inflight import InFlight, batches
from svckit._progress import Cancel, ProgressArg, Reporter, is_cancelled
from svckit._units import mark
from svckit.errors import InvalidArgument
from svckit.kv.analysis_report import KeyspaceReport
from svckit.kv.estimates import (
    SMALL_PREFIX,
    WHOLE_SHARE,
    Stats,
    domain_estimate,
    share_estimate,
    total_estimate,
)
from svckit.kv.formats import format_bytes
from svckit.kv.keyspace import DESCRIBE_BATCH, KeyInfo, KeyScan, describe_keys, walk_keys

if TYPE_CHECKING:

    from svckit.kv.client import KV

NO_PREFIX = "(no prefix)"
#: TTL buckets: label, upper bound in ms (exclusive); "no expiry" is PTTL -1
TTL_BUCKETS: tuple[tuple[str, float], ...] = (
    ("< 1 min", 60_000), ("< 1 h", 3_600_000), ("< 1 day", 86_400_000), ("< 1 week", 604_800_000),
    ("≥ 1 week", math.inf),
)
NO_EXPIRY = "no expiry"
TTL_LABELS: tuple[str, ...] = (NO_EXPIRY, *(label for label, _ in TTL_BUCKETS))
DEFAULT_BIG_VALUE_BYTES = 1024 * 1024
DEFAULT_BIG_LENGTH = 10_000
COLLECTION_TYPES = frozenset({"hash", "list", "set", "zset", "stream"})




def ttl_bucket(pttl: int | None) -> str:
    """The TTL bucket of a PTTL reply (ms; -1 = no expiry)."""
    if pttl is None or pttl < 0:
        return NO_EXPIRY
    for label, bound in TTL_BUCKETS:
        if pttl < bound:
            return label
    return TTL_BUCKETS[-1][0]


def key_prefixes(key: str, delimiter: str, depth: int) -> list[str]:
    """The folders a key sits in, outermost first, at most ``depth``: ``a:b:c`` -> ``["a", "a:b"]``.
    A key without the delimiter is in :data:`NO_PREFIX` (level 1 only); the last segment (the key's
    own name) is never a folder."""
    parts = key.split(delimiter, depth)
    if len(parts) == 1:
        return [NO_PREFIX]
    return [delimiter.join(parts[:level]) for level in range(1, min(depth, len(parts) - 1) + 1)]


def sample_rank(key: Any, salt: bytes) -> int:
    """The key's position in the seeded random order: a keyed 64-bit hash (bottom-k sampling)."""
    data = key if isinstance(key, bytes) else str(key).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8, key=salt).digest(), "big")


@dataclass
class _Tally:
    """The aggregates of one stratum of described keys: per prefix, type and TTL bucket, and all."""

    prefix: dict[str, Stats] = field(default_factory=dict)
    type: dict[str, Stats] = field(default_factory=dict)
    ttl: Counter[str] = field(default_factory=Counter)
    all: Stats = field(default_factory=Stats)

    def add(self, prefixes: list[str], key_type: str, ttl: str, memory: int) -> None:
        self.all.add(memory)
        for prefix in prefixes:
            stats = self.prefix.get(prefix)
            if stats is None:
                stats = self.prefix[prefix] = Stats()
            stats.add(memory)
        stats = self.type.get(key_type)
        if stats is None:
            stats = self.type[key_type] = Stats()
        stats.add(memory)
        self.ttl[ttl] += 1


@dataclass
class KeyspaceAnalysis:
    """The sans-I/O core of :func:`analyze_keyspace`: feed it SCAN batches and key descriptions,
    then ask for the :class:`KeyspaceReport`.

    ``add_names(keys)`` counts names and returns the keys to describe now (complete pass: all of
    them); ``sample_keys()`` gives the sample to describe once SCAN ended (sampled pass);
    ``add_infos(infos)`` takes descriptions; ``report()`` builds the frames."""

    pattern: str = "*"
    sample: int | None = 10_000
    delimiter: str = ":"
    depth: int = 2
    top: int = 10
    big_value_bytes: int = DEFAULT_BIG_VALUE_BYTES
    big_length: int = DEFAULT_BIG_LENGTH
    seed: int = 0
    total_keys: int = 0
    described: int = 0
    vanished: int = 0
    memory_known: int = 0
    prefix_keys: Counter[str] = field(default_factory=Counter)
    _salt: bytes = field(default=b"", repr=False)
    _hasher: Any = field(default=None, repr=False)
    _heap: list[tuple[int, Any]] = field(default_factory=list, repr=False)
    _in_heap: set[Any] = field(default_factory=set, repr=False)
    #: keys per deepest prefix (a key's stratum), and the names of those holding few keys so far
    _own: Counter[str] = field(default_factory=Counter, repr=False)
    _small: dict[str, list[Any]] = field(default_factory=dict, repr=False)
    _small_held: int = 0
    _small_overflow: bool = False
    #: the keys described whole (sampled pass) and how many there are per prefix
    _whole: set[Any] = field(default_factory=set, repr=False)
    _whole_in: Counter[str] = field(default_factory=Counter, repr=False)
    _random: _Tally = field(default_factory=_Tally, repr=False)
    _exact: _Tally = field(default_factory=_Tally, repr=False)
    _biggest: dict[str, list[tuple[float, int, str, KeyInfo]]] = field(default_factory=dict, repr=False)
    _warnings: list[tuple[KeyInfo, str]] = field(default_factory=list, repr=False)
    _order: int = 0

    def __post_init__(self) -> None:
        if self.sample is not None and self.sample < 2:
            raise InvalidArgument("sample", f"a sample needs at least 2 keys (or None for every key), got {self.sample!r}")
        if self.depth < 1:
            raise InvalidArgument("depth", f"depth counts prefix levels and must be >= 1, got {self.depth!r}")
        if not self.delimiter:
            raise InvalidArgument("delimiter", "the prefix delimiter cannot be empty")
        self._salt = self.seed.to_bytes(16, "big", signed=True)
        self._hasher = hashlib.blake2b(digest_size=8, key=self._salt)

    @property
    def complete(self) -> bool:
        """True when every key is (to be) described: no sample size, or the sample holds them all."""
        return self.sample is None or self.total_keys <= self.sample

    def add_names(self, keys: Iterable[Any]) -> list[Any]:
        """Count a SCAN batch; the keys to describe right away (all of them in a complete pass)."""
        keys = list(keys)
        # the per-key loops are the sampled pass's CPU cost on a big keyspace: kept inline
        prefix_keys, delimiter, depth = self.prefix_keys, self.delimiter, self.depth
        own, keep = self._own, self.sample is not None
        for key in keys:
            parts = _text(key).split(delimiter, depth)
            if len(parts) == 1:
                prefix = NO_PREFIX
                prefix_keys[prefix] += 1
            else:
                prefix = parts[0]
                prefix_keys[prefix] += 1
                for level in range(1, min(depth, len(parts) - 1)):
                    prefix = prefix + delimiter + parts[level]
                    prefix_keys[prefix] += 1
            own[prefix] += 1
            if keep and own[prefix] <= SMALL_PREFIX + 1:  # most keys are in big prefixes: no call
                self._hold_small(prefix, own[prefix], key)
        self.total_keys += len(keys)
        if self.sample is None:
            return keys
        heap, in_heap, size, hasher = self._heap, self._in_heap, self.sample, self._hasher
        from_bytes = int.from_bytes
        for key in keys:
            if key in in_heap:
                continue
            h = hasher.copy()  # sample_rank(), without re-keying blake2b for every key
            h.update(key if isinstance(key, bytes) else str(key).encode())
            rank = -from_bytes(h.digest(), "big")  # a max-heap of the n smallest ranks
            if len(heap) < size:
                heapq.heappush(heap, (rank, key))
                in_heap.add(key)
            elif rank > heap[0][0]:
                _, dropped = heapq.heapreplace(heap, (rank, key))
                in_heap.discard(dropped)
                in_heap.add(key)
        return []

    def _hold_small(self, prefix: str, count: int, key: Any) -> None:
        """Keep the names of a prefix while it holds at most SMALL_PREFIX keys (memory: a few times
        the sample at most; beyond that, no prefix is described whole)."""
        if self._small_overflow:
            return
        if count <= SMALL_PREFIX:
            self._small.setdefault(prefix, []).append(key)
            self._small_held += 1
            if self._small_held > 4 * (self.sample or 0) + 1000:
                self._small_overflow, self._small = True, {}
        elif count == SMALL_PREFIX + 1:
            self._small_held -= len(self._small.pop(prefix, ()))

    def sample_keys(self) -> list[Any]:
        """The keys to describe in a sampled pass, in a stable order: the small prefixes' keys
        (described whole, the rarest prefixes first, a tenth of the sample at most), then the random
        sample of the other keys that makes up ``sample`` keys in all."""
        budget = int((self.sample or 0) * WHOLE_SHARE)
        whole: list[Any] = []
        for prefix, names in sorted(self._small.items(), key=lambda item: (len(item[1]), item[0])):
            if len(whole) + len(names) > budget:
                break
            whole.extend(names)
            for level in _levels(prefix, self.delimiter):
                self._whole_in[level] += len(names)
        self._whole = set(whole)
        random_part = [key for _, key in sorted(self._heap, reverse=True) if key not in self._whole]
        return whole + random_part[: max((self.sample or 0) - len(whole), 0)]

    def add_infos(self, infos: Iterable[KeyInfo]) -> None:
        """Aggregate key descriptions (streaming: only counters and the top lists are kept)."""
        for info in infos:
            if info.type in (None, "none") or info.pttl == -2:
                self.vanished += 1
                continue
            memory = info.memory if isinstance(info.memory, int) else None
            if memory is not None:
                self.memory_known += 1
            tally = self._exact if info.key in self._whole else self._random
            self.described += 1
            tally.add(key_prefixes(_text(info.key), self.delimiter, self.depth), info.type,
                      ttl_bucket(info.pttl), memory or 0)
            self._rank_biggest(info.type, memory, info)
            self._check_big(info, memory)

    def _rank_biggest(self, key_type: str, memory: int | None, info: KeyInfo) -> None:
        size = float(memory) if memory is not None else float(info.length or 0)
        heap = self._biggest.setdefault(key_type, [])
        self._order += 1
        item = (size, -self._order, _text(info.key), info)
        if len(heap) < self.top:
            heapq.heappush(heap, item)
        elif item[:2] > heap[0][:2]:
            heapq.heapreplace(heap, item)

    def _check_big(self, info: KeyInfo, memory: int | None) -> None:
        notes = []
        if memory is not None and memory >= self.big_value_bytes:
            notes.append(f"{format_bytes(memory)} ≥ {format_bytes(self.big_value_bytes)}")
        if info.type in COLLECTION_TYPES and (info.length or 0) >= self.big_length:
            notes.append(f"{info.length:,} elements ≥ {self.big_length:,}")
        if notes:
            advice = "split it or read it in pages" if info.type in COLLECTION_TYPES else "consider splitting it"
            self._warnings.append((info, "; ".join(notes) + f": one read moves it all, {advice}"))

    def _big_values(self, exact: bool, n: int, population: int) -> float:
        """How many big values there are: those found, the random sample's scaled to its stratum."""
        found = len(self._warnings)
        if exact or not n:
            return float(found)
        known = sum(info.key in self._whole for info, _ in self._warnings)
        return known + (found - known) * population / n

    # -- the report ---------------------------------------------------------------------------

    def report(self, seconds: float = 0.0) -> KeyspaceReport:
        import pandas as pd

        exact = self.complete
        rand, whole = self._random, self._exact
        # the random stratum: the keys not described whole, and its sample
        n = self.described - whole.all.count
        population = max(self.total_keys - (self.vanished if exact else len(self._whole)), 0)
        memory_ok = self.memory_known > 0

        def plus(estimate: tuple[float, float], exact_part: float) -> tuple[float, float]:
            return estimate[0] + exact_part, estimate[1]

        total_mem, total_mem_pm = plus(total_estimate(population, n, rand.all, exact), whole.all.mem)

        rows = []
        for prefix, keys in self.prefix_keys.items():
            level = 1 if prefix == NO_PREFIX else prefix.count(self.delimiter) + 1
            stats, known = rand.prefix.get(prefix), whole.prefix.get(prefix)
            mem, mem_pm = plus(domain_estimate(keys - self._whole_in[prefix], stats, exact),
                               known.mem if known else 0.0)
            parent = "" if level == 1 else prefix.rsplit(self.delimiter, 1)[0]
            rows.append({"level": level, "prefix": prefix, "parent": parent, "keys": keys, "keys ±": 0,
                         "memory": mem, "memory ±": mem_pm,
                         "sampled": (stats.count if stats else 0) + (known.count if known else 0)})
        by_prefix = pd.DataFrame(rows, columns=["level", "prefix", "parent", "keys", "keys ±", "memory",
                                                "memory ±", "sampled"])
        by_prefix["share"] = by_prefix["memory"] / total_mem if total_mem else math.nan
        if not memory_ok:
            by_prefix[["memory", "memory ±", "share"]] = math.nan
        by_prefix = by_prefix.sort_values(["level", "memory", "keys"], ascending=[True, False, False],
                                          na_position="last", kind="stable").reset_index(drop=True)
        by_prefix = by_prefix.astype({"level": "int64", "keys": "int64", "keys ±": "int64", "sampled": "int64",
                                      "memory": "float64", "memory ±": "float64", "share": "float64"})

        type_rows = []
        empty = Stats()
        for key_type in sorted(rand.type.keys() | whole.type.keys()):
            stats, known = rand.type.get(key_type, empty), whole.type.get(key_type, empty)
            count, count_pm = plus(share_estimate(population, n, stats.count, exact), known.count)
            mem, mem_pm = plus(total_estimate(population, n, stats, exact), known.mem)
            type_rows.append({"type": key_type, "keys": count, "keys ±": count_pm, "memory": mem,
                              "memory ±": mem_pm, "sampled": stats.count + known.count})
        by_type = pd.DataFrame(type_rows, columns=["type", "keys", "keys ±", "memory", "memory ±", "sampled"])
        by_type = by_type.sort_values("memory", ascending=False, kind="stable").reset_index(drop=True)
        if not memory_ok:
            by_type[["memory", "memory ±"]] = math.nan

        ttl_rows = []
        everyone = population + (0 if exact else len(self._whole))
        for label in TTL_LABELS:
            seen, counted = rand.ttl.get(label, 0), whole.ttl.get(label, 0)
            count, count_pm = plus(share_estimate(population, n, seen, exact), counted)
            ttl_rows.append({"ttl": label, "keys": count, "keys ±": count_pm, "sampled": seen + counted})
        ttl = pd.DataFrame(ttl_rows, columns=["ttl", "keys", "keys ±", "sampled"])
        ttl["share"] = ttl["keys"] / everyone if everyone else math.nan
        ttl["ttl"] = pd.Categorical(ttl["ttl"], categories=list(TTL_LABELS), ordered=True)
        no_exp = ttl.iloc[0]
        no_expiry = pd.DataFrame({"keys": [no_exp["keys"]], "keys ±": [no_exp["keys ±"]], "share": [no_exp["share"]],
                                  "share ±": [no_exp["keys ±"] / everyone if everyone else math.nan]})

        big_rows = []
        for key_type, heap in self._biggest.items():
            for rank, (_, _, key, info) in enumerate(sorted(heap, reverse=True), 1):
                big_rows.append({"type": key_type, "rank": rank, "key": key,
                                 "memory": info.memory if memory_ok else None, "length": info.length,
                                 "ttl_ms": info.pttl if (info.pttl or -1) >= 0 else None})
        biggest = pd.DataFrame(big_rows, columns=["type", "rank", "key", "memory", "length", "ttl_ms"])
        biggest = biggest.astype({"memory": "Int64", "length": "Int64", "ttl_ms": "Int64"})

        warn_rows = [{"key": _text(info.key), "type": info.type, "bytes": info.memory, "length": info.length,
                      "note": note} for info, note in self._warnings]
        warnings = pd.DataFrame(warn_rows, columns=["key", "type", "bytes", "length", "note"])
        warnings = warnings.astype({"bytes": "Int64", "length": "Int64"})
        if len(warnings):
            warnings = warnings.sort_values("bytes", ascending=False, na_position="last",
                                            kind="stable").reset_index(drop=True)

        if exact:  # counted, not estimated: whole numbers
            by_type = by_type.astype({"keys": "int64", "keys ±": "int64"})
            ttl = ttl.astype({"keys": "int64", "keys ±": "int64"})
            no_expiry = no_expiry.astype({"keys": "int64", "keys ±": "int64"})
        # displayed readably in a notebook (svckit.display), each number in the widget's unit
        counts = {"keys": "count", "keys ±": "count", "sampled": "count"}
        memory = {"memory": "bytes", "memory ±": "bytes"}
        mark(by_prefix, **counts, **memory, share="share")
        mark(by_type, **counts, **memory)
        mark(ttl, **counts, share="share")
        mark(no_expiry, **counts, share="share", **{"share ±": "share"})
        mark(biggest, memory="bytes", length="count", ttl_ms="ms")
        mark(warnings, bytes="bytes", length="count")
        return KeyspaceReport(
            pattern=self.pattern, complete=exact, total_keys=everyone, sample_size=self.described, seed=self.seed,
            vanished=self.vanished, memory_available=memory_ok, memory=total_mem if memory_ok else math.nan,
            memory_pm=total_mem_pm if memory_ok else math.nan, delimiter=self.delimiter, depth=self.depth,
            big_value_bytes=self.big_value_bytes, big_length=self.big_length, seconds=seconds,
            by_prefix=by_prefix, by_type=by_type, ttl=ttl, no_expiry=no_expiry, biggest=biggest,
            warnings=warnings, whole_keys=0 if exact else whole.all.count,
            big_values=self._big_values(exact, n, population),
        )


def _levels(prefix: str, delimiter: str) -> list[str]:
    """A prefix and the prefixes above it: ``a:b`` -> ``["a", "a:b"]``."""
    if prefix == NO_PREFIX:
        return [prefix]
    parts = prefix.split(delimiter)
    return [delimiter.join(parts[:level]) for level in range(1, len(parts) + 1)]


def _text(key: Any) -> str:
    return key.decode("utf-8", "backslashreplace") if isinstance(key, bytes) else str(key)


def analyze_keyspace(kv: KV[Any], pattern: str = "*", *, sample: int | None = 10_000, delimiter: str = ":",
                     depth: int = 2, top: int = 10, big_value_bytes: int = DEFAULT_BIG_VALUE_BYTES,
                     big_length: int = DEFAULT_BIG_LENGTH, seed: int = 0, batch: int = DESCRIBE_BATCH,
                     scan_count: int = 5000, progress: ProgressArg = True, cancel: Cancel = None) -> KeyspaceReport:
    """Analyse the keys matching ``pattern``: a sampled pass of ``sample`` keys (default), or with
    ``sample=None`` a complete pass describing every key. See the module docstring for what the
    estimates are and how their error is computed.

    The counting pass is :func:`~svckit.kv.walk_keys` with ``dedupe=False`` (memory stays flat
    however many keys there are; a rare repeat is counted twice, see the module docstring).
    ``progress`` (:mod:`svckit._progress`) reports phase ``"scan"`` (keys walked of DBSIZE, unit
    ``"keys"``, note ``"1,234 matching"``), then in a sampled pass ``"describe"`` (keys described of
    the sample). ``cancel`` stops the pass between two requests (those already sent finish) and
    returns the report of what it reached, with ``report.cancelled`` True (:mod:`svckit._progress`).
    """
    if batch < 1:
        raise InvalidArgument("batch", f"batch is keys per pipeline and must be >= 1, got {batch!r}")
    started = time.perf_counter()
    core = KeyspaceAnalysis(pattern, sample, delimiter, depth, top, big_value_bytes, big_length, seed)

    # Key names are walked and described as bytes: a name that is not UTF-8 would come back from a
    # decoding client with U+FFFD in it, which names another key (and would count as vanished).
    names = kv.as_bytes()
    scan = KeyScan(pattern, count=scan_count)
    # Far from the service every request is a round trip: DBSIZE goes beside the first SCAN call,
    # and the describing pipelines beside the walk (complete pass) or side by side after it (the
    # sample is known only once the walk ends), so the pass takes about its SCAN chain.
    with InFlight() as beside:
        dbsize = beside.submit(kv.dbsize)
        steps = walk_keys(names, scan, total=dbsize.result, cancel=cancel,
                          progress=progress, dedupe=False, keep=False)
        with closing(steps):
            for _, keys in steps:
                for chunk in batches(core.add_names(keys), batch):
                    if is_cancelled(cancel):
                        scan.cancelled = True
                        break  # and the walk stops before its next call
                    beside.submit(describe_keys, names, chunk, then=core.add_infos)
    cancelled = scan.cancelled
    todo = core.sample_keys() if sample is not None and not cancelled else []
    with Reporter(progress) as report, InFlight() as beside:
        described, requests = 0, scan.calls + 1  # the SCAN calls and DBSIZE

        def took(infos: list[KeyInfo]) -> None:
            nonlocal described, requests
            core.add_infos(infos)
            described, requests = described + len(infos), requests + 1
            report("describe", described, len(todo), unit="keys", round_trips=requests)

        for chunk in batches(todo, batch):
            if is_cancelled(cancel):
                cancelled = True
                break
            beside.submit(describe_keys, names, chunk, then=took)
    result = core.report(time.perf_counter() - started)
    result.cancelled = cancelled
    return result


__all__ = [
    "NO_EXPIRY",
    "NO_PREFIX",
    "TTL_LABELS",
    "KeyspaceAnalysis",
    "KeyspaceReport",
    "analyze_keyspace",
    "key_prefixes",
    "sample_rank",
    "ttl_bucket",
]
