"""A Redis that goes away while the sandbox serves: its redis-server child killed (the OOM killer, a
stray signal) is started again on its data directory, and an external Redis is reconnected when it is
back. Meanwhile the gateway answers 503 with Retry-After, svckit's clients retry reads through it and
refuse to repeat a write on their own."""

from __future__ import annotations

import logging
import os
import signal
import time

import httpx
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from svckit.errors import ServerError
from svckit.kv import KV, RetryPolicy
from svckit.sandbox.kv import KVArea, backends, gateway
from svckit.sandbox.kv.backends import restart_delay
from tests.conftest import eventually, process_gone, redis_server, start_sandbox
from tests.sandbox.kv.conftest import kv_of

BACK_WITHIN = 5.0  # seconds: the bound on a restart


def _answers_within(kv, seconds: float) -> httpx.Response:
    """Poll ``DBSIZE`` until it answers 200, for at most ``seconds``; the last response."""
    deadline = time.monotonic() + seconds
    while True:
        response = kv.get("/DBSIZE")
        if response.status_code == 200 or time.monotonic() > deadline:
            return response


def test_restart_pauses_grow_with_quick_deaths_and_are_bounded():
    assert [restart_delay(n) for n in range(7)] == [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 5.0]
    assert restart_delay(10_000) == backends.RESTART_MAX_DELAY


def test_a_killed_redis_child_comes_back_with_every_acknowledged_key(caplog):
    sandbox = start_sandbox(areas=["kv"], backend="redis")
    kv = kv_of(sandbox)
    client = KV(kv.url, kv.token)
    try:
        written = {f"kept:{i}": f"value {i}" for i in range(500)}
        for start in range(0, 500, 100):
            assert client.mset(dict(list(written.items())[start:start + 100]))
        # a transaction and a script with two writes each: Redis 7.0 replays them as MULTI/EXEC
        assert kv.post("/multi-exec", json=[["SET", "tx:a", "1"], ["INCRBY", "tx:n", "2"]]).status_code == 200
        script = "redis.call('SET', KEYS[1], 'x'); return redis.call('INCR', KEYS[2])"
        assert kv.post("/", json=["EVAL", script, "2", "lua:a", "lua:n"]).json() == {"result": 1}
        backend = sandbox.area("kv").backend
        killed = backend.pid
        with caplog.at_level(logging.WARNING, logger="svckit.sandbox"):
            os.kill(killed, signal.SIGKILL)
            response = _answers_within(kv, BACK_WITHIN)
        assert response.status_code == 200, f"no answer {BACK_WITHIN} s after the kill: {response.text}"
        assert response.json() == {"result": 504}
        assert client.mget("tx:a", "tx:n", "lua:a", "lua:n") == ["1", "2", "x", "1"]
        assert backend.pid != killed and not process_gone(backend.pid)
        assert client.mget(*written) == list(written.values())
        # the log says what happened, and where the data is (Redis may answer a request before the
        # supervisor's own check that it is up, which logs the restart)
        eventually(lambda: backend.restarts == 1, "the child restarted", 10)
        assert f"redis-server child pid {killed} exited (killed by SIGKILL); restarting it on {backend.dir}" \
            in caplog.text
        assert "redis-server restarted" in caplog.text
        # and the new child is the gateway's as the first was: JSON.* and the Read Only token work
        assert kv.post("/", json=["JSON.SET", "doc", "$", '{"a": 1}']).json() == {"result": "OK"}
        assert kv.get("/SET/x/1", headers=kv.auth(kv.readonly_token)).status_code == 400
    finally:
        client.close()
        kv.http.close()
        sandbox.stop()


def test_a_restarted_redis_that_is_still_loading_its_data_is_answered_503(tmp_path, monkeypatch):
    import redis

    monkeypatch.setattr(gateway, "RESTART_HOLD", 0.0)  # answer at once, not once the data is loaded
    sandbox = start_sandbox(tmp_path, areas=["kv"], backend="redis")
    kv = kv_of(sandbox)
    try:
        backend = sandbox.area("kv").backend
        direct = redis.Redis.from_url(backend.redis_url)
        pipe = direct.pipeline(transaction=False)
        for i in range(20_000):
            pipe.set(f"bulk:{i}", "v")
        pipe.execute()
        direct.close()
        backend._args += ["--key-load-delay", "100"]  # 100 µs a key: two seconds of LOADING at the restart
        pid = backend.pid
        os.kill(pid, signal.SIGKILL)
        # once it has exited: a request in flight at the kill sees the connection reset
        # ("unreachable"), which is true too, but not what this test looks at
        eventually(lambda: process_gone(pid), "the killed redis-server exited", 10)
        seen = []
        deadline = time.monotonic() + 30
        while (response := kv.get("/GET/bulk:1")).status_code != 200:
            seen.append((response.status_code, response.json()["error"], response.headers.get("Retry-After")))
            assert time.monotonic() < deadline, seen[-1]
            time.sleep(0.02)
        assert response.json() == {"result": "v"}
        assert {status for status, _, _ in seen} == {503} and all(wait for _, _, wait in seen)
        # the sandbox waits for its child to answer PING (LOADING until the data is in), and requests
        # meanwhile wait for it in turn: a restart, whatever the reply a request on a stale
        # connection might have met
        assert all("restarting" in error or "loading its data" in error for _, error, _ in seen), seen
    finally:
        kv.http.close()
        sandbox.stop()


def test_a_request_during_a_short_restart_waits_for_it_instead_of_failing(monkeypatch):
    # the hold's 2 s budget is tuning; what is tested is that the write waits and is sent: a long
    # budget keeps a machine under load (the restart slower) from failing the test
    monkeypatch.setattr(gateway, "RESTART_HOLD", 30.0)
    # a child killed soon after its start is restarted after a pause: a second, so that the write
    # below surely comes while no Redis is there; "soon" whatever the machine's load
    monkeypatch.setattr(backends, "RESTART_FIRST_DELAY", 1.0)
    monkeypatch.setattr(backends, "STABLE_AFTER", 3600.0)
    sandbox = start_sandbox(areas=["kv"], backend="redis")
    backend = sandbox.area("kv").backend
    kv = kv_of(sandbox)
    client = KV(kv.url, kv.token)
    try:
        pid = backend.pid
        os.kill(pid, signal.SIGKILL)
        # sent once the child has exited: a write in flight at the kill may have run, and is rightly
        # not sent again (a 503), which is not the case tested
        eventually(lambda: process_gone(pid), "the killed redis-server exited", 10)
        # a write, which no client repeats on its own: it never reached Redis, so the gateway holds
        # it until the new child serves, and sends it then
        assert client.set("during", "the restart") is True
        assert backend.restarts == 1 and backend.pid != pid
        assert client.get("during") == "the restart"
    finally:
        client.close()
        kv.http.close()
        sandbox.stop()


def test_requests_meanwhile_get_503_and_clients_retry_only_reads(monkeypatch):
    # a child that dies soon after its start ("soon" whatever the machine's load) is restarted after
    # a pause (restart_delay(1)); make that pause long enough to be seen, and answer at once instead
    # of holding requests for it
    monkeypatch.setattr(backends, "RESTART_FIRST_DELAY", 3.0)
    monkeypatch.setattr(backends, "STABLE_AFTER", 3600.0)
    monkeypatch.setattr(gateway, "RESTART_HOLD", 0.0)
    sandbox = start_sandbox(areas=["kv"], backend="redis")
    kv = kv_of(sandbox)
    # attempts enough for the whole restart: the supervisor notices the death up to a second late
    # and the restart itself takes longer on a busy machine; every 503 in between asks for 1-3 s
    client = KV(kv.url, kv.token, retry=RetryPolicy(attempts=8))
    try:
        client.set("greeting", "hello")
        # in the append-only file before the kill: with appendfsync everysec Redis may answer before
        # it writes there (it postpones the write while the last fsync is slow, on a busy disk)
        aof = sandbox.data_dir / "redis" / "appendonlydir"
        eventually(lambda: any(b"greeting" in f.read_bytes() for f in aof.glob("*.aof")),
                   "the SET written to the append-only file", 10)
        pid = sandbox.area("kv").backend.pid
        os.kill(pid, signal.SIGKILL)
        # once it has exited: a request still in flight at the kill sees the connection reset
        # ("unreachable"), which is true too, but not what this test looks at
        eventually(lambda: process_gone(pid), "the killed redis-server exited", 10)
        response = kv.get("/GET/greeting")
        assert response.status_code == 503
        assert 1 <= int(response.headers["Retry-After"]) <= 3
        assert "restarting" in response.json()["error"]
        # a subscription cannot start either: the same 503, not an event stream that ends at once
        subscribe = kv.post("/subscribe/news")
        assert subscribe.status_code == 503 and "Retry-After" in subscribe.headers
        assert sandbox.holds()["kv"].startswith("Redis away")  # the notebook's status line says so
        with pytest.raises(ServerError, match="503"):
            client.set("during", "the restart")  # a write is not repeated unless the policy says so
        assert client.get("greeting") == "hello"  # a read waits as Retry-After asks, and is retried
        assert client.get("during") is None
    finally:
        client.close()
        kv.http.close()
        sandbox.stop()


def test_the_child_is_restarting_until_its_stale_connections_are_dropped_and_it_is_prepared(monkeypatch):
    # a request that takes a pooled connection to the dead child before the sandbox has dropped them
    # sees it reset: what the gateway answers then (backend.outage) must still say "restarting", with
    # its Retry-After, not that a Redis that is serving is unreachable
    told = []
    prepare = KVArea._restarted

    async def restarted(area):
        told.append(area.backend.outage(RedisConnectionError("Connection reset by peer"))[0])
        await prepare(area)

    monkeypatch.setattr(KVArea, "_restarted", restarted)
    sandbox = start_sandbox(areas=["kv"], backend="redis")
    kv = kv_of(sandbox)
    try:
        os.kill(sandbox.area("kv").backend.pid, signal.SIGKILL)
        assert _answers_within(kv, BACK_WITHIN).status_code == 200
        assert len(told) == 1 and "restarting" in told[0], told
    finally:
        kv.http.close()
        sandbox.stop()


def test_an_external_redis_that_comes_back_is_reconnected(tmp_path):
    from svckit.sandbox.kv.backends import _free_port

    port = _free_port()
    server = redis_server(port, tmp_path)
    sandbox = None
    try:
        sandbox = start_sandbox(tmp_path / "data", areas=["kv"], backend="external",
                                redis_url=f"redis://127.0.0.1:{port}/0")
        kv = kv_of(sandbox)
        assert kv.get("/SET/k/1").json() == {"result": "OK"}
        server.kill()
        server.wait()
        response = kv.get("/GET/k")
        assert response.status_code == 503 and response.headers["Retry-After"] == "1"
        error = response.json()["error"]
        assert f"external Redis at 127.0.0.1:{port} is unreachable" in error and "reconnects" in error
        server = redis_server(port, tmp_path)  # the same address, a new process (nothing kept)
        response = _answers_within(kv, 20)
        assert response.status_code == 200, response.text
        assert kv.get("/SET/k/2").json() == {"result": "OK"}
        assert kv.get("/GET/k").json() == {"result": "2"}
        kv.http.close()
    finally:
        if sandbox is not None:
            sandbox.stop()
        server.kill()
        server.wait()
