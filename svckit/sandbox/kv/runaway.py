"""Scripts bounded in time and stopped by the gateway itself, for every token.

A Lua script (EVAL, FCALL and their read-only forms) holds Redis: nothing else runs while it does,
and once it has run ``busy-reply-threshold`` every other client is answered BUSY. Redis stops a
script only when asked (SCRIPT KILL, FUNCTION KILL), and cannot stop one that has written
(UNKILLABLE) short of ending the server. So the gateway bounds every script in time itself
(``Sandbox(kv_script_time_limit=...)``, :data:`DEFAULT_SCRIPT_TIME_LIMIT`):

- a batch that holds a script and is not answered within the limit (:class:`ScriptWatch`) makes the
  gateway stop the running script on its admin connection: SCRIPT KILL and FUNCTION KILL (the
  caller gets an error naming the limit);
- a script Redis answers UNKILLABLE for is ended with its server: a redis-server child gets SHUTDOWN
  NOSAVE (SIGKILL if it does not go) and the supervisor starts it again on its append-only file. That
  keeps the data whole: a script's writes reach the AOF only once it ends, as one transaction, while
  every write acknowledged before it is in the file (Redis writes it before it replies). The caller
  gets :class:`ScriptEnded`; the other clients' requests wait for the restart as for any other;
- a request Redis answers BUSY while a script holds it ran nothing: the gateway sends it again once
  the script has ended (:meth:`.gateway.Gateway.run_batch`), so other clients wait, and are served;
- a redis-server child's ``busy-reply-threshold`` is set to the limit, and no token may change it
  (:mod:`.guard`), so Redis hears the gateway's SCRIPT KILL as soon as the limit is reached;
- an external Redis (``--redis-url``) gets the SCRIPT KILL / FUNCTION KILL, which it obeys once its own
  ``busy-reply-threshold`` has passed; a script it calls UNKILLABLE is not the sandbox's to end (it is
  logged, and the caller told so).

fakeredis runs EVAL's Lua in the sandbox's own process, on the event loop, in one Lua runtime shared
by every script. :data:`IN_PROCESS_GUARD`, run once at start, hooks that runtime so that a script
running past the limit raises an error naming it (every 100,000 Lua instructions the hook looks at
the clock: a single long call into C, or a script that catches the error with ``pcall`` and loops on,
is not stopped), and takes away what would reach the host from a script there: ``os``, ``io``,
``debug``, lupa's ``python``, ``require``, ``package``, ``dofile``, ``loadfile`` (Redis's own Lua has
none of them), and every Python object (lupa lets Lua read a Python object's attributes, and from
any of them ``__globals__`` or ``__class__`` lead to ``os``): ``redis.call`` and the other functions
fakeredis gives a script are wrapped in Lua functions, and what they answer or raise reaches the
script as Lua values and text. Functions (FCALL) run in fakeredis's other runtime, a sandbox of its
own, which the gateway cannot hook.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import RedisError, ResponseError

from svckit.sandbox.kv.resp import error_text

log = logging.getLogger(__name__)

#: seconds a script may run: Redis's own default busy-reply-threshold
DEFAULT_SCRIPT_TIME_LIMIT = 5.0
SCRIPT_COMMANDS = frozenset({b"EVAL", b"EVALSHA", b"EVAL_RO", b"EVALSHA_RO", b"FCALL", b"FCALL_RO"})
#: what Redis's reply to a script that SCRIPT KILL or FUNCTION KILL stopped says
_KILLED = ("killed by user with SCRIPT KILL", "killed by user with FUNCTION KILL", "Script killed by user")

#: the Lua that bounds fakeredis's EVAL runtime (ARGV: the limit in seconds, the error text)
IN_PROCESS_GUARD = b"""
local sethook, now, limit, message = debug.sethook, os.time, tonumber(ARGV[1]), ARGV[2]
local type, tostring, pairs, pcall, error = type, tostring, pairs, pcall, error
local seen, started = nil, 0
sethook(function()
  if KEYS ~= seen then seen, started = KEYS, now()
  elseif now() - started > limit then error(message, 0) end
end, "", 100000)
local null, NULL = cjson.null, {}
local function clean(v)  -- a Python object reaches Lua as its text, never as itself
  if type(v) == "userdata" then
    if v == null then return NULL end
    return tostring(v)
  elseif type(v) == "table" then
    for k, x in pairs(v) do v[k] = clean(x) end
  end
  return v
end
local function raw(v)  -- what cjson.encode hands to Python: NULL as fakeredis's own null
  if v == NULL then return null end
  if type(v) ~= "table" then return v end
  local copy = {}
  for k, x in pairs(v) do copy[k] = raw(x) end
  return copy
end
local function wrap(f, prepare)
  return function(...)
    local ok, result = pcall(f, prepare(...))
    if not ok then error(clean(result), 0) end
    return clean(result)
  end
end
local function same(...) return ... end
for _, name in ipairs({"call", "pcall", "log", "setresp"}) do
  if redis[name] then redis[name] = wrap(redis[name], same) end
end
cjson.encode, cjson.decode, cjson.null = wrap(cjson.encode, raw), wrap(cjson.decode, same), NULL
for _, name in ipairs({"os", "io", "debug", "python", "require", "package", "dofile", "loadfile", "module"}) do
  _G[name] = nil
end
return 1
"""


def holds_script(rows: list[list[bytes]]) -> bool:
    return any(argv[0].upper() in SCRIPT_COMMANDS for argv in rows)


def all_busy(replies: list[Any]) -> bool:
    """Redis answered every command BUSY: a script holds it, and it ran none of them."""
    return bool(replies) and all(isinstance(r, ResponseError) and error_text(r).startswith("BUSY") for r in replies)


def limit_text(limit: float) -> str:
    return f"the sandbox's script time limit of {limit:g} s (Sandbox(kv_script_time_limit=...))"


class ScriptEnded(Exception):
    """A script that wrote ran past the limit, and Redis was restarted without its writes."""


class Stopper:
    """The area's one way to stop a running script (``stop``: :func:`stop_running_script` on its admin
    connection), one stop at a time: requests that time out together share it."""

    def __init__(self, stop: Callable[[], Awaitable[str | None]]) -> None:
        self._stop = stop
        self._lock = asyncio.Lock()
        self.stopped_at = -math.inf  # time.monotonic() of the last stop

    async def __call__(self) -> str | None:
        async with self._lock:
            what = await self._stop()
            if what is not None:
                self.stopped_at = time.monotonic()
            return what


class ScriptWatch:
    """What the gateway does when a batch holding a script is not answered within the limit."""

    def __init__(self, limit: float, stopper: Stopper) -> None:
        self.limit = limit
        self._stopper = stopper
        self._since = time.monotonic()
        self.killed = False

    async def overrun(self) -> bool:
        """Called at each ``limit`` without the replies: True when a script was stopped meanwhile (keep
        reading: the replies come), False when none was (a slow command: the caller's own timeout)."""
        what = await self._stopper()
        if what == "restarted":
            raise ScriptEnded(f"ERR the script ran past {limit_text(self.limit)} after it had written, so Redis "
                              f"could not stop it (UNKILLABLE); the sandbox restarted Redis without the script's "
                              f"writes (every write acknowledged before it is kept). Make the script shorter")
        if what == "unkillable":
            raise ScriptEnded(f"ERR the script ran past {limit_text(self.limit)} after it had written, so Redis "
                              f"cannot stop it (UNKILLABLE), and this Redis is not the sandbox's to restart: "
                              f"its clients get BUSY until it ends or is shut down (SHUTDOWN NOSAVE)")
        self.killed = self.killed or what == "killed"
        return what == "killed" or self._stopper.stopped_at > self._since

    def reply(self, reply: Any) -> Any:
        """A stopped script's error reply, saying why it was stopped."""
        if self.killed and isinstance(reply, ResponseError) and any(k in error_text(reply) for k in _KILLED):
            return ResponseError(f"ERR the script ran past {limit_text(self.limit)} and the sandbox stopped it "
                                 f"(it had written nothing); make it shorter")
        return reply


async def stop_running_script(run: Callable[[list[list[bytes]]], Awaitable[list[Any]]],
                              end_server: Callable[[], Awaitable[bool]]) -> str | None:
    """Stop the script Redis is running: ``run`` sends commands on the admin connection, ``end_server``
    ends a server the sandbox owns (False when it owns none). Answers ``"killed"``, ``"restarted"``,
    ``"unkillable"`` (an external Redis), or None when no script was running."""
    try:
        replies = await run([[b"SCRIPT", b"KILL"], [b"FUNCTION", b"KILL"]])
    except (TimeoutError, RedisError, OSError) as exc:  # Redis hears nothing: end it if it is ours
        log.warning("Redis did not answer SCRIPT KILL (%s)", exc)
        texts = ["UNKILLABLE (no answer)"]
    else:
        texts = [error_text(r) if isinstance(r, BaseException) else "OK" for r in replies]
    if "OK" in texts:
        log.warning("a script ran past the script time limit: the gateway stopped it")
        return "killed"
    if any(t.startswith("UNKILLABLE") for t in texts):
        if await end_server():
            log.warning("a script that had written ran past the script time limit and Redis cannot stop it "
                        "(UNKILLABLE): redis-server was ended without saving, and is started again on its AOF")
            return "restarted"
        log.warning("a script that had written ran past the script time limit on the external Redis, which "
                    "cannot stop it (UNKILLABLE) and is not the sandbox's to end")
        return "unkillable"
    return None
