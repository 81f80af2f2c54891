"""AsyncKV over real HTTP against the sandbox (every backend): the same helpers, awaited; async streams."""

from __future__ import annotations

import asyncio

import pytest

from svckit.errors import CommandError, TransactionDiscarded
from svckit.kv import AsyncKV
from svckit.sandbox import Sandbox
from tests.kv.conftest import afill


async def test_helpers_are_awaited_and_typed_results_come_back(akv: AsyncKV[str]) -> None:
    assert await akv.set("a/b c", "1") is True
    assert await akv.get("a/b c") == "1" and await akv.incr("a/b c") == 2
    assert await akv.hset("h", mapping={"f": "v"}) == 1 and await akv.hgetall("h") == {"f": "v"}
    assert await akv.zadd("z", {"m": 2}) == 1 and await akv.zrange("z", 0, -1) == [("m", 2.0)]
    assert await akv.smembers("none") == set() and await akv.execute("PING") == "PONG"
    await afill(akv, {f"k{i}": str(i) for i in range(12)})
    keys = [k async for k in akv.scan_iter(match="k*", count=4)]
    assert sorted(keys) == sorted(f"k{i}" for i in range(12))
    # the hash tag {m}: one slot, so a cluster runs the multi-key commands too
    assert await akv.mset({"{m}a": "1", "{m}b": "2"}) is True
    assert await akv.mget("{m}a", "{m}none", "{m}b") == ["1", None, "2"]
    with pytest.raises(CommandError, match="WRONGTYPE"):
        await akv.incr("h")


async def test_concurrent_commands_share_one_client(akv: AsyncKV[str]) -> None:
    results = await asyncio.gather(*(akv.incr("counter") for _ in range(50)))
    assert sorted(results) == list(range(1, 51)) and await akv.get("counter") == "50"


async def test_binary_and_resp2_clients(kv_sandbox: Sandbox) -> None:
    async with AsyncKV.from_settings(kv_sandbox.settings, decode=False) as raw, \
            AsyncKV.from_settings(kv_sandbox.settings, response_format="resp2") as r2:
        assert await raw.set(b"\xff\r", b"\x00\n\xfe") and await raw.get(b"\xff\r") == b"\x00\n\xfe"
        assert await r2.rpush("rl", "x", "y") == 2 and await r2.lrange("rl", 0, -1) == ["x", "y"]
        assert await r2.multi_exec().incr("rn").exec() == [1]


async def test_pipeline_and_transaction(akv: AsyncKV[str]) -> None:
    await akv.rpush("list", "x")
    results = await akv.pipeline().set("a", "1").command("INCR", "list").incr("a").exec()
    assert results[0] is True and isinstance(results[1], CommandError) and results[2] == 2
    with pytest.raises(TransactionDiscarded):
        await akv.multi_exec().set("t", "1").command("NOSUCHCOMMAND").exec()
    assert await akv.get("t") is None
    assert await akv.multi_exec().set("t", "1").incr("t").exec() == [True, 2]


async def test_async_monitor_and_subscribe(kv_sandbox: Sandbox, akv: AsyncKV[str]) -> None:
    async with AsyncKV.from_settings(kv_sandbox.settings) as watcher:
        async with watcher.monitor() as mon:
            await akv.set("watched", "v")
            event = await asyncio.wait_for(anext(mon), 10)
            while event.command.upper() != "SET":
                event = await asyncio.wait_for(anext(mon), 10)
            assert event.args == ["watched", "v"]
        async with watcher.subscribe("chan") as sub:
            first = await asyncio.wait_for(anext(sub), 10)
            assert (first.kind, first.count) == ("subscribe", 1)
            assert await akv.publish("chan", "a,b") == 1
            message = await asyncio.wait_for(anext(sub), 10)
            assert (message.kind, message.channel, message.data) == ("message", "chan", "a,b")


async def test_plain_async_for_opens_the_stream_lazily(kv_sandbox: Sandbox, akv: AsyncKV[str]) -> None:
    async with AsyncKV.from_settings(kv_sandbox.settings) as listener:
        sub = listener.subscribe("lazy")
        seen = []
        async for message in sub:
            seen.append(message)
            if message.kind == "subscribe":
                assert await akv.publish("lazy", "x") == 1
            else:
                break
        await sub.aclose()
    assert [(m.kind, m.data) for m in seen] == [("subscribe", None), ("message", "x")]
