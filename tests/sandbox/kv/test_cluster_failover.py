"""A master of the cluster dies and its replica takes over: the gateway follows the new topology,
and what it answers during the switch is right or a 503 with Retry-After, never a wrong answer.

Three masters and three replicas of a cluster of the test's own (tests/cluster.py), a node timeout
of one second, one master killed with SIGKILL while requests keep coming over real HTTP.
"""

from __future__ import annotations

from tests.cluster import FAILOVER_NODE_TIMEOUT_MS, LocalCluster
from tests.conftest import eventually, running
from tests.sandbox.kv.conftest import kv_of

KEYS = 300


def test_a_master_killed_fails_over_and_every_answer_is_right_or_a_503(tmp_path) -> None:
    cluster = LocalCluster(tmp_path / "cluster", masters=3, replicas=1, node_timeout_ms=FAILOVER_NODE_TIMEOUT_MS).start()
    try:
        with running(tmp_path / "sandbox", areas=["kv"], redis_url=cluster.url) as sandbox:
            gw = kv_of(sandbox)
            values = {f"k:{i}": f"v{i}" for i in range(KEYS)}
            gw.post("/pipeline", json=[["SET", key, value] for key, value in values.items()])
            cluster.wait_replicated()  # the replica of the master killed below has its writes
            victim = cluster.masters()[0]
            on_victim = cluster.keys_of(victim)
            assert on_victim, "the killed master held keys"

            cluster.kill(victim)
            seen: list[tuple[int, str]] = []
            written: dict[str, str] = {}

            def round_of_requests() -> bool:
                """Reads of every key of the killed master and one write; True once all answer 200."""
                fine = True
                for key in sorted(on_victim)[:40]:
                    response = gw.get(f"/GET/{key}")
                    seen.append((response.status_code, response.text))
                    if response.status_code == 200:
                        assert response.json() == {"result": values[key]}, (key, response.text)
                    else:
                        assert response.status_code == 503, response.text
                        assert int(response.headers["Retry-After"]) >= 1
                        fine = False
                key = f"new:{len(seen)}"
                response = gw.get(f"/SET/{key}/{len(seen)}")
                seen.append((response.status_code, response.text))
                if response.status_code == 200:
                    written[key] = str(len(seen) - 1)
                else:
                    assert response.status_code == 503 and "Retry-After" in response.headers, response.text
                    fine = False
                return fine

            eventually(round_of_requests, "the cluster to serve every slot again after the failover", 60)
            assert any(status == 503 for status, _ in seen), "no request met the switch"
            assert {status for status, _ in seen} == {200, 503}
            errors = {text for status, text in seen if status == 503}
            assert all("Redis Cluster" in text for text in errors), errors

            # the replica serves the dead master's slots now, with its data; nothing acknowledged was lost
            assert len(cluster.masters()) == 3 and victim not in cluster.masters()
            replies = gw.post("/pipeline", json=[["GET", key] for key in [*values, *written]]).json()
            assert [r["result"] for r in replies] == [*values.values(), *written.values()]
            assert gw.get("/DBSIZE").json() == {"result": KEYS + len(written)}
            assert "3 masters" in sandbox.area("kv").backend.describe()
            gw.http.close()
    finally:
        cluster.stop()


def test_requests_to_the_other_masters_are_served_while_one_is_away(tmp_path) -> None:
    """Until the cluster marks the master failed, only its slots are away; a pipeline over every
    master answers the others' commands and says which did not run."""
    cluster = LocalCluster(tmp_path / "cluster", masters=3, replicas=0,
                           node_timeout_ms=FAILOVER_NODE_TIMEOUT_MS).start()
    try:
        with running(tmp_path / "sandbox", areas=["kv"], redis_url=cluster.url) as sandbox:
            gw = kv_of(sandbox)
            keys = [f"p:{i}" for i in range(30)]
            gw.post("/pipeline", json=[["SET", key, key] for key in keys])
            victim = cluster.masters()[0]
            gone = cluster.keys_of(victim)
            cluster.kill(victim)
            replies = gw.post("/pipeline", json=[["GET", key] for key in keys])
            if replies.status_code == 200:  # answered before the others declared the cluster down
                for key, reply in zip(keys, replies.json()):
                    if key in gone:
                        assert reply["error"].startswith("TRYAGAIN this command did not run"), reply
                    else:
                        assert reply == {"result": key}
            else:
                assert replies.status_code == 503 and "Retry-After" in replies.headers
            single = gw.get(f"/GET/{min(gone)}")
            assert single.status_code == 503 and single.headers["Retry-After"] == "1"
            gw.http.close()
    finally:
        cluster.stop()
