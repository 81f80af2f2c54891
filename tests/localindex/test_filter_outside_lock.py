"""A query filters the records without holding the index lock, and still answers from the records as
they are when it ranks: writes made while it filtered are judged again."""

from __future__ import annotations

import threading

import pytest

from svckit.core.filter import Filter
from svckit.localindex import LocalIndex

DIM = 4
HOLD = "n >= 0"  # the filter held open mid-evaluation


def unit(i: int) -> list[float]:
    v = [0.0] * DIM
    v[i % DIM] = 1.0
    return v


@pytest.fixture
def held(monkeypatch):
    """``inside`` is set once a ``HOLD`` filter has started judging records; it goes on when ``release``
    is set. Every other filter runs as usual."""
    inside, release = threading.Event(), threading.Event()
    original = Filter.matches

    def matches(self, metadata):
        if self.text == HOLD and not inside.is_set():
            inside.set()
            assert release.wait(60), "the test never released the filter"
        return original(self, metadata)

    monkeypatch.setattr(Filter, "matches", matches)
    yield inside, release
    release.set()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("operation", ["query", "delete"])
def test_reads_and_writes_go_on_while_a_filter_runs_and_its_answer_is_current(held, operation):
    inside, release = held
    idx = LocalIndex(kind="dense", model=False, dimension=DIM)
    idx.upsert([{"id": f"v{i}", "vector": unit(i), "metadata": {"n": i}} for i in range(6)])
    answer: list = []
    if operation == "query":
        work = threading.Thread(target=lambda: answer.append(
            idx.query({"vector": unit(0), "topK": 10, "filter": HOLD}, text=False)))
    else:
        work = threading.Thread(target=lambda: answer.append(idx.delete(filter=HOLD)))
    work.start()
    assert inside.wait(30)
    # with the filter mid-way, the same index still answers and takes writes (under the old code the
    # filtering query held the lock: these calls waited for it, and the test for them)
    assert len(idx.query({"vector": unit(1), "topK": 3}, text=False)) == 3
    idx.upsert({"id": "new", "vector": unit(2), "metadata": {"n": 100}})  # matches, written meanwhile
    idx.update({"id": "v1", "metadata": {"n": -1}})  # no longer matches
    idx.delete(["v2"])
    release.set()
    work.join()
    expected = {"v0", "v3", "v4", "v5", "new"}
    if operation == "query":
        assert {hit["id"] for hit in answer[0]} == expected
    else:
        assert answer == [len(expected)]
        assert [r["id"] for r in idx.fetch(prefix="")] == ["v1"]
