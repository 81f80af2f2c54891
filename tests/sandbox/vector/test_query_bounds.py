"""A vector query's work is bounded, over real HTTP: a filter with too many conditions is refused
(400 naming ``max_filter_terms``), a query past ``vector_max_query_seconds`` stops mid-filter and
answers 400 naming the limit, and a query whose client goes away stops at the next record (the
sandbox logs it) instead of running on for nobody.

The sandbox runs in this process: the tests hold a filter's evaluation from inside
(``Filter.matches``, the ``in_filter`` of tests/sandbox/vector/conftest.py), as test_hostile.py does.
"""

from __future__ import annotations

import json
import socket
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from svckit.sandbox import Sandbox
from svckit.sandbox import vector as vector_area
from svckit.sandbox.logs import recording
from tests.conftest import eventually, running
from tests.sandbox.vector.conftest import post, unit

RECORDS = 50


def namespace_of(sb: Sandbox) -> str:
    """A namespace of the test's own, with RECORDS vectors whose metadata is ``{"n": i}``."""
    ns = f"bounds-{uuid.uuid4().hex[:8]}"
    post(sb, "nomodel", f"/upsert/{ns}", [{"id": f"v{i}", "vector": unit(i), "metadata": {"n": i}}
                                          for i in range(RECORDS)]).raise_for_status()
    return ns


@pytest.fixture(scope="module")
def sb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("bounds"), areas=["vector"]) as sandbox:
        yield sandbox


def test_a_filter_with_more_conditions_than_the_limit_is_refused_naming_it(sb: Sandbox) -> None:
    ns = namespace_of(sb)
    many = " OR ".join(f"n = {i}" for i in range(1001))  # 11 KiB: under the length limit
    reply = post(sb, "nomodel", f"/query/{ns}", {"vector": unit(0), "filter": many})
    assert reply.status_code == 400 and reply.json()["status"] == 400
    assert "more than 1000 conditions (the index's max_filter_terms limit)" in reply.json()["error"]
    # a long list of values is one condition; an OR of equalities on one field is one set lookup
    listed = "n IN (" + ", ".join(str(i) for i in range(0, 2000, 2)) + ")"
    reply = post(sb, "nomodel", f"/query/{ns}", {"vector": unit(0), "topK": 100, "filter": listed})
    assert sorted(hit["id"] for hit in reply.json()["result"]) == sorted(f"v{i}" for i in range(0, RECORDS, 2))
    ored = " OR ".join(f"n = {i}" for i in range(1000))
    reply = post(sb, "nomodel", f"/query/{ns}", {"vector": unit(0), "topK": 100, "filter": ored})
    assert len(reply.json()["result"]) == RECORDS


def test_a_query_past_the_time_limit_stops_mid_filter_and_answers_400_naming_it(tmp_path, in_filter) -> None:
    with running(tmp_path / "data", areas=["vector"], vector_max_query_seconds=0.05) as sandbox:
        ns = namespace_of(sandbox)
        # the first record's judging outlasts the limit (a wait, as a slow filter would take)
        held = in_filter("n >= 0", work=lambda original, flt: threading.Event().wait(0.2), once=True)
        reply = post(sandbox, "nomodel", f"/query/{ns}", [{"vector": unit(0), "filter": "n >= 0"}] * 3)
        assert reply.status_code == 400, reply.text
        assert reply.json() == {"status": 400, "error": (
            "the request ran over the limit of 0.05 s (the index's max_query_seconds limit): narrow its filter, "
            "send fewer queries in one batch, or query a smaller namespace")}
        assert held["calls"] == 1  # stopped at the next record, not after the batch's 150


def test_a_query_whose_client_goes_away_stops_at_the_next_record(sb: Sandbox, in_filter, monkeypatch) -> None:
    ns = namespace_of(sb)
    seen = threading.Event()  # the sandbox has seen the connection close
    watch = vector_area._watch_disconnect

    async def watched(receive: Any, gone: threading.Event) -> None:
        await watch(receive, gone)
        seen.set()

    monkeypatch.setattr(vector_area, "_watch_disconnect", watched)
    held = in_filter("n >= 0", work=lambda original, flt: seen.wait(60), once=True)
    body = json.dumps([{"vector": unit(0), "filter": "n >= 0"}] * 3).encode()
    head = (f"POST /vector/nomodel/query/{ns} HTTP/1.1\r\nHost: 127.0.0.1:{sb.port}\r\n"
            f"Authorization: Bearer {sb.env['SVC_VECTOR_TOKEN']}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    with recording() as lines:
        client = socket.create_connection(("127.0.0.1", sb.port), timeout=60)
        client.sendall(head + body)
        assert held["entered"].acquire(timeout=60)
        client.close()  # the client goes while its first record is being judged
        assert seen.wait(60)
        eventually(lambda: any("stopped: its client went away" in line for line in lines)
                   or held["calls"] == 3 * RECORDS, "the query to stop, or to end", 60)
    assert held["calls"] == 1  # not the 150 records of the batch
    assert "vector: query on nomodel stopped: its client went away before the answer" in lines
    # the index serves the next request
    assert len(post(sb, "nomodel", f"/query/{ns}", {"vector": unit(0), "filter": "n < 2"}).json()["result"]) == 2
