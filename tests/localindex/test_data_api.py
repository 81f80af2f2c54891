"""The local index's vector data API without HTTP: resumable query expiry, persistence of client-given
vectors, merge patch, and opening an index file written before those columns existed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from svckit.localindex import InvalidRequest, LocalIndex
from svckit.localindex.index import merge_patch
from svckit.localindex.request import UnknownName

DIM = 8


def unit(i: int) -> list[float]:
    v = [0.0] * DIM
    v[i] = 1.0
    return v


def nomodel(path=None) -> LocalIndex:
    return LocalIndex(kind="dense", model=False, dimension=DIM, path=path)


def test_resumable_query_expires_after_max_idle_seconds_without_use():
    idx = nomodel()
    idx.upsert([{"id": f"v{i}", "vector": unit(i)} for i in range(4)])
    now = [100.0]
    idx.clock = lambda: now[0]
    started = idx.resumable_start({"vector": unit(0), "topK": 1, "maxIdle": 60}, text=False)
    assert [h["id"] for h in started["scores"]] == ["v0"]
    now[0] += 59  # used within maxIdle: the idle time starts again
    assert len(idx.resumable_next({"uuid": started["uuid"], "additionalK": 1})) == 1
    now[0] += 60
    assert len(idx.resumable_next({"uuid": started["uuid"], "additionalK": 1})) == 1
    now[0] += 61
    with pytest.raises(UnknownName, match="expired"):
        idx.resumable_next({"uuid": started["uuid"], "additionalK": 1})


def test_resumable_query_skips_vectors_deleted_since_it_started():
    idx = nomodel()
    idx.upsert([{"id": f"v{i}", "vector": unit(i)} for i in range(3)])
    started = idx.resumable_start({"vector": unit(0), "topK": 1}, text=False)
    idx.delete(["v1", "v2"])
    assert idx.resumable_next({"uuid": started["uuid"], "additionalK": 5}) == []


def test_client_given_vectors_survive_a_restart(tmp_path):
    hybrid = LocalIndex(kind="hybrid", model=False, dimension=DIM, path=tmp_path / "h")
    hybrid.upsert({"id": "a", "vector": unit(1), "sparseVector": {"indices": [9, 4], "values": [0.5, 2.0]},
                   "data": "kept as text only", "metadata": {"m": 1}}, namespace="ns")
    hybrid.update({"id": "a", "metadata": {"n": 2}, "metadataUpdateMode": "PATCH"}, namespace="ns")
    hybrid.close()
    again = LocalIndex(kind="hybrid", model=False, dimension=DIM, path=tmp_path / "h")
    [record] = again.fetch("a", "ns", include_vectors=True)
    assert record["sparseVector"] == {"indices": [4, 9], "values": [2.0, 0.5]}
    assert record["vector"] == pytest.approx(unit(1)) and record["metadata"] == {"m": 1, "n": 2}
    assert record["data"] == "kept as text only"
    hit = again.query({"sparseVector": {"indices": [4], "values": [1.0]}, "topK": 1}, "ns", text=False)
    assert hit[0]["id"] == "a" and hit[0]["score"] == pytest.approx(2.0)


def _index_file_of_before(tmp_path, namespace: str) -> Path:
    """A directory holding an index file as written before the data API and the namespaces table:
    only ``settings`` and ``vectors``, with one vector ``old`` (``unit(2)``) in ``namespace``."""
    directory = tmp_path / "old"
    directory.mkdir()
    db = sqlite3.connect(directory / "index.sqlite3")
    db.executescript("""
        CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE vectors (namespace TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT,
                              metadata TEXT, vector BLOB, PRIMARY KEY (namespace, id));
    """)
    db.execute("INSERT INTO vectors VALUES (?, 'old', 1, NULL, NULL, ?)",
               (namespace, np.asarray(unit(2), dtype=np.float32).tobytes()))
    db.commit()
    db.close()
    return directory


def test_an_index_file_from_before_the_data_api_opens_and_keeps_its_vectors(tmp_path):
    directory = _index_file_of_before(tmp_path, namespace="")
    idx = nomodel(directory)
    assert idx.fetch("old", include_vectors=True)[0]["vector"] == pytest.approx(unit(2))
    idx.upsert({"id": "new", "vector": unit(3)})
    idx.close()
    assert {r["id"] for r in nomodel(directory).range({"limit": 10})["vectors"]} == {"old", "new"}


def test_merge_patch_follows_rfc_7396():
    target = {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"}, "tags": ["a", "b"]}
    patch = {"title": "Hello!", "phoneNumber": "+01-123", "author": {"familyName": None}, "tags": ["c"]}
    assert merge_patch(target, patch) == {"title": "Hello!", "author": {"givenName": "John"}, "tags": ["c"],
                                          "phoneNumber": "+01-123"}
    assert merge_patch({"a": 1}, {"a": {"b": None}}) == {"a": {}}


@pytest.mark.parametrize("body, message", [
    ({"id": "x", "vector": unit(0)[:3]}, "Invalid vector dimension: 3, expected: 8"),
    ({"id": "x"}, "vector or sparseVector: required"),
    ({"id": "x", "vector": unit(0), "sparseVector": {"indices": [1], "values": [1.0]}}, "dense index"),
    ({"id": "x", "vector": [float("nan")] * DIM}, "finite numbers"),
])
def test_upsert_refuses_vectors_the_index_cannot_hold(body, message):
    with pytest.raises(InvalidRequest, match=message):
        nomodel().upsert(body)


def test_sparse_vector_shape_is_checked():
    idx = LocalIndex(kind="sparse")
    for sparse, message in [({"indices": [1, 1], "values": [1.0, 2.0]}, "repeat"),
                            ({"indices": [1], "values": [1.0, 2.0]}, "same length"),
                            ({"indices": [2**31], "values": [1.0]}, "32-bit")]:
        with pytest.raises(InvalidRequest, match=message):
            idx.upsert({"id": "s", "sparseVector": sparse})


def test_delete_needs_exactly_one_selector_and_a_real_filter():
    idx = nomodel()
    idx.upsert([{"id": "a", "vector": unit(0), "metadata": {"k": 1}}])
    with pytest.raises(InvalidRequest, match="reset"):
        idx.delete(filter="")
    assert idx.delete(filter="k = 1") == 1


# -- namespaces as the service keeps them ----------------------------------------------------------


def test_an_emptied_namespace_is_kept_across_a_reopen_and_a_deleted_one_is_not(tmp_path):
    idx = nomodel(tmp_path / "ns")
    for name in ("was-reset", "was-emptied", "was-deleted"):
        idx.upsert({"id": "v", "vector": unit(0)}, namespace=name)
    idx.reset("was-reset")
    assert idx.delete("v", "was-emptied") == 1
    idx.delete_namespace("was-deleted")
    assert idx.namespaces() == ["", "was-emptied", "was-reset"]
    idx.close()
    again = nomodel(tmp_path / "ns")
    assert again.namespaces() == ["", "was-emptied", "was-reset"]
    assert {name: n["vectorCount"] for name, n in again.info()["namespaces"].items()} == \
        {"": 0, "was-emptied": 0, "was-reset": 0}
    again.upsert({"id": "w", "vector": unit(1)}, namespace="was-reset")  # an emptied namespace takes vectors
    assert [h["id"] for h in again.query({"vector": unit(1), "topK": 3}, "was-reset", text=False)] == ["w"]


def test_reset_all_empties_every_namespace_and_keeps_them_across_a_reopen(tmp_path):
    idx = nomodel(tmp_path / "all")
    for name in ("", "a", "b"):
        idx.upsert({"id": "v", "vector": unit(0)}, namespace=name)
    idx.reset(all=True)
    assert len(idx) == 0 and idx.namespaces() == ["", "a", "b"]
    idx.close()
    again = nomodel(tmp_path / "all")
    assert len(again) == 0 and again.namespaces() == ["", "a", "b"]
    again.delete_namespace("a")
    assert again.namespaces() == ["", "b"]


def test_operations_on_a_namespace_that_does_not_exist_create_nothing():
    idx = nomodel()
    assert idx.range({"limit": 5}, "ghost") == {"nextCursor": "", "vectors": []}
    assert idx.query({"vector": unit(0)}, "ghost", text=False) == []
    assert idx.fetch(["x"], "ghost") == [None]
    assert idx.delete(["x"], "ghost") == 0
    assert idx.update({"id": "x", "metadata": {"k": 1}}, "ghost") == {"updated": 0}
    idx.reset("ghost")
    assert idx.namespaces() == [""] and list(idx.info()["namespaces"]) == [""]
    with pytest.raises(UnknownName, match="Namespace ghost does not exist"):
        idx.delete_namespace("ghost")


def test_delete_namespace_names_the_namespace_and_the_index_and_spares_the_default():
    idx = LocalIndex(kind="dense", model=False, dimension=DIM, name="docs")
    with pytest.raises(UnknownName, match="^Namespace gone for the index docs does not exist$") as caught:
        idx.delete_namespace("gone")
    assert caught.value.status == 404
    with pytest.raises(InvalidRequest, match="default namespace cannot be deleted") as refused:
        idx.delete_namespace("")
    assert refused.value.status == 400 and idx.namespaces() == [""]


def test_an_index_file_from_before_the_namespaces_table_keeps_its_namespaces_through_a_reset(tmp_path):
    directory = _index_file_of_before(tmp_path, namespace="old-ns")
    idx = nomodel(directory)
    assert idx.namespaces() == ["", "old-ns"]
    idx.reset("old-ns")  # its only row goes: the namespace must still be known after a reopen
    idx.close()
    assert nomodel(directory).namespaces() == ["", "old-ns"]
