"""Lua shebang flags (svckit/sandbox/kv/scripts.py): the pure rewrite, then scripts with flags stock
Redis does not know run on both backends, addressed by the SHA1 of the text the client sent."""

from __future__ import annotations

import base64
import hashlib

from svckit.sandbox.kv.scripts import rewrite_library, rewrite_shebang
from tests.conftest import eventually


def sha(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


# -- the pure rewrite ------------------------------------------------------------------------------
def test_unknown_flags_are_dropped_and_redis_flags_kept():
    assert rewrite_shebang(b"#!lua flags=allow-key-locking,no-writes\nreturn 1") == b"#!lua flags=no-writes\nreturn 1"
    assert rewrite_shebang(b"#!lua flags=allow-key-locking\nreturn 1") == b"#!lua\nreturn 1"
    assert rewrite_shebang(b"#!lua flags=allow-key-locking") == b"#!lua"


def test_scripts_needing_no_change_are_returned_as_they_are():
    for script in (b"return 1", b"#!lua\nreturn 1", b"#!lua flags=no-writes,allow-oom\nreturn 1",
                   b"#!lua   flags=no-writes  \nreturn 1", b"#!lua name=x\nreturn 1"):
        assert rewrite_shebang(script) is script  # unchanged text: same SHA1, nothing to map


def test_without_native_shebangs_the_line_becomes_a_comment():
    assert rewrite_shebang(b"#!lua flags=no-writes\nreturn 1", native=False) == b"--#!lua flags=no-writes\nreturn 1"
    assert rewrite_shebang(b"return 1", native=False) == b"return 1"


def test_function_libraries_lose_unknown_flags_of_literal_tables_only():
    code = (b'#!lua name=lib\nredis.register_function{function_name="f", callback=g, '
            b'flags={"allow-key-locking", \'no-writes\'}}')
    assert rewrite_library(code) == (b'#!lua name=lib\nredis.register_function{function_name="f", callback=g, '
                                     b"flags={ 'no-writes'}}")
    dynamic = b"#!lua name=lib\nredis.register_function{function_name='f', callback=g, flags={my_flag}}"
    assert rewrite_library(dynamic) == dynamic


# -- over HTTP, on both backends -------------------------------------------------------------------
SCRIPT = '#!lua flags=allow-key-locking\nreturn redis.call("INCRBY", KEYS[1], ARGV[1])'


def test_eval_with_a_vendor_flag_runs_and_evalsha_takes_the_sent_texts_sha(kv):
    key, script = kv.key(), SCRIPT + " -- " + kv.key()  # a script of its own: no other test loaded it
    assert kv.post("/", json=["EVAL", script, 1, key, 2]).json() == {"result": 2}
    assert kv.post("/", json=["EVALSHA", sha(script), 1, key, 3]).json() == {"result": 5}
    assert kv.post("/", json=["EVALSHA", sha(script).upper(), 1, key, 1]).json() == {"result": 6}
    exists = ["SCRIPT", "EXISTS", sha(script), "0" * 40]
    if kv.backend == "redis-cluster":
        # EVAL cached it on its key's master only, and SCRIPT EXISTS asks every master (Redis's tip:
        # agg_logical_and); SCRIPT LOAD puts it on every node
        assert kv.post("/", json=exists).json() == {"result": [0, 0]}
        kv.post("/", json=["SCRIPT", "LOAD", script])
    assert kv.post("/", json=exists).json() == {"result": [1, 0]}


def test_script_load_answers_the_sha_of_the_text_sent(kv):
    script = SCRIPT + " -- loaded " + kv.key()
    reply = kv.post("/", json=["SCRIPT", "LOAD", script], headers={"Service-Encoding": "base64"})
    assert reply.json() == {"result": base64.b64encode(sha(script).encode()).decode()}
    assert kv.post("/", json=["EVALSHA", sha(script), 1, kv.key(), 7]).json() == {"result": 7}


def test_pipelines_and_transactions_rewrite_too(kv):
    key, script = kv.key(), SCRIPT + " -- " + kv.key()
    rows = [["EVAL", script, 1, key, 1], ["EVALSHA", sha(script), 1, key, 1], ["SCRIPT", "EXISTS", sha(script)]]
    if kv.backend == "redis-cluster":  # on its key's master only (see above); and not inside a transaction,
        # since SCRIPT EXISTS asks every master and a transaction runs on one
        assert kv.post("/pipeline", json=rows).json() == [{"result": 1}, {"result": 2}, {"result": [0]}]
        assert kv.post("/multi-exec", json=rows[:2]).json() == [{"result": 3}, {"result": 4}]
        refused = kv.post("/multi-exec", json=rows)
        assert refused.status_code == 400 and "SCRIPT EXISTS cannot run inside a transaction on a Redis Cluster" \
            in refused.json()["error"]
        return
    assert kv.post("/pipeline", json=rows).json() == [{"result": 1}, {"result": 2}, {"result": [1]}]
    assert kv.post("/multi-exec", json=rows).json() == [{"result": 3}, {"result": 4}, {"result": [1]}]


def test_no_writes_is_still_enforced_by_redis(kv):
    script = '#!lua flags=allow-key-locking,no-writes\nreturn redis.call("SET", KEYS[1], "x")'
    reply = kv.post("/", json=["EVAL", script, 1, kv.key()])
    if kv.backend == "fakeredis":  # fakeredis reads no shebang: the flags are not enforced there
        assert reply.json() == {"result": "OK"}
        return
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error.startswith("ERR Write commands are not allowed from read-only scripts") and sha(script) in error


def test_function_load_with_a_vendor_flag(kv):
    library = ('#!lua name=compat_lib\nredis.register_function{function_name="compat_seven", '
               'callback=function(keys, args) return 7 end, flags={"allow-key-locking", "no-writes"}}')
    assert kv.post("/", json=["FUNCTION", "LOAD", "REPLACE", library]).json() == {"result": "compat_lib"}
    assert kv.post("/", json=["FCALL_RO", "compat_seven", 0]).json() == {"result": 7}


def test_a_script_running_past_the_time_limit_is_stopped_by_the_gateway(kv):
    """A Lua loop longer than the script time limit (5 s): the gateway stops it itself and the client
    gets a JSON error naming the limit; the same gateway serves commands again, nobody having sent
    SCRIPT KILL. In front of a Redis Cluster each node's batch only times out (504), and SCRIPT KILL
    frees the node (docs/sandbox.md)."""
    busy = "local i = 0 while true do i = i + 1 end"
    response = kv.post("/", json=["EVAL", busy, "0"], timeout=60)
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    if kv.backend == "redis-cluster":
        assert response.status_code == 504
        assert error.startswith("ERR the backing Redis did not answer within 5 s") and "split" in error
        assert kv.post("/", json=["SCRIPT", "KILL"]).json() == {"result": "OK"}
        # Redis answers SCRIPT KILL from inside the running script, which ends at its next hook: a command
        # that arrives in between is still answered BUSY
        eventually(lambda: "BUSY" not in kv.post("/", json=["PING"]).json().get("error", ""),
                   "a command answered other than BUSY after SCRIPT KILL", 10)
    else:
        assert response.status_code == 400
        assert "the script ran past the sandbox's script time limit of 5 s" in error, error
    key = kv.key("after-timeout")
    assert kv.post("/", json=["SET", key, "1"]).json() == {"result": "OK"}
    assert kv.post("/", json=["GET", key]).json() == {"result": "1"}
