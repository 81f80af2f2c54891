"""Area A of the sandbox: the key-value REST interface, served by a gateway in front of a real Redis.

:class:`KVArea` picks the backend (see :mod:`.backends`), loads the JSON.* function library when the
backend has no JSON module (see :mod:`.json_functions`), and serves :mod:`.gateway` under ``/kv``.
Attributes for tools that talk to Redis directly (the bench): ``backend_name``, ``redis_url`` (it
carries the gateway's Redis credentials where the backend needs them: never log or show it).

Three kinds of connection reach the backend: the commands of the Standard token (as the gateway's
Redis user), of the Read Only token (as a Redis user that may only read, where the sandbox owns the
server's users, so that its scripts are held to its rules too) or of an ACL user's REST token (as
that user); subscriptions, from pools of their own (:meth:`KVArea.stream_pool_of`); and the
gateway's management work, on the admin pool
(:mod:`.users`, :mod:`.guard`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from redis.exceptions import AuthenticationError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError

from svckit._disk import writing
from svckit._files import read_private, write_private
from svckit.core.wire import STREAM_ERROR
from svckit.errors import mask
from svckit.sandbox.area import Area, Health, SandboxContext, new_token
from svckit.sandbox.kv import guard, json_functions, runaway
from svckit.sandbox.kv.backends import Backend, choose_backend
from svckit.sandbox.kv.cluster import Pool, connection_for
from svckit.sandbox.kv.events import MonitorHub
from svckit.sandbox.kv.gateway import Gateway, Principal
from svckit.sandbox.kv.resp import error_text
from svckit.sandbox.kv.scripts import Scripts, backend_reads_shebangs
from svckit.sandbox.kv.users import RESERVED

log = logging.getLogger(__name__)

__all__ = ["KVArea"]

WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
#: seconds the health check waits for Redis: within health.CHECK_TIMEOUT, so a Redis held by a script
#: is reported as BUSY rather than as an area that did not answer
HEALTH_WAIT = 2.0


class KVArea(Area):
    prefix = "/kv"

    def __init__(self, ctx: SandboxContext) -> None:
        super().__init__(ctx)
        self.backend: Backend = choose_backend(ctx.options, ctx.data_dir, ctx.lock_fd)
        self.monitor = MonitorHub(ctx.options.kv_monitor_backlog_bytes)
        self.closing = asyncio.Event()  # ends every open event stream on shutdown (see drain)
        self.gateway = Gateway(self)
        self.json_native = False
        self.scripts = Scripts()
        self.script_limit = ctx.options.kv_script_time_limit
        self._stopper = runaway.Stopper(self._stop_script)
        self._data_pool: Pool | None = None  # the Standard token's commands
        self._reader_pool: Pool | None = None  # the Read Only token's (users.READER_USER where we own users)
        self._stream_pool: Pool | None = None  # ... and their subscriptions
        self._admin_pool: Pool | None = None  # the gateway's management work
        self._supervisor: asyncio.Task[None] | None = None  # the backend's watch (of a Redis child process)
        self._acl_rules: tuple[bytes, ...] = ()  # appended to every ACL SETUSER (guard.restricting_rules)
        self._tokens_path = Path(ctx.data_dir) / "kv_rest_tokens.json"
        self._lock = threading.Lock()
        self._acl_tokens: dict[str, dict[str, str]] = self._load_rest_tokens()
        self._principals: dict[str, Principal] = {}
        self._rebuild_principals()

    # -- what the sandbox asks of an area ----------------------------------------------------
    @property
    def backend_name(self) -> str:
        return self.backend.name

    @property
    def redis_url(self) -> str | None:
        return self.backend.redis_url

    @property
    def max_body_bytes(self) -> int:
        """The request body cap (413 beyond it, before it is read; svckit/sandbox/limits.py): the
        maximum request size, as the spec has it. The gateway's own check still applies it to each
        command, path arguments included."""
        return self.gateway.max_request_size

    def body_too_large(self, limit: int) -> str:
        return (f"ERR max request size exceeded: the request body is too large, over the limit of {limit} "
                "bytes (Sandbox(kv_max_request_size=...)); send less per request (split a pipeline into several)")

    def app(self) -> Gateway:
        return self.gateway

    def env(self, base_url: str) -> dict[str, str]:
        return {
            "SVC_KV_URL": base_url.rstrip("/") + self.prefix,
            "SVC_KV_TOKEN": self.ctx.credentials.kv_token,
            "SVC_KV_READONLY_TOKEN": self.ctx.credentials.kv_readonly_token,
        }

    async def start(self) -> None:
        await self.backend.start()
        self._data_pool = self.backend.pool()
        self._reader_pool = self.backend.reader_pool() or self._data_pool
        self._stream_pool = self._bounded(self.backend.pool())
        self._admin_pool = self.backend.admin_pool()
        self._rebuild_principals()
        await self._prepare()
        how = "native JSON module" if self.json_native else "JSON.* via the svckit Lua function library"
        log.info("kv backend: %s; %s", self.backend.describe(), how)
        self._supervisor = asyncio.create_task(self.backend.supervise(self._restarted))

    async def _prepare(self) -> None:
        """What the gateway sets up in a Redis it has just reached: the restricting ACL rules, the
        JSON.* functions where Redis has no JSON module, whether scripts may carry shebangs."""
        assert self._admin_pool is not None and self._data_pool is not None
        self._acl_rules = await guard.restricting_rules(self._admin_pool)
        if self.backend.owns_users:
            await self._restrict_existing_users()
        self.json_native = await json_functions.has_json_module(self._admin_pool)
        if not self.json_native:  # on every master of a cluster
            [loaded] = await self.gateway.run_batch(self._admin_pool, [json_functions.load_command()], hold=False)
            if isinstance(loaded, ResponseError):
                raise loaded
        self.scripts.native = await backend_reads_shebangs(self._data_pool)
        await self._bound_scripts()

    async def _bound_scripts(self) -> None:
        """Scripts end at the script time limit (:mod:`.runaway`): a child of ours answers BUSY, and so
        hears the gateway's SCRIPT KILL, from then on; fakeredis's in-process Lua gets a hook that ends
        a script there, and loses what would reach the host."""
        assert self._admin_pool is not None and self._data_pool is not None
        limit = self.script_limit
        if self.backend.owns_users:
            ms = str(max(1, round(limit * 1000))).encode()
            [done] = await self.gateway.run_batch(self._admin_pool, [[b"CONFIG", b"SET", b"busy-reply-threshold", ms]],
                                                  hold=False)
            if isinstance(done, ResponseError):
                raise done
        elif self.backend.name == "fakeredis":
            message = (f"ERR the script ran past {runaway.limit_text(limit)} and the sandbox stopped it; on fakeredis "
                       f"what it wrote before is kept")
            [done] = await self.gateway.run_batch(self._data_pool, [
                [b"EVAL", runaway.IN_PROCESS_GUARD, b"0", str(limit).encode(), message.encode()]], hold=False)
            if isinstance(done, ResponseError):
                raise done

    def script_watch(self, rows: list[list[bytes]]) -> runaway.ScriptWatch | None:
        """The watch of a batch holding a script, which the gateway stops at the time limit; else None."""
        return runaway.ScriptWatch(self.script_limit, self._stopper) if runaway.holds_script(rows) else None

    async def _stop_script(self) -> str | None:
        admin = self._admin_pool
        assert admin is not None, "the kv area has not started"

        async def run(batch: list[list[bytes]]) -> list[Any]:
            return await self.gateway.run_batch(admin, batch, hold=False)

        return await runaway.stop_running_script(run, lambda: self.backend.end_without_saving(run))

    async def _restarted(self) -> None:
        """The backend's Redis was started again: drop the idle connections to the one that died (a
        connection in use fails on its own and is dropped), and prepare the new one as at start."""
        for pool in self._pools():
            await pool.disconnect(inuse_connections=False)
        await self._prepare()

    def _pools(self) -> list[Pool]:
        pools = [self._data_pool, self._reader_pool, self._stream_pool, self._admin_pool,
                 *(p.pool for p in self._principals.values()), *(p.stream_pool for p in self._principals.values())]
        return list({id(p): p for p in pools if p is not None}.values())

    async def health(self) -> list[Health]:
        """"redis": Redis answers, is not held by a script (BUSY), and takes writes (it refuses them
        while it cannot write its AOF or its snapshot: a full or read-only disk)."""
        assert self._data_pool is not None, "the kv area has not started"
        busy = (f"BUSY: Redis is running a script or a long command and answers nothing else; the gateway "
                f"stops a script at {runaway.limit_text(self.script_limit)}")
        try:
            replies = await asyncio.wait_for(self.gateway.run_batch(
                self._data_pool, [[b"PING"], [b"INFO", b"persistence"]], hold=False), HEALTH_WAIT)
        except RedisConnectionError as exc:
            return [Health("redis", False, self.backend.outage(exc)[0])]
        except TimeoutError:
            return [Health("redis", False, f"{busy} (no answer within {HEALTH_WAIT:g} s)")]
        if runaway.all_busy(replies):
            return [Health("redis", False, f"{busy} ({error_text(replies[0])})")]
        info = replies[1] if isinstance(replies[1], bytes) else b""  # fakeredis has no INFO
        if any(name + b":err" in info for name in (b"aof_last_write_status", b"rdb_last_bgsave_status")):
            why = self._cannot_write()
            return [Health("redis", False, f"answers, but refuses writes: {why}")]
        restarts = self.backend.restarts
        again = f"; restarted {restarts} time{'s' * (restarts != 1)}" if restarts else ""
        return [Health("redis", True, f"answers: {self.backend.describe()}{again}")]

    def _cannot_write(self) -> str:
        """Why Redis refuses writes (MISCONF), and where: the data directory of a child of ours."""
        where = self.backend.dir
        place = f"its data directory {where}" if where is not None else "its data directory"
        return (f"Redis could not write its append-only file or snapshot to {place} (full or read-only?); "
                "it takes writes again by itself once it can write there")

    # -- what the developer API lists (svckit/sandbox/devapi) -------------------------------------
    resource_kind = "redis"

    def resource_records(self, origin: str) -> dict[str, dict[str, Any]]:
        """The one database, its REST URL on ``origin`` and tokens, and the bounds the gateway
        enforces (request size, commands per UTC day); -1 for the vendor's bounds it does not have."""
        parts = urlsplit(origin)
        tls = parts.scheme == "https"
        creds = self.ctx.credentials
        unbounded = ("db_max_entry_size", "db_memory_threshold", "db_disk_threshold", "db_max_clients",
                     "db_max_commands_per_second")
        return {"sandbox": {
            "port": parts.port or (443 if tls else 80), "tls": tls, "state": "active", "primary_region": "local",
            "endpoint": origin + self.prefix, "rest_token": creds.kv_token,
            "read_only_rest_token": creds.kv_readonly_token, "eviction": False,
            "db_max_request_size": self.gateway.max_request_size, "db_request_limit": self.gateway.daily_limit,
            **dict.fromkeys(unbounded, -1)}}

    async def resource_stats(self, name: str) -> dict[str, Any]:
        """``commands_today`` (the count the daily limit uses), ``keys`` and ``storage_bytes`` (the
        backend's used_memory; 0 where it has no INFO, as fakeredis)."""
        keys, info = await self.gateway.run_batch(self._standard_pool(), [[b"DBSIZE"], [b"INFO", b"memory"]],
                                                  hold=False)
        used = 0
        for line in info.splitlines() if isinstance(info, bytes) else ():
            field, _, value = line.partition(b":")
            if field == b"used_memory":
                used = int(value)
        return {"commands_today": self.gateway.commands_today(), "keys": keys if isinstance(keys, int) else 0,
                "storage_bytes": used}

    async def holds(self) -> str:
        try:
            [keys] = await self.gateway.run_batch(self._standard_pool(), [[b"DBSIZE"]], hold=False)
        except RedisConnectionError:
            return "Redis away just now (GET /health says why)"
        return f"{keys:,} key{'' if keys == 1 else 's'}"

    async def drain(self) -> None:
        self.closing.set()

    async def stop(self) -> None:
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        for pool in self._pools():
            await pool.disconnect()
        await self.backend.stop()

    async def _restrict_existing_users(self) -> None:
        """Every ACL user other than the sandbox's own gets the restricting rules, as if it had been
        created through the gateway now: users kept in the ACL file by an older sandbox may have more."""
        assert self._admin_pool is not None
        # hold=False: run while a restarted child is being prepared, which requests wait for
        [names] = await self.gateway.run_batch(self._admin_pool, [[b"ACL", b"USERS"]], hold=False)
        others = [name for name in names if name.decode("utf-8", "replace") not in RESERVED]
        if others:
            await self.gateway.run_batch(self._admin_pool, [[b"ACL", b"SETUSER", name, *self._acl_rules]
                                                            for name in others], hold=False)

    async def seed(self, name: str) -> None:
        if name != "demo":
            return
        pool = self._standard_pool()
        await self.gateway.run_batch(pool, [
            [b"SET", b"greeting", b"hello"],
            [b"HSET", b"user:1", b"name", b"Ada", b"lang", b"python"],
            [b"RPUSH", b"queue:jobs", b"a", b"b", b"c"],
            [b"ZADD", b"leaderboard", b"30", b"ada", b"20", b"bob", b"10", b"cy"],
            self.translate([b"JSON.SET", b"doc:1", b"$", b'{"title":"svckit","tags":["kv","json"]}']),
        ])

    # -- tokens ------------------------------------------------------------------------------
    def reset_password(self) -> None:
        """Rotate the Standard and Read Only tokens (persisted); the old ones get 401 at once."""
        creds = self.ctx.credentials
        creds.kv_token, creds.kv_readonly_token = new_token(), new_token()
        creds.save()
        self._rebuild_principals()
        log.info("kv password reset: new tokens %s, %s", mask(creds.kv_token), mask(creds.kv_readonly_token))

    def _rebuild_principals(self) -> None:
        principals = {
            self.ctx.credentials.kv_token: Principal("standard", pool=self._data_pool),
            self.ctx.credentials.kv_readonly_token: Principal("readonly", pool=self._reader_pool),
        }
        old = getattr(self, "_principals", {})
        for token, user in self._acl_tokens.items():
            known = old.get(token)
            principals[token] = known if known is not None else Principal(
                "acl", username=user["username"], password=user["password"])
        self._principals = principals  # one assignment: readers on the event loop see old or new

    def principal_for(self, token: str) -> Principal | None:
        """The principal of ``token``, compared in constant time against every known token (a dict
        lookup would compare the strings with an early exit on the first differing character)."""
        given = token.encode("utf-8", "surrogateescape")
        found = None
        for known, principal in self._principals.items():
            if hmac.compare_digest(given, known.encode()):
                found = principal  # no break: the time does not depend on which token matched
        return found

    def _standard_pool(self) -> Pool:
        """The pool of the Standard token's commands (the demo seed, ``holds``)."""
        return self.pool_of(self._principals[self.ctx.credentials.kv_token])

    def pool_of(self, principal: Principal) -> Pool:
        if principal.pool is None:
            if principal.kind == "acl":
                principal.pool = self.backend.pool(principal.username, principal.password)
            else:
                principal.pool = self._reader_pool if principal.readonly else self._data_pool
        assert principal.pool is not None, "the kv area has not started"
        return principal.pool

    def stream_pool_of(self, principal: Principal) -> Pool:
        """Where ``principal``'s subscriptions get their connections: never the pool that serves
        commands, so open streams cannot make a command wait for a connection."""
        if principal.kind != "acl":
            assert self._stream_pool is not None, "the kv area has not started"
            return self._stream_pool
        if principal.stream_pool is None:
            principal.stream_pool = self._bounded(self.backend.pool(principal.username, principal.password))
        return principal.stream_pool

    def _bounded(self, pool: Pool) -> Pool:
        pool.max_connections = self.gateway.streams.total  # the stream limits count first; this is a backstop
        return pool

    def _load_rest_tokens(self) -> dict[str, dict[str, str]]:
        text = read_private(self._tokens_path)  # a symbolic link or another's file: refused, not read
        try:
            return json.loads(text or "{}")
        except ValueError:
            return {}

    @staticmethod
    def is_resttoken(argv: list[bytes]) -> bool:
        return len(argv) >= 2 and argv[0].upper() == b"ACL" and argv[1].upper() == b"RESTTOKEN"

    def runs_aside(self, argv: list[bytes], principal: Principal) -> bool:
        """A command the gateway runs itself rather than on the principal's connection: ACL RESTTOKEN,
        the Standard token's commands its Redis user may not run (ACL changes, CONFIG SET: on the
        admin pool, once the guard has checked them), and its FUNCTION FLUSH and RESTORE where the
        gateway's JSON.* library must be loaded again after them."""
        return self.is_resttoken(argv) or (principal.kind == "standard" and (
            guard.runs_as_admin(argv) or (not self.json_native and guard.clears_libraries(argv))))

    async def run_aside(self, argv: list[bytes]) -> Any:
        """Run a command :meth:`runs_aside` picked; its reply (an error as a value)."""
        if self.is_resttoken(argv):
            return await self.mint_rest_token(argv)
        if guard.clears_libraries(argv):
            return await self._clear_libraries(argv)
        assert self._admin_pool is not None, "the kv area has not started"
        [reply] = await self.gateway.run_batch(self._admin_pool, [self.translate(argv)])
        return self.translate_reply(argv, reply)

    async def _clear_libraries(self, argv: list[bytes]) -> Any:
        """The Standard token's FUNCTION FLUSH or RESTORE, with the JSON.* library loaded again right
        after it in the same write, so JSON.* keep working and run the sandbox's own code."""
        [reply, loaded] = await self.gateway.run_batch(self._standard_pool(), [argv, json_functions.load_command()])
        if isinstance(loaded, ResponseError) and not isinstance(reply, ResponseError):
            return ResponseError(f"ERR {argv[1].decode('utf-8', 'replace').upper()} ran, but the sandbox could not "
                                 f"load its JSON.* library '{json_functions.LIBRARY}' again ({error_text(loaded)}): "
                                 f"delete the library whose functions are named svckit_json_*")
        return self.translate_reply(argv, reply)

    async def mint_rest_token(self, argv: list[bytes]) -> Any:
        """``ACL RESTTOKEN <user> <password>``: check the pair against Redis itself, then mint a token
        whose requests run on connections authenticated as that user (Redis enforces its rights)."""
        if len(argv) != 4:
            return ResponseError("ERR wrong number of arguments for 'acl|resttoken' command")
        username, password = argv[2].decode("utf-8", "replace"), argv[3].decode("utf-8", "replace")
        pool = self.backend.pool(username, password)
        try:
            conn = await pool.get_connection()
            await pool.release(conn)
        except (ResponseError, AuthenticationError) as exc:
            await pool.disconnect()
            text = error_text(exc)
            return ResponseError(text if text.startswith("WRONGPASS") else WRONGPASS)
        token = new_token()
        failure: OSError | None = None
        with self._lock:
            tokens = {**self._acl_tokens, token: {"username": username, "password": password}}
            try:  # in use only once on disk: a token that a restart would forget is never handed out
                with writing(self._tokens_path):
                    write_private(self._tokens_path, json.dumps(tokens))
            except OSError as exc:  # a DiskError when the disk refused: it names the file
                failure = exc
            else:
                self._acl_tokens = tokens
                self._rebuild_principals()
        if failure is not None:
            await pool.disconnect()
            return ResponseError(f"ERR no token made: {failure}")
        self._principals[token].pool = pool
        return token.encode()

    # -- commands ----------------------------------------------------------------------------
    def translate(self, argv: list[bytes]) -> list[bytes]:
        """The command as sent to Redis: JSON.* become FCALLs when the backend lacks the module, and
        scripts lose the shebang flags Redis does not know (see :mod:`.scripts`)."""
        if not self.json_native and argv[0][:5].upper() == b"JSON.":
            return json_functions.to_fcall(argv)
        return guard.restrict(self.scripts.command(argv), self._acl_rules)

    def translate_reply(self, argv: list[bytes], reply: Any) -> Any:
        """Redis's reply to the translation of ``argv`` as the client must see it (script SHA1s, and
        nothing that points at the server: see :mod:`.guard`)."""
        reply = guard.filter_reply(argv, self.scripts.reply(argv, reply))
        if isinstance(reply, ResponseError) and error_text(reply).startswith("MISCONF"):
            return ResponseError(f"MISCONF {self._cannot_write()}")
        return reply

    async def subscription(self, principal: Principal, channel: bytes) -> AsyncIterator[str]:
        """A subscription's lines, on a connection of its own (a subscribed connection can do nothing
        else, so it never goes back to the pool), taken now: a Redis that cannot be reached raises
        here, before the stream's 200 is sent, and the gateway answers 503."""
        pool = self.stream_pool_of(principal)
        conn = await connection_for(pool, channel)
        return self._subscribed(pool, conn, channel)

    async def _subscribed(self, pool: Pool, conn: Any, channel: bytes) -> AsyncIterator[str]:
        """``subscribe,<channel>,<n>`` then ``message,<channel>,<message>`` lines."""
        close_server_side = self.backend.closer(conn)
        try:
            await conn.send_command(b"SUBSCRIBE", channel)
            while True:
                try:
                    reply = await conn.read_response(timeout=None)
                except ResponseError as exc:
                    yield f"{STREAM_ERROR}{error_text(exc)}"
                    return
                if reply is None:
                    await asyncio.sleep(0)
                    continue
                yield ",".join(part.decode("utf-8", "replace") if isinstance(part, bytes) else str(part)
                               for part in reply)
        finally:
            with contextlib.suppress(Exception):
                close_server_side()
            await conn.disconnect()
            await pool.release(conn)
