"""``GET /health`` and ``svckit doctor --sandbox URL``: each area's checks as a running sandbox sees them,
healthy and while its Redis child is being restarted."""

from __future__ import annotations

import os
import signal
import time

import httpx

from svckit.cli import main
from svckit.sandbox.kv import backends
from tests.conftest import start_sandbox


def _checks(sandbox) -> tuple[int, dict[tuple[str, str], dict]]:
    response = httpx.get(sandbox.url + "/health", timeout=10)
    body = response.json()
    return response.status_code, {(area, c["check"]): c for area, checks in body["areas"].items() for c in checks}


def test_health_names_each_areas_checks_and_the_doctor_reads_them(monkeypatch, capsys):
    monkeypatch.setattr(backends, "RESTART_FIRST_DELAY", 3.0)  # a restart slow enough to be seen
    sandbox = start_sandbox(areas=["kv", "account", "queue"], backend="redis")
    try:
        status, checks = _checks(sandbox)
        assert status == 200, checks
        assert set(checks) == {("kv", "redis"), ("devapi", "sqlite"), ("queue", "sqlite")}
        assert all(c["ok"] for c in checks.values())
        assert f"pid {sandbox.area('kv').backend.pid}" in checks["kv", "redis"]["detail"]
        assert checks["queue", "sqlite"]["detail"].startswith(f"{sandbox.data_dir / 'state.sqlite3'}: writable")

        assert main(["doctor", "--sandbox", sandbox.url]) == 0
        out = capsys.readouterr().out
        assert f"the sandbox at {sandbox.url} is healthy" in out
        assert "ok   kv      redis" in out and "ok   queue   sqlite" in out

        os.kill(sandbox.area("kv").backend.pid, signal.SIGKILL)
        status, checks = _checks(sandbox)
        assert status == 503
        assert not checks["kv", "redis"]["ok"] and "restarting" in checks["kv", "redis"]["detail"]
        assert checks["queue", "sqlite"]["ok"]  # one area down leaves the others as they are

        assert main(["doctor", "--sandbox", sandbox.url]) == 1
        out = capsys.readouterr().out
        assert "NOT healthy" in out and "FAIL kv      redis" in out
        secrets = [value for name, value in sandbox.env.items() if name.endswith(("TOKEN", "KEY"))]
        assert secrets and not any(secret in out for secret in secrets)

        deadline = time.monotonic() + 20
        while _checks(sandbox)[0] != 200:
            assert time.monotonic() < deadline, "the health check never came back"
            time.sleep(0.05)
        assert "restarted 1 time" in _checks(sandbox)[1]["kv", "redis"]["detail"]
    finally:
        sandbox.stop()


def test_the_doctor_says_when_no_sandbox_answers(capsys):
    assert main(["doctor", "--sandbox", "http://127.0.0.1:9"]) == 1
    assert "no health report from http://127.0.0.1:9/health" in capsys.readouterr().out
