"""RESP2 parser and encoder: every reply type, binary safety, fuzzed round trips and robustness."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svckit.errors import ProtocolError
from svckit.kv.resp2 import (
    ErrorReply,
    IncompleteReply,
    SimpleString,
    encode,
    encode_command,
    parse,
    parse_all,
    parse_prefix,
)
from tests.conftest import examples


@pytest.mark.parametrize(
    ("wire", "value"),
    [
        (b"+OK\r\n", SimpleString("OK")),
        (b"-WRONGTYPE Operation against a key\r\n", ErrorReply("WRONGTYPE Operation against a key")),
        (b":-42\r\n", -42),
        (b"$5\r\nhe\r\no\r\n", b"he\r\no"),
        (b"$0\r\n\r\n", b""),
        (b"$-1\r\n", None),
        (b"*-1\r\n", None),
        (b"*0\r\n", []),
        (b"*3\r\n:1\r\n$1\r\n\xff\r\n*2\r\n+a\r\n$-1\r\n", [1, b"\xff", [SimpleString("a"), None]]),
        (b"*2\r\n*1\r\n*0\r\n-ERR x\r\n", [[[]], ErrorReply("ERR x")]),
    ],
)
def test_parses_every_reply_type(wire: bytes, value: object) -> None:
    assert parse(wire) == value
    assert type(parse(wire)) is type(value)


def test_simple_string_and_bulk_string_stay_distinct() -> None:
    assert isinstance(parse(b"+OK\r\n"), SimpleString)
    assert parse(b"$2\r\nOK\r\n") == b"OK"
    assert ErrorReply("NOSCRIPT No matching script").code == "NOSCRIPT"


@pytest.mark.parametrize(
    "wire",
    [b"", b"+OK", b"$5\r\nabc\r\n", b"*2\r\n:1\r\n", b"$3\r\nabc"],
)
def test_truncated_replies_are_incomplete(wire: bytes) -> None:
    with pytest.raises(IncompleteReply):
        parse(wire)


@pytest.mark.parametrize(
    "wire",
    [b"?x\r\n", b":1_0\r\n", b": 1\r\n", b":+1\r\n", b"$-2\r\n", b"*-5\r\n", b"$3\r\nabcd\r\n",
     b"+OK\r\n+OK\r\n", b"$x\r\n"],
)
def test_malformed_replies_raise_protocol_error(wire: bytes) -> None:
    with pytest.raises(ProtocolError):
        parse(wire)


def test_deep_nesting_needs_no_recursion() -> None:
    depth = 50_000
    wire = b"*1\r\n" * depth + b":7\r\n"
    value = parse(wire)
    for _ in range(depth):
        assert isinstance(value, list)
        value = value[0]
    assert value == 7
    assert encode(parse(wire)) == wire


def test_parse_prefix_and_parse_all_read_concatenated_replies() -> None:
    data = b"+OK\r\n:2\r\n$1\r\nx\r\n"
    assert parse_prefix(data) == (SimpleString("OK"), 5)
    assert parse_all(data) == [SimpleString("OK"), 2, b"x"]


def test_encode_command_is_what_a_tcp_client_sends() -> None:
    assert encode_command(["SET", b"k\x00", 1, 1.5]) == b"*4\r\n$3\r\nSET\r\n$2\r\nk\x00\r\n$1\r\n1\r\n$3\r\n1.5\r\n"


def test_encoder_refuses_line_breaks_in_simple_strings() -> None:
    with pytest.raises(ValueError):
        encode(SimpleString("a\r\nb"))
    with pytest.raises(ValueError):
        encode(True)  # type: ignore[arg-type]


_line = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=20)
replies = st.recursive(
    st.none()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.binary(max_size=40)
    | _line.map(SimpleString)
    | _line.map(ErrorReply),
    lambda children: st.lists(children, max_size=4),
    max_leaves=8,
)


@settings(max_examples=examples(10_000), deadline=None)
@given(replies)
def test_round_trip_parse_of_encode(value: object) -> None:
    wire = encode(value)  # type: ignore[arg-type]
    assert parse(wire) == value
    # A reply cut anywhere is incomplete, never mistaken for a complete one.
    if len(wire) > 1:
        with pytest.raises(ProtocolError):
            parse(wire[: len(wire) // 2])


@settings(max_examples=examples(3_000), deadline=None)
@given(st.binary(max_size=200))
def test_parser_on_arbitrary_bytes_raises_only_protocol_error(data: bytes) -> None:
    try:
        parse(data)
    except ProtocolError:
        pass


_prefixes = st.sampled_from([b"*", b"$", b":", b"+", b"-", b"*-1", b"$-1", b"*1", b"$3", b"\r\n", b"abc", b"0"])


@settings(max_examples=examples(3_000), deadline=None)
@given(st.lists(_prefixes, max_size=30).map(b"".join))
def test_parser_on_resp_like_noise_raises_only_protocol_error(data: bytes) -> None:
    try:
        parse(data)
    except ProtocolError:
        pass
