"""svckit.kv.formats: each encoding shows a valid value and says why an invalid one does not fit;
binary values reach the formatter intact through ``KV.as_bytes()`` over real HTTP (both backends);
``format_bytes`` is the one byte formatter of svckit."""

from __future__ import annotations

import base64
import gzip
import json
import math

import msgpack
import numpy as np
import pandas as pd
import pytest

from svckit.errors import InvalidArgument
from svckit.kv import KV, available_encodings, format_bytes, format_value

DOC = {"user": "ada", "tags": ["x", "y"], "n": 3}


def test_raw_text_as_is_and_binary_escaped_with_a_note() -> None:
    assert format_value("héllo", "raw").text == "héllo"
    shown = format_value(b"\x00\xffab", "raw")
    assert shown.ok and shown.text == "\\x00\\xffab"
    assert "binary: 4 bytes" in shown.note


def test_json_pretty_prints_and_refuses_what_is_not_json() -> None:
    shown = format_value(json.dumps(DOC), "json")
    assert shown.ok and json.loads(shown.text) == DOC and "\n  " in shown.text
    bad = format_value("{not json", "json")
    assert not bad.ok and bad.text == "" and bad.note.startswith("not valid json: ")


def test_hex_dumps_the_bytes_with_offsets() -> None:
    shown = format_value(b"\x00\x01" + b"A" * 16, "hex")
    assert shown.text.splitlines() == ["00000000  00 01 41 41 41 41 41 41 41 41 41 41 41 41 41 41",
                                       "00000010  41 41"]


def test_base64_decodes_to_text_or_json_and_refuses_garbage() -> None:
    assert format_value(base64.b64encode(b"hello"), "base64").text == "hello"
    assert json.loads(format_value(base64.b64encode(json.dumps(DOC).encode()).decode(), "base64").text) == DOC
    bad = format_value("not base64 at all!", "base64")
    assert not bad.ok and bad.note.startswith("not valid base64: ")


def test_gzip_decompresses_and_says_when_a_value_is_not_gzip() -> None:
    shown = format_value(gzip.compress(json.dumps(DOC).encode()), "gzip")
    assert shown.ok and json.loads(shown.text) == DOC
    bad = format_value(b"plain bytes", "gzip")
    assert not bad.ok and bad.note.startswith("not valid gzip: ")


def test_msgpack_unpacks_and_says_when_a_value_is_not_msgpack() -> None:
    assert "msgpack" in available_encodings()
    shown = format_value(msgpack.packb(DOC), "msgpack")
    assert shown.ok and json.loads(shown.text) == DOC
    bad = format_value(b"\xc1", "msgpack")  # 0xc1 is never used in msgpack
    assert not bad.ok and bad.note.startswith("not valid msgpack: ")


def test_unknown_encoding_is_refused_by_name() -> None:
    with pytest.raises(InvalidArgument, match="encoding: must be one of raw, json"):
        format_value("x", "rot13")


def test_binary_values_reach_the_formatter_intact_through_as_bytes(kv: KV[str]) -> None:
    blob = gzip.compress(json.dumps(DOC).encode())
    packed = msgpack.packb(DOC)
    kv.get("blob:gz")  # a helper used once is cached on the client: the view must not reuse it
    kv.set("warm", "x")
    raw = kv.as_bytes()
    raw.set("blob:gz", blob)
    raw.set("blob:mp", packed)
    # the text client turns invalid UTF-8 into U+FFFD: gzip cannot be read from that
    assert not format_value(kv.get("blob:gz"), "gzip").ok
    assert raw.get("blob:gz") == blob
    assert json.loads(format_value(raw.get("blob:gz"), "gzip").text) == DOC
    assert json.loads(format_value(raw.get("blob:mp"), "msgpack").text) == DOC
    assert kv.decode and kv.get("blob:missing") is None  # the original client still answers in text


@pytest.mark.parametrize(("n", "shown"), [
    (0, "0 B"), (512, "512 B"), (1023, "1,023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
    (100_000, "97.7 KiB"), (1024**2, "1.0 MiB"), (5 * 1024**3 + 1, "5.0 GiB"), (3 * 1024**4, "3.0 TiB"),
    (2048 * 1024**4, "2,048.0 TiB"), (-1536, "-1.5 KiB"), (1536.0, "1.5 KiB"),
    (None, ""), (math.nan, ""), (pd.NA, ""), (np.float64("nan"), ""), (np.int64(1536), "1.5 KiB"),
])
def test_format_bytes_in_binary_units_with_separators(n: object, shown: str) -> None:
    assert format_bytes(n) == shown  # type: ignore[arg-type]


def test_format_bytes_is_one_function_for_frames_and_kv() -> None:
    from svckit import frames
    from svckit.kv import formats

    assert frames.format_bytes is formats.format_bytes is format_bytes
    assert "format_bytes" in frames.__all__
    assert frames.format_limit(1024**2, "bytes") == "1.0 MiB" and frames.format_limit(None, "bytes") == "—"
