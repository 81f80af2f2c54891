"""The gateway in front of a Redis Cluster (svckit/sandbox/kv/cluster.py): three masters started from
redis-server on loopback ports (tests/cluster.py), reached over real HTTP, and each node checked
directly where the test is about where the data went.

The conformance suite runs on the same cluster too (``kv_sandbox``'s "cluster" parameter); this file
holds what only a cluster has: shards, slots, the cursor over every master, cross-slot errors.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator

import httpx
import pytest
from redis.crc import key_slot

from svckit.kv import KV
from svckit.sandbox import Sandbox
from tests.cluster import LocalCluster, local_cluster
from tests.conftest import redis_server, running, start_sandbox
from tests.sandbox.kv.conftest import KV as Gateway
from tests.sandbox.kv.conftest import kv_of
from tests.sandbox.kv.test_events import _data_lines

CROSSSLOT = "CROSSSLOT Keys in request don't hash to the same slot"


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory) -> Iterator[LocalCluster]:
    """This module's own cluster (its tests FLUSHALL it), in place of the session's."""
    with local_cluster(tmp_path_factory.mktemp("cluster-nodes")) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def sandbox(redis_cluster: LocalCluster, tmp_path_factory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("kv-on-cluster"), areas=["kv"], redis_url=redis_cluster.url) as sb:
        yield sb


@pytest.fixture
def gw(sandbox: Sandbox) -> Iterator[Gateway]:
    """The gateway over raw HTTP, on an empty cluster (the tests count keys)."""
    client = kv_of(sandbox)
    assert client.post("/FLUSHALL").json() == {"result": "OK"}
    try:
        yield client
    finally:
        client.http.close()


def per_master(cluster: LocalCluster) -> dict[int, int]:
    """Each master's own DBSIZE, asked of the node itself."""
    return {port: cluster.client(port).dbsize() for port in cluster.masters()}


def test_the_gateway_says_it_serves_a_cluster(sandbox: Sandbox, redis_cluster: LocalCluster) -> None:
    area = sandbox.area("kv")
    assert area.backend_name == "redis-cluster"
    assert area.backend.describe() == f"external Redis Cluster at 127.0.0.1:{redis_cluster.url.rsplit(':', 1)[1]}: " \
                                      "3 masters, 0 replicas"
    [redis_check] = httpx.get(sandbox.url + "/health", timeout=10).json()["areas"]["kv"]
    assert redis_check["ok"] and "answers: external Redis Cluster" in redis_check["detail"], redis_check


def test_every_single_key_command_succeeds_and_the_keys_spread_over_every_master(gw, redis_cluster) -> None:
    # the first try: 14 of 20 SET/GET pairs failed with MOVED before cluster mode
    for i in range(20):
        assert gw.get(f"/SET/key:{i}/value:{i}").json() == {"result": "OK"}
        assert gw.get(f"/GET/key:{i}").json() == {"result": f"value:{i}"}
    assert gw.get("/INCR/counter").json() == {"result": 1}
    assert gw.post("/", json=["HSET", "user:1", "name", "Ada"]).json() == {"result": 1}
    assert gw.get("/DBSIZE").json() == {"result": 22}
    shards = per_master(redis_cluster)
    assert sum(shards.values()) == 22 and all(shards.values()), shards


def test_multi_key_commands_across_slots_answer_crossslot_and_hash_tags_keep_keys_together(gw) -> None:
    for command in (["MSET", "a", "1", "b", "2"], ["MGET", "a", "b"], ["DEL", "a", "b"], ["RENAME", "a", "b"],
                    ["SINTERSTORE", "out", "a", "b"]):
        r = gw.post("/", json=command)
        assert r.status_code == 400 and r.json() == {"error": CROSSSLOT}, command
    assert gw.post("/", json=["MSET", "{user:1}:name", "Ada", "{user:1}:lang", "python"]).json() == {"result": "OK"}
    assert gw.post("/", json=["MGET", "{user:1}:name", "{user:1}:lang"]).json() == {"result": ["Ada", "python"]}
    assert gw.post("/", json=["DEL", "{user:1}:name", "{user:1}:lang"]).json() == {"result": 2}


def test_a_pipeline_runs_on_every_node_and_answers_in_order(gw) -> None:
    rows = [["SET", f"p:{i}", str(i)] for i in range(12)]
    rows += [["DBSIZE"], ["INCR", "p:3"], ["MGET", "p:1", "p:2"], ["GET", "p:11"], ["DEL", "p:0"], ["DBSIZE"]]
    replies = gw.post("/pipeline", json=rows).json()
    assert replies[:12] == [{"result": "OK"}] * 12
    # DBSIZE reaches every master after the commands before it, and before those after it
    assert replies[12:] == [{"result": 12}, {"result": 4}, {"error": CROSSSLOT}, {"result": "11"}, {"result": 1},
                            {"result": 11}]


def test_a_transaction_runs_on_its_one_slot_and_otherwise_says_why(gw) -> None:
    together = [["SET", "{cart:7}:items", "3"], ["INCRBY", "{cart:7}:items", "2"], ["EXPIRE", "{cart:7}:items", "60"]]
    assert gw.post("/multi-exec", json=together).json() == [{"result": "OK"}, {"result": 5}, {"result": 1}]

    apart = gw.post("/multi-exec", json=[["SET", "cart:7", "1"], ["SET", "cart:8", "1"]])
    assert apart.status_code == 400
    error = apart.json()["error"]
    assert error.startswith("EXECABORT Transaction discarded") and CROSSSLOT in error and "hash tag" in error
    assert gw.get("/EXISTS/cart:7").json() == {"result": 0}  # nothing of it ran

    for command, shown in ((["DBSIZE"], "DBSIZE"), (["SCRIPT", "EXISTS", "0" * 40], "SCRIPT EXISTS"),
                           (["SCAN", "0"], "SCAN")):
        everywhere = gw.post("/multi-exec", json=[["SET", "{cart:7}:n", "1"], command])
        assert everywhere.status_code == 400
        assert f"{shown} cannot run inside a transaction on a Redis Cluster" in everywhere.json()["error"]
        assert gw.get("/GET/{cart:7}:n").json() == {"result": None}
    # PING checks every master on its own; in a transaction it answers for the transaction's master
    assert gw.post("/multi-exec", json=[["SET", "{cart:7}:n", "1"], ["PING"]]).json() == [
        {"result": "OK"}, {"result": "PONG"}]


def test_scan_walks_every_master_behind_one_cursor(gw, redis_cluster) -> None:
    pipe = [["SET", f"scan:{i}", "x"] for i in range(150)] + [["HSET", f"scan:h{i}", "f", "v"] for i in range(10)]
    gw.post("/pipeline", json=pipe)
    seen, cursors, cursor = [], [], "0"
    while True:
        cursor, keys = gw.get(f"/SCAN/{cursor}/MATCH/scan:*/COUNT/20").json()["result"]
        seen += keys
        cursors.append(cursor)
        if cursor == "0":
            break
    assert sorted(set(seen)) == sorted([f"scan:{i}" for i in range(150)] + [f"scan:h{i}" for i in range(10)])
    assert len(seen) == len(set(seen))  # nothing twice on a table that did not resize
    assert all(c.isdigit() for c in cursors) and len(cursors) >= 3  # every master, one cursor a client passes back
    # SCAN's options go to every master: TYPE keeps the hashes only
    hashes, cursor = [], "0"
    while True:
        cursor, keys = gw.get(f"/SCAN/{cursor}/TYPE/hash/COUNT/50").json()["result"]
        hashes += keys
        if cursor == "0":
            break
    assert sorted(hashes) == sorted(f"scan:h{i}" for i in range(10))
    assert gw.get("/SCAN/not-a-cursor").json() == {"error": "ERR invalid cursor"}


def test_svckit_scan_iter_and_dbsize_see_every_shard(sandbox, gw) -> None:
    gw.post("/pipeline", json=[["SET", f"walk:{i}", "x"] for i in range(700)])
    with KV.from_settings(sandbox.settings) as kv:
        assert sorted(kv.scan_iter("walk:*", count=100)) == sorted(f"walk:{i}" for i in range(700))
        assert kv.dbsize() == 700 and len(kv.keys("walk:*")) == 700


def test_flushdb_and_flushall_reach_every_master(gw, redis_cluster) -> None:
    gw.post("/pipeline", json=[["SET", f"f:{i}", "x"] for i in range(30)])
    assert all(per_master(redis_cluster).values())
    assert gw.get("/FLUSHDB").json() == {"result": "OK"}
    assert set(per_master(redis_cluster).values()) == {0}
    gw.post("/pipeline", json=[["SET", f"f:{i}", "x"] for i in range(30)])
    assert gw.get("/FLUSHALL").json() == {"result": "OK"}
    assert set(per_master(redis_cluster).values()) == {0} and gw.get("/DBSIZE").json() == {"result": 0}


def test_scripts_and_the_json_library_work_on_every_master(gw, redis_cluster) -> None:
    keys = [f"doc:{i}" for i in range(12)]  # over every master (checked below)
    script = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
    sha = gw.post("/", json=["SCRIPT", "LOAD", script]).json()["result"]
    for key in keys:
        assert gw.post("/", json=["JSON.SET", key, "$", '{"n": 1, "tags": ["a"]}']).json() == {"result": "OK"}
        assert gw.post("/", json=["JSON.NUMINCRBY", key, "$.n", 2]).json() == {"result": "[3]"}
        assert gw.post("/", json=["EVALSHA", sha, 1, f"{key}:count", 5]).json() == {"result": 5}
    assert gw.post("/", json=["SCRIPT", "EXISTS", sha]).json() == {"result": [1]}
    assert all(per_master(redis_cluster).values())


def test_an_acl_users_rest_token_works_on_every_node(gw, redis_cluster) -> None:
    user = "cluster-reader"
    assert gw.post("/", json=["ACL", "SETUSER", user, "on", ">s3cret-pass", "~*", "+@read", "+@write",
                              "-@dangerous"]).json() == {"result": "OK"}
    for port in redis_cluster.live():  # Redis keeps users per node: the gateway made it on each
        assert redis_cluster.client(port).acl_getuser(user) is not None, port
    token = gw.post("/", json=["ACL", "RESTTOKEN", user, "s3cret-pass"]).json()["result"]
    for i in range(20):  # keys over every master, as that user
        assert gw.get(f"/SET/acl:{i}/v", headers=gw.auth(token)).json() == {"result": "OK"}
    assert gw.get("/DBSIZE", headers=gw.auth(token)).json() == {"result": 20}
    assert gw.post("/", json=["ACL", "DELUSER", user]).json() == {"result": 1}
    assert all(redis_cluster.client(port).acl_getuser(user) is None for port in redis_cluster.live())
    assert gw.get("/GET/acl:1", headers=gw.auth(token)).status_code == 401


def test_monitor_sees_the_commands_of_every_master(gw) -> None:
    with httpx.Client(timeout=10) as client, client.stream("POST", gw.url + "/monitor", headers=gw.auth()) as r:
        events = _data_lines(r)
        assert next(events) == '"OK"'
        gw.post("/pipeline", json=[["SET", f"mon:{i}", "x"] for i in range(6)])
        lines = [next(events) for _ in range(6)]
    assert sorted(line.split('"SET" ')[1] for line in lines) == sorted(f'"mon:{i}" "x"' for i in range(6))


def test_a_message_published_on_any_node_reaches_a_subscriber(gw, redis_cluster) -> None:
    channel = "news"
    with httpx.Client(timeout=10) as client, client.stream(
            "POST", gw.url + f"/subscribe/{channel}", headers=gw.auth()) as r:
        events = _data_lines(r)
        assert next(events) == f"subscribe,{channel},1"
        for port in redis_cluster.masters():  # Redis Cluster carries PUBLISH to every node
            threading.Thread(target=redis_cluster.client(port).publish, args=(channel, f"from {port}")).start()
            assert next(events) == f"message,{channel},from {port}"
    # through the gateway, the reply counts its subscriber, whichever master the channel hashes to
    for channel in _one_per_master(redis_cluster, "room"):
        with httpx.Client(timeout=10) as client, client.stream(
                "POST", gw.url + f"/subscribe/{channel}", headers=gw.auth()) as r:
            events = _data_lines(r)
            next(events)
            assert gw.post(f"/publish/{channel}/hi").json() == {"result": 1}, channel
            assert next(events) == f"message,{channel},hi"


def _one_per_master(cluster: LocalCluster, prefix: str) -> list[str]:
    """Names whose slots belong to each master in turn."""
    slots = cluster.client(cluster.masters()[0]).execute_command("CLUSTER", "SLOTS")
    owner = {port: [(start, end) for start, end, master, *_ in slots if master[1] == port] for port in cluster.masters()}
    names = (f"{prefix}:{i}" for i in range(10_000))
    return [next(name for name in names if any(a <= key_slot(name.encode()) <= b for a, b in ranges))
            for ranges in owner.values()]


def test_the_cli_finds_a_cluster_by_itself_and_refuses_the_flag_without_an_address(redis_cluster, tmp_path) -> None:
    with running(tmp_path / "told", areas=["kv"], redis_url=redis_cluster.url, redis_cluster=True) as sb:
        assert sb.area("kv").backend_name == "redis-cluster"
    with pytest.raises(ValueError, match="redis_cluster needs redis_url"):
        Sandbox(tmp_path / "none", areas=["kv"], redis_cluster=True).start()
    out = subprocess.run([sys.executable, "-m", "svckit.cli", "sandbox", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "--redis-cluster" in out


def test_a_single_redis_named_a_cluster_fails_to_start_with_the_reason(tmp_path) -> None:
    from svckit.sandbox.kv.backends import _free_port

    port = _free_port()
    server = redis_server(port, tmp_path)
    try:
        with pytest.raises(RuntimeError, match=f"the Redis at 127.0.0.1:{port} cannot be reached as a Redis Cluster"):
            start_sandbox(tmp_path / "data", areas=["kv"], redis_url=f"redis://127.0.0.1:{port}", redis_cluster=True)
        # and found out by itself: a single Redis is served as one
        with running(tmp_path / "auto", areas=["kv"], redis_url=f"redis://127.0.0.1:{port}") as sb:
            assert sb.area("kv").backend_name == "external"
    finally:
        server.kill()
        server.wait()


def _node_id(cluster: LocalCluster, port: int) -> str:
    return cluster.client(port).execute_command("CLUSTER", "MYID").decode()


def test_a_slot_moved_to_another_master_is_followed(tmp_path) -> None:
    """A resharding under the gateway's feet: a key being migrated is asked where it went (ASK), and
    once its slot belongs to the other master, the stale topology's MOVED is followed."""
    cluster = LocalCluster(tmp_path / "cluster").start()
    try:
        with running(tmp_path / "sandbox", areas=["kv"], redis_url=cluster.url) as sandbox:
            gw = kv_of(sandbox)
            source, target = cluster.masters()[:2]
            key = _one_per_master(cluster, "moving")[0]  # a key of the first master's
            slot = key_slot(key.encode())
            assert gw.get(f"/SET/{key}/here").json() == {"result": "OK"}
            src, dst = cluster.client(source), cluster.client(target)
            dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", _node_id(cluster, source))
            src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", _node_id(cluster, target))
            src.execute_command("MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", key)
            # mid-migration: the source answers ASK for the key it no longer has
            assert gw.get(f"/GET/{key}").json() == {"result": "here"}
            for port in cluster.masters():
                cluster.client(port).execute_command("CLUSTER", "SETSLOT", slot, "NODE", _node_id(cluster, target))
            # done: the gateway's map still names the source, which answers MOVED
            assert gw.get(f"/GET/{key}").json() == {"result": "here"}
            assert gw.post("/multi-exec", json=[["APPEND", key, "!"], ["GET", key]]).json() == [
                {"result": 5}, {"result": "here!"}]
            assert gw.post("/pipeline", json=[["GET", key], ["DBSIZE"]]).json() == [{"result": "here!"}, {"result": 1}]
            assert dst.get(key) == b"here!"
            gw.http.close()
    finally:
        cluster.stop()
