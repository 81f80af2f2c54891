"""The data directory is private (svckit/sandbox/private.py): 0700, every file in it 0600, from the
moment each is created, after writes in every area; a directory others could read is tightened at start; a
Sandbox in a kernel leaves the process umask alone; ``svckit sandbox`` makes everything private; and
binding anything but loopback is warned about (svckit/sandbox/server.py ``exposure_warning``)."""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from svckit.config import Settings
from svckit.sandbox import Sandbox
from svckit.sandbox.area import Credentials, SandboxContext
from svckit.sandbox.options import SandboxOptions
from svckit.sandbox.server import exposure_warning
from tests.conftest import basic, cli_sandbox, lines_until, require_binary, running

URL = "https://app.example.com/api/workflows/private"


def modes(root: Path) -> dict[str, int]:
    """Permission bits of the data directory ("."), and of every path below it, by relative path."""
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        out[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return out


def not_private(root: Path) -> dict[str, str]:
    """Paths whose mode is not the private one: 0700 for directories (and sockets, which need the
    owner's x bit on no system but are made so by some servers), 0600 for regular files."""
    wrong = {}
    for name, mode in modes(root).items():
        kind = (root / name).lstat().st_mode
        private = mode == 0o600 if stat.S_ISREG(kind) else not mode & 0o077
        if not private or (stat.S_ISDIR(kind) and mode != 0o700):
            wrong[name] = oct(mode)
    return wrong


def write_in_every_area(settings: Settings, url: str) -> None:
    """One write through each area's HTTP interface."""
    with httpx.Client(timeout=60) as http:
        kv = {"Authorization": f"Bearer {settings.kv_token}"}
        assert http.post(f"{url}/kv/", json=["SET", "secret", "s3cr3t"], headers=kv).json() == {"result": "OK"}
        vector = {"Authorization": f"Bearer {settings.vector_token}"}
        r = http.post(f"{url}/vector/nomodel/upsert", json=[{"id": "v", "vector": [0.5] * 384}], headers=vector)
        assert r.status_code == 200, r.text
        devapi = {"Authorization": basic(settings.devapi_email, settings.devapi_key)}
        r = http.post(f"{url}/devapi/v2/search/idx_products/rename", json={"name": "private"}, headers=devapi)
        assert r.json() == "OK"
        queue = {"Authorization": f"Bearer {settings.queue_token}"}
        r = http.post(f"{url}/queue/v2/dlq/resume", json={"dlqIds": ["none"]}, headers=queue)
        assert r.status_code == 404  # a queue request that reaches the store (no workflow is registered)


@pytest.fixture(scope="module")
def everywhere(tmp_path_factory) -> Iterator[Sandbox]:
    require_binary("redis-server")
    with running(tmp_path_factory.mktemp("private") / "data", backend="redis") as sb:
        sb.area("queue").runner.register(URL, lambda context: context.run("keep", lambda: context.body))
        yield sb


def test_the_data_directory_and_the_sandbox_files_are_private_after_writes_in_every_area(everywhere):
    write_in_every_area(everywhere.settings, everywhere.url)
    everywhere.area("queue").runner.wait(everywhere.area("queue").runner.trigger(URL, {"secret": "x"}))
    found = modes(everywhere.data_dir)
    assert found["."] == 0o700
    for name in ("credentials.json", "state.sqlite3", "state.sqlite3-wal", "state.sqlite3-shm"):
        assert found[name] == 0o600, name  # SQLite gives its WAL and shared memory the database's mode
    assert not_private(everywhere.data_dir) == {}  # the vector indexes' files among them


def test_files_are_created_private_not_fixed_afterwards(tmp_path, caplog):
    """Nothing to tighten on a fresh start, nor on the next start after writes: every path was
    private from the moment it was made."""
    require_binary("redis-server")
    for _ in range(2):
        with running(tmp_path / "data", areas=["kv", "account", "queue"], backend="redis") as sb:
            settings, url = sb.settings, sb.url
            with httpx.Client(timeout=30) as http:
                assert http.post(f"{url}/kv/", json=["SET", "k", "v"],
                                 headers={"Authorization": f"Bearer {settings.kv_token}"}).status_code == 200
                r = http.post(f"{url}/devapi/v2/queue/user/rotatetoken",
                              headers={"Authorization": basic(settings.devapi_email, settings.devapi_key)})
                assert r.status_code == 200
    assert "removed group and other access" not in caplog.text
    assert not_private(tmp_path / "data") == {}


def test_a_data_directory_others_could_read_is_tightened_at_start_and_says_so(tmp_path, caplog):
    # (one others could write is refused: tests/sandbox/test_data_dir_refused.py)
    data = tmp_path / "data"
    (data / "old").mkdir(parents=True)
    for path in (data / "state.sqlite3", data / "old" / "notes.txt"):
        path.write_text("")
    for path, mode in ((data, 0o755), (data / "old", 0o751), (data / "state.sqlite3", 0o644),
                       (data / "old" / "notes.txt", 0o640)):
        path.chmod(mode)
    with running(data, areas=["account"]):
        pass
    assert not_private(data) == {}
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("removed group and other access from 4 path(s)" in w for w in warnings), warnings


def test_a_sandbox_leaves_the_process_umask_alone(tmp_path):
    before = os.umask(0o022)
    try:
        with running(tmp_path / "data", areas=["account", "queue"]) as sb:
            assert os.umask(0o022) == 0o022  # unchanged while it runs (a kernel's other files keep theirs)
            assert not_private(sb.data_dir) == {}
        assert os.umask(0o022) == 0o022
    finally:
        os.umask(before)


@pytest.mark.timeout(300)
def test_svckit_sandbox_on_the_command_line_keeps_everything_private(tmp_path):
    require_binary("redis-server")
    data = tmp_path / "data"
    proc = cli_sandbox("--data-dir", str(data), "--backend", "redis")
    try:
        lines = lines_until(proc, "SVC_QUEUE_TOKEN=")
        settings = Settings.from_lines(lines)
        write_in_every_area(settings, settings.kv_url.removesuffix("/kv"))
        assert not_private(data) == {}  # the vector index and redis files too: umask 077
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    assert not_private(data) == {}


# -- binding beyond loopback ----------------------------------------------------------------------
@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_loopback_binds_are_not_warned_about(host):
    assert exposure_warning(host) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "192.0.2.10", "10.1.2.3"])
def test_other_binds_are_warned_about_saying_what_they_expose(host):
    warning = exposure_warning(host)
    assert warning is not None
    for what in ("not loopback", "key-value, vector, devapi, queue", "plain HTTP", "bearer tokens", "127.0.0.1"):
        assert what in warning, what


def test_the_sandbox_context_repr_shows_no_option_value(tmp_path):
    # areas log and raise with their context at hand; an external Redis's URL carries its password
    ctx = SandboxContext(tmp_path, Credentials.load_or_create(tmp_path),
                         SandboxOptions(redis_url="redis://app:hunter2-secret-pw@127.0.0.1:6379/0"))
    assert "hunter2-secret-pw" not in repr(ctx) and "SandboxContext(" in repr(ctx)
    assert "hunter2-secret-pw" not in repr(ctx.options)
