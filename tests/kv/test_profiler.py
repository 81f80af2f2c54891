"""svckit.kv.profiler: the monitor profile is exact on a known event list, stays within its memory
bound on 100,000 distinct keys (Space-Saving keeps its guarantees), and counts real traffic read
from the sandbox's monitor stream (every backend)."""

from __future__ import annotations

import random
import time
import tracemalloc
from collections import Counter
from datetime import UTC, datetime
from typing import NamedTuple

from svckit.kv import KV, MonitorProfile, SpaceSaving, command_keys, profile_monitor
from svckit.kv.protocol import parse_monitor


class Event(NamedTuple):
    time: float
    command: str
    args: list[str]


T0 = 1_700_000_000.0


def test_key_positions_follow_each_command() -> None:
    assert command_keys("get", ["user:1"]) == ["user:1"]
    assert command_keys("SET", ["k", "v", "EX", "10"]) == ["k"]
    assert command_keys("MSET", ["a", "1", "b", "2"]) == ["a", "b"]
    assert command_keys("DEL", ["a", "b", "c"]) == ["a", "b", "c"]
    assert command_keys("MGET", ["a", "b"]) == ["a", "b"]
    assert command_keys("RENAME", ["old", "new"]) == ["old", "new"]
    assert command_keys("EVAL", ["return 1", "2", "k1", "k2", "argv"]) == ["k1", "k2"]
    assert command_keys("FCALL", ["fn", "0", "argv"]) == []
    assert command_keys("ZUNIONSTORE", ["dest", "2", "z1", "z2", "WEIGHTS", "1", "2"]) == ["dest", "z1", "z2"]
    assert command_keys("XREAD", ["COUNT", "5", "STREAMS", "s1", "s2", "0", "0"]) == ["s1", "s2"]
    assert command_keys("MEMORY", ["USAGE", "big"]) == ["big"]
    assert command_keys("JSON.MGET", ["d1", "d2", "$.a"]) == ["d1", "d2"]
    assert command_keys("PING", []) == [] and command_keys("SCAN", ["0", "MATCH", "*"]) == []
    assert command_keys("PUBLISH", ["channel", "hello"]) == []


def test_profile_is_exact_on_a_known_event_list() -> None:
    events = [
        *(Event(T0 + 0.1 * i, "GET", ["user:1"]) for i in range(30)),          # seconds 0..2
        *(Event(T0 + 3 + 0.1 * i, "SET", [f"cart:{i % 3}", "v"]) for i in range(9)),  # second 3
        Event(T0 + 4.5, "MSET", ["user:2", "a", "session:9", "b"]),
        Event(T0 + 4.6, "DEL", ["user:1", "cart:0"]),
        Event(T0 + 4.7, "PING", []),
    ]
    profile = MonitorProfile(window=2).feed_all(events)
    snap = profile.snapshot(now=T0 + 4.9)
    assert snap.events == 42 and snap.keyed_events == 41
    assert dict(zip(snap.commands["command"], snap.commands["count"])) == {
        "GET": 30, "SET": 9, "MSET": 1, "DEL": 1, "PING": 1}
    assert dict(zip(snap.keys["key"], snap.keys["count"])) == {
        "user:1": 31, "cart:0": 4, "cart:1": 3, "cart:2": 3, "user:2": 1, "session:9": 1}
    assert snap.keys["key"].iloc[0] == "user:1" and (snap.keys["error"] == 0).all()
    assert dict(zip(snap.prefixes["prefix"], snap.prefixes["count"])) == {"user": 32, "cart": 10, "session": 1}
    assert snap.commands["share"].sum() == 1.0
    # per-second counts, and commands/s over the last 2 s (seconds 3 and 4: 9 + 3 events)
    assert snap.rate["commands"].tolist() == [10, 10, 10, 9, 3]
    assert snap.rate["time"].iloc[0] == datetime.fromtimestamp(T0, tz=UTC)
    assert snap.commands_per_second == 6.0
    assert profile.commands_per_second(now=T0 + 100) == 0.0
    # a MonitorEvent straight from the wire works the same
    wire = MonitorProfile().feed_all([parse_monitor('1700000000.5 [0 127.0.0.1:1] "HSET" "h:1" "f" "v"')])
    assert wire.snapshot().keys["key"].tolist() == ["h:1"]


def test_memory_stays_bounded_and_heavy_hitters_are_found_with_100k_distinct_keys() -> None:
    rng = random.Random(5)
    hot = {f"hot:{i}": 3000 - 200 * i for i in range(10)}  # 3000 .. 1200 hits each
    stream = [f"cold:{i}" for i in range(100_000)] + [k for k, n in hot.items() for _ in range(n)]
    rng.shuffle(stream)
    truth = Counter(stream)
    profile = MonitorProfile(capacity=500, history=60)
    tracemalloc.start()
    for i, key in enumerate(stream):
        profile.feed(Event(T0 + i / 10_000, "GET", [key]))
        if i == 20_000:
            after_warmup, _ = tracemalloc.get_traced_memory()
    at_end, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(profile.keys) == 500 and len(profile.prefixes) <= 500 and len(profile.per_second) <= 60
    assert len(profile.keys._heap) == 500  # one heap entry per counter: no hidden growth
    # the state does not grow with the number of distinct keys once the counters are full
    assert at_end - after_warmup < 256 * 1024, f"grew by {(at_end - after_warmup) / 1024:.0f} KiB"

    snap = profile.snapshot(top=10)
    assert set(snap.keys["key"]) == set(hot)
    for key, count, error in zip(snap.keys["key"], snap.keys["count"], snap.keys["error"]):
        assert count - error <= truth[key] <= count
    assert not snap.distinct_keys_exact
    total = len(stream)
    # Space-Saving: every item more frequent than total / capacity holds a counter
    assert all(k in profile.keys.counts for k, n in truth.items() if n > total / 500)
    assert dict(zip(snap.prefixes["prefix"], snap.prefixes["count"])) == {"cold": 100_000, "hot": sum(hot.values())}


def test_space_saving_is_exact_below_capacity() -> None:
    counter = SpaceSaving(3)
    for item in "abacab":
        counter.add(item)
    assert counter.top() == [("a", 3, 0), ("b", 2, 0), ("c", 1, 0)]
    counter.add("d")  # replaces the minimum (c, 1): d is counted 2 with error 1
    assert ("d", 2, 1) in counter.top() and "c" not in counter.counts


def test_profile_monitor_counts_real_traffic(kv: KV[str], kv_bytes: KV[bytes]) -> None:
    monitor = kv.monitor()  # opened first: every command below is on the stream
    for _ in range(20):
        kv_bytes.get("hot:key")
    # the keys of each multi-key command share a hash tag: one slot, so a cluster runs them too
    for i in range(6):
        kv_bytes.set(f"cold:{{c}}{i}", "v")
    kv_bytes.mset({"pair:{p}a": "1", "pair:{p}b": "2"})
    kv_bytes.delete("cold:{c}0", "cold:{c}1")
    profile = profile_monitor(kv, seconds=30, monitor=monitor, max_events=28)
    snap = profile.snapshot()
    assert snap.events == 28
    commands = dict(zip(snap.commands["command"], snap.commands["count"]))
    assert commands == {"GET": 20, "SET": 6, "MSET": 1, "DEL": 1}
    keys = dict(zip(snap.keys["key"], snap.keys["count"]))
    assert keys["hot:key"] == 20 and keys["cold:{c}0"] == 2 and keys["pair:{p}b"] == 1
    assert snap.keys["key"].iloc[0] == "hot:key"
    assert dict(zip(snap.prefixes["prefix"], snap.prefixes["count"]))["cold"] == 8
    assert monitor.closed


def test_profile_monitor_ends_on_time_without_traffic(kv: KV[str]) -> None:
    profile = profile_monitor(kv, seconds=0.3)
    assert profile.events == 0 and profile.snapshot().commands_per_second == 0.0


class IdleMonitor:
    """A monitor stream that sends ``events`` and then waits, as an idle server's does, until closed."""

    def __init__(self, events: list[Event]) -> None:
        self.events, self.closed = events, False

    def __iter__(self):
        yield from self.events
        while not self.closed:
            time.sleep(0.01)

    def close(self) -> None:
        self.closed = True


def test_a_cancel_ends_the_profile_early_and_the_profile_says_so() -> None:
    import threading

    stop = threading.Event()
    events = [Event(T0, "GET", ["a"]), Event(T0, "GET", ["b"])]
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    profile = profile_monitor(None, seconds=30, monitor=IdleMonitor(events), cancel=stop)  # type: ignore[arg-type]
    assert time.monotonic() - started < 5  # the cancel, not the 30 s, ended it
    assert profile.events == 2 and profile.cancelled
    done = profile_monitor(None, seconds=1.0, monitor=IdleMonitor(events), cancel=lambda: False)  # type: ignore[arg-type]
    assert done.events == 2 and not done.cancelled
