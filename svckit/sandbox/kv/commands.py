"""The command table of the key-value area: what each command is, and what the gateway allows.

Rule 7 of Endpoints A and the token rules need to know, per command, its family, whether it writes,
and whether the REST interface refuses it. The table is plain data so tests can iterate it (every
unsupported command is refused, every write is refused to the Read Only token, ...). Commands that
are not in the table go to Redis as they are (Redis answers ``ERR unknown command`` when it has to);
the Read Only token accepts only commands listed here as reads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str
    family: str
    write: bool = False
    #: why the REST interface refuses it; None when it is supported.
    unsupported: str | None = None
    #: a read the Read Only token still may not run (SCAN, KEYS: too powerful for a public token).
    readonly_refused: bool = False


BLOCKING = "blocking commands cannot be served over REST"
CONNECTION = "connection commands other than PING and ECHO are not supported over REST"
TRANSACTION = "WATCH, UNWATCH and DISCARD are not supported; send the whole transaction to /multi-exec"
MULTI_SINGLE = "send a transaction as one request to /multi-exec"
CLUSTER = "cluster commands are not supported"
SUBSCRIBE = "subscribe with POST /subscribe/{channel} (an event stream)"
MONITOR = "watch commands with POST /monitor (an event stream)"
#: commands that reach the machine or the network beyond the sandbox's own data (docs/security.md);
#: Redis's ACLs refuse them to the gateway's Redis user as well, inside scripts too (users.py).
HOST_OR_NETWORK = "it reaches the host or the network and the sandbox refuses it"
SERVER_ADMIN = {
    "MIGRATE": "copies keys to a Redis server at any address",
    "REPLICAOF": "makes this server copy, and then serve, another server's data at any address",
    "SLAVEOF": "makes this server copy, and then serve, another server's data at any address",
    "FAILOVER": "hands this server's role to a replica at another address",
    "SYNC": "streams the whole dataset to a replica",
    "PSYNC": "streams the whole dataset to a replica",
    "REPLCONF": "configures a replication link",
    "MODULE": "loads native code from a file on the host into the server",
    "DEBUG": "can crash, freeze or reload the server and write its memory to files",
    "SHUTDOWN": "stops the server for everyone (stop the sandbox instead)",
}

_READ, _WRITE = False, True

_FAMILIES: dict[str, dict[bool, str]] = {
    "string": {
        _READ: "GET GETRANGE MGET STRLEN SUBSTR LCS",
        _WRITE: "APPEND DECR DECRBY GETDEL GETEX GETSET INCR INCRBY INCRBYFLOAT MSET MSETNX PSETEX SET "
                "SETEX SETNX SETRANGE",
    },
    "bitmap": {_READ: "BITCOUNT BITFIELD_RO BITPOS GETBIT", _WRITE: "BITFIELD BITOP SETBIT"},
    "hash": {
        _READ: "HEXISTS HGET HGETALL HKEYS HLEN HMGET HRANDFIELD HSCAN HSTRLEN HVALS HTTL HPTTL HEXPIRETIME "
               "HPEXPIRETIME",
        _WRITE: "HDEL HINCRBY HINCRBYFLOAT HMSET HSET HSETNX HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HPERSIST "
                "HGETDEL HGETEX HSETEX",
    },
    "list": {
        _READ: "LINDEX LLEN LPOS LRANGE",
        _WRITE: "LINSERT LMOVE LMPOP LPOP LPUSH LPUSHX LREM LSET LTRIM RPOP RPOPLPUSH RPUSH RPUSHX",
    },
    "set": {
        _READ: "SCARD SDIFF SINTER SINTERCARD SISMEMBER SMEMBERS SMISMEMBER SRANDMEMBER SSCAN SUNION",
        _WRITE: "SADD SDIFFSTORE SINTERSTORE SMOVE SPOP SREM SUNIONSTORE",
    },
    "sorted-set": {
        _READ: "ZCARD ZCOUNT ZDIFF ZINTER ZINTERCARD ZLEXCOUNT ZMSCORE ZRANDMEMBER ZRANGE ZRANGEBYLEX "
               "ZRANGEBYSCORE ZRANK ZREVRANGE ZREVRANGEBYLEX ZREVRANGEBYSCORE ZREVRANK ZSCAN ZSCORE ZUNION",
        _WRITE: "ZADD ZDIFFSTORE ZINCRBY ZINTERSTORE ZMPOP ZPOPMAX ZPOPMIN ZRANGESTORE ZREM ZREMRANGEBYLEX "
                "ZREMRANGEBYRANK ZREMRANGEBYSCORE ZUNIONSTORE",
    },
    "geo": {
        _READ: "GEODIST GEOHASH GEOPOS GEORADIUS_RO GEORADIUSBYMEMBER_RO GEOSEARCH",
        _WRITE: "GEOADD GEORADIUS GEORADIUSBYMEMBER GEOSEARCHSTORE",
    },
    "hyperloglog": {_READ: "PFCOUNT", _WRITE: "PFADD PFMERGE"},
    "generic": {
        _READ: "DUMP EXISTS EXPIRETIME KEYS OBJECT PEXPIRETIME PTTL RANDOMKEY SCAN SORT_RO TOUCH TTL TYPE",
        _WRITE: "COPY DEL EXPIRE EXPIREAT MOVE PERSIST PEXPIRE PEXPIREAT RENAME RENAMENX RESTORE SORT UNLINK",
    },
    "server": {
        _READ: "DBSIZE INFO LASTSAVE TIME COMMAND LOLWUT MEMORY",
        _WRITE: "FLUSHALL FLUSHDB CONFIG ACL BGSAVE BGREWRITEAOF SAVE SLOWLOG LATENCY SWAPDB",
    },
    "scripting": {
        _READ: "EVAL_RO EVALSHA_RO FCALL_RO",
        _WRITE: "EVAL EVALSHA FCALL FUNCTION SCRIPT",
    },
    "pubsub": {_READ: "PUBSUB", _WRITE: "PUBLISH SPUBLISH"},
    "connection": {_READ: "PING ECHO"},
    "stream": {
        _READ: "XINFO XLEN XPENDING XRANGE XREVRANGE XREAD",
        _WRITE: "XACK XADD XAUTOCLAIM XCLAIM XDEL XGROUP XREADGROUP XSETID XTRIM",
    },
    "json": {
        _READ: "JSON.GET JSON.MGET JSON.TYPE JSON.ARRLEN JSON.STRLEN JSON.OBJKEYS JSON.OBJLEN JSON.ARRINDEX",
        _WRITE: "JSON.SET JSON.DEL JSON.FORGET JSON.NUMINCRBY JSON.NUMMULTBY JSON.ARRAPPEND JSON.ARRINSERT "
                "JSON.ARRPOP JSON.ARRTRIM JSON.CLEAR JSON.TOGGLE JSON.STRAPPEND JSON.MSET JSON.MERGE",
    },
}

_UNSUPPORTED: dict[str, tuple[str, str]] = {
    **{name: ("list", BLOCKING) for name in ["BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BLMPOP"]},
    **{name: ("sorted-set", BLOCKING) for name in ["BZPOPMAX", "BZPOPMIN", "BZMPOP"]},
    "WAIT": ("generic", BLOCKING),
    "WAITAOF": ("generic", BLOCKING),
    **{name: ("transaction", TRANSACTION) for name in ["WATCH", "UNWATCH", "DISCARD"]},
    **{name: ("transaction", MULTI_SINGLE) for name in ["MULTI", "EXEC"]},
    **{name: ("connection", CONNECTION) for name in ["AUTH", "CLIENT", "HELLO", "QUIT", "RESET", "SELECT"]},
    **{name: ("cluster", CLUSTER) for name in ["CLUSTER", "READONLY", "READWRITE", "ASKING"]},
    **{name: ("pubsub", SUBSCRIBE)
       for name in ["SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE"]},
    "MONITOR": ("server", MONITOR),
    **{name: ("server", f"{HOST_OR_NETWORK}: {name} {why}") for name, why in SERVER_ADMIN.items()},
}

_READONLY_REFUSED = frozenset({"SCAN", "KEYS"})


def _build() -> dict[str, Command]:
    table: dict[str, Command] = {}
    for family, kinds in _FAMILIES.items():
        for write, names in kinds.items():
            for name in names.split():
                table[name] = Command(name, family, write=write, readonly_refused=name in _READONLY_REFUSED)
    for name, (family, why) in _UNSUPPORTED.items():
        table[name] = Command(name, family, write=True, unsupported=why)
    return table


#: upper-case command name -> its entry. Iterate it in tests; look commands up with :func:`lookup`.
COMMANDS: dict[str, Command] = _build()
#: the JSON.* commands the gateway provides itself when the backend has no JSON module.
JSON_COMMANDS = tuple(sorted(name for name, cmd in COMMANDS.items() if cmd.family == "json"))


def lookup(name: bytes | str) -> Command | None:
    key = (name.decode("utf-8", "replace") if isinstance(name, bytes) else name).upper()
    return COMMANDS.get(key)


def refusal(argv: list[bytes], *, readonly: bool) -> str | None:
    """The error text that refuses this command, or None when the gateway may run it."""
    if not argv:
        return "ERR empty command"
    name = argv[0].decode("utf-8", "replace").upper()
    cmd = COMMANDS.get(name)
    if cmd is not None and cmd.unsupported:
        return f"ERR Command is not available: '{name}' ({cmd.unsupported})"
    if name in ("XREAD", "XREADGROUP") and any(a.upper() == b"BLOCK" for a in argv[1:]):
        return f"ERR Command is not available: '{name} ... BLOCK' ({BLOCKING})"
    if readonly:
        if cmd is None or cmd.write:
            return f"NOPERM this user has no permissions to run the '{name.lower()}' command (read-only token)"
        if cmd.readonly_refused:
            return f"NOPERM the read-only token may not run '{name.lower()}'"
    return None
