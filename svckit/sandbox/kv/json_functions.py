"""JSON.* for backends without the RedisJSON module: a Redis Functions library (json_functions.lua).

The library is loaded with ``FUNCTION LOAD REPLACE`` when the area starts, and the gateway rewrites
``JSON.GET key $.a`` to ``FCALL_RO svckit_json_get 1 key $.a`` (``FCALL`` for writes). Functions run
atomically inside Redis, so JSON commands keep their meaning inside pipelines and MULTI/EXEC, and the
same library serves redis-server and fakeredis, so both give the same replies.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

from redis.exceptions import ResponseError

from svckit.sandbox.kv.cluster import Pool
from svckit.sandbox.kv.commands import COMMANDS, JSON_COMMANDS

LIBRARY = "svckit_json"


@lru_cache(maxsize=1)
def library_source() -> str:
    return resources.files("svckit.sandbox.kv").joinpath("json_functions.lua").read_text(encoding="utf-8")


async def _call(pool: Pool, *args: bytes | str) -> object:
    conn = await pool.get_connection()
    try:
        await conn.send_command(*args)
        return await conn.read_response()
    finally:
        await pool.release(conn)


async def has_json_module(pool: Pool) -> bool:
    """True when the backend answers JSON.* itself (RedisJSON / Redis Stack / Redis 8)."""
    try:
        modules = await _call(pool, "MODULE", "LIST")
    except ResponseError:
        return False  # fakeredis and restricted servers: assume no module
    text = repr(modules).lower()
    return "rejson" in text or "redisjson" in text


def load_command() -> list[bytes]:
    """The command that loads (or reloads) the library."""
    return [b"FUNCTION", b"LOAD", b"REPLACE", library_source().encode()]


def _function(name: bytes) -> tuple[bytes, bytes]:
    command = name.decode("utf-8", "replace").upper()
    suffix = command[5:].lower().encode()
    entry = COMMANDS.get(command)
    fcall = b"FCALL" if entry is None or entry.write else b"FCALL_RO"
    return fcall, b"svckit_json_" + suffix


def to_fcall(argv: list[bytes]) -> list[bytes]:
    """``JSON.<NAME> key ...`` -> ``FCALL[_RO] svckit_json_<name> <numkeys> <keys> <args>``."""
    command = argv[0].decode("utf-8", "replace").upper()
    if command not in JSON_COMMANDS:
        # unknown JSON.* commands: let the function lookup fail with Redis's own error text
        return [b"FCALL", b"svckit_json_" + command[5:].lower().encode(), b"0", *argv[1:]]
    fcall, function = _function(argv[0])
    rest = argv[1:]
    if command == "JSON.MGET":
        keys, args = rest[:-1], rest[-1:]
    elif command == "JSON.MSET":
        keys = rest[0::3]
        args = [a for i, a in enumerate(rest) if i % 3 != 0]
        if len(rest) % 3:
            keys, args = [], rest  # the function reports the wrong number of arguments
    else:
        keys, args = rest[:1], rest[1:]
    return [fcall, function, str(len(keys)).encode(), *keys, *args]
