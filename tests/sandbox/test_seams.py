"""Every private name svckit/sandbox/seams.py uses still exists with the shape it relies on.

One check per library part; a release of redis-py, fakeredis or uvicorn that renames or reshapes one
fails here first, with the name, the installed version and where to look. The last tests show that
each check does fail when its name is gone.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections import deque
from importlib.metadata import version
from types import SimpleNamespace
from typing import Any

import pytest
from redis.exceptions import ResponseError

from svckit.sandbox import seams
from svckit.sandbox.seams import HTTPTOOLS_HOOKS, HTTPTOOLS_STATE, Status


def relied_on(dist: str, owner: Any, name: str, where: str) -> Any:
    """``owner.name``, or a failure that says which seam broke on which release."""
    assert hasattr(owner, name), (
        f"{dist} {version(dist)}: {where} has no {name!r} any more, which svckit/sandbox/seams.py relies on "
        "(its docstring says why); adapt seams.py, then move the upper bound in pyproject.toml")
    return getattr(owner, name)


def coroutine_with(dist: str, owner: Any, name: str, params: list[str], where: str) -> None:
    """``owner.name`` is a coroutine function whose parameters start with ``params``."""
    fn = relied_on(dist, owner, name, where)
    got = list(inspect.signature(fn).parameters)
    assert inspect.iscoroutinefunction(fn) and got[:len(params)] == params, (
        f"{dist} {version(dist)}: {where}.{name} is now {'async ' * inspect.iscoroutinefunction(fn)}"
        f"({', '.join(got)}); svckit/sandbox/seams.py needs async ({', '.join(params)}, ...)")


# -- redis-py: the RESP2 parser -----------------------------------------------------------------
def check_redis_parser() -> None:
    module = importlib.import_module("redis._parsers.resp2")
    base = relied_on("redis", module, "_AsyncRESP2Parser", "redis._parsers.resp2")
    where = "redis._parsers.resp2._AsyncRESP2Parser"
    coroutine_with("redis", base, "_readline", ["self"], where)
    coroutine_with("redis", base, "_read", ["self", "length"], where)
    coroutine_with("redis", base, "_read_response", ["self", "disable_decoding"], where)
    relied_on("redis", base, "parse_error", where)


def test_redis_parser_base_has_the_methods_the_status_keeping_parser_uses():
    check_redis_parser()


async def test_the_status_keeping_parser_keeps_simple_strings_and_error_codes():
    stream = asyncio.StreamReader()
    stream.feed_data(b"+OK\r\n$2\r\nOK\r\n-WRONGTYPE not a list\r\n*3\r\n:7\r\n$-1\r\n+QUEUED\r\n")
    parser = seams.status_keeping_parser(2)(socket_read_size=65536)
    parser.on_connect(SimpleNamespace(_reader=stream, encoder=None))  # what redis-py's connection hands it

    replies = [await parser.read_response() for _ in range(4)]

    assert type(replies[0]) is Status and replies[0] == b"OK"
    assert type(replies[1]) is bytes and replies[1] == b"OK"
    assert isinstance(replies[2], ResponseError) and str(replies[2]) == "WRONGTYPE not a list"
    assert replies[3] == [7, None, b"QUEUED"] and type(replies[3][2]) is Status


# -- fakeredis: the status-keeping connection -----------------------------------------------------
def check_fakeredis_connection() -> None:
    helpers = importlib.import_module("fakeredis._helpers")
    simple = relied_on("fakeredis", helpers, "SimpleString", "fakeredis._helpers")
    assert list(inspect.signature(simple).parameters) == ["value"], (
        f"fakeredis {version('fakeredis')}: SimpleString(...) no longer takes (value); "
        "svckit/sandbox/seams.py reads its .value")
    aioredis = importlib.import_module("fakeredis.aioredis")
    connection = relied_on("fakeredis", aioredis, "FakeAsyncRedisConnection", "fakeredis.aioredis")
    coroutine_with("fakeredis", connection, "_connect", ["self"], "fakeredis.aioredis.FakeAsyncRedisConnection")
    socket = relied_on("fakeredis", aioredis, "AsyncFakeSocket", "fakeredis.aioredis")
    relied_on("fakeredis", socket, "_decode_result", "fakeredis.aioredis.AsyncFakeSocket")
    relied_on("fakeredis", socket, "close", "fakeredis.aioredis.AsyncFakeSocket")


def test_fakeredis_has_the_names_the_status_keeping_connection_uses():
    check_fakeredis_connection()


async def test_the_fake_connection_keeps_simple_strings_and_its_socket_can_be_closed():
    import fakeredis

    conn = seams.status_keeping_fake_connection()(server=fakeredis.FakeServer(), protocol=2)
    assert seams.fake_socket(conn) is None  # not connected yet
    await conn.connect()
    sock = seams.fake_socket(conn)
    assert sock is not None, "fakeredis keeps its fake socket somewhere else than _sock now"
    await conn.send_command("SET", "k", "OK")
    await conn.send_command("GET", "k")
    ok, value = await conn.read_response(), await conn.read_response()
    assert type(ok) is Status and ok == b"OK"
    assert type(value) is bytes and value == b"OK"
    await conn.disconnect()
    sock.close()
    assert seams.fake_socket(conn) is None


# -- uvicorn: the httptools protocol SandboxProtocol subclasses ---------------------------------
class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name, default)

    def write(self, data: Any) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


def check_uvicorn_protocol() -> None:
    module = importlib.import_module("uvicorn.protocols.http.httptools_impl")
    base = relied_on("uvicorn", module, "HttpToolsProtocol", "uvicorn.protocols.http.httptools_impl")
    assert seams.HttpToolsProtocol is base
    for hook in HTTPTOOLS_HOOKS:
        assert hook in vars(base) and callable(vars(base)[hook]), (
            f"uvicorn {version('uvicorn')}: HttpToolsProtocol no longer defines {hook}(), which "
            "svckit/sandbox/limits.SandboxProtocol overrides (svckit/sandbox/seams.py)")


def test_uvicorn_protocol_defines_the_hooks_sandbox_protocol_overrides():
    check_uvicorn_protocol()


async def test_uvicorn_protocol_keeps_the_state_sandbox_protocol_reads():
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.Event().wait()  # never answers: the request stays in flight

    protocol = seams.HttpToolsProtocol(Config(app, log_level="warning", lifespan="off"), ServerState(), {})
    transport = _Transport()
    protocol.connection_made(transport)
    protocol.data_received(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    try:
        for name in HTTPTOOLS_STATE:
            relied_on("uvicorn", protocol, name, "an HttpToolsProtocol")
        assert protocol.loop is asyncio.get_running_loop() and protocol.transport is transport
        assert isinstance(protocol.pipeline, deque)
        cycle = protocol.cycle
        assert relied_on("uvicorn", cycle, "response_started", "a RequestResponseCycle") is False
        assert relied_on("uvicorn", cycle, "response_complete", "a RequestResponseCycle") is False
    finally:
        protocol.connection_lost(None)
        await asyncio.sleep(0)


def test_sandbox_protocol_overrides_exactly_the_hooks_seams_lists():
    from svckit.sandbox.limits import SandboxProtocol

    overridden = {name for name in vars(SandboxProtocol)
                  if name in vars(seams.HttpToolsProtocol) and not name.startswith("__")}
    assert overridden == set(HTTPTOOLS_HOOKS)


# -- the rest of svckit uses public names only --------------------------------------------------
def test_no_private_name_of_a_library_outside_seams_py():
    """The issue's grep (``\\._[a-z]`` on a line naming one of the libraries), over the whole package."""
    import re
    from pathlib import Path

    root = Path(seams.__file__).parent.parent
    private, library = re.compile(r"\._[a-z]"), re.compile(r"httpx|redis|uvicorn|http\.client|fakeredis")
    found = [f"{path.relative_to(root.parent)}:{number}: {line.strip()}"
             for path in sorted(root.rglob("*.py")) if path != Path(seams.__file__)
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if private.search(line) and library.search(line)]
    assert not found, "private names of a library outside svckit/sandbox/seams.py:\n" + "\n".join(found)


# -- redis-py's cluster client: not private, not documented either (kv/cluster.py) ---------------
def test_redis_cluster_client_has_what_the_cluster_gateway_reads():
    from dataclasses import fields

    from redis.asyncio.cluster import RedisCluster
    from redis.commands.metadata import CommandMetadata

    client = RedisCluster(host="127.0.0.1", port=6379)  # nothing is connected until initialize()
    parser = relied_on("redis", client, "commands_parser", "redis.asyncio.RedisCluster")
    coroutine_with("redis", parser, "get_commands_metadata_cache", [], "RedisCluster.commands_parser")
    coroutine_with("redis", parser, "get_keys", [], "RedisCluster.commands_parser")
    assert {"request_policy", "response_policy"} <= {f.name for f in fields(CommandMetadata)}
    nodes = relied_on("redis", client, "nodes_manager", "redis.asyncio.RedisCluster")
    assert isinstance(relied_on("redis", nodes, "slots_cache", "RedisCluster.nodes_manager"), dict)
    coroutine_with("redis", nodes, "move_slot", ["e"], "RedisCluster.nodes_manager")
    relied_on("redis", nodes, "get_node_from_slot", "RedisCluster.nodes_manager")
    coroutine_with("redis", client, "get_nodes_from_slot", ["command"], "redis.asyncio.RedisCluster")


# -- each check fails, naming what is gone -------------------------------------------------------
def test_a_missing_parser_method_fails_the_check_by_name(monkeypatch):
    from redis._parsers.base import _AsyncRESPBase
    from redis._parsers.resp2 import _AsyncRESP2Parser

    monkeypatch.delattr(_AsyncRESPBase, "_readline")
    assert not hasattr(_AsyncRESP2Parser, "_readline")
    with pytest.raises(AssertionError, match=r"redis 8\.\d+\.\d+: .*_AsyncRESP2Parser has no '_readline'"):
        check_redis_parser()


def test_a_missing_fakeredis_name_fails_the_check_by_name(monkeypatch):
    import fakeredis._helpers

    monkeypatch.delattr(fakeredis._helpers, "SimpleString")
    with pytest.raises(AssertionError, match=r"fakeredis 2\..*has no 'SimpleString'"):
        check_fakeredis_connection()


def test_a_missing_uvicorn_hook_fails_the_check_by_name(monkeypatch):
    monkeypatch.delattr(seams.HttpToolsProtocol, "on_headers_complete")
    with pytest.raises(AssertionError, match=r"uvicorn 0\.\d+\.\d+: .*on_headers_complete\(\)"):
        check_uvicorn_protocol()
