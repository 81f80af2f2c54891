"""Lua in the key-value area, held to the sandbox's rules (issue 42): over real HTTP, on a real
``redis-server`` child (and fakeredis where its in-process Lua is what is tested).

- the gateway's own JSON.* library is out of reach of ACL users, and no token replaces or deletes it;
  the Standard token's FUNCTION FLUSH leaves JSON.* working (svckit/sandbox/kv/guard.py);
- a script runs at most the script time limit: the gateway stops it itself, and ends a Redis that
  cannot stop it (UNKILLABLE) without the script's writes; /health says BUSY meanwhile
  (svckit/sandbox/kv/runaway.py);
- the Read Only token's scripts are held to its rules: reads only, no KEYS or SCAN (users.READER_USER).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import httpx
import pytest
import redis

from svckit.sandbox.kv import commands
from svckit.sandbox.kv.commands import COMMANDS
from svckit.sandbox.kv.users import ADMIN_USER, READER_USER
from tests.conftest import eventually
from tests.sandbox.kv.conftest import KV, acl_user, kv_served, redis_as, rest_token


@pytest.fixture
def own_child(tmp_path) -> Iterator[Callable[..., KV]]:
    """A redis-server sandbox of the test's own (a runaway script holds the whole of its Redis)."""
    with ExitStack() as started:
        def start(**options) -> KV:
            return started.enter_context(kv_served(tmp_path / uuid.uuid4().hex[:8], backend="redis", **options))

        yield start


def _health(kv: KV) -> dict:
    return httpx.get(kv.sandbox.url + "/health", timeout=30).json()["areas"]["kv"][0]


# -- 2. the gateway's own Lua library is out of reach of ACL users ----------------------------------------
LOOT = """#!lua name=svckit_json
redis.register_function('svckit_json_set', function(keys, args)
  redis.call('SET', '{loot}', redis.call('GET', '{secret}'))
  return 'OK'
end)"""


def test_a_tenant_cannot_replace_the_json_library_and_run_code_with_the_owners_rights(child):
    secret, doc = child.key("owner:secret"), child.key("owner:doc")
    prefix = f"tenant{uuid.uuid4().hex[:6]}:"
    loot = prefix + "loot"
    assert child.post("/", json=["SET", secret, "s3cret"]).json() == {"result": "OK"}
    # a REST token of an ACL user made through the gateway, with every command on its own keys
    tenant = rest_token(child, *acl_user(child, "+@all", f"~{prefix}*"))
    library = LOOT.replace("{loot}", loot).replace("{secret}", secret)

    replaced = child.post("/", json=["FUNCTION", "LOAD", "REPLACE", library], headers=child.auth(tenant))
    assert replaced.status_code == 400, replaced.text
    assert replaced.json()["error"].startswith("NOPERM the sandbox refuses FUNCTION LOAD to ACL users")
    for change in (["FUNCTION", "FLUSH"], ["FUNCTION", "DELETE", "svckit_json"],
                   ["FUNCTION", "LOAD", "#!lua name=mine\nredis.register_function('mine', function() return 1 end)"]):
        refused = child.post("/", json=change, headers=child.auth(tenant))
        assert refused.status_code == 400 and refused.json()["error"].startswith("NOPERM"), (change, refused.text)

    # the owner's JSON.* still run the sandbox's own code, with the owner's rights
    assert child.post("/", json=["JSON.SET", doc, "$", '{"a":1}']).json() == {"result": "OK"}
    assert child.post("/", json=["JSON.GET", doc, "$.a"]).json() == {"result": "[1]"}
    assert child.post("/", json=["GET", loot]).json() == {"result": None}
    # and Redis itself refuses library changes to the tenant (its ACL), should a command reach it
    tenant_name = child.post("/", json=["ACL", "WHOAMI"], headers=child.auth(tenant)).json()["result"]
    dry = child.post("/", json=["ACL", "DRYRUN", tenant_name, "FUNCTION", "FLUSH"]).json()["result"]
    assert "no permissions to run the 'function|flush' command" in dry, dry


def test_no_token_replaces_or_deletes_the_json_library(child):
    for change in (["FUNCTION", "LOAD", "REPLACE", LOOT], ["FUNCTION", "DELETE", "svckit_json"]):
        refused = child.post("/", json=change)
        assert refused.status_code == 400, refused.text
        assert "the library 'svckit_json' is the sandbox's own" in refused.json()["error"]


def test_json_keeps_working_after_the_standard_tokens_function_flush(child):
    doc = child.key("doc")
    assert child.post("/", json=["JSON.SET", doc, "$", '{"n":1}']).json() == {"result": "OK"}
    assert child.post("/", json=["FUNCTION", "FLUSH"]).json() == {"result": "OK"}
    assert child.post("/", json=["JSON.NUMINCRBY", doc, "$.n", "2"]).json() == {"result": "[3]"}
    assert child.post("/", json=["JSON.GET", doc]).json() == {"result": '{"n":3}'}


# -- 9. the Read Only token's rules hold inside scripts ----------------------------------------------------
def test_the_read_only_token_cannot_list_keys_through_a_script(child):
    key = child.key("hidden")
    assert child.post("/", json=["SET", key, "v"]).json() == {"result": "OK"}
    readonly = child.auth(child.readonly_token)
    for script in ("return redis.call('KEYS', '*')", "return redis.call('SCAN', '0', 'COUNT', '1000')"):
        listed = child.post("/", json=["EVAL_RO", script, "0"], headers=readonly)
        assert listed.status_code == 400, listed.text
        assert key not in listed.text
        assert "can't run this command" in listed.json()["error"] and "not KEYS or SCAN" in listed.json()["error"]
    # a function the owner loaded is held to the caller's rules too
    library = ("#!lua name=lister\nredis.register_function{function_name='list_keys', "
               "callback=function() return redis.call('KEYS', '*') end, flags={'no-writes'}}")
    assert child.post("/", json=["FUNCTION", "LOAD", "REPLACE", library]).json() == {"result": "lister"}
    assert key in child.post("/", json=["FCALL_RO", "list_keys", "0"]).json()["result"]
    refused = child.post("/", json=["FCALL_RO", "list_keys", "0"], headers=readonly)
    assert refused.status_code == 400 and key not in refused.text
    # what the token may do, it still may inside a script
    read = child.post("/", json=["EVAL_RO", "return redis.call('GET', KEYS[1])", "1", key], headers=readonly)
    assert read.json() == {"result": "v"}
    assert child.post("/", json=["JSON.GET", child.key("none")], headers=readonly).json() == {"result": None}


def test_the_read_only_tokens_redis_user_may_run_what_the_token_may_and_no_more(child):
    """Every command (and subcommand) the gateway lets the Read Only token run, Redis lets its user run,
    and nothing else of @read: so a script of that token can do what the token can, and no more."""
    admin = redis_as(child.sandbox.data_dir, ADMIN_USER, decode_responses=True)
    gateway = redis.Redis.from_url(child.sandbox.area("kv").redis_url, decode_responses=True)
    try:
        conn = gateway.connection_pool.get_connection()
        try:
            def info(name: str) -> list:
                conn.send_command("COMMAND", "INFO", name)
                return conn.read_response()[0]

            allowed = {name for name in COMMANDS if commands.refusal([name.encode()], readonly=True) is None}
            for name in sorted(allowed - {n for n in allowed if n.startswith("JSON.")}):
                entry = info(name)
                if entry is None:  # newer than this Redis
                    continue
                for full, arity, *_ in entry[9] or [entry]:  # its subcommands, or itself
                    parts = full.split("|")
                    argv = [*parts, *["0"] * (abs(arity) - len(parts))]
                    assert admin.execute_command("ACL", "DRYRUN", READER_USER, *argv) == "OK", full
            refused = {c for c in gateway.execute_command("ACL", "CAT", "read") if c.split("|")[0].upper() not in allowed}
            assert refused == {"keys", "scan"}
            for argv in (["KEYS", "*"], ["SCAN", "0"], ["SET", "k", "v"], ["EVAL", "return 1", "0"]):
                assert admin.execute_command("ACL", "DRYRUN", READER_USER, *argv) != "OK", argv
        finally:
            gateway.connection_pool.release(conn)
    finally:
        admin.close()
        gateway.close()


def test_the_read_only_token_still_runs_a_transaction_of_reads(child):
    """Its own Redis user runs MULTI/EXEC too: a /multi-exec of reads answers as before."""
    key = child.key("tx")
    assert child.post("/", json=["SET", key, "v"]).json() == {"result": "OK"}
    answer = child.post("/multi-exec", json=[["PING"], ["GET", key]], headers=child.auth(child.readonly_token))
    assert answer.json() == [{"result": "PONG"}, {"result": "v"}], answer.text


# -- 6. a runaway script is stopped by the gateway itself --------------------------------------------------
def test_a_runaway_read_only_script_is_stopped_and_every_client_served_again(own_child):
    kv = own_child(kv_script_time_limit=2)
    looped = kv.post("/", json=["EVAL_RO", "while true do end", "0"], headers=kv.auth(kv.readonly_token), timeout=60)
    assert looped.status_code == 400, looped.text
    assert looped.json()["error"].startswith("ERR the script ran past the sandbox's script time limit of 2 s")
    # nobody sent SCRIPT KILL, and every client is served
    assert kv.post("/", json=["PING"]).json() == {"result": "PONG"}
    assert kv.post("/", json=["PING"], headers=kv.auth(kv.readonly_token)).json() == {"result": "PONG"}
    assert _health(kv)["ok"]


def test_a_script_that_wrote_is_ended_with_its_redis_keeping_only_acknowledged_writes(own_child):
    kv = own_child(kv_script_time_limit=2)
    before, during = kv.key("before"), kv.key("during")
    assert kv.post("/", json=["SET", before, "acknowledged"]).json() == {"result": "OK"}
    writer = "redis.call('SET', KEYS[1], 'partial') while true do end"
    looped = kv.post("/", json=["EVAL", writer, "1", during], timeout=60)
    assert looped.status_code == 400, looped.text
    error = looped.json()["error"]
    assert "script time limit of 2 s" in error and "UNKILLABLE" in error and "restarted Redis" in error
    # the child comes back on its append-only file: the script's write is not there, the earlier one is
    after = eventually(lambda: kv.post("/", json=["MGET", before, during]),
                       "Redis served again after the restart", 60)
    assert after.json() == {"result": ["acknowledged", None]}
    assert kv.sandbox.area("kv").backend.restarts == 1


def test_while_a_script_holds_redis_health_says_busy_and_other_requests_wait_to_be_served(own_child):
    kv = own_child(kv_script_time_limit=4)
    key = kv.key("meanwhile")
    answered: list[httpx.Response] = []
    looping = threading.Thread(target=lambda: answered.append(
        kv.post("/", json=["EVAL_RO", "while true do end", "0"], headers=kv.auth(kv.readonly_token), timeout=60)))
    looping.start()
    try:
        busy = eventually(lambda: next((h for h in [_health(kv)] if not h["ok"]), None),
                          "GET /health said the key-value area is not ok while a script ran", 30)
        assert busy["detail"].startswith("BUSY: Redis is running a script"), busy
        # Redis answers BUSY to a request that comes meanwhile: the gateway sends it again once the
        # script is stopped, so it is served rather than refused
        assert kv.post("/", json=["SET", key, "v"], timeout=60).json() == {"result": "OK"}
    finally:
        looping.join(60)
    assert answered and answered[0].status_code == 400
    assert "script time limit of 4 s" in answered[0].json()["error"]
    assert kv.post("/", json=["GET", key]).json() == {"result": "v"}
    assert eventually(lambda: _health(kv)["ok"], "GET /health ok again once the script was stopped", 30)


def test_no_token_changes_how_long_a_script_may_run(child):
    for param in ("busy-reply-threshold", "lua-time-limit"):
        refused = child.post("/", json=["CONFIG", "SET", param, "3600000"])
        assert refused.status_code == 400 and "kv_script_time_limit" in refused.json()["error"], refused.text


# -- fakeredis: Lua in the sandbox's own process -----------------------------------------------------------
@pytest.fixture(scope="module")
def fake(tmp_path_factory) -> Iterator[KV]:
    with kv_served(tmp_path_factory.mktemp("scripts-fake"), backend="fakeredis", kv_script_time_limit=1) as client:
        yield client


def test_a_runaway_script_on_fakeredis_ends_at_the_limit(fake):
    looped = fake.post("/", json=["EVAL", "local i = 0 while true do i = i + 1 end", "0"], timeout=60)
    assert looped.status_code == 400 and "script time limit of 1 s" in looped.json()["error"], looped.text
    assert fake.post("/", json=["PING"]).json() == {"result": "PONG"}


def test_a_script_on_fakeredis_cannot_reach_the_host(fake):
    """fakeredis runs EVAL's Lua in the sandbox's process, through lupa, which lets Lua read a Python
    object's attributes: from any Python object a script could reach ``os``. None reaches it."""
    for name in ("os", "io", "debug", "python", "require", "package", "dofile", "loadfile"):
        assert fake.post("/", json=["EVAL", f"return type({name})", "0"]).json() == {"result": "nil"}, name
    for script in ("return type(redis.call)", "return type(redis.pcall)", "return type(cjson.encode)",
                   "local ok, e = pcall(redis.call, 'NOPE') return type(e)",
                   "return type(redis.pcall('NOPE')['err'])", "return type(cjson.decode('[null]')[1])",
                   "return type(cjson.null)"):
        assert fake.post("/", json=["EVAL", script, "0"]).json()["result"] in ("function", "string", "table"), script
    for escape in ("return python.eval('1 + 1')", "return tostring(redis.call.__globals__)",
                   "local ok, e = pcall(redis.call, 'NOPE') return tostring(e.__class__)"):
        ran = fake.post("/", json=["EVAL", escape, "0"])
        assert ran.status_code == 400 or ran.json() == {"result": "nil"}, (escape, ran.text)
        assert "module" not in ran.text and "<class" not in ran.text, (escape, ran.text)
    # scripts still work as on Redis
    key = fake.key("lua")
    assert fake.post("/", json=["EVAL", "return redis.call('SET', KEYS[1], ARGV[1])", "1", key, "v"]).json() == \
        {"result": "OK"}
    assert fake.post("/", json=["EVAL", "return cjson.encode(cjson.decode(ARGV[1]))", "0", '[null,{"a":1}]']).json() \
        == {"result": '[null,{"a":1}]'}
