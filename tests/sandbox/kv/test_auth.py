"""Authentication rules of area A and ACL RESTTOKEN (rule 8), on both backends."""

from __future__ import annotations

import uuid

import pytest

from svckit.sandbox.kv.commands import COMMANDS
from tests.conftest import start_sandbox
from tests.sandbox.kv.conftest import acl_user, kv_of, rest_token


def test_bearer_header_and_token_query_parameter_both_authenticate(kv):
    key = kv.key()
    assert kv.get(f"/SET/{key}/v").json() == {"result": "OK"}
    r = kv.http.get(kv.url + f"/GET/{key}", params={"_token": kv.token})
    assert r.status_code == 200 and r.json() == {"result": "v"}


@pytest.mark.parametrize("headers,params", [
    ({}, {}),
    ({"Authorization": "Bearer wrong-token"}, {}),
    ({}, {"_token": "wrong-token"}),
    ({"Authorization": "Basic dXNlcjpwYXNz"}, {}),
])
def test_missing_or_invalid_token_is_401(kv, headers, params):
    for method, path in [("GET", "/GET/x"), ("POST", "/pipeline"), ("POST", "/multi-exec"), ("POST", "/monitor"),
                         ("POST", "/subscribe/c"), ("POST", "/publish/c/m")]:
        r = kv.http.request(method, kv.url + path, headers=headers, params=params, json=[["GET", "x"]])
        assert r.status_code == 401, (method, path)
        assert set(r.json()) == {"error"}
        assert kv.token not in r.text


def test_readonly_token_reads(kv):
    key = kv.key()
    kv.get(f"/SET/{key}/v")
    ro = kv.auth(kv.readonly_token)
    assert kv.http.get(kv.url + f"/GET/{key}", headers=ro).json() == {"result": "v"}
    assert kv.http.get(kv.url + f"/GET/{key}", params={"_token": kv.readonly_token}).json() == {"result": "v"}
    assert kv.http.get(kv.url + "/PING", headers=ro).json() == {"result": "PONG"}


def test_readonly_token_refuses_every_write_command_and_scan_keys(kv):
    key = kv.key()
    kv.get(f"/SET/{key}/original")
    ro = kv.auth(kv.readonly_token)
    refused = sorted(name for name, cmd in COMMANDS.items() if cmd.write or cmd.readonly_refused)
    assert {"SET", "DEL", "SCAN", "KEYS", "FLUSHALL", "EVAL", "JSON.SET", "PUBLISH"} <= set(refused)
    for name in refused:
        r = kv.http.post(kv.url + "/", headers=ro, json=[name, key, "x", "y"])
        assert r.status_code == 400, name
        assert "error" in r.json(), name
    assert kv.get(f"/GET/{key}").json() == {"result": "original"}, "a refused write must not have run"


def test_readonly_token_in_pipeline_and_transaction(kv):
    key = kv.key()
    ro = kv.auth(kv.readonly_token)
    body = kv.http.post(kv.url + "/pipeline", headers=ro, json=[["SET", key, "x"], ["GET", key]]).json()
    assert "NOPERM" in body[0]["error"] and body[1] == {"result": None}
    r = kv.http.post(kv.url + "/multi-exec", headers=ro, json=[["GET", key], ["SET", key, "x"]])
    assert r.status_code == 400 and set(r.json()) == {"error"}


# -- ACL RESTTOKEN ------------------------------------------------------------------------------
def test_resttoken_carries_the_acl_users_permissions(kv):
    key = kv.key()
    kv.get(f"/SET/{key}/v")
    name, password = acl_user(kv, "~*", "-@all", "+get", "+ping")
    r = kv.post("/", json=["ACL", "RESTTOKEN", name, password])
    assert r.status_code == 200
    token = r.json()["result"]
    assert isinstance(token, str) and token not in (kv.token, kv.readonly_token)
    user = kv.auth(token)
    assert kv.http.get(kv.url + f"/GET/{key}", headers=user).json() == {"result": "v"}
    refused = kv.http.get(kv.url + f"/SET/{key}/changed", headers=user)
    assert refused.status_code == 400 and "NOPERM" in refused.json()["error"]
    body = kv.http.post(kv.url + "/pipeline", headers=user, json=[["GET", key], ["DEL", key]]).json()
    assert body[0] == {"result": "v"} and "NOPERM" in body[1]["error"]
    assert kv.get(f"/GET/{key}").json() == {"result": "v"}


def test_resttoken_via_path(kv):
    name, password = acl_user(kv, "~*", "-@all", "+ping")
    token = kv.get(f"/ACL/RESTTOKEN/{name}/{password}").json()["result"]
    assert kv.http.get(kv.url + "/PING", headers=kv.auth(token)).json() == {"result": "PONG"}


@pytest.mark.parametrize("case", ["wrong password", "no such user"])
def test_resttoken_with_wrong_credentials_is_an_error(kv, case):
    name, password = acl_user(kv, "~*", "-@all", "+ping")
    if case == "no such user":
        name = "nobody" + uuid.uuid4().hex[:6]
    r = kv.post("/", json=["ACL", "RESTTOKEN", name, password + ("x" if case == "wrong password" else "")])
    assert r.status_code == 400 and r.json()["error"].startswith("WRONGPASS")


def test_resttoken_is_refused_to_the_readonly_token(kv):
    name, password = acl_user(kv, "~*", "-@all", "+ping")
    r = kv.http.post(kv.url + "/", headers=kv.auth(kv.readonly_token), json=["ACL", "RESTTOKEN", name, password])
    assert r.status_code == 400 and "NOPERM" in r.json()["error"]


# -- password reset -----------------------------------------------------------------------------
def test_reset_password_revokes_both_tokens_and_persists_the_new_ones(backend, tmp_path):
    sandbox = start_sandbox(areas=["kv"], backend=backend, data_dir=tmp_path)
    kv = kv_of(sandbox)
    try:
        old_std, old_ro = kv.token, kv.readonly_token
        assert kv.get("/PING").status_code == 200
        sandbox.area("kv").reset_password()
        for token in (old_std, old_ro):
            assert kv.http.get(kv.url + "/PING", headers=kv.auth(token)).status_code == 401
            assert kv.http.get(kv.url + "/PING", params={"_token": token}).status_code == 401
        new = sandbox.env
        assert new["SVC_KV_TOKEN"] not in (old_std, old_ro)
        assert kv.http.get(kv.url + "/PING", headers=kv.auth(new["SVC_KV_TOKEN"])).json() == {"result": "PONG"}
        assert kv.http.get(kv.url + "/PING",
                           headers=kv.auth(new["SVC_KV_READONLY_TOKEN"])).json() == {"result": "PONG"}
        saved = (tmp_path / "credentials.json").read_text()
        assert new["SVC_KV_TOKEN"] in saved and old_std not in saved
    finally:
        kv.http.close()
        sandbox.stop()


def test_resttoken_stops_working_when_the_user_is_deleted(kv):
    name, password = acl_user(kv, "~*", "-@all", "+ping")
    token = rest_token(kv, name, password)
    assert kv.http.get(kv.url + "/PING", headers=kv.auth(token)).json() == {"result": "PONG"}
    assert "result" in kv.post("/", json=["ACL", "DELUSER", name]).json()
    r = kv.http.get(kv.url + "/PING", headers=kv.auth(token))
    assert r.status_code == 401 and "WRONGPASS" in r.json()["error"]
