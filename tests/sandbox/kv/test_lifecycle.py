"""Limits, backend choice, persistence across restarts, and ``svckit sandbox`` as a user runs it."""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from svckit.sandbox import Sandbox
from tests.conftest import eventually, process_gone, require_binary, start_sandbox
from tests.sandbox.kv.conftest import kv_of


def test_request_size_and_daily_limits_are_enforced(backend):
    sandbox = start_sandbox(areas=["kv"], backend=backend, kv_max_request_size=64, kv_daily_request_limit=6)
    kv = kv_of(sandbox)
    try:
        big = "x" * 100
        r = kv.post("/", json=["SET", "k", big])  # a body over the limit: 413 before it is read
        assert r.status_code == 413 and "max request size" in r.json()["error"]
        r = kv.post("/multi-exec", json=[["SET", "t", "1"], ["SET", "k", big]])
        assert r.status_code == 413 and set(r.json()) == {"error"} and "max request size" in r.json()["error"]
        r = kv.get("/SET/k/" + big)  # a command over the limit in the path: the gateway's own check
        assert r.status_code == 400 and "max request size" in r.json()["error"]
        assert kv.get("/EXISTS/t").json() == {"result": 0}      # 1 command counted so far
        assert kv.post("/pipeline", json=[["PING"], ["PING"], ["PING"]]).status_code == 200   # 4
        r = kv.post("/multi-exec", json=[["SET", "t", "1"], ["PING"], ["PING"]])             # would be 7
        assert r.status_code == 400 and "daily request limit" in r.json()["error"]
        assert kv.get("/EXISTS/t").json() == {"result": 0}      # 5
        assert kv.get("/PING").json() == {"result": "PONG"}      # 6
        r = kv.get("/PING")
        assert r.status_code == 400 and "daily request limit" in r.json()["error"]
    finally:
        kv.http.close()
        sandbox.stop()


def test_backend_is_reported_and_the_child_redis_is_reachable_directly(capfd):
    require_binary("redis-server")
    import redis

    with Sandbox(areas=["kv"], backend="redis") as sb:
        area = sb.area("kv")
        assert area.backend_name == "redis-server"
        # the URL for tools that talk to Redis directly carries the gateway's credentials ...
        assert area.redis_url and area.redis_url.startswith("unix://svckit-gateway:")
        kv = kv_of(sb)
        kv.get("/SET/direct/yes")
        assert redis.Redis.from_url(area.redis_url).get("direct") == b"yes"
        # ... which the sandbox never shows
        password = area.redis_url.split("@", 1)[0].rsplit(":", 1)[1]
        assert password not in area.backend.describe() and password not in capfd.readouterr().err
        pid = area.backend.pid
        assert pid is not None and not process_gone(pid)
        kv.http.close()
    assert process_gone(pid), "stopping the sandbox must stop its redis-server"


@pytest.mark.parametrize("backend_name", ["redis", "fakeredis"])
def test_demo_seed_loads_data(backend_name):
    sb = start_sandbox(areas=["kv"], backend=backend_name, seed="demo")
    kv = kv_of(sb)
    try:
        assert kv.get("/GET/greeting").json() == {"result": "hello"}
        assert kv.post("/", json=["JSON.GET", "doc:1", "$.tags[0]"]).json() == {"result": '["kv"]'}
    finally:
        kv.http.close()
        sb.stop()


def test_fakeredis_backend_has_no_tcp_url():
    with Sandbox(areas=["kv"], backend="fakeredis") as sb:
        assert sb.area("kv").backend_name == "fakeredis" and sb.area("kv").redis_url is None


def test_data_and_tokens_persist_across_a_restart_on_the_same_data_dir(tmp_path):
    require_binary("redis-server")
    with Sandbox(tmp_path, areas=["kv"], backend="redis") as sb:
        kv = kv_of(sb)
        token = kv.token
        assert kv.get("/SET/survivor/still-here").json() == {"result": "OK"}
        # Redis 7.0 writes a transaction of two writes to its file as MULTI/EXEC, and replays it as
        # its default user at the next start
        assert kv.post("/multi-exec", json=[["SET", "tx", "kept"], ["INCR", "n"]]).status_code == 200
        kv.post("/", json=["JSON.SET", "doc", "$", '{"a":[1]}'])
        assert kv.post("/", json=["ACL", "SETUSER", "keeper", "on", ">pw", "~*", "+get"]).json() == {"result": "OK"}
        assert kv.post("/", json=["ACL", "SAVE"]).json() == {"result": "OK"}
        user_token = kv.post("/", json=["ACL", "RESTTOKEN", "keeper", "pw"]).json()["result"]
        kv.http.close()
    assert (tmp_path / "redis" / "appendonlydir").is_dir()
    with Sandbox(tmp_path, areas=["kv"], backend="redis") as sb:
        kv = kv_of(sb)
        assert kv.token == token
        assert kv.get("/GET/survivor").json() == {"result": "still-here"}
        assert kv.post("/pipeline", json=[["GET", "tx"], ["GET", "n"]]).json() == [{"result": "kept"}, {"result": "1"}]
        assert kv.post("/", json=["JSON.GET", "doc", "$.a"]).json() == {"result": "[[1]]"}
        as_user = kv.auth(user_token)
        assert kv.http.get(kv.url + "/GET/survivor", headers=as_user).json() == {"result": "still-here"}
        assert kv.http.get(kv.url + "/DEL/survivor", headers=as_user).status_code == 400
        kv.http.close()


def _read_env(proc: subprocess.Popen, timeout: float = 60) -> dict[str, str]:
    env: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while "SVC_KV_READONLY_TOKEN" not in env:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"svckit sandbox exited early: {proc.stderr.read() if proc.stderr else ''}")
        if "=" in line:
            name, _, value = line.strip().partition("=")
            env[name] = value
        assert time.monotonic() < deadline
    return env


@pytest.mark.slow
def test_cli_sandbox_prints_variables_serves_the_acceptance_requests_and_stops_on_sigterm(tmp_path):
    require_binary("redis-server")
    proc = subprocess.Popen(
        [sys.executable, "-m", "svckit.cli", "sandbox", "--port", "0", "--data-dir", str(tmp_path / "data"),
         "--areas", "kv", "--backend", "redis"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        env = _read_env(proc)
        url, token = env["SVC_KV_URL"], env["SVC_KV_TOKEN"]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/kv")
        assert env["SVC_KV_READONLY_TOKEN"] and env["SVC_KV_READONLY_TOKEN"] != token
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(timeout=10) as http:
            r = http.get(f"{url}/SET/a/b", headers=auth)
            assert (r.status_code, r.text) == (200, '{"result":"OK"}')
            r = http.get(f"{url}/GET/a", headers=auth)
            assert (r.status_code, r.text) == (200, '{"result":"b"}')
            assert http.get(f"{url}/GET/a", headers={"Authorization": "Bearer nope"}).status_code == 401
            assert http.delete(f"{url}/GET/a", headers=auth).status_code == 405
            assert http.get(f"{url}/GET/a", headers={**auth, "Service-Response-Format": "yaml"}).status_code == 400
            r = http.get(f"{url}/GET/a", headers={**auth, "Service-Encoding": "base64"})
            assert r.json() == {"result": base64.b64encode(b"b").decode()}
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    stderr = proc.stderr.read() if proc.stderr else ""
    # uvicorn re-raises the signal after its graceful shutdown, so -SIGTERM is the clean exit status
    assert proc.returncode in (0, -signal.SIGTERM), stderr
    assert "Traceback" not in stderr, stderr
    assert token not in stderr
    match = re.search(r"kv backend: redis-server \S+ child pid (\d+)", stderr)
    assert match, stderr
    child = int(match.group(1))
    eventually(lambda: process_gone(child), "SIGTERM must stop the sandbox's redis-server child", 5)
    redis_log = (tmp_path / "data" / "redis" / "redis.log").read_text()
    assert "ready to exit" in redis_log, "redis-server must have shut down cleanly, not been killed"


def test_redis_child_dies_with_a_killed_sandbox(tmp_path):
    require_binary("redis-server")
    proc = subprocess.Popen(
        [sys.executable, "-m", "svckit.cli", "sandbox", "--port", "0", "--data-dir", str(tmp_path),
         "--areas", "kv", "--backend", "redis"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        _read_env(proc)
    finally:
        proc.kill()  # SIGKILL: no shutdown code runs in the sandbox
        proc.wait(timeout=30)
    stderr = proc.stderr.read() if proc.stderr else ""
    match = re.search(r"child pid (\d+)", stderr)
    assert match, stderr
    child = int(match.group(1))
    eventually(lambda: process_gone(child), "a redis-server child must not outlive a killed sandbox: gone", 10)


def test_stopping_the_sandbox_ends_open_event_streams_cleanly(capfd):
    """An open monitor stream must not hold shutdown up until the grace timeout (and log a traceback)."""
    import threading

    sandbox = Sandbox(areas=["kv"], backend="fakeredis").start()
    env = sandbox.env
    opened, ended = threading.Event(), threading.Event()

    def watch() -> None:
        with httpx.Client(timeout=30) as client, client.stream(
                "POST", env["SVC_KV_URL"] + "/monitor",
                headers={"Authorization": f"Bearer {env['SVC_KV_TOKEN']}"}) as r:
            for line in r.iter_lines():
                if line:  # the monitor's first event: the stream is open on the server
                    opened.set()
        ended.set()

    threading.Thread(target=watch, daemon=True).start()
    assert opened.wait(10), "the monitor stream did not open"
    sandbox.stop()
    assert ended.wait(5), "the monitor stream did not end when the sandbox stopped"
    assert "timeout graceful shutdown exceeded" not in capfd.readouterr().err
