"""The redis-server child ends with its sandbox whatever it is doing (svckit/sandbox/kv/backends.py:
PDEATHSIG is SIGKILL, which a running script cannot hold up), and a Redis that outlives its sandbox all
the same keeps a new start on its data directory out, naming it (svckit/sandbox/lock.py)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import redis

from svckit.errors import DataDirectoryInUse
from svckit.sandbox import Sandbox
from svckit.sandbox.kv.users import GATEWAY_USER
from tests.conftest import cli_sandbox, eventually, lines_until, process_gone, require_binary
from tests.sandbox.kv.conftest import redis_as

#: a script that writes, then never ends: SCRIPT KILL cannot stop it (UNKILLABLE), and Redis defers a
#: SIGTERM until it ends
WRITE_THEN_LOOP = "redis.call('SET', KEYS[1], 'v') while true do end"


def gateway_redis(data: Path) -> redis.Redis:
    """A direct connection to the sandbox's redis-server, as the gateway's own user."""
    return redis_as(data, GATEWAY_USER, socket_timeout=None)


def busy(client: redis.Redis) -> bool:
    """Whether Redis answers BUSY: a script has run past its time limit and still runs."""
    try:
        client.ping()
    except redis.exceptions.ResponseError as exc:
        return str(exc).startswith("BUSY")
    return False


def run_forever(client: redis.Redis) -> None:
    """Send the script that never ends (its reply never comes; the connection fails when Redis dies)."""
    with contextlib.suppress(redis.exceptions.RedisError):
        client.eval(WRITE_THEN_LOOP, 1, "written")


@pytest.mark.timeout(180)
def test_a_busy_redis_child_dies_with_a_killed_sandbox(tmp_path):
    require_binary("redis-server")
    data = tmp_path / "data"
    proc = cli_sandbox("--data-dir", str(data), "--areas", "kv", "--backend", "redis", stderr=subprocess.PIPE)
    child = None
    try:
        lines_until(proc, "SVC_KV_READONLY_TOKEN=")
        threading.Thread(target=run_forever, args=(gateway_redis(data),), daemon=True).start()
        probe = gateway_redis(data)
        eventually(lambda: busy(probe), "the redis-server child busy in the script", 60)
    finally:
        proc.kill()  # SIGKILL: no shutdown code runs in the sandbox
        proc.wait(timeout=30)
        stderr = proc.stderr.read() if proc.stderr else ""
        match = re.search(r"child pid (\d+)", stderr)
        child = int(match.group(1)) if match else None
    assert child is not None, stderr
    try:
        eventually(lambda: process_gone(child), "a busy redis-server child must not outlive a killed sandbox: gone", 60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)  # whatever happened, no Redis of this test is left behind


#: a sandbox in a process of its own, on the data directory argv[1] with the redis-server argv[2]
SANDBOX_ON = ("import sys; from svckit.sandbox import Sandbox; "
              "sb = Sandbox(sys.argv[1], areas=['kv'], backend='redis', redis_server=sys.argv[2]).start(); "
              "print('READY', flush=True); sys.stdin.read()")


def outliving_redis(tmp_path: Path) -> tuple[Path, Path]:
    """A "redis-server" that outlives the sandbox that starts it: a shell runs the real one in the
    background (a forked process does not inherit the death signal) and writes its pid to a file. As a
    Redis left by an older sandbox, or by one on a system without PDEATHSIG whose watchdog was killed."""
    pidfile = tmp_path / "redis.pid"
    wrapper = tmp_path / "outliving-redis-server"
    wrapper.write_text(f'#!/bin/sh\n{require_binary("redis-server")} "$@" &\necho $! > {pidfile}\nwait\n')
    wrapper.chmod(0o700)
    return wrapper, pidfile


@pytest.mark.timeout(180)
def test_a_start_on_a_data_directory_a_live_redis_holds_is_refused_naming_it(tmp_path):
    require_binary("redis-server")
    data = tmp_path / "data"
    wrapper, pidfile = outliving_redis(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", SANDBOX_ON, str(data), str(wrapper)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    orphan = None
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "READY"
        orphan = int(pidfile.read_text().split()[-1])
        proc.kill()
        proc.wait(timeout=30)
        assert not process_gone(orphan)  # the sandbox is gone, its Redis serves on
        with pytest.raises(DataDirectoryInUse) as refused:
            Sandbox(data, areas=["kv"], backend="redis").start()
        message = str(refused.value)
        assert f"the data directory {data} is in use" in message
        assert f"pid {orphan} (redis-server)" in message and f"kill {orphan}" in message
        assert gateway_redis(data).ping()  # the Redis found there is untouched: no second one took its socket
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if orphan is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(orphan, signal.SIGKILL)
            eventually(lambda: process_gone(orphan), "the test's own outliving Redis stopped", 30)
    with Sandbox(data, areas=["kv"], backend="redis") as sb:  # once it is gone, the directory serves again
        assert sb.area("kv").backend.pid is not None
