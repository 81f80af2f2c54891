"""svckit.kv.bulk when keys fail or vanish mid-run, over real HTTP against the sandbox: an ACL token
(``ACL RESTTOKEN``) whose user may touch only part of the keyspace gets NOPERM on the other keys, which
count as failed with their error (``max_errors`` of them kept) while the run goes on and the counts
add up; a user refused the command itself still stops the run; keys another client deletes between
SCAN and the action count as skipped, not failures."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from svckit.errors import InvalidArgument
from svckit.kv import KV, bulk_delete, bulk_expire, bulk_export, bulk_persist, plan_bulk
from svckit.sandbox import Sandbox
from tests.kv.conftest import fill

MINE, THEIRS = 30, 20  # keys the ACL user may touch ("mine:*") and may not ("theirs:*")


def _fill(kv: KV[Any]) -> None:
    fill(kv, {**{f"mine:{i}": f"m{i}" for i in range(MINE)}, **{f"theirs:{i}": f"t{i}" for i in range(THEIRS)}})


def _delete(kv: KV[Any], keys: Sequence[str]) -> None:
    """Another client deletes ``keys``: one DEL each, in one pipeline (one DEL naming them all would
    name keys of several slots, which a cluster refuses)."""
    pipe = kv.pipeline()
    for key in keys:
        pipe.delete(key)
    pipe.exec()


@pytest.fixture
def real_kv(kv_sandbox: Sandbox, kv: KV[str]) -> KV[str]:
    if kv_sandbox.area("kv").backend_name == "fakeredis":  # type: ignore[attr-defined]
        pytest.skip("ACL key patterns are enforced by the real redis-server (fakeredis lets UNLINK through)")
    return kv


def _acl_client(kv_sandbox: Sandbox, kv: KV[str], *rules: str) -> Iterator[KV[str]]:
    name, password = f"bulk{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    assert kv.execute("ACL", "SETUSER", name, "on", f">{password}", "resetkeys", *rules) == "OK"
    try:
        with KV(kv_sandbox.settings.kv_url, kv.rest_token(name, password)) as user:
            yield user
    finally:
        kv.execute("ACL", "DELUSER", name)


@pytest.fixture
def partial(kv_sandbox: Sandbox, real_kv: KV[str]) -> Iterator[KV[str]]:
    """A client whose ACL user may run every command, on the ``mine:*`` keys only."""
    yield from _acl_client(kv_sandbox, real_kv, "~mine:*", "+@all")


def _is_mine(key: str) -> bool:
    return key.startswith("mine:")


# -- NOPERM on part of the keyspace ------------------------------------------------------------------
@pytest.mark.parametrize("batch", [7, 500])
def test_expire_with_a_token_for_part_of_the_keyspace_fails_only_the_other_keys(real_kv, partial, batch):
    _fill(real_kv)
    seen: list[int] = []
    summary = bulk_expire(partial, "*", 600, batch=batch, max_errors=5, progress=lambda p: seen.append(p.done))
    assert (summary.matched, summary.done, summary.skipped, summary.failed) == (MINE + THEIRS, MINE, 0, THEIRS)
    assert seen[-1] == MINE + THEIRS  # the progress counts the failed keys as touched too
    assert summary.complete and not summary.cancelled and not summary.ok
    # max_errors caps the messages kept, not the count: every key is still acted on and counted
    assert len(summary.errors) == 5
    assert all(key.startswith("theirs:") and "NOPERM" in text for key, text in summary.errors.items())
    assert f"{THEIRS} failed" in summary.text()
    ttls = {key: real_kv.ttl(key) for key in real_kv.scan_iter("*")}
    assert all((ttl > 0) == _is_mine(key) for key, ttl in ttls.items()), ttls


@pytest.mark.parametrize("batch", [7, 500])
def test_delete_with_a_token_for_part_of_the_keyspace_removes_the_others_and_counts_every_key(
        real_kv, partial, batch):
    _fill(real_kv)
    summary = bulk_delete(partial, "*", batch=batch, progress=False)
    assert (summary.matched, summary.done, summary.skipped, summary.failed) == (MINE + THEIRS, MINE, 0, THEIRS)
    assert summary.complete and set(summary.errors) == {f"theirs:{i}" for i in range(THEIRS)}
    assert all("NOPERM" in text for text in summary.errors.values())
    assert set(real_kv.scan_iter("*")) == {f"theirs:{i}" for i in range(THEIRS)}  # only my keys went


def test_persist_and_export_with_a_token_for_part_of_the_keyspace(real_kv, partial):
    _fill(real_kv)
    real_kv.expire("mine:0", 600)
    real_kv.expire("theirs:0", 600)
    cleared = bulk_persist(partial, "*", batch=16, progress=False)
    assert (cleared.done, cleared.skipped, cleared.failed) == (1, MINE - 1, THEIRS)  # mine:0 had a TTL
    assert real_kv.ttl("theirs:0") > 0
    exported = bulk_export(partial, "*", format="frame", batch=16, max_errors=0, progress=False)
    assert (exported.done, exported.skipped, exported.failed, exported.errors) == (MINE, 0, THEIRS, {})
    assert sorted(exported.frame["key"]) == sorted(f"mine:{i}" for i in range(MINE))


def test_a_token_refused_the_command_itself_still_stops_the_run(kv_sandbox, real_kv):
    _fill(real_kv)
    for user in _acl_client(kv_sandbox, real_kv, "~*", "+@all", "-expire"):
        with pytest.raises(InvalidArgument, match="Standard token"):
            bulk_expire(user, "*", 600, progress=False)
    assert all(real_kv.ttl(key) == -1 for key in real_kv.scan_iter("*"))


# -- keys that vanish between SCAN and the action ---------------------------------------------------
class Vanishing:
    """A KV through which every SCAN reply is deleted in part by another client right after it is
    read (``gone``: the keys deleted), as a busy keyspace does between SCAN and a bulk run's batch."""

    def __init__(self, kv: KV[str], every: int = 3) -> None:
        self._kv, self._every = kv, every
        self.gone: set[str] = set()

    def scan(self, *args: Any, **kw: Any) -> tuple[int, list[str]]:
        cursor, keys = self._kv.scan(*args, **kw)
        doomed = [key for key in keys if int(key.rsplit(":", 1)[1]) % self._every == 0]
        if doomed:
            _delete(self._kv, doomed)
            self.gone.update(doomed)
        return cursor, keys

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kv, name)


def _fill_types(kv: KV[str], n: int) -> None:
    for i in range(n):
        kind = i % 4
        key = f"v:{i}"
        if kind == 0:
            kv.set(key, f"s{i}")
        elif kind == 1:
            kv.hset(key, mapping={"f": str(i)})
        elif kind == 2:
            kv.rpush(key, str(i))
        else:
            kv.sadd(key, str(i))


@pytest.mark.parametrize("action", ["delete", "expire", "persist", "export"])
def test_keys_deleted_between_scan_and_the_action_count_as_skipped(kv: KV[str], action: str):
    n = 90
    _fill_types(kv, n)
    if action == "persist":
        for i in range(n):
            kv.expire(f"v:{i}", 600)
    vanishing = Vanishing(kv)
    seen: list[int] = []
    options: dict[str, Any] = {"batch": 8, "scan_count": 20, "progress": lambda p: seen.append(p.done)}
    run = {"delete": lambda: bulk_delete(vanishing, "v:*", **options),
           "expire": lambda: bulk_expire(vanishing, "v:*", 600, **options),
           "persist": lambda: bulk_persist(vanishing, "v:*", **options),
           "export": lambda: bulk_export(vanishing, "v:*", format="frame", **options)}
    summary = run[action]()
    gone = len(vanishing.gone)
    assert gone == n // 3
    assert (summary.matched, summary.done, summary.skipped, summary.failed) == (n, n - gone, gone, 0)
    assert seen[-1] == n and len(seen) == summary.batches  # every key counted as touched, batch by batch
    assert summary.ok and summary.complete and summary.errors == {}
    if action == "export":
        assert set(summary.frame["key"]) == {f"v:{i}" for i in range(n)} - vanishing.gone
    if action == "delete":
        assert kv.dbsize() == 0


class VanishingBeforeRead:
    """A KV through which the keys ``doomed`` are deleted by another client after an export has read
    their TYPE and TTL and before it reads their values (between its two pipelines of a batch)."""

    def __init__(self, kv: KV[str], doomed: Sequence[str]) -> None:
        self._kv, self._doomed = kv, list(doomed)
        self._pipelines = 0

    def pipeline(self) -> Any:
        self._pipelines += 1
        if self._pipelines == 2:  # the batch's value reads
            _delete(self._kv, self._doomed)
        return self._kv.pipeline()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kv, name)


def test_keys_deleted_between_an_exports_type_and_its_read_count_as_skipped(kv: KV[str]):
    _fill_types(kv, 12)
    doomed = ["v:0", "v:1", "v:2", "v:3"]  # one of each type
    summary = bulk_export(VanishingBeforeRead(kv, doomed), "v:*", format="frame", batch=100, progress=False)
    assert (summary.matched, summary.done, summary.skipped, summary.failed) == (12, 8, 4, 0)
    assert set(summary.frame["key"]) == {f"v:{i}" for i in range(4, 12)}


def test_a_dry_run_then_a_run_after_keys_vanished_says_what_it_found(kv: KV[str]):
    _fill_types(kv, 40)
    plan = plan_bulk(kv, "v:*", progress=False)
    _delete(kv, [f"v:{i}" for i in range(10)])
    seen: list[int] = []
    summary = bulk_expire(kv, plan, 60, batch=8, progress=lambda p: seen.append(p.done))
    assert plan.count == 40 and summary.expected == 40
    assert (summary.matched, summary.done, summary.skipped, summary.failed) == (30, 30, 0, 0)
    assert seen[-1] == 30  # the progress counts the keys touched, every one of them
