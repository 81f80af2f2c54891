"""JSON.* commands on every backend: single commands, pipelines and transactions give the same
replies on redis-server (no JSON module there: the gateway's Lua library) and on fakeredis."""

from __future__ import annotations

import json

import pytest

DOC = {"name": "svckit", "n": 1, "f": 1.5, "tags": ["kv", "json"], "empty": [], "obj": {}, "ok": True,
       "none": None, "nested": {"a": {"b": [10, 20, {"c": "deep"}]}}}

# (command after the key, expected result) run in order against one document
CASES = [
    (["JSON.GET", "{key}"], json.dumps(DOC, separators=(",", ":"))),
    (["JSON.GET", "{key}", "$.name"], '["svckit"]'),
    (["JSON.GET", "{key}", ".name"], '"svckit"'),
    (["JSON.GET", "{key}", "name"], '"svckit"'),
    (["JSON.GET", "{key}", "$.nested.a.b[2].c"], '["deep"]'),
    (["JSON.GET", "{key}", "$.nested.a.b[-1]"], '[{"c":"deep"}]'),
    (["JSON.GET", "{key}", "$.missing"], "[]"),
    (["JSON.GET", "{key}", "$..c"], '["deep"]'),
    (["JSON.GET", "{key}", "$.name", "$.n"], '{"$.name":["svckit"],"$.n":[1]}'),
    (["JSON.GET", "{key}", "$['tags'][0]"], '["kv"]'),
    (["JSON.TYPE", "{key}", "$.tags"], ["array"]),
    (["JSON.TYPE", "{key}", ".f"], "number"),
    (["JSON.TYPE", "{key}", "$.n"], ["integer"]),
    (["JSON.TYPE", "{key}"], "object"),
    (["JSON.STRLEN", "{key}", "$.name"], [6]),
    (["JSON.OBJLEN", "{key}", "$.nested"], [1]),
    (["JSON.OBJKEYS", "{key}", "$.nested.a"], [["b"]]),
    (["JSON.ARRLEN", "{key}", "$.tags"], [2]),
    (["JSON.ARRLEN", "{key}", "$.name"], [None]),
    (["JSON.ARRAPPEND", "{key}", "$.tags", '"new"', "3"], [4]),
    (["JSON.ARRINDEX", "{key}", "$.tags", '"new"'], [2]),
    (["JSON.ARRINSERT", "{key}", "$.tags", "0", '"first"'], [5]),
    (["JSON.ARRPOP", "{key}", "$.tags"], ["3"]),
    (["JSON.ARRPOP", "{key}", "$.empty"], [None]),
    (["JSON.ARRTRIM", "{key}", "$.tags", "0", "1"], [2]),
    (["JSON.GET", "{key}", "$.tags"], '[["first","kv"]]'),
    (["JSON.NUMINCRBY", "{key}", "$.n", "2"], "[3]"),
    (["JSON.NUMINCRBY", "{key}", "$.f", "1"], "[2.5]"),
    (["JSON.NUMMULTBY", "{key}", "$.n", "2"], "[6]"),
    (["JSON.NUMINCRBY", "{key}", ".n", "1"], "7"),
    (["JSON.STRAPPEND", "{key}", "$.name", '"!"'], [7]),
    (["JSON.TOGGLE", "{key}", "$.ok"], [0]),
    (["JSON.SET", "{key}", "$.obj.added", '{"x":[1,{"y":null}]}'], "OK"),
    (["JSON.SET", "{key}", "$.obj.added", '"never"', "NX"], None),
    (["JSON.SET", "{key}", "$.nope.deeper", "1"], None),
    (["JSON.GET", "{key}", "$.obj"], '[{"added":{"x":[1,{"y":null}]}}]'),
    (["JSON.MERGE", "{key}", "$.obj", '{"added":null,"m":1}'], "OK"),
    (["JSON.GET", "{key}", "$.obj"], '[{"m":1}]'),
    (["JSON.CLEAR", "{key}", "$.nested"], 1),
    (["JSON.DEL", "{key}", "$.none"], 1),
    (["JSON.FORGET", "{key}", "$.nothere"], 0),
    (["JSON.GET", "{key}", "$.nested"], "[{}]"),
    (["JSON.DEL", "{key}"], 1),
    (["JSON.GET", "{key}"], None),
]


def _fill(row, key):
    return [part.replace("{key}", key) for part in row]


def test_json_commands_one_by_one(kv):
    key = kv.key("doc")
    assert kv.post(f"/JSON.SET/{key}/$", content=json.dumps(DOC).encode()).json() == {"result": "OK"}
    for row, expected in CASES:
        r = kv.post("/", json=_fill(row, key))
        assert r.status_code == 200, (row, r.text)
        assert r.json() == {"result": expected}, row


def test_json_commands_in_a_pipeline_give_the_same_replies(kv):
    key = kv.key("doc")
    rows = [["JSON.SET", key, "$", json.dumps(DOC)], *(_fill(row, key) for row, _ in CASES)]
    body = kv.post("/pipeline", json=rows).json()
    assert body == [{"result": "OK"}, *({"result": expected} for _, expected in CASES)]


def test_json_commands_in_a_transaction_give_the_same_replies(kv):
    key = kv.key("doc")
    rows = [["JSON.SET", key, "$", json.dumps(DOC)], *(_fill(row, key) for row, _ in CASES)]
    body = kv.post("/multi-exec", json=rows).json()
    assert body == [{"result": "OK"}, *({"result": expected} for _, expected in CASES)]


def test_json_mset_and_mget(kv):
    a, b, missing = kv.key("a"), kv.key("b"), kv.key("missing")
    assert kv.post("/", json=["JSON.MSET", a, "$", '{"v":1}', b, "$", '{"v":2}']).json() == {"result": "OK"}
    assert kv.post("/", json=["JSON.MGET", a, b, missing, "$.v"]).json() == {"result": ["[1]", "[2]", None]}


@pytest.mark.parametrize("row,fragment", [
    (["JSON.SET", "{key}", "$", "{not json"], "invalid JSON"),
    (["JSON.SET", "{new}", "$.a", "1"], "root"),
    (["JSON.GET", "{key}", ".missing"], "does not exist"),
    (["JSON.NUMINCRBY", "{key}", ".s", "1"], "not a number"),
    (["JSON.GET", "{plain}"], "WRONGTYPE"),
    (["JSON.SET", "{key}"], "wrong number of arguments"),
])
def test_json_errors_are_400_with_error_text(kv, row, fragment):
    key = kv.key("doc")
    kv.post("/", json=["JSON.SET", key, "$", '{"s":"x"}'])
    plain = kv.key("plain")
    kv.post("/", json=["RPUSH", plain, "x"])
    cmd = [p.replace("{key}", key).replace("{new}", kv.key("new")).replace("{plain}", plain) for p in row]
    r = kv.post("/", json=cmd)
    assert r.status_code == 400 and fragment in r.json()["error"], r.text


def test_json_reads_are_allowed_and_writes_refused_for_the_readonly_token(kv):
    key = kv.key("doc")
    kv.post("/", json=["JSON.SET", key, "$", '{"a":1}'])
    ro = kv.auth(kv.readonly_token)
    assert kv.http.post(kv.url + "/", headers=ro, json=["JSON.GET", key, "$.a"]).json() == {"result": "[1]"}
    assert kv.http.post(kv.url + "/", headers=ro, json=["JSON.SET", key, "$.a", "2"]).status_code == 400


def test_unicode_and_key_order_survive(kv):
    key = kv.key("doc")
    text = '{"z":"é€😀","a":[],"m":{"q":"\\n\\"quoted\\""}}'
    kv.post("/", json=["JSON.SET", key, "$", text])
    assert json.loads(kv.post("/", json=["JSON.GET", key]).json()["result"]) == json.loads(text)
    assert kv.post("/", json=["JSON.GET", key]).json()["result"].startswith('{"z":"é€😀","a":[]')
