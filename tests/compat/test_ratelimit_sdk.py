"""upstash-ratelimit 1.2.0, unchanged, against the sandbox over a default ``upstash_redis.Redis(url,
token)``: its Lua scripts carry the vendor shebang flag ``allow-key-locking`` (see
svckit/sandbox/kv/scripts.py), and every limiter must enforce its limit exactly.

Windows are long (1000 hours) so no test crosses a window boundary: the counts are then exact, and
no assertion depends on how fast the machine is. (1.2.0 has no ``reset_used_tokens``.)
"""

from __future__ import annotations

import time
import uuid

import pytest
import upstash_ratelimit.asyncio as aratelimit
from upstash_ratelimit import FixedWindow, Ratelimit, SlidingWindow, TokenBucket
from upstash_redis import Redis
from upstash_redis.asyncio import Redis as AsyncRedis

LIMIT = 5
LONG = {"window": 1000, "unit": "h"}
LONG_S = 1000 * 3600


def limiters():
    return [
        pytest.param(lambda: FixedWindow(max_requests=LIMIT, **LONG), id="fixed-window"),
        pytest.param(lambda: SlidingWindow(max_requests=LIMIT, **LONG), id="sliding-window"),
        pytest.param(lambda: TokenBucket(max_tokens=LIMIT, refill_rate=1, interval=1000, unit="h"),
                     id="token-bucket"),
    ]


def who() -> str:
    return f"user-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def redis(kv_url, kv_token):
    with Redis(kv_url, kv_token) as client:  # a fresh client: Ratelimit adds to its telemetry header
        yield client


@pytest.fixture
async def aredis(kv_url, kv_token):
    async with AsyncRedis(kv_url, kv_token) as client:
        yield client


@pytest.mark.parametrize("make", limiters())
def test_exactly_the_limit_passes_and_remaining_counts_down(redis, make):
    ratelimit = Ratelimit(redis, make(), prefix="compat")
    user = who()
    before = time.time()
    answers = [ratelimit.limit(user) for _ in range(LIMIT + 2)]
    assert [a.allowed for a in answers] == [True] * LIMIT + [False, False]
    assert [a.remaining for a in answers] == [4, 3, 2, 1, 0, 0, 0]
    assert {a.limit for a in answers} == {LIMIT}
    for answer in answers:
        assert before < answer.reset <= time.time() + LONG_S
    assert ratelimit.limit(who()).allowed  # another identifier has its own budget


@pytest.mark.parametrize("make", limiters())
def test_get_remaining_and_get_reset(redis, make):
    ratelimit = Ratelimit(redis, make(), prefix="compat")
    user = who()
    assert ratelimit.get_remaining(user) == LIMIT
    ratelimit.limit(user)
    ratelimit.limit(user)
    assert ratelimit.get_remaining(user) == LIMIT - 2
    assert time.time() < ratelimit.get_reset(user) <= time.time() + LONG_S


@pytest.mark.parametrize("make", limiters())
def test_a_rate_above_one_spends_that_many(redis, make):
    ratelimit = Ratelimit(redis, make(), prefix="compat")
    user = who()
    assert ratelimit.limit(user, rate=3).remaining == 2
    assert ratelimit.limit(user, rate=2).allowed
    assert not ratelimit.limit(user, rate=1).allowed


def test_block_until_ready_returns_at_once_when_allowed_and_refuses_at_its_deadline(redis):
    ratelimit = Ratelimit(redis, FixedWindow(max_requests=1, **LONG), prefix="compat")
    user = who()
    assert ratelimit.block_until_ready(user, timeout=5).allowed
    assert not ratelimit.block_until_ready(user, timeout=0.2).allowed


def test_block_until_ready_waits_for_the_next_window(redis):
    ratelimit = Ratelimit(redis, FixedWindow(max_requests=1, window=1, unit="s"), prefix="compat")
    user = who()
    first = ratelimit.limit(user)
    assert first.allowed
    answer = ratelimit.block_until_ready(user, timeout=30)
    assert answer.allowed and answer.reset > first.reset


@pytest.mark.parametrize("make", limiters())
async def test_async_exactly_the_limit_passes(aredis, make):
    ratelimit = aratelimit.Ratelimit(aredis, make(), prefix="compat-async")
    user = who()
    answers = [await ratelimit.limit(user) for _ in range(LIMIT + 1)]
    assert [a.allowed for a in answers] == [True] * LIMIT + [False]
    assert [a.remaining for a in answers] == [4, 3, 2, 1, 0, 0]
    assert await ratelimit.get_remaining(user) == 0
    assert await ratelimit.get_reset(user) > time.time()


async def test_async_block_until_ready(aredis):
    ratelimit = aratelimit.Ratelimit(aredis, TokenBucket(max_tokens=1, refill_rate=1, interval=1000, unit="h"),
                                     prefix="compat-async")
    user = who()
    assert (await ratelimit.block_until_ready(user, timeout=5)).allowed
    assert not (await ratelimit.block_until_ready(user, timeout=0.2)).allowed
