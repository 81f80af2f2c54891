"""What one request may cost the gateway (svckit/sandbox/kv/budget.py) and one monitor stream
(svckit/sandbox/kv/events.py): a budget per request in commands and time, its work in slices so that
other requests are answered meanwhile, monitor lines of bounded size, and a backlog bounded in bytes
per monitor reader. Each on a sandbox of its own, over real HTTP, in front of a real redis-server."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import uuid
from collections.abc import Iterator

import httpx
import psutil
import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

from svckit.errors import StreamClosed
from svckit.kv import KV
from svckit.sandbox.kv.budget import SLICE_COMMANDS, Budget, command_row, read_rows
from svckit.sandbox.kv.events import MONITOR_SHOWN_BYTES, redis_repr
from tests.cluster import free_ports
from tests.conftest import examples, redis_server
from tests.sandbox.kv.conftest import kv_served

MIB = 1024 * 1024


def _data(response: httpx.Response) -> Iterator[str]:
    for line in response.iter_lines():
        if line.startswith("data: "):
            yield line[len("data: "):]


# -- 3. a budget per request, and its work in slices ---------------------------------------------
def test_a_request_over_the_command_budget_is_answered_413_naming_the_limit(tmp_path):
    with kv_served(tmp_path, backend="redis", kv_max_request_commands=100) as kv:
        ro = kv.auth(kv.readonly_token)
        for path in ("/pipeline", "/multi-exec"):
            r = kv.post(path, json=[["PING"]] * 101, headers=ro)
            assert r.status_code == 413, r.text
            assert "max commands per request exceeded" in r.json()["error"]
            assert "kv_max_request_commands" in r.json()["error"] and "100 commands" in r.json()["error"]
        assert kv.post("/pipeline", json=[["PING"]] * 100, headers=ro).json() == [{"result": "PONG"}] * 100
        key = kv.key()
        assert kv.post("/multi-exec", json=[["INCR", key]] * 101).status_code == 413
        assert kv.get(f"/GET/{key}").json() == {"result": None}  # refused before any of it ran


_ATOMS = st.sampled_from(['"PING"', '"a b"', "1", "1.5", "2.0", "true", "null", "[]", "{}", '"\\u00e9"',
                          "123456789012345678901234567890", "1e400", "NaN"])
_SPACES = st.sampled_from(["", " ", "\n", "\t ", "\r"])
_ROW = st.builds(lambda a, w: "[" + ",".join(w + x for x in a) + "]", st.lists(_ATOMS, max_size=3), _SPACES)


def _body(rows: list[str], space: str, junk: str, at: int) -> str:
    """Rows in a JSON array, with ``junk`` (maybe nothing) put in somewhere."""
    text = space + "[" + ",".join(space + r + space for r in rows) + "]" + space
    at %= len(text) + 1
    return text[:at] + junk + text[at:]


_BODY = st.builds(_body, st.lists(st.one_of(_ROW, _ATOMS), max_size=4), _SPACES,
                  st.sampled_from(["", "", "", ",", "]", "[", "x", '"']), st.integers(0, 10**6))


def whole_body(body: bytes) -> list[list[bytes]]:
    """The rows of a /pipeline body as the gateway read them before it read a slice at a time:
    json.loads of the whole body, then each row (the reference read_rows is held to)."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"ERR syntax error: the body is not valid JSON ({exc.msg})") from None
    except ValueError:
        raise ValueError("ERR syntax error: the body is not valid JSON") from None
    except RecursionError:
        raise ValueError("ERR syntax error: the body is nested too deeply") from None
    if not isinstance(data, list) or not data:
        raise ValueError("ERR syntax error: expected a JSON array of commands, each an array of strings")
    return [command_row(row) for row in data]


@settings(max_examples=examples(3000), deadline=None)
@given(_BODY, st.sampled_from(["utf-8", "utf-16"]))
def test_a_body_read_a_slice_at_a_time_reads_as_the_whole_body_did(text, encoding):
    """The same rows, or the same 400 text, as json.loads of the whole body (the gateway's POST /)."""
    body = text.encode(encoding, "surrogatepass")

    def outcome(read):
        try:
            return read()
        except ValueError as exc:
            return str(exc)

    assert outcome(lambda: asyncio.run(read_rows(body, Budget(100_000, 30.0)))) == outcome(lambda: whole_body(body))


def test_the_slices_left_once_the_time_budget_is_spent_are_not_run(tmp_path):
    # a budget no slice can stay within: the first slice runs (a request always gets one), no other
    with kv_served(tmp_path, backend="redis", kv_max_request_seconds=1e-9) as kv:
        key = kv.key()
        replies = kv.post("/pipeline", json=[["INCR", key]] * (3 * SLICE_COMMANDS)).json()
        ran = [r for r in replies if "result" in r]
        assert ran == [{"result": n} for n in range(1, SLICE_COMMANDS + 1)]
        late = replies[len(ran):]
        assert len(late) == 2 * SLICE_COMMANDS and all(r == late[0] for r in late)
        assert "time budget" in late[0]["error"] and "kv_max_request_seconds" in late[0]["error"]
        assert kv.get(f"/GET/{key}").json() == {"result": str(SLICE_COMMANDS)}


def test_another_request_is_answered_while_a_large_pipeline_is_worked_on(tmp_path):
    """A pipeline of 100,000 commands that the gateway refuses itself (no Redis round trip between
    them) and one INCR at its end; a GET of that counter sent once the pipeline's body is sent is
    answered while the gateway still works through the pipeline: before the INCR ran. Done in one
    go on the event loop, the GET waited for the whole pipeline and saw its INCR."""
    with kv_served(tmp_path, backend="redis") as kv:
        key = kv.key()
        rows = [["WATCH", key]] * 99_999 + [["INCR", key]]
        body = httpx.Request("POST", "/", json=rows).read()
        sent = threading.Event()
        outcome: dict[str, httpx.Response] = {}

        def chunks() -> Iterator[bytes]:
            for start in range(0, len(body), 64 * 1024):
                yield body[start:start + 64 * 1024]
            sent.set()  # the last chunk is in the socket

        def pipeline() -> None:
            with httpx.Client(timeout=120) as http:
                outcome["pipeline"] = http.post(kv.url + "/pipeline", content=chunks(),
                                                headers={**kv.auth(), "Content-Type": "application/json"})

        thread = threading.Thread(target=pipeline)
        thread.start()
        assert sent.wait(60)
        got = kv.get(f"/GET/{key}")
        thread.join(120)
        assert got.json() == {"result": None}, "the GET waited for the whole pipeline"
        replies = outcome["pipeline"].json()
        assert len(replies) == 100_000 and replies[-1] == {"result": 1} and "error" in replies[0]


# -- 4. monitor lines: Redis's text, at a bounded cost -------------------------------------------
def _monitor_line_of(kv, path: str, body: bytes) -> str:
    """The monitor line the sandbox streams for ``POST path`` with ``body`` (its last argument),
    from its command on (without the time and client)."""
    with httpx.Client(timeout=60) as client, client.stream(
            "POST", kv.url + "/monitor", headers={**kv.auth(), "Accept": "text/event-stream"}) as r:
        events = _data(r)
        assert next(events) == '"OK"'
        assert kv.post(path, content=body).status_code == 200
        return next(events).split("] ", 1)[1]


def test_a_long_argument_is_cut_in_the_monitor_line_saying_how_many_bytes_were_left_out(tmp_path):
    with kv_served(tmp_path, backend="redis") as kv:
        key, value = kv.key(), os.urandom(8 * MIB)
        line = _monitor_line_of(kv, f"/SET/{key}", value)
        shown = MONITOR_SHOWN_BYTES - len("SET") - len(key)
        assert line == f'"SET" "{key}" {redis_repr(value[:shown], 8 * MIB - shown)}'
        assert line.endswith(f'... ({8 * MIB - shown} more bytes)"') and len(line) < 5 * MONITOR_SHOWN_BYTES
        assert kv.get(f"/STRLEN/{key}").json() == {"result": 8 * MIB}  # the value itself is whole


def test_monitor_lines_quote_arguments_exactly_as_redis_monitor_does(tmp_path):
    """Every byte value, in the text a real redis-server's MONITOR prints for it."""
    every_byte = bytes(range(256)) + b'\\x07 "q" \\\\ \a\b\t\n\r'
    [port] = free_ports(1)
    server = redis_server(port, tmp_path)
    try:
        direct = redis.Redis(port=port)
        with direct.monitor() as monitor:
            direct.echo(every_byte)
            raw = ""
            while '"ECHO"' not in raw:
                raw = monitor.connection.read_response().decode("latin-1")  # the line as Redis wrote it
        direct.close()
    finally:
        server.terminate()
        server.wait(10)
    assert raw.split("] ", 1)[1] == f'"ECHO" {redis_repr(every_byte)}'
    with kv_served(tmp_path / "sandbox", backend="redis") as kv:
        assert _monitor_line_of(kv, "/ECHO", every_byte) == raw.split("] ", 1)[1]


# -- 5. a monitor that stops reading -------------------------------------------------------------
def test_a_monitor_that_stops_reading_is_dropped_with_a_last_event_saying_why(tmp_path):
    """100 SETs of 1 MiB while a monitor is open and not read: the writes all complete, the server
    holds no more for that reader than its bound (with the guard off it held 20 MiB and more), and
    the reader, once it reads again, gets the lines sent before the drop and then svckit's client
    raises StreamClosed with the server's reason."""
    bound = MIB
    with kv_served(tmp_path, backend="redis", kv_monitor_backlog_bytes=bound) as kv, \
            KV.from_settings(kv.sandbox.settings) as client:
        value = b"\xff" * MIB  # four characters a byte in a monitor line
        monitor = client.monitor()  # open: its "OK" read, then not read again until the writes are done
        process = psutil.Process()
        before = process.memory_info().rss
        prefix = f"stall:{uuid.uuid4().hex[:8]}"
        statuses = {kv.post(f"/SET/{prefix}:{i}", content=value).status_code for i in range(100)}
        grown = process.memory_info().rss - before
        assert statuses == {200}
        assert grown < bound + 10 * MIB, f"the sandbox held {grown / MIB:.0f} MiB more for a reader that stopped"
        seen = 0
        with pytest.raises(StreamClosed, match=r"fell behind by more than 1048576 bytes.*kv_monitor_backlog_bytes"):
            for event in monitor:
                assert event.command == "SET"
                seen += 1
        assert seen < 100
        monitor.close()
