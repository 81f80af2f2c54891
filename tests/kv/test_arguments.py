"""Every bad argument to a typed helper is refused before any request is sent, with an
InvalidArgument naming the parameter. Pure: the client's transport fails the test if it is used."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from svckit.errors import InvalidArgument
from svckit.kv import KV, AsyncKV
from svckit.kv.commands import Commands


def _refuse(request: httpx.Request) -> httpx.Response:
    pytest.fail(f"a request was sent: {request.method} {request.url}")


class _AsyncRefuse(httpx.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return _refuse(request)


@pytest.fixture
def kv() -> Iterator[KV[str]]:
    with KV("http://127.0.0.1:9", "test-token-0000", transport=httpx.MockTransport(_refuse)) as client:
        yield client


# (helper, args, kwargs, the parameter that must be named)
CASES: list[tuple[str, tuple[Any, ...], dict[str, Any], str]] = [
    # strings
    ("get", (None,), {}, "key"),
    ("get", (["k"],), {}, "key"),
    ("set", ("k", None), {}, "value"),
    ("set", ("k", True), {}, "value"),
    ("set", ("k", "v"), {"ex": "10"}, "ex"),
    ("set", ("k", "v"), {"px": 0}, "px"),
    ("set", ("k", "v"), {"nx": 1}, "nx"),
    ("setex", ("k", "soon", "v"), {}, "seconds"),
    ("getex", ("k",), {"ex": -1}, "ex"),
    ("mget", ("a", None), {}, "keys"),
    ("incrby", ("k", 1.5), {}, "amount"),
    ("incrby", ("k", True), {}, "amount"),
    ("incrbyfloat", ("k", "1.5"), {}, "amount"),
    ("getrange", ("k", "0", 5), {}, "start"),
    ("setrange", ("k", None, "v"), {}, "offset"),
    # keys, ttl, scan
    ("expire", ("k", "soon"), {}, "seconds"),
    ("expire", ("k", 10), {"gt": "yes"}, "gt"),
    ("pexpire", ("k", 1.5), {}, "milliseconds"),
    ("expireat", ("k", None), {}, "timestamp"),
    ("rename", ("k", object()), {}, "new_key"),
    ("delete", ("a", None), {}, "keys"),
    ("scan", (), {"count": -1}, "count"),
    ("scan", (), {"count": 0}, "count"),
    ("scan", (-1,), {}, "cursor"),
    ("scan", ("0",), {}, "cursor"),
    ("scan", (), {"type": 1}, "type"),
    ("memory_usage", ("k",), {"samples": -5}, "samples"),
    # hashes
    ("hget", ("h", None), {}, "field"),
    ("hincrby", ("h", "f", "1"), {}, "amount"),
    ("hincrbyfloat", ("h", "f", None), {}, "amount"),
    ("hscan", ("h",), {"count": -1}, "count"),
    ("hmget", ("h", "a", 3j), {}, "fields"),
    # lists
    ("lpush", ("l", None), {}, "values"),
    ("lrange", ("l", 0, "end"), {}, "stop"),
    ("lindex", ("l", None), {}, "index"),
    ("lpop_count", ("l", -1), {}, "count"),
    ("linsert", ("l", 0, "p", "v"), {}, "where"),
    # sets
    ("sadd", ("s", None), {}, "members"),
    ("sismember", ("s", None), {}, "member"),
    ("sscan", ("s",), {"count": -1}, "count"),
    # sorted sets
    ("zrange", ("z", "a", 1), {}, "start"),
    ("zrange", ("z", 0, 1.5), {}, "stop"),
    ("zrange", ("z", "[a", "5"), {"byscore": True}, "start"),
    ("zrange", ("z", 0, 1), {"bylex": True}, "start"),
    ("zrange", ("z", 0, 1), {"offset": -1}, "offset"),
    ("zincrby", ("z", "1", "m"), {}, "amount"),
    ("zpopmin", ("z", -2), {}, "count"),
    ("zscan", ("z",), {"count": 0}, "count"),
    ("zscore", ("z", None), {}, "member"),
    # streams
    ("xadd", ("s", {"f": "v"}), {"maxlen": -1}, "maxlen"),
    ("xtrim", ("s", "100"), {}, "maxlen"),
    ("xrange", ("s",), {"count": -1}, "count"),
    ("xread", ({"s": "0"},), {"count": "10"}, "count"),
    ("xlen", (None,), {}, "key"),
    # geo
    ("geosearch", ("g", "13.4", 52.5, 10), {}, "longitude"),
    ("geosearch", ("g", 13.4, 52.5, 10), {"count": 0}, "count"),
    ("geodist", ("g", "a", "b", 1), {}, "unit"),
    # HyperLogLog
    ("pfadd", ("h", None), {}, "elements"),
    ("pfcount", (None,), {}, "keys"),
    # bitmaps
    ("setbit", ("b", "7", 1), {}, "offset"),
    ("getbit", ("b", None), {}, "offset"),
    ("bitcount", ("b", "0"), {}, "start"),
    ("bitpos", ("b", True), {}, "bit"),
    # scripting
    ("eval", (b"return 1",), {}, "script"),
    ("evalsha", (None,), {}, "sha1"),
    ("script_exists", ("abc", 1), {}, "sha1s"),
    # pub/sub
    ("publish", ("ch", None), {}, "message"),
    ("publish", (None, "m"), {}, "channel"),
    # JSON
    ("json_get", ("j", 1), {}, "path"),
    ("json_set", (None, "$", {"a": 1}), {}, "key"),
    ("json_numincrby", ("j", "$.n", "2"), {}, "amount"),
]


@pytest.mark.parametrize(("helper", "args", "kwargs", "argument"), CASES,
                         ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(CASES)])
def test_refused_before_sending(kv: KV[str], helper: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                                argument: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        getattr(kv, helper)(*args, **kwargs)
    assert info.value.argument == argument
    assert str(info.value).startswith(f"{argument}: {helper}()")


@pytest.mark.parametrize(("helper", "args", "kwargs", "argument"), CASES[:12],
                         ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(CASES[:12])])
def test_refused_in_a_pipeline(kv: KV[str], helper: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                               argument: str) -> None:
    pipe = kv.pipeline()
    with pytest.raises(InvalidArgument) as info:
        getattr(pipe, helper)(*args, **kwargs)
    assert info.value.argument == argument
    assert len(pipe) == 0  # nothing was queued


async def test_refused_on_the_async_client() -> None:
    async with AsyncKV("http://127.0.0.1:9", "test-token-0000", transport=_AsyncRefuse()) as akv:
        with pytest.raises(InvalidArgument) as info:
            await akv.expire("k", "soon")  # type: ignore[arg-type]
        assert info.value.argument == "seconds"


def test_every_helper_with_arguments_is_checked() -> None:
    """The mechanism is general: a helper that takes an Arg/int/float/str/bool has a check."""
    unchecked = {name for name, attr in vars(Commands).items() if hasattr(attr, "describe") and attr.check is None}
    assert unchecked <= {"mset", "randomkey", "dbsize", "flushdb", "flushall", "time", "script_flush"}


@pytest.mark.parametrize("call", [
    lambda p: p.get("k"), lambda p: p.get(b"k"), lambda p: p.set("k", 1.5, ex=10, nx=True),
    lambda p: p.expire("k", 0), lambda p: p.scan(0, match="a*", count=10, type="string"),
    lambda p: p.zrange("z", 0, -1), lambda p: p.zrange("z", "0", "-1"),
    lambda p: p.zrange("z", "-inf", "(5", byscore=True), lambda p: p.zrange("z", 1, 2.5, byscore=True),
    lambda p: p.zrange("z", "[a", "+", bylex=True), lambda p: p.zrange("z", 0, 10, byscore=True, offset=0, count=-1),
    lambda p: p.incrbyfloat("k", 2), lambda p: p.ping(), lambda p: p.ping(None), lambda p: p.hset("h", mapping={"a": 1}),
    lambda p: p.geoadd("g", (13.4, 52.5, "berlin")), lambda p: p.bitcount("b"), lambda p: p.lpush("l", bytearray(b"x")),
    lambda p: p.mset({"a": 1}), lambda p: p.eval("return 1", ["k"], [1]), lambda p: p.json_set("j", "$", None),
])
def test_good_arguments_are_queued(kv: KV[str], call: Any) -> None:
    pipe = kv.pipeline()
    call(pipe)
    assert len(pipe) == 1


def test_raw_execute_still_names_args(kv: KV[str]) -> None:
    with pytest.raises(InvalidArgument) as info:
        kv.execute("GET", None)  # type: ignore[arg-type]
    assert info.value.argument == "args"
