"""upstash-redis, unchanged, against the sandbox: ``Redis(url, token)`` with its defaults (base64
replies, telemetry and sync-token headers, all in their vendor spelling), sync and async."""

from __future__ import annotations

import hashlib
import uuid

import pytest
from upstash_redis import Redis
from upstash_redis.asyncio import Redis as AsyncRedis
from upstash_redis.errors import UpstashError

#: values a user stores that a naive REST layer breaks: unicode, path and query characters, control
#: characters, a lone "OK" (base64 must still encode it as a value), the empty string.
AWKWARD = ["héllo wörld ✓ 日本語 🎉", "a/b%2Fc?d=e&f#g", "line\nbreak\ttab\x00nul\x7f", "OK", "", " "]


def key(name: str = "k") -> str:
    return f"compat:{name}:{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def redis(kv_url, kv_token):
    with Redis(kv_url, kv_token) as client:
        yield client


@pytest.fixture
async def aredis(kv_url, kv_token):
    async with AsyncRedis(kv_url, kv_token) as client:
        yield client


# -- strings --------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", AWKWARD)
def test_strings_round_trip(redis, value):
    k = key()
    assert redis.set(k, value) is True
    assert redis.get(k) == value
    assert redis.strlen(k) == len(value.encode())


def test_string_commands(redis):
    k, n, f = key(), key("n"), key("f")
    assert redis.set(k, "v", nx=True) is True
    assert redis.set(k, "w", nx=True) is False
    assert redis.set(k, "w", get=True) == "v"
    assert redis.append(k, "xyz") == 4 and redis.getrange(k, 1, 2) == "xy"
    assert redis.incr(n) == 1 and redis.incrby(n, 41) == 42 and redis.decr(n) == 41
    assert redis.incrbyfloat(f, 1.5) == 1.5
    assert redis.mset({k + "a": "1", k + "b": "2"}) is True
    assert redis.mget(k + "a", k + "missing", k + "b") == ["1", None, "2"]
    assert redis.get(key("absent")) is None


def test_expire_and_ttl(redis):
    k = key()
    redis.set(k, "v")
    assert redis.ttl(k) == -1
    assert redis.expire(k, 100) is True
    assert 0 < redis.ttl(k) <= 100 and 0 < redis.pttl(k) <= 100_000
    assert redis.persist(k) is True and redis.ttl(k) == -1
    redis.set(k, "v", ex=50)
    assert 0 < redis.ttl(k) <= 50
    assert redis.ttl(key("absent")) == -2
    assert redis.expire(key("absent"), 10) is False


# -- collections ----------------------------------------------------------------------------------
def test_hashes(redis):
    k = key()
    assert redis.hset(k, values={"name": "Ada", "lang": "日本語", "empty": ""}) == 3
    assert redis.hset(k, "name", "Grace") == 0
    assert redis.hget(k, "name") == "Grace"
    assert redis.hgetall(k) == {"name": "Grace", "lang": "日本語", "empty": ""}
    assert redis.hincrby(k, "visits", 3) == 3
    assert sorted(redis.hkeys(k)) == ["empty", "lang", "name", "visits"]
    assert redis.hmget(k, "name", "nope") == ["Grace", None]
    assert redis.hdel(k, "empty") == 1 and redis.hlen(k) == 3


def test_lists(redis):
    k = key()
    assert redis.rpush(k, "a", "b", "c") == 3
    assert redis.lpush(k, "z") == 4
    assert redis.lrange(k, 0, -1) == ["z", "a", "b", "c"]
    assert redis.lpop(k) == "z" and redis.rpop(k) == "c"
    assert redis.lindex(k, 1) == "b" and redis.llen(k) == 2


def test_sets(redis):
    k, other = key(), key()
    assert redis.sadd(k, "a", "b", "c") == 3 and redis.sadd(k, "a") == 0
    redis.sadd(other, "b", "c", "d")
    assert set(redis.smembers(k)) == {"a", "b", "c"}
    assert redis.sismember(k, "a") is True and redis.sismember(k, "z") is False
    assert set(redis.sinter(k, other)) == {"b", "c"}
    assert redis.scard(k) == 3


def test_sorted_sets(redis):
    k = key()
    assert redis.zadd(k, {"ada": 30, "bob": 20, "cy": 10.5}) == 3
    assert redis.zrange(k, 0, -1) == ["cy", "bob", "ada"]
    assert redis.zrange(k, 0, -1, rev=True, withscores=True) == [("ada", 30.0), ("bob", 20.0), ("cy", 10.5)]
    assert redis.zscore(k, "cy") == 10.5
    assert redis.zincrby(k, 5, "cy") == 15.5
    assert redis.zrank(k, "cy") == 0 and redis.zcard(k) == 3


def test_json_commands(redis):
    k = key()
    assert redis.json.set(k, "$", {"title": "svckit", "tags": ["kv"], "n": 1}) is True
    assert redis.json.get(k) == [{"title": "svckit", "tags": ["kv"], "n": 1}]
    assert redis.json.arrappend(k, "$.tags", "json") == [2]
    assert redis.json.numincrby(k, "$.n", 41) == [42]
    assert redis.json.get(k, "$.tags") == [["kv", "json"]]
    assert redis.json.type(k, "$.title") == ["string"]


def test_scan_finds_every_key_of_a_pattern(redis):
    prefix = key("scan")
    wanted = {f"{prefix}:{i}" for i in range(25)}
    redis.mset({k: "1" for k in wanted})
    found, cursor = set(), 0
    while True:
        cursor, keys = redis.scan(cursor, match=f"{prefix}:*", count=7)
        found.update(keys)
        if cursor == 0:
            break
    assert found == wanted


# -- batches --------------------------------------------------------------------------------------
def test_pipeline(redis):
    k = key()
    pipe = redis.pipeline()
    pipe.set(k, "1")
    pipe.incr(k)
    pipe.get(k)
    pipe.hset(k + "h", values={"a": "é"})
    pipe.hgetall(k + "h")
    assert pipe.exec() == [True, 2, "2", 1, {"a": "é"}]


def test_transaction(redis):
    k = key()
    tx = redis.multi()
    tx.set(k, "10")
    tx.incrby(k, 5)
    tx.lpush(k + "l", "x", "y")
    tx.lrange(k + "l", 0, -1)
    assert tx.exec() == [True, 15, 2, ["y", "x"]]
    assert redis.get(k) == "15"


def test_a_failing_command_in_a_transaction_reaches_the_user_and_the_others_still_ran(redis):
    k = key()
    redis.set(k, "text")
    tx = redis.multi()
    tx.incr(k)
    tx.set(k + "2", "ran")
    with pytest.raises(UpstashError, match="not an integer"):
        tx.exec()
    assert redis.get(k + "2") == "ran"  # rule 4: the transaction is not discarded


# -- scripts --------------------------------------------------------------------------------------
def test_eval_and_evalsha(redis):
    k = key()
    script = 'redis.call("SET", KEYS[1], ARGV[1]); return redis.call("GET", KEYS[1])'
    assert redis.eval(script, keys=[k], args=["é"]) == "é"
    sha = redis.script_load(script)
    assert sha == hashlib.sha1(script.encode()).hexdigest()
    assert redis.evalsha(sha, keys=[k], args=["again"]) == "again"
    assert redis.script_exists(sha, "0" * 40) == [1, 0]


SHEBANG_WRITE = '#!lua flags=allow-key-locking\nreturn redis.call("INCRBY", KEYS[1], ARGV[1])'
SHEBANG_READ_ONLY = '#!lua flags=allow-key-locking,no-writes\nreturn redis.call("SET", KEYS[1], "x")'


def test_a_vendor_shebang_flag_runs_and_its_sha_is_that_of_the_text_sent(redis):
    k = key()
    assert redis.eval(SHEBANG_WRITE, keys=[k], args=["2"]) == 2
    sha = hashlib.sha1(SHEBANG_WRITE.encode()).hexdigest()  # what a client computes locally
    assert redis.evalsha(sha, keys=[k], args=["3"]) == 5
    assert redis.script_exists(sha) == [1]
    loaded = SHEBANG_WRITE + " -- loaded"
    assert redis.script_load(loaded) == hashlib.sha1(loaded.encode()).hexdigest()
    assert redis.evalsha(hashlib.sha1(loaded.encode()).hexdigest(), keys=[k], args=["1"]) == 6


def test_the_redis_flags_of_a_shebang_are_kept(redis):
    """``no-writes`` next to the vendor flag still makes Redis refuse a write, in Redis's words, naming
    the script by the SHA1 of the text the user sent."""
    with pytest.raises(UpstashError, match="Write commands are not allowed from read-only scripts") as err:
        redis.eval(SHEBANG_READ_ONLY, keys=[key()])
    assert hashlib.sha1(SHEBANG_READ_ONLY.encode()).hexdigest() in str(err.value)


def test_shebang_scripts_in_pipelines_and_transactions(redis):
    k = key()
    sha = hashlib.sha1(SHEBANG_WRITE.encode()).hexdigest()
    for batch in (redis.pipeline(), redis.multi()):
        batch.eval(SHEBANG_WRITE, keys=[k], args=["1"])
        batch.evalsha(sha, keys=[k], args=["1"])
        batch.script_exists(sha)
        first, second, exists = batch.exec()
        assert second == first + 1 and exists == [1]


def test_evalsha_of_an_unknown_script_is_noscript(redis):
    with pytest.raises(UpstashError, match="NOSCRIPT"):
        redis.evalsha("f" * 40)


# -- errors ---------------------------------------------------------------------------------------
def test_errors_a_user_sees(redis):
    k = key()
    redis.set(k, "text")
    with pytest.raises(UpstashError, match="WRONGTYPE"):
        redis.lpush(k, "x")
    with pytest.raises(UpstashError, match="(?i)unknown command"):
        redis.execute(["NOSUCHCOMMAND", k])
    with pytest.raises(UpstashError, match="(?i)wrong number of arguments"):
        redis.execute(["GET"])
    with pytest.raises(UpstashError, match="not available"):
        redis.execute(["BLPOP", k, "0"])  # rule 7: blocking commands are not served over REST


def test_a_wrong_token_is_refused(kv_url):
    with Redis(kv_url, "not-the-token") as bad, pytest.raises(UpstashError, match="Unauthorized"):
        bad.get("x")


# -- async ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", AWKWARD)
async def test_async_strings_round_trip(aredis, value):
    k = key()
    assert await aredis.set(k, value) is True
    assert await aredis.get(k) == value


async def test_async_collections_and_ttl(aredis):
    k = key()
    assert await aredis.hset(k, values={"a": "1", "b": "✓"}) == 2
    assert await aredis.hgetall(k) == {"a": "1", "b": "✓"}
    assert await aredis.expire(k, 30) is True and 0 < await aredis.ttl(k) <= 30
    z = key()
    await aredis.zadd(z, {"x": 2, "y": 1})
    assert await aredis.zrange(z, 0, -1, withscores=True) == [("y", 1.0), ("x", 2.0)]
    assert await aredis.json.set(k + "j", "$", {"a": [1]}) is True
    assert await aredis.json.get(k + "j", "$.a") == [[1]]


async def test_async_pipeline_transaction_and_scripts(aredis):
    k = key()
    pipe = aredis.pipeline()
    pipe.set(k, "1")
    pipe.incr(k)
    assert await pipe.exec() == [True, 2]
    tx = aredis.multi()
    tx.incrby(k, 10)
    tx.get(k)
    assert await tx.exec() == [12, "12"]
    assert await aredis.eval(SHEBANG_WRITE, keys=[k + "s"], args=["4"]) == 4
    assert await aredis.evalsha(hashlib.sha1(SHEBANG_WRITE.encode()).hexdigest(), keys=[k + "s"], args=["1"]) == 5


async def test_async_errors(aredis):
    with pytest.raises(UpstashError, match="(?i)unknown command"):
        await aredis.execute(["NOSUCHCOMMAND"])
