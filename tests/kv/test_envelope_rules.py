"""The key-value envelope decoder's rules, as a client's caller sees them: the value a reply body
decodes to for each wire format (JSON or RESP2, base64 or not, str or bytes), and the error a failed
reply raises (its class, message, status, body and command)."""

from __future__ import annotations

import base64

import pytest

from svckit.errors import (
    AuthError,
    CommandError,
    ProtocolError,
    ServerError,
    TooManyRequests,
    TransactionDiscarded,
)
from svckit.kv.protocol import WireFormat, command_error, decode_batch, decode_reply

TEXT = WireFormat(base64=False, resp2=False, decode=True)
RAW = WireFormat(base64=False, resp2=False, decode=False)
B64 = WireFormat(base64=True, resp2=False, decode=True)
B64_RAW = WireFormat(base64=True, resp2=False, decode=False)
RESP2 = WireFormat(base64=False, resp2=True, decode=True)
RESP2_RAW = WireFormat(base64=False, resp2=True, decode=False)
JSON = "application/json"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def reply(fmt: WireFormat, body: bytes, status: int = 200, content_type: str = JSON, args=("GET", "k")):
    return decode_reply(fmt, status, content_type, body, list(args))


def test_json_results_in_str_or_bytes():
    assert reply(TEXT, b'{"result":"h\xc3\xa9"}') == "hé"
    assert reply(RAW, b'{"result":"h\xc3\xa9"}') == "hé".encode()
    assert reply(TEXT, b'{"result":["a",["b",null,3]]}') == ["a", ["b", None, 3]]
    assert reply(RAW, b'{"result":["a",["b",null,3]]}') == [b"a", [b"b", None, 3]]
    assert reply(TEXT, b'{"result":null}') is None and reply(TEXT, b'{"result":7}') == 7


def test_base64_results_are_decoded_but_ok_and_non_base64_statuses_stay_text():
    body = f'{{"result":["{b64("héllo")}","OK",["{b64("x")}",5],"not base64!"]}}'.encode()
    assert reply(B64, body) == ["héllo", "OK", ["x", 5], "not base64!"]
    assert reply(B64_RAW, body) == ["héllo".encode(), b"OK", [b"x", 5], b"not base64!"]
    invalid = f'{{"result":"{b64(chr(0xe9))[:-1]}"}}'.encode()  # not valid strict base64: left as text
    assert reply(B64, invalid) == b64(chr(0xe9))[:-1]
    binary = f'{{"result":"{base64.b64encode(bytes([0xff, 0x41])).decode()}"}}'.encode()
    assert reply(B64, binary) == "\ufffdA" and reply(B64_RAW, binary) == b"\xffA"


def test_resp2_replies():
    assert reply(RESP2, b"$5\r\nh\xc3\xa9lo\r\n", content_type="text/plain") == "hélo"
    assert reply(RESP2_RAW, b"$5\r\nh\xc3\xa9lo\r\n", content_type="text/plain") == "hélo".encode()
    assert reply(RESP2, b"+OK\r\n", content_type="text/plain") == "OK"
    assert reply(RESP2_RAW, b"+OK\r\n", content_type="text/plain") == b"OK"
    assert reply(RESP2, b":42\r\n", content_type="text/plain") == 42
    assert reply(RESP2, b"$-1\r\n", content_type="text/plain") is None
    nested = b"*3\r\n$1\r\na\r\n*2\r\n+b\r\n:1\r\n-WRONGTYPE bad\r\n"
    value = reply(RESP2, nested, content_type="text/plain")
    assert value[:2] == ["a", ["b", 1]]
    assert isinstance(value[2], CommandError) and str(value[2]) == "WRONGTYPE bad" and value[2].status == 200
    assert value[2].body == "WRONGTYPE bad"
    assert reply(RESP2_RAW, nested, content_type="text/plain")[:2] == [b"a", [b"b", 1]]
    assert reply(RESP2, b"$2\r\n\xff\xfe\r\n", content_type="text/plain") == "\ufffd\ufffd"


def test_a_resp2_error_reply_raises_the_command_error():
    with pytest.raises(CommandError) as caught:
        reply(RESP2, b"-ERR no such key\r\n", content_type="text/plain")
    assert str(caught.value) == "ERR no such key" and caught.value.status == 200
    assert caught.value.body == "ERR no such key"


def test_a_resp2_client_reads_json_when_the_server_answers_json():
    assert reply(RESP2, b'{"result":"v"}', content_type="application/json; charset=utf-8") == "v"
    with pytest.raises(CommandError, match="^ERR bad$"):
        reply(RESP2, b'{"error":"ERR bad"}', status=400, content_type=JSON)


def test_a_resp2_error_body_on_an_error_status_is_the_error():
    with pytest.raises(CommandError) as caught:
        reply(RESP2, b"-NOPERM read only\r\n", status=400, content_type="text/plain")
    assert str(caught.value) == "NOPERM read only" and caught.value.body == {"error": "NOPERM read only"}
    with pytest.raises(CommandError, match="^-NOPERM cut short$"):  # not whole RESP2: shown as it came
        reply(RESP2, b"-NOPERM cut short", status=400, content_type="text/plain")
    with pytest.raises(CommandError, match="^-ERR text\r\n$"):  # a JSON client does not read RESP2
        reply(TEXT, b"-ERR text\r\n", status=400, content_type="text/plain")


def test_an_error_envelope_is_a_command_error_naming_the_command():
    with pytest.raises(CommandError) as caught:
        reply(TEXT, b'{"error":"WRONGTYPE Operation against a key"}', status=400, args=[b"hget", "k", "f"])
    err = caught.value
    assert str(err) == "WRONGTYPE Operation against a key" and err.status == 400
    assert err.body == {"error": "WRONGTYPE Operation against a key"} and err.command == "HGET"
    with pytest.raises(CommandError) as caught:
        reply(TEXT, b'{"error":"ERR odd"}', status=200)
    assert caught.value.status == 200 and caught.value.command == "GET"


def test_other_statuses_map_to_their_errors():
    with pytest.raises(AuthError) as caught:
        reply(TEXT, b'{"error":"Unauthorized"}', status=401)
    assert str(caught.value).startswith("GET command failed with HTTP 401: Unauthorized (check the token")
    assert caught.value.command == "GET" and caught.value.status == 401
    with pytest.raises(TooManyRequests, match="HTTP 429: slow down"):
        reply(TEXT, b'{"error":"slow down"}', status=429)
    with pytest.raises(ServerError, match=r"^SET command failed with HTTP 502: <html>bad gateway</html>$"):
        reply(TEXT, b"<html>bad gateway</html>", status=502, content_type="text/html", args=["set"])
    with pytest.raises(ServerError, match=r"^GET command failed with HTTP 503: HTTP 503$"):
        reply(TEXT, b"", status=503, content_type="text/plain")
    with pytest.raises(ServerError, match=r"HTTP 500: \{'result': 1\}"):
        reply(TEXT, b'{"result":1}', status=500)


def test_a_200_that_is_not_an_envelope_is_a_protocol_error():
    with pytest.raises(ProtocolError, match=r"^GET reply is not JSON: b'<html>'$"):
        reply(TEXT, b"<html>", content_type="text/html")
    with pytest.raises(ProtocolError, match=r"^reply is neither \{result\} nor \{error\}: '\[1, 2\]'$"):
        reply(TEXT, b"[1,2]")
    with pytest.raises(ProtocolError, match="neither"):
        reply(TEXT, b'{"other":1}')
    with pytest.raises(ProtocolError, match=r"^PING reply is not JSON: b'-ERR'$"):
        reply(RESP2, b"-ERR", content_type=JSON, args=[b"ping"])


def test_a_long_error_body_is_cut_to_200_characters():
    with pytest.raises(ServerError) as caught:
        reply(TEXT, b"x" * 500, status=500, content_type="text/plain")
    assert str(caught.value) == "GET command failed with HTTP 500: " + "x" * 200


def test_command_error_for_an_envelope_without_error():
    err = command_error(400, ["not", "a", "dict"], ["DEL"])
    assert isinstance(err, CommandError) and str(err) == "['not', 'a', 'dict']" and err.command == "DEL"
    assert err.body == ["not", "a", "dict"] and err.status == 400
    err = command_error(404, {"error": "gone"}, [b"get"])
    assert str(err) == "GET command failed with HTTP 404: gone" and err.command == "GET" and err.status == 404
    assert err.body == {"error": "gone"}
    err = command_error(401, "x" * 300, ["get"])
    assert str(err).endswith("x" * 200 + " (check the token or credentials (SVC_* variables); a rotated or "
                              "reset one stops working at once)")


def batch(fmt: WireFormat, body: bytes, commands, status: int = 200, *, transaction: bool = False):
    return decode_batch(fmt, status, JSON, body, commands, transaction=transaction)


def test_a_batch_gives_one_value_or_error_per_command():
    cmds = [["SET", "k", "v"], [b"hget", "h", "f"], ["GET", "k"]]
    body = b'[{"result":"OK"},{"error":"WRONGTYPE no"},{"result":["a",null]}]'
    out = batch(TEXT, body, cmds)
    assert out[0] == "OK" and out[2] == ["a", None]
    assert isinstance(out[1], CommandError) and str(out[1]) == "WRONGTYPE no" and out[1].command == "HGET"
    assert out[1].status == 200 and out[1].body == {"error": "WRONGTYPE no"}
    assert batch(RAW, body, cmds)[2] == [b"a", None] and batch(RAW, body, cmds)[0] == b"OK"
    enc = f'[{{"result":"{b64("é")}"}},{{"result":"OK"}},{{"result":[5,"{b64("z")}"]}}]'.encode()
    assert batch(B64, enc, cmds) == ["é", "OK", [5, "z"]]
    assert batch(B64_RAW, enc, cmds) == ["é".encode(), b"OK", [5, b"z"]]
    assert batch(RESP2, body, cmds)[2] == ["a", None]
    assert batch(TEXT, b'[{"result":1,"error":"x"}]', [["INCR", "n"]]) == [1]


def test_a_batch_reply_of_another_length_or_shape_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="^2 commands sent, 1 replies received$"):
        batch(TEXT, b'[{"result":1}]', [["INCR", "a"], ["INCR", "b"]])
    with pytest.raises(ProtocolError, match=r"^reply element is not an envelope: '\[1\]'$"):
        batch(TEXT, b"[[1]]", [["GET", "a"]])
    with pytest.raises(ProtocolError, match="not an envelope"):
        batch(TEXT, b'[{"other":1}]', [["GET", "a"]])
    with pytest.raises(ProtocolError, match=r"""^reply is neither \{result\} nor \{error\}: "\{'result': 1\}"$"""):
        batch(TEXT, b'{"result":1}', [["GET", "a"]])


def test_a_discarded_transaction_and_a_refused_pipeline():
    cmds = [["SET", "k", "v"], ["INCR", "k"]]
    for status in (200, 400):
        with pytest.raises(TransactionDiscarded) as caught:
            batch(TEXT, b'{"error":"EXECABORT Transaction discarded"}', cmds, status, transaction=True)
        assert str(caught.value) == "transaction discarded, no command of it ran: EXECABORT Transaction discarded"
        assert caught.value.status == status and caught.value.body == {"error": "EXECABORT Transaction discarded"}
        with pytest.raises(CommandError) as refused:
            batch(TEXT, b'{"error":"ERR bad pipeline"}', cmds, status)
        assert str(refused.value) == "ERR bad pipeline" and refused.value.command == "PIPELINE"
    with pytest.raises(AuthError) as caught:
        batch(TEXT, b'{"error":"Unauthorized"}', cmds, 401, transaction=True)
    assert caught.value.command == "MULTI" and "MULTI command failed with HTTP 401" in str(caught.value)
    with pytest.raises(ServerError) as caught:
        batch(TEXT, b'[{"result":1},{"result":2}]', cmds, 500)
    assert caught.value.command == "PIPELINE" and str(caught.value).startswith("PIPELINE command failed with HTTP 500")
    with pytest.raises(ProtocolError, match="^MULTI reply is not JSON"):
        batch(TEXT, b"<html>", cmds, transaction=True)


def test_a_plain_string_that_looks_like_base64_is_left_alone_without_base64():
    assert reply(TEXT, b'{"result":"test"}') == "test" and reply(RAW, b'{"result":"abcd"}') == b"abcd"
    assert batch(TEXT, b'[{"result":"test"}]', [["GET", "k"]]) == ["test"]


def test_with_base64_a_value_with_characters_outside_base64_stays_as_it_came():
    assert reply(B64, b'{"result":"ab cd"}') == "ab cd" and reply(B64, b'{"result":"YWJj\\n"}') == "YWJj\n"


def test_each_failed_element_names_its_own_command():
    out = batch(TEXT, b'[{"error":"ERR a"},{"result":1},{"error":"ERR c"}]', [["GET", "a"], ["INCR", "b"], ["DEL", "c"]])
    assert [getattr(e, "command", None) for e in out] == ["GET", None, "DEL"]


def test_what_an_error_shows_of_a_long_or_broken_body():
    with pytest.raises(ProtocolError) as caught:
        reply(TEXT, b"<" + b"x" * 300, content_type="text/html")
    assert str(caught.value) == f"GET reply is not JSON: {(b'<' + b'x' * 79)!r}"
    with pytest.raises(ProtocolError) as caught:
        batch(TEXT, b"<html>", [["GET", "a"]])
    assert str(caught.value) == "PIPELINE reply is not JSON: b'<html>'"
    with pytest.raises(ProtocolError) as caught:
        reply(TEXT, b'["' + b"y" * 300 + b'"]')
    assert str(caught.value) == f"reply is neither {{result}} nor {{error}}: {str(['y' * 300])[:80]!r}"
    with pytest.raises(ProtocolError) as caught:
        batch(TEXT, b'["' + b"z" * 300 + b'"]', [["GET", "a"]])
    assert str(caught.value) == f"reply element is not an envelope: {'z' * 80!r}"
    err = command_error(502, "w" * 300, ["get"])
    assert str(err) == "GET command failed with HTTP 502: " + "w" * 200
    with pytest.raises(ServerError) as caught:
        reply(TEXT, b"\xffbroken", status=500, content_type="text/plain")
    assert str(caught.value) == "GET command failed with HTTP 500: \ufffdbroken"
