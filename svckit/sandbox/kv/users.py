"""The Redis users of a redis-server child: who the gateway talks to Redis as, and nobody else.

Redis's own ACLs keep the backing Redis for the gateway alone (docs/security.md):

- ``default`` is off: a client that connects without credentials gets ``NOAUTH`` on every command,
  and ``AUTH default ...`` is refused (``WRONGPASS``). It still holds the gateway's command rights,
  since nobody can be it: Redis 7.0 replays its append-only file as ``default`` and checks each
  transaction's commands against its rights again at EXEC, so a ``default`` with none dropped every
  transaction, and every script with two writes, at each start (redis/redis#14541).
- ``svckit-gateway`` runs every token's commands: every command family of the spec, and nothing of
  ``@admin`` / ``@dangerous`` beyond :data:`DATA_EXTRAS`, so Redis refuses MIGRATE, REPLICAOF,
  MODULE, DEBUG, SHUTDOWN, ACL changes and the rest, inside Lua scripts too.
- ``svckit-reader`` runs the Read Only token's commands: reads only, and not KEYS or SCAN
  (:data:`READER_RULES`), so Redis holds that token to its rules inside its scripts too.
- ``svckit-admin`` does the gateway's own management work: loading the JSON function library, the
  Standard token's ACL commands and CONFIG SET, once :mod:`.guard` has checked and restricted them,
  and stopping a script that runs past the sandbox's time limit (SCRIPT KILL, FUNCTION KILL, and
  SHUTDOWN NOSAVE for one that wrote and cannot be killed: :mod:`.runaway`). Nothing whose safety rests on the gateway's argument checks is left to ``svckit-gateway``,
  whose password tools that talk to Redis directly hold (``KVArea.redis_url``).

Their passwords are random per data directory, kept in ``<data-dir>/kv_redis_users.json`` (mode
0600); the ACL file holds only their SHA-256, and nothing puts them on a command line or in a log.
The ACL file's lines for these users are written anew before every start (so a data directory
from before this scheme, whose ``default`` user had no password, is closed too); every other line
(users created through the gateway and kept with ``ACL SAVE``) is left as it is.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from pathlib import Path

from svckit._files import read_private, write_private

GATEWAY_USER = "svckit-gateway"
ADMIN_USER = "svckit-admin"
READER_USER = "svckit-reader"
#: users a token may not create, change, delete, inspect or mint a REST token for.
RESERVED = frozenset({"default", GATEWAY_USER, ADMIN_USER, READER_USER})

#: what the spec's command families need from Redis's @admin and @dangerous categories: commands
#: that act on the data (or report on it) and reach nothing beyond it. (CONFIG SET of the harmless
#: parameters :mod:`.guard` allows runs as ``svckit-admin``.)
DATA_EXTRAS = ("keys", "sort", "sort_ro", "restore", "flushall", "flushdb", "swapdb", "info", "lastsave",
               "save", "bgsave", "bgrewriteaof", "slowlog", "latency", "config|get", "config|resetstat")
DATA_RULES = ("~*", "&*", "+@all", "-@admin", "-@dangerous", *(f"+{name}" for name in DATA_EXTRAS))
#: the management work, and nothing else: a bug that sent a token's command here would be refused.
ADMIN_RULES = ("~*", "&*", "-@all", "+acl", "+config|set", "+function|load", "+module|list", "+ping",
               "+script|kill", "+function|kill", "+shutdown")
#: the Read Only token's rights (the spec: read commands only, and not the powerful reads SCAN and
#: KEYS): Redis's @read, the reads of the gateway's command table outside it, MULTI/EXEC for
#: /multi-exec, and the read-only script commands, whose scripts Redis then holds to these same rules.
READER_RULES = ("~*", "&*", "-@all", "+@read", "+eval_ro", "+evalsha_ro", "+fcall_ro", "+ping", "+echo", "+info",
                "+lastsave", "+time", "+command", "+lolwut", "+memory", "+pubsub", "+object|help", "+xinfo|help",
                "+multi", "+exec", "+discard", "-keys", "-scan")


def load_passwords(data_dir: Path) -> dict[str, str]:
    """The gateway users' passwords of this data directory, created on first use."""
    path = data_dir / "kv_redis_users.json"
    try:  # not a symbolic link, the user's own alone (svckit._files.read_private)
        known = json.loads(read_private(path) or "{}")
    except ValueError:
        known = {}
    wanted = {name: known.get(name) or secrets.token_hex(32) for name in (GATEWAY_USER, ADMIN_USER, READER_USER)}
    if wanted != known:
        write_private(path, json.dumps(wanted))
    return wanted


def _sha256(password: str) -> str:
    return hashlib.sha256(password.encode()).hexdigest()


def write_acl_file(path: Path, passwords: dict[str, str]) -> None:
    """The ACL file with this sandbox's own users first, every other user kept as it was."""
    try:
        old = path.read_text().splitlines()
    except FileNotFoundError:
        old = []
    kept = [line for line in old if not is_reserved_line(line)]
    ours = [
        " ".join(["user", "default", "off", "resetpass", *DATA_RULES]),
        " ".join(["user", ADMIN_USER, "on", "#" + _sha256(passwords[ADMIN_USER]), *ADMIN_RULES]),
        " ".join(["user", GATEWAY_USER, "on", "#" + _sha256(passwords[GATEWAY_USER]), *DATA_RULES]),
        " ".join(["user", READER_USER, "on", "#" + _sha256(passwords[READER_USER]), *READER_RULES]),
    ]
    write_private(path, "\n".join(ours + kept) + "\n")


def is_reserved_line(line: str) -> bool:
    """A line of the ACL file (or of ACL LIST) that defines one of the sandbox's own users."""
    parts = line.split()
    return len(parts) >= 2 and parts[0] == "user" and parts[1] in RESERVED
