"""A live profiler over the MONITOR stream: commands per second, command mix, hottest keys and key
prefixes, in bounded memory.

::

    from svckit.kv import KV, MonitorProfile, profile_monitor
    profile = profile_monitor(kv, seconds=10)         # read kv.monitor() for 10 s
    profile.snapshot().commands_per_second
    profile.frames()["keys"]                          # key, count, error, share

:class:`MonitorProfile` is sans-I/O: ``feed(event)`` takes a :class:`~svckit.kv.MonitorEvent` (or
anything with ``time``, ``command`` and ``args``), so it is tested on a known list of events and
fed by :func:`profile_monitor` or the :class:`~svckit.widgets.MonitorProfiler` widget alike.

Bounded memory, whatever the traffic: key and prefix counts are *Space-Saving* heavy hitters
(Metwally et al. 2005) with a fixed number of counters (``capacity``, default 1,000 keys and 1,000
prefixes, 256 command names). While fewer distinct items than counters were seen the counts are
exact (``error`` 0); beyond that each counter's true count lies in ``[count - error, count]``, and
every item seen more than ``events / capacity`` times is guaranteed to hold a counter. Keys are
cut to ``max_key_length`` characters before counting. The per-second rate keeps the last
``history`` seconds only. So the state is at most about ``(2 x 1,000 + 256) x (key + ~150 bytes)``
plus ``history`` integers: well under 2 MB with keys of 200 characters.

Which arguments are keys: :func:`command_keys` knows the key positions of the commands the KV
interface runs (first argument for most; all arguments of DEL / EXISTS / MGET / ...; every other one
of MSET; the keys after ``numkeys`` of EVAL / FCALL / ZUNION ...; the STREAMS half of XREAD);
commands without keys (PING, DBSIZE, SCAN, FLUSHDB, PUBLISH, ...) count in the mix only.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import deque
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from svckit._progress import Cancel, is_cancelled
from svckit._units import mark
from svckit.errors import InvalidArgument
from svckit.kv.analysis import key_prefixes

if TYPE_CHECKING:
    import pandas as pd

    from svckit.kv.client import KV, Monitor

# -- key positions --------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: commands whose arguments hold no key
NO_KEYS = _words(
    "PING ECHO DBSIZE INFO TIME LASTSAVE COMMAND LOLWUT FLUSHDB FLUSHALL SCAN KEYS RANDOMKEY MULTI EXEC "
    "DISCARD UNWATCH PUBLISH SPUBLISH PUBSUB SUBSCRIBE PSUBSCRIBE UNSUBSCRIBE PUNSUBSCRIBE CONFIG ACL "
    "SAVE BGSAVE BGREWRITEAOF SLOWLOG LATENCY SWAPDB SELECT AUTH HELLO CLIENT QUIT RESET SCRIPT FUNCTION "
    "MONITOR WAIT WAITAOF READONLY READWRITE CLUSTER SHUTDOWN DEBUG")
#: every argument is a key
ALL_KEYS = _words(
    "DEL UNLINK EXISTS MGET TOUCH WATCH SINTER SUNION SDIFF SINTERSTORE SUNIONSTORE SDIFFSTORE PFCOUNT "
    "PFMERGE")
#: the first two arguments are keys
TWO_KEYS = _words("RENAME RENAMENX COPY SMOVE LMOVE RPOPLPUSH BLMOVE BRPOPLPUSH GEOSEARCHSTORE "
                  "ZRANGESTORE")
#: ``numkeys key ...`` after this many leading arguments
NUMKEYS_AT = {"EVAL": 1, "EVALSHA": 1, "EVAL_RO": 1, "EVALSHA_RO": 1, "FCALL": 1, "FCALL_RO": 1,
              "ZUNION": 0, "ZINTER": 0, "ZDIFF": 0, "SINTERCARD": 0, "ZINTERCARD": 0, "LMPOP": 0,
              "ZMPOP": 0, "BLMPOP": 1, "BZMPOP": 1}
#: destination key, then ``numkeys key ...``
STORE_NUMKEYS = frozenset({"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"})


def command_keys(command: str, args: Sequence[str]) -> list[str]:
    """The key arguments of one command as MONITOR shows it (``command`` in any case)."""
    name = command.upper()
    if not args or name in NO_KEYS:
        return []
    if name in ALL_KEYS:
        return list(args)
    if name in ("MSET", "MSETNX"):
        return list(args[0::2])
    if name == "JSON.MSET":
        return list(args[0::3])
    if name == "JSON.MGET":
        return list(args[:-1])
    if name in TWO_KEYS:
        return list(args[:2])
    if name == "BITOP":
        return list(args[1:])
    if name in ("OBJECT", "MEMORY", "XINFO"):
        return list(args[1:2])
    if name in ("XREAD", "XREADGROUP"):
        upper = [a.upper() for a in args]
        if "STREAMS" not in upper:
            return []
        rest = args[upper.index("STREAMS") + 1:]
        return list(rest[: len(rest) // 2])
    if name in NUMKEYS_AT or name in STORE_NUMKEYS:
        at = 1 if name in STORE_NUMKEYS else NUMKEYS_AT[name]
        head = list(args[:1]) if name in STORE_NUMKEYS else []
        try:
            count = int(args[at])
        except (IndexError, ValueError):
            return head
        return head + list(args[at + 1: at + 1 + max(count, 0)])
    return [args[0]]


# -- heavy hitters ------------------------------------------------------------------------------


class SpaceSaving:
    """Top-k counting in ``capacity`` counters (Space-Saving). Exact while at most ``capacity``
    distinct items were added; afterwards an item's true count is in ``[count - error, count]``."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise InvalidArgument("capacity", f"Space-Saving needs at least one counter, got {capacity!r}")
        self.capacity = capacity
        self.counts: dict[Hashable, int] = {}
        self.errors: dict[Hashable, int] = {}
        # one (count as pushed, item) per monitored item; counts only grow, so an entry whose count
        # is current is the true minimum
        self._heap: list[tuple[int, int, Hashable]] = []
        self._order = 0
        self.total = 0

    def __len__(self) -> int:
        return len(self.counts)

    def add(self, item: Hashable, weight: int = 1) -> None:
        self.total += weight
        counts = self.counts
        if item in counts:
            counts[item] += weight
            return
        if len(counts) < self.capacity:
            counts[item] = weight
            self.errors[item] = 0
            self._push(weight, item)
            return
        heap = self._heap
        while True:
            stored, _, victim = heapq.heappop(heap)
            current = counts[victim]
            if current == stored:
                break
            self._push(current, victim)
        del counts[victim], self.errors[victim]
        counts[item] = stored + weight
        self.errors[item] = stored
        self._push(stored + weight, item)

    def _push(self, count: int, item: Hashable) -> None:
        self._order += 1  # ties broken by age: items never compared
        heapq.heappush(self._heap, (count, self._order, item))

    def top(self, n: int | None = None) -> list[tuple[Hashable, int, int]]:
        """(item, count, error), highest count first."""
        ranked = sorted(self.counts.items(), key=lambda kv: -kv[1])
        return [(item, count, self.errors[item]) for item, count in ranked[:n]]


# -- the profile --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfileSnapshot:
    """The profile at one moment: totals, the rolling rate and the frames.

    ``rate`` has one row per whole second of the time profiled (a second with no command is a 0),
    up to the second of ``ended``; ``commands_per_second`` is the mean of its last ``rate_seconds``
    rows (at most ``window``), so the figure and the headline say the same thing."""

    events: int
    keyed_events: int
    seconds: float
    commands_per_second: float
    window: float
    distinct_keys_exact: bool
    rate: pd.DataFrame
    commands: pd.DataFrame
    keys: pd.DataFrame
    prefixes: pd.DataFrame
    #: how many seconds ``commands_per_second`` averages: the window, or the time profiled if shorter
    rate_seconds: int = 0
    #: the unix time the snapshot reads up to (the stop, for a stopped profile)
    ended: float | None = None
    #: the unix time the profile was stopped, or None while it runs
    stopped_at: float | None = None


class MonitorProfile:
    """Aggregate monitor events (sans-I/O; see the module docstring for the memory bound).

    ``window``: seconds the commands/s figure averages over; ``history``: seconds of per-second
    counts kept for the rate plot; ``capacity``: counters for keys and for prefixes;
    ``prefix_depth``: segments of a key (split on ``delimiter``) that make its prefix."""

    def __init__(self, *, window: float = 10.0, history: int = 300, capacity: int = 1000,
                 command_capacity: int = 256, delimiter: str = ":", prefix_depth: int = 1,
                 max_key_length: int = 200) -> None:
        if window <= 0 or history < 1:
            raise InvalidArgument("window", f"window and history must be positive, got {window!r}, {history!r}")
        self.window = window
        self.history = history
        self.delimiter = delimiter
        self.prefix_depth = prefix_depth
        self.max_key_length = max_key_length
        self.commands = SpaceSaving(command_capacity)
        self.keys = SpaceSaving(capacity)
        self.prefixes = SpaceSaving(capacity)
        self.per_second: deque[list[int]] = deque(maxlen=history)  # [unix second, count]
        self.events = 0
        self.keyed_events = 0
        self.first_time: float | None = None
        self.last_time: float | None = None
        self.started_at: float | None = None  # when reading began (``start``): idle seconds count as 0
        self.stopped_at: float | None = None  # when reading ended (``stop``): the rate is read up to it
        self.cancelled = False  # :func:`profile_monitor` ended by its ``cancel`` (svckit._progress)
        self._lock = threading.Lock()  # fed from a reader thread, read from a refresh thread

    def feed(self, event: Any) -> None:
        """Count one event: its command, its keys and their prefixes, and its second."""
        stamp = event.time.timestamp() if isinstance(event.time, datetime) else float(event.time)
        command = (event.command or "").upper()
        keys = command_keys(command, event.args)
        with self._lock:
            self.events += 1
            if self.first_time is None:
                self.first_time = stamp
            self.last_time = stamp if self.last_time is None else max(self.last_time, stamp)
            second = int(stamp)
            buckets = self.per_second
            if buckets and buckets[-1][0] == second:
                buckets[-1][1] += 1
            elif not buckets or second > buckets[-1][0]:
                buckets.append([second, 1])
            else:  # out of order (clock step): count it in the bucket it belongs to, if still kept
                for bucket in reversed(buckets):
                    if bucket[0] <= second:
                        if bucket[0] == second:
                            bucket[1] += 1
                        break
            self.commands.add(command)
            if keys:
                self.keyed_events += 1
            for key in keys:
                key = key[: self.max_key_length]
                self.keys.add(key)
                self.prefixes.add(key_prefixes(key, self.delimiter, self.prefix_depth)[-1])

    def feed_all(self, events: Iterable[Any]) -> MonitorProfile:
        for event in events:
            self.feed(event)
        return self

    def start(self, at: float | None = None) -> MonitorProfile:
        """Say the stream is read from ``at`` (default now): seconds with no command from then on
        count as 0 in the rate. Clears a previous :meth:`stop`."""
        with self._lock:
            self.started_at = time.time() if at is None else at
            self.stopped_at = None
        return self

    def stop(self, at: float | None = None) -> MonitorProfile:
        """Say the stream was read until ``at`` (default now): the rate is then the one of the last
        window before the stop, not of an idle clock running on."""
        with self._lock:
            self.stopped_at = time.time() if at is None else at
        return self

    def commands_per_second(self, now: float | None = None) -> float:
        """Commands per second over the last ``window`` seconds before ``now`` (default: the stop,
        else the newer of the clock and the last event), as :meth:`snapshot` reports it."""
        with self._lock:
            return self._rate(self._end(now))[0]

    def _end(self, now: float | None) -> float:
        if now is not None:
            return now
        if self.stopped_at is not None:
            return self.stopped_at
        return max(time.time(), self.last_time or 0.0)

    def _seconds(self, end: float) -> list[int]:
        """The whole seconds the rate plot shows: from the first profiled to the one of ``end``,
        at most ``history`` of them."""
        begin = self.started_at if self.started_at is not None else self.first_time
        if begin is None:
            return []
        last = int(end)
        first = max(int(min(begin, end)), last - self.history + 1)
        return list(range(first, last + 1))

    def _rate(self, end: float) -> tuple[float, int]:
        """(commands/s, seconds averaged): the mean count of the last ``window`` plotted seconds,
        the current (partial) one included; over fewer when less time was profiled."""
        seconds = self._seconds(end)[-max(int(self.window), 1):]
        if not seconds:
            return 0.0, 0
        counts = {second: count for second, count in self.per_second}
        return sum(counts.get(second, 0) for second in seconds) / len(seconds), len(seconds)

    def snapshot(self, *, top: int = 20, now: float | None = None) -> ProfileSnapshot:
        import pandas as pd

        with self._lock:
            end = self._end(now)
            rate, rate_seconds = self._rate(end)
            seconds = self._seconds(end)
            kept = {second: count for second, count in self.per_second}
            counts = [kept.get(second, 0) for second in seconds]
            stopped_at = self.stopped_at
            cmd = self.commands.top(top)
            keys = self.keys.top(top)
            prefixes = self.prefixes.top(top)
            events, keyed = self.events, self.keyed_events
            span = (self.last_time - self.first_time) if self.first_time is not None and self.last_time is not None \
                else 0.0
            exact = len(self.keys) < self.keys.capacity
            key_total, prefix_total = self.keys.total, self.prefixes.total

        # marked: displayed readably in a notebook (svckit.display)
        rate_frame = mark(pd.DataFrame({"time": pd.to_datetime(pd.Series(seconds, dtype="int64"), unit="s", utc=True),
                                        "commands": pd.Series(counts, dtype="int64")}), commands="count")

        def heavy(rows: list[tuple[Hashable, int, int]], name: str, total: int) -> pd.DataFrame:
            frame = pd.DataFrame(rows, columns=[name, "count", "error"]).astype({"count": "int64", "error": "int64"})
            frame["share"] = frame["count"] / total if total else 0.0
            return mark(frame, count="count", error="count", share="share")

        return ProfileSnapshot(
            events=events, keyed_events=keyed, seconds=span, commands_per_second=rate, window=self.window,
            distinct_keys_exact=exact, rate=rate_frame, commands=heavy(cmd, "command", events),
            keys=heavy(keys, "key", key_total), prefixes=heavy(prefixes, "prefix", prefix_total),
            rate_seconds=rate_seconds, ended=end, stopped_at=stopped_at)

    def frames(self, *, top: int = 20) -> dict[str, pd.DataFrame]:
        snap = self.snapshot(top=top)
        return {"rate": snap.rate, "commands": snap.commands, "keys": snap.keys, "prefixes": snap.prefixes}


def profile_monitor(kv: KV[Any], seconds: float = 10.0, *, profile: MonitorProfile | None = None,
                    max_events: int | None = None, cancel: Cancel = None,
                    monitor: Monitor | None = None) -> MonitorProfile:
    """Read ``kv.monitor()`` for ``seconds`` (or until ``max_events`` events, or ``cancel`` is set)
    into ``profile`` (a new :class:`MonitorProfile` by default) and return it. ``monitor``: a stream
    opened beforehand (``kv.monitor()``), so traffic started after opening it is all seen; it is
    closed on return. ``cancel`` is :mod:`svckit._progress`'s (an Event or a callable), checked
    between events and every 0.1 s while none comes; a cancelled read returns the profile so far
    with ``profile.cancelled`` True.

    The stream is closed from a timer thread when time is up, so an idle server does not keep this
    call waiting for one more event."""
    profile = profile if profile is not None else MonitorProfile()
    deadline = time.monotonic() + seconds
    monitor = monitor if monitor is not None else kv.monitor()
    done = threading.Event()
    profile.start()

    def close_when_due() -> None:
        while not done.wait(0.1):
            if time.monotonic() >= deadline or is_cancelled(cancel):
                monitor.close()
                return

    closer = threading.Thread(target=close_when_due, daemon=True, name="svckit-profile-timer")
    closer.start()
    try:
        for event in monitor:
            profile.feed(event)
            if (max_events is not None and profile.events >= max_events) or time.monotonic() >= deadline:
                break
            if is_cancelled(cancel):
                break
    except Exception:
        if not monitor.closed:  # a closed stream ends its read with an error on some transports
            raise
    finally:
        done.set()
        monitor.close()
        closer.join()
        profile.stop()
    profile.cancelled = is_cancelled(cancel)
    return profile


__all__ = [
    "MonitorProfile",
    "ProfileSnapshot",
    "SpaceSaving",
    "command_keys",
    "profile_monitor",
]
