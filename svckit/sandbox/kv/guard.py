"""What a token may send to the backing Redis and see of it, beyond the command table: on every backend.

The sandbox must not let a token reach the machine or the network beyond its own data
(docs/security.md). Whole commands that do (MIGRATE, REPLICAOF, MODULE, ...) are refused by the
command table (:mod:`.commands`); this module looks at arguments and replies:

- CONFIG SET only of :data:`SETTABLE_CONFIG` (parameters that tune how the data is kept; not the
  script time limit, which is the gateway's: :mod:`.runaway`); CONFIG REWRITE never (it writes a file).
- ACL commands may not touch the sandbox's own Redis users (:data:`.users.RESERVED`), create a user
  without a password (or an empty one) or with selectors, and ``ACL SETUSER`` gets
  :func:`restricting_rules` appended, so a user a token creates never has more rights than the
  gateway's own user.
- The Standard token's ACL changes and CONFIG SET run on the admin connection (:func:`runs_as_admin`),
  once checked here: the gateway's own Redis user has no right whose safety rests on these checks.
- Replies lose what points at the server: fields of INFO, parameters of CONFIG GET, the gateway's
  client address in SLOWLOG GET and ACL LOG, the sandbox's own users in ACL LIST.
- A script refused a command by Redis's ACL (MIGRATE inside EVAL) gets an error that says why.
- Function libraries are one namespace for every Redis user, and a function runs with the rights of
  whoever calls it: a user that could replace a library could put code in a function the owner
  calls, and the owner's next call would run it with the owner's rights. So only the Standard token
  changes libraries (FUNCTION LOAD, DELETE, FLUSH, RESTORE: :func:`library_refusal`, and Redis's ACL
  for users a token creates, :func:`restricting_rules`), and no token replaces or deletes the
  gateway's own JSON.* library (:data:`.json_functions.LIBRARY`); the Standard token's FUNCTION FLUSH
  and RESTORE run with the library loaded again in the same write (:func:`clears_libraries`).

On a redis-server child, Redis's own ACLs enforce the same rules again, inside Lua too (:mod:`.users`).
"""

from __future__ import annotations

import hashlib
import re
from fnmatch import fnmatchcase
from typing import Any

from redis.exceptions import ResponseError

from svckit.sandbox.kv.cluster import Pool
from svckit.sandbox.kv.json_functions import LIBRARY
from svckit.sandbox.kv.resp import error_text
from svckit.sandbox.kv.runaway import SCRIPT_COMMANDS
from svckit.sandbox.kv.users import DATA_EXTRAS, RESERVED, is_reserved_line

HOST_OR_NETWORK = "NOPERM this command reaches the host or the network and the sandbox refuses it"

#: the CONFIG SET parameters a token may change: they tune how the data is encoded, evicted, expired
#: and reported, and reach nothing beyond the data.
SETTABLE_CONFIG = frozenset({
    "maxmemory", "maxmemory-policy", "maxmemory-samples", "maxmemory-eviction-tenacity",
    "notify-keyspace-events", "lazyfree-lazy-eviction", "lazyfree-lazy-expire", "lazyfree-lazy-server-del",
    "lazyfree-lazy-user-del", "lazyfree-lazy-user-flush", "lfu-log-factor", "lfu-decay-time", "activerehashing",
    "hash-max-listpack-entries", "hash-max-listpack-value", "hash-max-ziplist-entries", "hash-max-ziplist-value",
    "list-max-listpack-size", "list-max-ziplist-size", "list-compress-depth", "set-max-intset-entries",
    "set-max-listpack-entries", "set-max-listpack-value", "zset-max-listpack-entries", "zset-max-listpack-value",
    "zset-max-ziplist-entries", "zset-max-ziplist-value", "hll-sparse-max-bytes", "stream-node-max-bytes",
    "stream-node-max-entries", "slowlog-log-slower-than", "slowlog-max-len", "latency-monitor-threshold",
    "latency-tracking", "latency-tracking-info-percentiles",
})
#: how long a script runs before Redis answers BUSY and hears SCRIPT KILL: the gateway's own limit
SCRIPT_TIME_CONFIG = frozenset({"busy-reply-threshold", "lua-time-limit"})

#: CONFIG parameters about the server rather than the data: where it listens and who may connect, its
#: files, its replication peers, its secrets. Hidden from CONFIG GET; CONFIG SET of them is refused as
#: reaching the host or the network.
SERVER_CONFIG = ("dir", "dbfilename", "appendfilename", "appenddirname", "logfile", "aclfile", "pidfile",
                 "unixsocket*", "bind*", "port", "protected-mode", "tls-*", "cluster-*", "*announce*",
                 "replicaof", "slaveof", "master*", "requirepass")

#: INFO fields that point at the server (its address, socket, files, process, replication peers).
SERVER_INFO = ("tcp_port", "executable", "config_file", "process_id", "listener*", "master_host",
               "master_port", "slave[0-9]*")

#: ACL subcommands the gateway's own Redis user may not run: the Standard token's go to the admin
#: connection (after :func:`refusal` and :func:`restrict`); an ACL user runs them as itself.
ADMIN_ACL = frozenset({b"SETUSER", b"DELUSER", b"GETUSER", b"LIST", b"USERS", b"SAVE", b"LOAD", b"LOG", b"DRYRUN"})
_NAMES_ONE_USER = frozenset({b"SETUSER", b"GETUSER", b"DRYRUN", b"RESTTOKEN"})
#: ACL rules that leave a user usable without a password: nopass, and the empty password (in clear
#: and as its SHA-256)
_NO_PASSWORD = frozenset({b"nopass", b">", b"#" + hashlib.sha256(b"").hexdigest().encode()})

#: what stands in for the gateway's own client address (a path in the data directory, or a port)
HIDDEN = b"(hidden)"
_ADDRESS = re.compile(rb"\b(l?addr)=\S*")

_SCRIPT_NOPERM = "can't run this command or subcommand"
_SCRIPT_HINT = (" (the sandbox runs scripts as a Redis user that may not run commands that reach the host or the "
                "network or administer the server, such as MIGRATE, REPLICAOF, MODULE, DEBUG, SHUTDOWN, CONFIG "
                "REWRITE or ACL changes; an ACL user's script is also held to that user's rights, and a Read Only "
                "token's script to that token's: reads only, and not KEYS or SCAN)")
#: FUNCTION subcommands that change the server's function libraries, and the rules that take them away
#: from users a token creates (Redis has no per-library ACL)
LIBRARY_CHANGES = frozenset({b"LOAD", b"DELETE", b"FLUSH", b"RESTORE"})
LIBRARY_RULES = tuple(b"-function|" + sub.lower() for sub in sorted(LIBRARY_CHANGES))
_LIBRARY_NAME = re.compile(rb"\A#!\S*[^\n]*?\bname=(\S+)")
_FILTERED = frozenset({b"INFO", b"CONFIG", b"SLOWLOG", b"ACL"})


def _text(arg: bytes) -> str:
    return arg.decode("utf-8", "replace")


def _matches(name: bytes, patterns: tuple[str, ...]) -> bool:
    text = _text(name).lower()
    return any(fnmatchcase(text, pattern) for pattern in patterns)


def refusal(argv: list[bytes]) -> str | None:
    """Why the sandbox refuses these arguments (CONFIG, ACL), or None."""
    name = argv[0].upper()
    if name not in (b"CONFIG", b"ACL"):
        return None
    sub = argv[1].upper() if len(argv) > 1 else b""
    if name == b"CONFIG":
        if sub == b"REWRITE":
            return f"{HOST_OR_NETWORK}: CONFIG REWRITE writes the server's configuration file"
        if sub == b"SET":
            for param in argv[2::2]:
                why = _config_set_refusal(param)
                if why is not None:
                    return why
    if name == b"ACL":
        return _acl_refusal(sub, argv)
    return None


def _config_set_refusal(param: bytes) -> str | None:
    if _text(param).lower() in SETTABLE_CONFIG:
        return None
    if _text(param).lower() in SCRIPT_TIME_CONFIG:
        return (f"NOPERM the sandbox refuses CONFIG SET {_text(param)}: it stops every script that runs past its "
                f"script time limit itself (Sandbox(kv_script_time_limit=...), 5 s by default), and sets this "
                f"parameter to match")
    if _matches(param, SERVER_CONFIG):
        return (f"{HOST_OR_NETWORK}: CONFIG SET {_text(param)} changes where the server listens, who may "
                f"connect to it, its peers or its files")
    return (f"NOPERM the sandbox refuses CONFIG SET {_text(param)}: only parameters that tune how the data is "
            f"kept may be set (maxmemory, maxmemory-policy, notify-keyspace-events, the *-max-listpack-* "
            f"encodings, ...: the list is in docs/security.md)")


def _acl_refusal(sub: bytes, argv: list[bytes]) -> str | None:
    users = argv[2:3] if sub in _NAMES_ONE_USER else argv[2:] if sub == b"DELUSER" else []
    if any(_text(user) in RESERVED for user in users):
        return (f"NOPERM the sandbox's own Redis users ({', '.join(sorted(RESERVED))}) may not be changed, "
                f"read or used through a token")
    if sub == b"SETUSER":
        for rule in argv[3:]:
            if rule.lower() in _NO_PASSWORD:
                return (f"NOPERM the sandbox refuses ACL SETUSER ... {_text(rule)}: any process that reaches "
                        f"the backing Redis could use a user without a password; give it one (>password)")
            if rule.startswith(b"("):
                return ("NOPERM the sandbox refuses ACL selectors ((...)) in ACL SETUSER: give the user's "
                        "rules without a selector")
    return None


def _library_change(argv: list[bytes]) -> bytes | None:
    """The FUNCTION subcommand of ``argv`` when it changes the function libraries, else None."""
    if len(argv) < 2 or argv[0].upper() != b"FUNCTION":
        return None
    sub = argv[1].upper()
    return sub if sub in LIBRARY_CHANGES else None


def library_refusal(argv: list[bytes], *, acl_user: bool) -> str | None:
    """Why this change of the function libraries is refused, or None: every change for an ACL user's
    token, and replacing or deleting the gateway's own library for any token."""
    sub = _library_change(argv)
    if sub is None:
        return None
    if acl_user:
        return (f"NOPERM the sandbox refuses FUNCTION {_text(sub)} to ACL users: function libraries are shared by "
                f"every user and a function runs with its caller's rights, so only the Standard token may change "
                f"them (call the functions it loaded with FCALL, or run your own code with EVAL)")
    if sub == b"DELETE":
        named = argv[2:3]
    else:  # LOAD names its library in its shebang: #!lua name=...
        match = _LIBRARY_NAME.match(argv[-1]) if sub == b"LOAD" else None
        named = [match.group(1)] if match else []
    if LIBRARY.encode() in named:
        return (f"ERR the library '{LIBRARY}' is the sandbox's own (it serves JSON.*) and may not be replaced or "
                f"deleted; give your library another name")
    return None


def clears_libraries(argv: list[bytes]) -> bool:
    """FUNCTION FLUSH or RESTORE, after which the gateway loads its own library again."""
    return _library_change(argv) in (b"FLUSH", b"RESTORE")


def runs_as_admin(argv: list[bytes]) -> bool:
    """A command the gateway's own Redis user may not run, which the Standard token may once
    :func:`refusal` has checked its arguments: ACL changes (:data:`ADMIN_ACL`) and CONFIG SET."""
    name = argv[0].upper()
    if len(argv) < 2 or name not in (b"CONFIG", b"ACL"):
        return False
    sub = argv[1].upper()
    return (name == b"ACL" and sub in ADMIN_ACL) or (name == b"CONFIG" and sub == b"SET")


async def restricting_rules(pool: Pool) -> tuple[bytes, ...]:
    """The rules appended to every ``ACL SETUSER``: ``-command`` for each command of Redis's @admin and
    @dangerous categories the gateway's user may not run either (asked of the backend, so a newer Redis's
    new admin commands are covered), no change of the function libraries (:data:`LIBRARY_RULES`), and
    ``clearselectors``. Rules that only take rights away, so a user
    keeps the rights it was given that the gateway's own user also has, and no more."""
    conn = await pool.get_connection()
    names: set[str] = set()
    try:
        for category in ("admin", "dangerous"):
            await conn.send_command("ACL", "CAT", category)
            names.update(_text(name).lower() for name in await conn.read_response())
    except ResponseError:  # a backend without ACL CAT: take both categories away whole
        return (b"-@admin", b"-@dangerous", *LIBRARY_RULES, b"clearselectors")
    finally:
        await pool.release(conn)
    allowed = set(DATA_EXTRAS)
    forbidden = sorted(n for n in names if n not in allowed and n.split("|", 1)[0] not in allowed)
    return (*(f"-{name}".encode() for name in forbidden), *LIBRARY_RULES, b"clearselectors")


def restrict(argv: list[bytes], rules: tuple[bytes, ...]) -> list[bytes]:
    """``ACL SETUSER`` with the restricting ``rules`` after the caller's; other commands as they are."""
    if len(argv) > 2 and argv[0].upper() == b"ACL" and argv[1].upper() == b"SETUSER":
        return [*argv, *rules]
    return argv


def filter_reply(argv: list[bytes], reply: Any) -> Any:
    """The reply as a token may see it: nothing that points at the server (INFO, CONFIG GET, and the
    gateway's own client address in SLOWLOG GET and ACL LOG), none of the sandbox's own users in ACL
    LIST, and a script's ACL refusal with the reason."""
    name = argv[0].upper()
    if isinstance(reply, ResponseError):
        text = error_text(reply)
        return ResponseError(text + _SCRIPT_HINT) if name in SCRIPT_COMMANDS and _SCRIPT_NOPERM in text else reply
    if name not in _FILTERED:  # every reply passes here: the common case returns at once
        return reply
    sub = argv[1].upper() if len(argv) > 1 else b""
    if name == b"INFO" and isinstance(reply, bytes):
        lines = reply.split(b"\r\n")
        return b"\r\n".join(line for line in lines if not _matches(line.split(b":", 1)[0], SERVER_INFO))
    if not isinstance(reply, list):
        return reply
    if (name, sub) == (b"CONFIG", b"GET"):
        pairs = zip(reply[0::2], reply[1::2])
        return [item for param, value in pairs if not _matches(param, SERVER_CONFIG) for item in (param, value)]
    if (name, sub) == (b"SLOWLOG", b"GET"):  # id, time, duration, arguments, client address, client name
        return [[*entry[:4], HIDDEN, *entry[5:]] if isinstance(entry, list) and len(entry) > 4 else entry
                for entry in reply]
    if (name, sub) == (b"ACL", b"LOG"):  # each entry's client-info holds addr= and laddr=
        return [[_ADDRESS.sub(rb"\1=" + HIDDEN, item) if isinstance(item, bytes) else item for item in entry]
                if isinstance(entry, list) else entry for entry in reply]
    if (name, sub) == (b"ACL", b"LIST"):
        return [line for line in reply if not (isinstance(line, bytes) and is_reserved_line(_text(line)))]
    return reply
