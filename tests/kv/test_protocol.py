"""The sans-I/O core: request forms, path encoding, envelopes, base64, U+FFFD, errors, retry flags."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from urllib.parse import unquote_to_bytes

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svckit._http import ApiRequest
from svckit.errors import (
    AuthError,
    CommandError,
    InvalidArgument,
    MethodNotAllowed,
    ProtocolError,
    ServerError,
    TransactionDiscarded,
)
from svckit.kv.protocol import (
    MAX_PATH,
    WireFormat,
    build_batch,
    build_command,
    decode_batch,
    decode_reply,
    encode_arg,
    is_read_only,
    json_args,
    parse_message,
    parse_monitor,
    quote_segment,
    unquote_segment,
)
from tests.conftest import examples

JSON = WireFormat(base64=False, resp2=False, decode=True)
B64 = WireFormat(base64=True, resp2=False, decode=False)
RESP = WireFormat(base64=False, resp2=True, decode=True)
_CLIENT = httpx.Client(base_url="http://127.0.0.1:1/kv")


def server_view(codec: WireFormat, args: list[object]) -> list[bytes]:
    """What a gateway receives: the request as httpx puts it on the wire, split like the spec says
    (raw path split on '/', then percent-decoded; body appended; query pairs after it; or JSON)."""
    request = build_command(codec, args)  # type: ignore[arg-type]
    wire = request.build(_CLIENT)
    raw_path = wire.url.raw_path.split(b"?", 1)[0]
    assert raw_path.startswith(b"/kv/")
    segments = raw_path[len(b"/kv/"):].split(b"/")
    if segments == [b""]:
        return json.loads(wire.content) and [a.encode() for a in json.loads(wire.content)]
    argv = [unquote_to_bytes(s) for s in segments]
    if wire.content:
        argv.append(wire.content)
    if wire.url.query:
        for pair in wire.url.query.split(b"&"):
            name, _, value = pair.partition(b"=")
            argv += [unquote_to_bytes(name), unquote_to_bytes(value)]
    return argv


@pytest.mark.parametrize(
    "arg",
    ["a/b", "with space", "100%", "what?", "#hash", "ünïcødé ✓", "", ".", "..", "+plus", "&=;",
     b"\x00\xff\xfe raw", b"", "\u2028", "a%2Fb"],
)
def test_every_argument_reaches_the_server_byte_exact(arg: str | bytes) -> None:
    assert server_view(JSON, ["SET", arg, arg]) == [b"SET", encode_arg(arg), encode_arg(arg)]


def test_numbers_are_sent_as_decimal_text_and_bool_none_are_refused() -> None:
    assert server_view(JSON, ["INCRBY", "n", 5]) == [b"INCRBY", b"n", b"5"]
    assert server_view(JSON, ["INCRBYFLOAT", "n", 1.5]) == [b"INCRBYFLOAT", b"n", b"1.5"]
    for bad in (True, None, object()):
        with pytest.raises(InvalidArgument):
            build_command(JSON, ["SET", "k", bad])  # type: ignore[list-item]


def test_short_commands_use_the_path_form() -> None:
    request = build_command(JSON, ["GET", "k"])
    assert (request.method, request.path, request.content, request.json) == ("POST", "/GET/k", None, None)


def test_long_value_goes_in_the_body_with_following_pairs_as_query() -> None:
    value = b"\xff" * (MAX_PATH * 2)
    request = build_command(JSON, ["SET", "k", value, "EX", 100])
    assert request.content == value and request.path == "/SET/k?EX=100"
    assert server_view(JSON, ["SET", "k", value, "EX", 100]) == [b"SET", b"k", value, b"EX", b"100"]


def test_long_text_that_cannot_use_the_body_form_uses_the_json_array() -> None:
    # Two long arguments followed by a flag: no single body argument with NAME value pairs after it.
    args = ["SET", "k" * MAX_PATH, "v" * MAX_PATH, "NX"]
    request = build_command(JSON, args)
    assert request.path == "/" and json_body(request) == args
    assert server_view(JSON, args) == [a.encode() for a in args]


def json_body(request: ApiRequest) -> object:
    """What the server reads from a JSON-form request (the body is sent as encoded bytes)."""
    assert request.headers.get("Content-Type") == "application/json"
    return json.loads(request.content or b"null")


def test_long_raw_bytes_that_fit_no_body_form_stay_in_the_path() -> None:
    args = ["SET", b"\xff" * MAX_PATH, b"\xfe" * MAX_PATH, "NX"]
    request = build_command(JSON, args)
    assert request.json is None and request.content is None
    assert server_view(JSON, args) == [encode_arg(a) for a in args]


def test_private_arguments_never_go_in_the_url() -> None:
    request = build_command(JSON, ["ACL", "RESTTOKEN", "ada", "s3cret/pass"], private=True)
    assert request.path == "/" and "s3cret" not in request.path
    assert json_body(request) == ["ACL", "RESTTOKEN", "ada", "s3cret/pass"]


args_strategy = st.lists(st.binary(max_size=30) | st.text(max_size=15), min_size=1, max_size=6)


@settings(max_examples=examples(10_000), deadline=None)
@given(args_strategy)
def test_path_encoding_round_trips_any_arguments(args: list[str | bytes]) -> None:
    raw = [encode_arg(a) for a in args]
    for item in raw:
        segment = quote_segment(item)
        assert "/" not in segment and "?" not in segment and "#" not in segment
        assert segment not in (".", "..")
        assert unquote_segment(segment) == item
    assert server_view(JSON, ["SET", *args]) == [b"SET", *raw]


def test_read_commands_are_idempotent_and_writes_are_not() -> None:
    for cmd in (["GET", "k"], ["exists", "k"], ["TTL", "k"], ["SCAN", 0], ["HGETALL", "h"],
                ["SCRIPT", "EXISTS", "abc"], ["JSON.GET", "j"]):
        assert is_read_only(cmd) and build_command(JSON, cmd).idempotent
    for cmd in (["SET", "k", "v"], ["INCR", "n"], ["DEL", "k"], ["SCRIPT", "FLUSH"], ["EVAL", "x", 0]):
        assert not is_read_only(cmd) and not build_command(JSON, cmd).idempotent
    assert build_batch(JSON, [["GET", "a"], ["TTL", "a"]], transaction=False).idempotent
    assert not build_batch(JSON, [["GET", "a"], ["INCR", "a"]], transaction=False).idempotent
    assert not build_batch(JSON, [["GET", "a"], ["INCR", "a"]], transaction=True).idempotent


def test_headers_follow_the_options() -> None:
    assert build_command(JSON, ["GET", "k"]).headers == {}
    assert build_command(B64, ["GET", "k"]).headers == {"Service-Encoding": "base64"}
    assert build_command(RESP, ["GET", "k"]).headers == {"Service-Response-Format": "resp2"}
    # Transactions answer only in JSON: never ask them for resp2.
    assert build_batch(RESP, [["GET", "k"]], transaction=True).headers == {"Content-Type": "application/json"}
    with pytest.raises(InvalidArgument):
        WireFormat(base64=True, resp2=True, decode=True)


def test_batches_are_json_and_refuse_raw_bytes_clearly() -> None:
    rows = [json_args(["SET", "a", 1]), json_args(["SET", b"b", 1.5]), json_args(["INCR", "a"])]
    request = build_batch(JSON, rows, transaction=True)
    assert (request.path, json_body(request)) == ("/multi-exec", [["SET", "a", "1"], ["SET", "b", "1.5"], ["INCR", "a"]])
    with pytest.raises(InvalidArgument, match="execute"):
        json_args(["SET", "a", b"\xff"])
    with pytest.raises(InvalidArgument):
        json_args(["SET", "a", True])


def body(obj: object) -> bytes:
    return json.dumps(obj).encode()


def test_envelope_result_and_error() -> None:
    assert decode_reply(JSON, 200, "application/json", body({"result": "b"}), ["GET"]) == "b"
    assert decode_reply(JSON, 200, "application/json", body({"result": [1, None, "x"]}), ["X"]) == [1, None, "x"]
    with pytest.raises(CommandError) as info:
        decode_reply(JSON, 400, "application/json", body({"error": "ERR value is not an integer or out of range"}), ["INCR"])
    assert str(info.value) == "ERR value is not an integer or out of range" and info.value.status == 400


@pytest.mark.parametrize(("status", "cls"), [(401, AuthError), (405, MethodNotAllowed), (503, ServerError)])
def test_status_maps_to_error_class(status: int, cls: type) -> None:
    with pytest.raises(cls) as info:
        decode_reply(JSON, status, "application/json", body({"error": "nope"}), ["GET"])
    assert info.value.status == status and "nope" in str(info.value)


def test_malformed_replies_are_protocol_errors() -> None:
    with pytest.raises(ProtocolError):
        decode_reply(JSON, 200, "application/json", b"not json", ["GET"])
    with pytest.raises(ProtocolError):
        decode_reply(JSON, 200, "application/json", body({"neither": 1}), ["GET"])


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_base64_mode_decodes_every_string_but_ok_and_keeps_binary() -> None:
    raw = b"\x00\xff\xfe"
    assert decode_reply(B64, 200, "application/json", body({"result": b64(raw)}), ["GET"]) == raw
    assert decode_reply(B64, 200, "application/json", body({"result": "OK"}), ["SET"]) == b"OK"
    nested = {"result": [b64(b"a"), None, 3, [b64(raw)]]}
    assert decode_reply(B64, 200, "application/json", body(nested), ["X"]) == [b"a", None, 3, [raw]]
    # A stored value "OK" arrives encoded, and comes back as the value.
    assert decode_reply(B64, 200, "application/json", body({"result": b64(b"OK")}), ["GET"]) == b"OK"
    text = WireFormat(base64=True, resp2=False, decode=True)
    assert decode_reply(text, 200, "application/json", body({"result": b64(b"caf\xc3\xa9 \xff")}), ["GET"]) == "café \ufffd"


def test_decode_false_on_plain_json_gives_utf8_bytes() -> None:
    raw = WireFormat(base64=False, resp2=False, decode=False)
    assert decode_reply(raw, 200, "application/json", body({"result": ["é", 1]}), ["X"]) == ["é".encode(), 1]


def test_resp2_replies_are_parsed() -> None:
    assert decode_reply(RESP, 200, "application/octet-stream", b"$2\r\n\xc3\xa9\r\n", ["GET"]) == "é"
    assert decode_reply(RESP, 200, "application/octet-stream", b"$1\r\n\xff\r\n", ["GET"]) == "\ufffd"
    assert decode_reply(RESP, 200, "application/octet-stream", b"*2\r\n:1\r\n$-1\r\n", ["X"]) == [1, None]
    assert decode_reply(RESP, 200, "application/octet-stream", b"+PONG\r\n", ["PING"]) == "PONG"
    raw = WireFormat(base64=False, resp2=True, decode=False)
    assert decode_reply(raw, 200, "application/octet-stream", b"$1\r\n\xff\r\n", ["GET"]) == b"\xff"
    with pytest.raises(CommandError, match="WRONGTYPE"):
        decode_reply(RESP, 200, "application/octet-stream", b"-WRONGTYPE wrong kind\r\n", ["GET"])
    with pytest.raises(CommandError, match="unknown command"):
        decode_reply(RESP, 400, "application/octet-stream", b"-ERR unknown command\r\n", ["NOPE"])
    with pytest.raises(CommandError, match="unknown command"):
        decode_reply(RESP, 400, "application/json", body({"error": "ERR unknown command"}), ["NOPE"])
    nested = decode_reply(RESP, 200, "application/octet-stream", b"*2\r\n+OK\r\n-ERR x\r\n", ["EVAL"])
    assert nested[0] == "OK" and isinstance(nested[1], CommandError)


def test_pipeline_keeps_results_after_a_failed_element() -> None:
    reply = body([{"result": "OK"}, {"error": "ERR boom"}, {"result": 2}])
    out = decode_batch(JSON, 200, "application/json", reply, [["SET"], ["X"], ["INCR"]], transaction=False)
    assert out[0] == "OK" and isinstance(out[1], CommandError) and str(out[1]) == "ERR boom" and out[2] == 2


def test_discarded_transaction_raises_one_clear_error() -> None:
    for status in (200, 400):
        with pytest.raises(TransactionDiscarded, match="discarded.*ERR unknown command"):
            decode_batch(JSON, status, "application/json", body({"error": "ERR unknown command 'NOPE'"}),
                              [["NOPE"]], transaction=True)
    with pytest.raises(ProtocolError):
        decode_batch(JSON, 200, "application/json", body([{"result": 1}]), [["A"], ["B"]], transaction=True)


def test_monitor_lines_are_parsed() -> None:
    line = r'1700000000.123456 [0 127.0.0.1:51234] "SET" "a b" "q\"uote" "\xff\x00" "back\\slash"'
    ev = parse_monitor(line)
    assert ev.time == datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)
    assert (ev.db, ev.client, ev.command) == (0, "127.0.0.1:51234", "SET")
    assert ev.args == ["a b", 'q"uote', "\ufffd\x00", "back\\slash"] and ev.raw == line
    with pytest.raises(ProtocolError):
        parse_monitor("garbage")


def test_pubsub_events_are_parsed_even_with_commas() -> None:
    sub = parse_message("subscribe,news,1", "news")
    assert (sub.kind, sub.channel, sub.count, sub.data) == ("subscribe", "news", 1, None)
    msg = parse_message("message,a,b,hello, world", "a,b")
    assert (msg.kind, msg.channel, msg.data) == ("message", "a,b", "hello, world")
    assert parse_message("message,news,x,y").data == "x,y"
