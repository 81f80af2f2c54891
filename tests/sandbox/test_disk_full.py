"""A full or read-only data directory (issue #24): every area's write answers an error that names the
file and says what to do, nothing is left half-written (SQLite's ``integrity_check``, the index
loads, nothing refused shows), and once space is back the same sandbox carries on, without a restart.

The disk is a small tmpfs mounted for the test (root only: CI runs these as root; elsewhere they are
skipped and say why), filled to the last byte by a filler file. A read-only remount cannot be shown
on a running sandbox: Linux refuses it ("mount point is busy") while SQLite holds its files open for
writing, so the read-only case is a start on a file system remounted read-only meanwhile.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import numpy as np
import pytest

from svckit import errors
from svckit._disk import writing
from svckit.kv import KV
from svckit.localindex import LocalIndex
from svckit.sandbox import Sandbox
from svckit.sandbox.logs import recording
from svckit.sandbox.store import Store
from svckit.sandbox.workflow.runner import MessageTooLarge
from svckit.vector import Vector
from tests.conftest import (
    cli_sandbox,
    eventually,
    lines_until,
    process_gone,
    require_binary,
    running,
    start_sandbox,
)

T = TypeVar("T")
SIZE = "24m"
URL = "https://app.example.com/api/workflows/disk"
FULL = "the file system is full; free space there and retry (nothing of this write was kept)"
#: a text large enough that storing it needs new pages whatever the files' slack
PAYLOAD = "x" * 20_000


def _mount(*options: str, target: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *options, str(target)], check=False, capture_output=True, text=True)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of :data:`SIZE` at a directory of the test's own, unmounted afterwards whatever happened."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system for the test needs root (CI runs this test as root)")
    target = tmp_path / "fs"
    target.mkdir()
    done = _mount("-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "tmpfs", target=target)
    if done.returncode != 0:
        pytest.skip(f"this machine does not let the test mount a tmpfs: {done.stderr.strip()}")
    try:
        yield target
    finally:
        if subprocess.run(["umount", str(target)], check=False, capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(target)], check=True)  # busy: detach it now, freed when idle


def fill(directory: Path) -> Path:
    """Write a file in ``directory`` until the file system has no byte left; the file, to delete."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as fh, pytest.raises(OSError) as full:
        while True:
            fh.write(b"\0" * 65536)
    assert full.value.errno == errno.ENOSPC
    return filler


def refused(call: Callable[[], Any], path: Path) -> str:
    """The message of ``call()``'s 507: the disk refused to write ``path``."""
    with pytest.raises(errors.ServerError) as info:
        call()
    assert info.value.status == 507, info.value
    assert f"could not write {path}: " in str(info.value)
    return str(info.value)


def integrity(path: Path, *, read_only_fs: bool = False) -> str:
    """``PRAGMA integrity_check`` of a SQLite file, opened read-only beside its writer (on a read-only
    file system as immutable: SQLite cannot make the shared-memory file a WAL database needs)."""
    db = sqlite3.connect(f"file:{path}?{'immutable=1' if read_only_fs else 'mode=ro'}", uri=True)
    try:
        return db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()


def health(sandbox: Sandbox, area: str) -> dict[str, tuple[bool, str]]:
    """An area's checks, as ``GET /health`` reports them."""
    checks = httpx.get(sandbox.url + "/health", timeout=30).json()["areas"][area]
    return {c["check"]: (c["ok"], c["detail"]) for c in checks}


def vectors(ids: list[str]) -> list[dict[str, Any]]:
    rng = np.random.default_rng(len(ids))
    return [{"id": i, "vector": rng.random(384).tolist(), "data": PAYLOAD} for i in ids]


class HeldRun:
    """A workflow whose step "held" waits for :meth:`release`, so a test can fill the disk under it."""

    def __init__(self) -> None:
        self.entered, self.released = threading.Event(), threading.Event()

    def __call__(self, context: Any) -> Any:
        context.run("before", lambda: "kept")
        context.run("held", self._held)
        return context.run("after", lambda: PAYLOAD)

    def _held(self) -> str:
        self.entered.set()
        assert self.released.wait(30)
        return PAYLOAD


def test_a_full_disk_refuses_each_areas_writes_by_name_keeps_every_store_whole_and_recovers(small_fs):
    require_binary("redis-server")
    data = small_fs / "data"
    state, index = data / "state.sqlite3", data / "vector" / "nomodel" / "index.sqlite3"
    workflow = HeldRun()
    sandbox = start_sandbox(data, areas=["kv", "account", "queue", "vector"], backend="redis", queue_retry_delay=0)
    try:
        runner = sandbox.area("queue").runner
        runner.register(URL, workflow)
        with sandbox.connect() as clients, Vector.from_settings(sandbox.settings, kind="nomodel") as vec:
            # acknowledged before the disk fills
            clients.kv.set("before", "kept")
            clients.kv.execute("ACL", "SETUSER", "reader", "on", ">pw", "~*", "+get")
            vec.upsert(vectors(["a", "b", "c"]))
            vec.upsert(vectors(["k"]), namespace="ns")
            assert clients.account.rename_search_index("idx_products", "before") == "OK"
            held = clients.queue.trigger(URL, {"job": "held"})
            assert workflow.entered.wait(30)

            filler = fill(small_fs)

            # D: the held step's result cannot be kept: the delivery waits for the disk and is made again
            # once space is back (the step runs again: a delivery is at least once)
            with recording() as lines:
                workflow.released.set()
                eventually(lambda: any("waits until the disk takes writes again" in line for line in lines),
                           "the held run's delivery waiting for the disk")
            assert f"could not write {state}: {FULL}" in next(line for line in lines if "waits" in line)
            assert FULL in refused(lambda: clients.queue.trigger(URL, {"blob": PAYLOAD}), state)
            # C: nothing of a refused write shows (the queue token still works: the rotation did not happen)
            assert FULL in refused(lambda: clients.account.rename_search_index("idx_products", PAYLOAD[:200]), state)
            refused(clients.account.rotate_queue_token, state)
            (run,) = clients.queue.workflow_logs(workflow_run_id=held.workflow_run_id).runs
            assert run.workflow_state == "RUN_STARTED" and run.step("held") is None  # not kept yet
            # B: the index answers as before each refused write, in memory as on disk
            assert FULL in refused(lambda: vec.upsert(vectors(["n1", "n2", "n3"])), index)
            assert vec.fetch(["n1", "n2", "n3"]) == [None, None, None]
            refused(lambda: vec.delete(["a"]), index)
            refused(lambda: vec.reset(), index)
            refused(lambda: vec.delete_namespace("ns"), index)
            assert [v.id if v else None for v in vec.fetch(["a", "b", "c"])] == ["a", "b", "c"]
            assert vec.info().vector_count == 4 and "ns" in vec.list_namespaces()
            # A: Redis refuses writes it cannot append to its file, in words a person reads
            kv_error = eventually(lambda: _kv_write_refused(clients.kv), "a key-value write refused")
            assert isinstance(kv_error, errors.APIError), kv_error
            assert f"could not write its append-only file or snapshot to its data directory {data / 'redis'}" \
                in str(kv_error) and "takes writes again by itself" in str(kv_error)
            tokens = data / "kv_rest_tokens.json"
            with pytest.raises(errors.APIError, match=re.escape(f"no token made: could not write {tokens}: {FULL}")):
                clients.kv.rest_token("reader", "pw")  # a token a restart would forget is never handed out
            assert not tokens.exists() and not list(data.glob(f"{tokens.name}.*"))  # nor its temporary file
            assert health(sandbox, "kv")["redis"][0] is False
            assert "refuses writes" in health(sandbox, "kv")["redis"][1]
            # the checks say so, and every store is whole
            assert health(sandbox, "queue")["sqlite"] == (False, f"{state}: {FULL.partition(' (')[0]}")
            assert health(sandbox, "vector")["disk"][0] is False and health(sandbox, "vector")["index"][0]
            assert integrity(state) == "ok" and integrity(index) == "ok"

            filler.unlink()

            # the same writes go through, on the same sandbox
            assert runner.wait(runner.handle(held.workflow_run_id, held.workflow_created_at)) == "RUN_SUCCESS"
            (run,) = clients.queue.workflow_logs(workflow_run_id=held.workflow_run_id).runs
            assert [(s.step_name, s.state) for s in run.all_steps][1:] == [
                ("before", "STEP_SUCCESS"), ("held", "STEP_SUCCESS"), ("after", "STEP_SUCCESS")]
            assert clients.account.rename_search_index("idx_products", "after") == "OK"
            assert clients.queue.workflow_logs(workflow_run_id=held.workflow_run_id).runs  # the token still works
            vec.upsert(vectors(["n1", "n2", "n3"]))
            eventually(lambda: _kv_write_taken(clients.kv), "Redis taking writes again")
            assert clients.kv.get("before") == "kept"
            with KV(clients.kv.url, clients.kv.rest_token("reader", "pw")) as reader:
                assert reader.get("before") == "kept"
            eventually(lambda: health(sandbox, "kv")["redis"][0], "the kv area's health check passing again")
            assert [v.id if v else None for v in vec.fetch(["a", "b", "c", "n1"])] == ["a", "b", "c", "n1"]
            assert vec.fetch(["k"], namespace="ns")[0] is not None
            vec.delete_namespace("ns")
            assert all(ok for ok, _ in health(sandbox, "queue").values())
            assert all(ok for ok, _ in health(sandbox, "vector").values())
    finally:
        sandbox.stop()
    assert integrity(state) == "ok" and integrity(index) == "ok"
    reopened = LocalIndex(kind="dense", model=False, path=index.parent)
    try:
        assert sorted(r["id"] for r in reopened.fetch(["a", "b", "c", "n1", "n2", "n3"])) == [
            "a", "b", "c", "n1", "n2", "n3"]
        assert reopened.namespaces() == [""]
    finally:
        reopened.close()


def _kv_write_refused(kv: Any) -> Exception | None:
    """A write until Redis refuses one (the write that first meets the full disk is still answered OK:
    it waits in Redis's buffer until the file takes it)."""
    try:
        kv.set("while-full", PAYLOAD)
    except errors.SvcError as exc:
        return exc
    return None


def _kv_write_taken(kv: Any) -> bool:
    try:
        return bool(kv.set("after", "taken"))
    except errors.APIError:
        return False


def test_a_sandbox_killed_on_a_full_disk_takes_its_redis_child_along(small_fs):
    """On a full disk Redis's last save on SIGTERM fails, and Redis would then refuse to exit: the
    death signal of a killed sandbox must still end it (``--shutdown-on-sigterm force``)."""
    require_binary("redis-server")
    proc = cli_sandbox("--data-dir", str(small_fs / "data"), "--areas", "kv", "--backend", "redis",
                       stderr=subprocess.PIPE)
    try:
        env = dict(line.rstrip("\n").split("=", 1) for line in lines_until(proc, "SVC_KV_READONLY_TOKEN="))
        with KV(env["SVC_KV_URL"], env["SVC_KV_TOKEN"]) as kv:
            kv.set("before", "kept")
            fill(small_fs)
            eventually(lambda: _kv_write_refused(kv), "a key-value write refused")
    finally:
        proc.kill()  # SIGKILL: no shutdown code runs in the sandbox
        proc.wait(timeout=30)
    assert proc.stderr is not None
    child = int(re.search(r"child pid (\d+)", proc.stderr.read()).group(1))
    try:
        eventually(lambda: process_gone(child), "the redis-server child gone with its sandbox")
    finally:
        if not process_gone(child):  # failed: leave no server behind on the test's file system
            os.kill(child, signal.SIGKILL)


def test_a_read_only_data_directory_is_named_at_start_and_a_writable_one_carries_on(small_fs):
    data = small_fs / "data"
    with running(data, areas=["account", "queue"]) as sandbox, sandbox.connect() as clients:
        assert clients.account.rename_search_index("idx_products", "before") == "OK"
    assert _mount("-o", "remount,ro", target=small_fs).returncode == 0
    try:
        with pytest.raises(errors.DiskError) as info:
            start_sandbox(data, areas=["account", "queue"])
        assert str(info.value) == (f"could not write {data / 'credentials.json'}: the file system is read-only; "
                                   "remount it read-write and retry (nothing of this write was kept)")
        assert integrity(data / "state.sqlite3", read_only_fs=True) == "ok"
    finally:
        assert _mount("-o", "remount,rw", target=small_fs).returncode == 0
    with running(data, areas=["account", "queue"]) as sandbox, sandbox.connect() as clients:
        assert clients.account.rename_search_index("idx_products", "after") == "OK"
        assert sandbox.area("account").store.search_indexes()["idx_products"] == "after"


def test_runs_started_together_start_all_or_none(tmp_path):
    # a batch is one write, so a disk that refuses it starts none of it; shown here by a message too large
    with running(tmp_path / "data", areas=["account", "queue"], queue_retry_delay=0) as sandbox:
        runner = sandbox.area("queue").runner
        runner.register(URL, lambda context: None)
        too_large = "x" * (sandbox.area("queue").max_message_size() + 1)
        with pytest.raises(MessageTooLarge):
            runner.trigger_many([{"url": URL, "body": "fits"}, {"url": URL, "body": too_large}])
        assert not sandbox.area("queue").store.query("SELECT * FROM runs")


def test_a_failed_commit_is_rolled_back_and_the_store_takes_the_next_write(tmp_path):
    # A COMMIT the disk refuses is mostly rolled back by SQLite itself; one that is not (here a deferred
    # foreign key, checked at COMMIT) must not leave the transaction open for every later write.
    store = Store(tmp_path / "state.sqlite3")
    try:
        with pytest.raises(sqlite3.IntegrityError), store.transaction() as db:
            db.execute("PRAGMA defer_foreign_keys = ON")
            db.execute("INSERT INTO dlq (dlq_id, run_seq, created_at, message_id) VALUES ('d', 404, 0, 'm')")
        store.set_meta("next", "written")
        assert store.get_meta("next") == "written" and not store.query("SELECT * FROM dlq")
    finally:
        store.close()


@pytest.mark.parametrize(("raised", "says"), [
    (OSError(errno.ENOSPC, "No space left on device"), "the file system is full"),
    (OSError(errno.EDQUOT, "Disk quota exceeded"), "the disk quota there is used up"),
    (OSError(errno.EROFS, "Read-only file system"), "the file system is read-only"),
    (sqlite3.OperationalError("database or disk is full"), "the file system is full"),
    (sqlite3.OperationalError("attempt to write a readonly database"), "the file system is read-only"),
    (sqlite3.OperationalError("disk I/O error"), "the file system failed the write"),
])
def test_each_refusal_of_the_disk_reads_as_what_to_do(tmp_path, raised, says):
    if isinstance(raised, sqlite3.Error):  # what SQLite sets on the errors it raises
        raised.sqlite_errorname = {"database or disk is full": "SQLITE_FULL", "disk I/O error": "SQLITE_IOERR_WRITE",
                                   "attempt to write a readonly database": "SQLITE_READONLY"}[str(raised)]
    path = tmp_path / "state.sqlite3"
    with pytest.raises(errors.DiskError) as info, writing(path):
        raise raised
    assert str(info.value).startswith(f"could not write {path}: {says}") and info.value.path == str(path)
    assert info.value.__cause__ is raised and info.value.status == 507


@pytest.mark.parametrize("raised", [OSError(errno.ENOENT, "No such file or directory"),
                                    sqlite3.OperationalError("database is locked")])
def test_other_errors_pass_as_they_are(tmp_path, raised):
    with pytest.raises(type(raised)) as info, writing(tmp_path / "state.sqlite3"):
        raise raised
    assert info.value is raised
