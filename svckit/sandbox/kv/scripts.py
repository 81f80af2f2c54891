"""Lua scripts as the hosted service takes them, run on a stock Redis: shebang flags.

The hosted service accepts script flags stock Redis does not know: upstash-ratelimit's scripts start
with ``#!lua flags=allow-key-locking``, which Redis 7 refuses (``ERR Unexpected flag in script
shebang``). :class:`Scripts` rewrites the scripts of EVAL, EVAL_RO and SCRIPT LOAD before they reach
the backend, keeping the flags Redis knows (:data:`REDIS_FLAGS`) and dropping the others; a backend
that reads no shebang at all (fakeredis) gets the shebang line as a Lua comment, so its flags are not
enforced there. FUNCTION LOAD gets the same treatment for the literal ``flags = {...}`` tables of its
``redis.register_function`` calls (a library's shebang holds no flags).

A rewritten script has another SHA1 than the text the client sent, while the client knows the SHA1 of
its own text (SCRIPT LOAD's reply, or computed locally). So the SHA1 of every original script is kept
pointing at its rewritten copy: EVALSHA, EVALSHA_RO and SCRIPT EXISTS take the original SHA1, SCRIPT
LOAD answers it, and error texts name it. Only rewritten scripts are mapped; the map lives as long as
the process (Redis's script cache does not outlive a restart of the child either).
"""

from __future__ import annotations

import hashlib
import re

from redis.exceptions import ResponseError

from svckit.sandbox.kv.cluster import Pool
from svckit.sandbox.kv.resp import error_text

#: the script flags of stock Redis 7; any other flag is dropped from a shebang.
REDIS_FLAGS = frozenset({b"no-writes", b"allow-oom", b"allow-stale", b"no-cluster", b"allow-cross-slot-keys"})

_FLAGS = b"flags="
_FLAG_TABLE = re.compile(rb"(\bflags\s*=\s*\{)([^{}]*)(\})")
_QUOTED = re.compile(rb"""\s*(["'])([^"']*)\1\s*""")
_SHA = re.compile(rb"[0-9a-f]{40}")


def sha1_hex(script: bytes) -> bytes:
    return hashlib.sha1(script).hexdigest().encode()


def rewrite_shebang(script: bytes, *, native: bool = True) -> bytes:
    """The script as the backend can run it; ``script`` itself when nothing had to change.

    ``native``: the backend reads shebangs (Redis 7); otherwise the shebang line becomes a comment.
    """
    if not script.startswith(b"#!"):
        return script
    if not native:
        return b"--" + script
    end = script.find(b"\n")
    line, rest = (script, b"") if end < 0 else (script[:end], script[end:])
    parts = line.split()
    kept = parts[:1]
    for part in parts[1:]:
        if part.startswith(_FLAGS):
            flags = [f for f in part[len(_FLAGS):].split(b",") if f]
            known = [f for f in flags if f in REDIS_FLAGS]
            if len(known) != len(flags):
                if known:  # "#!lua" alone means what "#!lua flags=" means: no flags
                    kept.append(_FLAGS + b",".join(known))
                continue
        kept.append(part)
    if kept == parts:
        return script
    return b" ".join(kept) + rest


def rewrite_library(code: bytes) -> bytes:
    """A FUNCTION LOAD library with unknown flags dropped from its literal ``flags = {...}`` tables."""

    def table(match: re.Match[bytes]) -> bytes:
        items = [item for item in match.group(2).split(b",") if item.strip()]
        flags = [_QUOTED.fullmatch(item) for item in items]
        if not all(flags):
            return match.group(0)  # not a table of string literals: leave it to Redis
        kept = [item for item, flag in zip(items, flags) if flag is not None and flag.group(2) in REDIS_FLAGS]
        if len(kept) == len(items):
            return match.group(0)
        return match.group(1) + b",".join(kept) + match.group(3)

    return _FLAG_TABLE.sub(table, code)


async def backend_reads_shebangs(pool: Pool) -> bool:
    """True when the backend runs ``#!lua`` scripts (Redis >= 7), False for one that does not (fakeredis)."""
    conn = await pool.get_connection()
    try:
        await conn.send_command("EVAL", "#!lua\nreturn 1", 0)
        try:
            return await conn.read_response() == 1
        except ResponseError:
            return False
    finally:
        await pool.release(conn)


class Scripts:
    """Script commands on their way to the backend (:meth:`command`) and their replies on the way
    back (:meth:`reply`), with the SHA1 map of rewritten scripts."""

    def __init__(self) -> None:
        self.native = True  # set by the area once it has asked the backend
        self._backend_sha: dict[bytes, bytes] = {}  # SHA1 of the client's text -> SHA1 of the rewritten one
        self._client_sha: dict[bytes, bytes] = {}  # the reverse

    def _script(self, script: bytes) -> bytes:
        rewritten = rewrite_shebang(script, native=self.native)
        if rewritten is not script:
            original, backend = sha1_hex(script), sha1_hex(rewritten)
            self._backend_sha[original] = backend
            self._client_sha[backend] = original
        return rewritten

    def _sha(self, sha: bytes) -> bytes:
        return self._backend_sha.get(sha.lower(), sha)

    def command(self, argv: list[bytes]) -> list[bytes]:
        """The command as the backend must get it (the same list when it is not a script command)."""
        if len(argv) < 2:
            return argv
        name = argv[0].upper()
        if name in (b"EVAL", b"EVAL_RO"):
            return [argv[0], self._script(argv[1]), *argv[2:]]
        if name in (b"EVALSHA", b"EVALSHA_RO"):
            return [argv[0], self._sha(argv[1]), *argv[2:]]
        if name == b"SCRIPT" and len(argv) > 2:
            sub = argv[1].upper()
            if sub == b"LOAD" and len(argv) == 3:
                return [argv[0], argv[1], self._script(argv[2])]
            if sub == b"EXISTS":
                return [argv[0], argv[1], *(self._sha(sha) for sha in argv[2:])]
        if name == b"FUNCTION" and len(argv) > 2 and argv[1].upper() == b"LOAD":
            return [*argv[:-1], rewrite_library(argv[-1])]
        return argv

    def reply(self, argv: list[bytes], reply: object) -> object:
        """The backend's reply as the client must see it: SHA1s of rewritten scripts are the originals."""
        if not self._client_sha:
            return reply
        if isinstance(reply, bytes) and len(argv) == 3 and argv[1].upper() == b"LOAD" and argv[0].upper() == b"SCRIPT":
            return self._client_sha.get(reply, reply)
        if isinstance(reply, ResponseError) and argv[0].upper() in (b"EVAL", b"EVAL_RO", b"EVALSHA", b"EVALSHA_RO"):
            text = error_text(reply).encode()
            named = _SHA.sub(lambda m: self._client_sha.get(m.group(), m.group()), text)
            return reply if named == text else ResponseError(named.decode())
        return reply
