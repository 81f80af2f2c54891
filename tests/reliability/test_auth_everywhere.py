"""Auth everywhere: every route of the four areas refuses missing, malformed and wrong credentials with
401; the Read Only token and an ACL REST token are refused every command outside their rights (the
whole command table, not a sample); rotated and reset credentials fail on the very next request; and
tokens are compared in constant time."""

from __future__ import annotations

import base64
import hmac
import inspect
import uuid

import httpx
import pytest

from svckit.sandbox import Sandbox, openapi
from svckit.sandbox.kv import KVArea
from svckit.sandbox.kv.commands import COMMANDS
from svckit.sandbox.openapi import PUBLIC_PATHS
from tests.conftest import basic, require_binary
from tests.reliability.conftest import Live, area_of, assert_error_body, kv_backend

#: a value for every path parameter of the document
SAMPLE = {"command": "GET", "arg1": "k", "arg2": "v", "arg3": "x", "channel": "c", "message": "m", "index": "dense",
          "namespace": "ns", "id": "idx_products", "workflowRunId": "wfr_x", "dlqId": "dlq_x",
          "url": "https://example.com/wf", "destination": "http://127.0.0.1:9/hook", "queue": "q", "messageId": "msg_x",
          "name": "n", "scheduleId": "scd_x", "eventId": "evt_x"}


def _routes() -> list[tuple[str, str]]:
    """(method, concrete path) of every documented operation except the public ones (the document
    itself, the health report)."""
    out = []
    for path, item in openapi.document()["paths"].items():
        if path in PUBLIC_PATHS:
            continue
        concrete = path.format(**SAMPLE)
        out.extend((method.upper(), concrete) for method in item)
    return out


ROUTES = _routes()
MALFORMED = ["Bearer", "Basic !!!", "Token x", "Bearer \t-", "bearer", "Basic", "Basic Og==", "Digest x=1"]


def _wrong(area: str) -> list[str]:
    if area == "devapi":
        return [basic("sandbox@svckit.local", "wrong-key"), basic("someone@else", "wrong-key"),
                "Basic " + base64.b64encode(b"no-colon-here").decode()]
    return ["Bearer wrong-token", "Bearer " + "A" * 43]


def _request(live: Live, method: str, path: str, headers: dict[str, str], **kw) -> httpx.Response:
    body = {} if method in ("POST", "PUT") else None
    return live.http.request(method, live.url + path, headers=headers, json=body, timeout=5, **kw)


@pytest.mark.parametrize("method,path", ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_every_route_refuses_missing_malformed_and_wrong_credentials(guarded: Live, unchanged, method, path):
    area = area_of(path)
    other_areas_secrets = [f"Bearer {v}" for k, v in guarded.secrets().items() if not k.lower().startswith(
        {"kv": "svc_kv", "vector": "svc_vector", "devapi": "svc_devapi", "queue": "queue"}[area])]
    attempts = [{}] + [{"Authorization": v} for v in MALFORMED + _wrong(area) + other_areas_secrets]
    for headers in attempts:
        response = _request(guarded, method, path, headers)
        assert response.status_code == 401, (headers, response.status_code, response.text[:200])
        assert_error_body(area, response)
    if area == "kv":  # the query-parameter form of the key-value token
        for token in ("wrong", "", guarded.env["SVC_VECTOR_TOKEN"]):
            response = _request(guarded, method, path, {}, params={"_token": token})
            assert response.status_code == 401



# -- the Read Only token against the whole command table ------------------------------------------
READ_ONLY_REFUSED = sorted(name for name, c in COMMANDS.items() if c.write or c.readonly_refused)
READS = sorted(name for name, c in COMMANDS.items() if not (c.write or c.readonly_refused or c.unsupported))


def _readonly_attempts(live: Live, name: str, key: str) -> list[httpx.Response]:
    """The command in every way a request can carry it: path form (token in the header and in the
    query), ``POST /``, a pipeline element, and a transaction."""
    ro = {"Authorization": f"Bearer {live.env['SVC_KV_READONLY_TOKEN']}"}
    argv = [name, key, "1", "1"]
    kv = live.url + "/kv"
    return [
        live.http.get(kv + "/" + "/".join(argv), headers=ro),
        live.http.get(kv + "/" + "/".join(argv), params={"_token": live.env["SVC_KV_READONLY_TOKEN"]}),
        live.http.post(kv + "/", headers=ro, json=argv),
        live.http.post(kv + "/pipeline", headers=ro, json=[argv]),
        live.http.post(kv + "/multi-exec", headers=ro, json=[["GET", key], argv]),
    ]


def test_readonly_token_is_refused_every_write_command_and_scan_keys(guarded: Live, unchanged):
    assert {"SET", "DEL", "FLUSHALL", "SCAN", "KEYS", "EVAL", "JSON.SET", "CONFIG", "ACL"} <= set(READ_ONLY_REFUSED)
    key = "greeting"  # a key of the demo data: a write that slipped through would change it
    for name in READ_ONLY_REFUSED:
        path_h, path_q, single, pipeline, transaction = _readonly_attempts(guarded, name, key)
        for response in (path_h, path_q, single):
            assert response.status_code == 400, (name, response.text)
            error = response.json()["error"]
            assert error.startswith(("NOPERM", "ERR Command is not available")), (name, error)
        [element] = pipeline.json()
        assert pipeline.status_code == 200 and "error" in element, (name, element)
        assert transaction.status_code == 400 and set(transaction.json()) == {"error"}, name
        assert "EXECABORT" in transaction.json()["error"], name


def test_readonly_token_is_allowed_every_read_command(guarded: Live):
    ro = {"Authorization": f"Bearer {guarded.env['SVC_KV_READONLY_TOKEN']}"}
    for name in READS:
        response = guarded.http.post(guarded.url + "/kv/", headers=ro, json=[name, "greeting"])
        # the command reached Redis: it may fail there (arguments), but not for lack of rights
        error = response.json().get("error", "")
        assert not error.startswith("NOPERM") and "read-only token" not in error, (name, error)
    response = guarded.http.get(guarded.url + "/kv/GET/greeting", headers=ro)
    assert response.json() == {"result": "hello"}


def test_readonly_token_may_not_monitor(guarded: Live):
    ro = {"Authorization": f"Bearer {guarded.env['SVC_KV_READONLY_TOKEN']}",
          "Accept": "text/event-stream"}
    response = guarded.http.post(guarded.url + "/kv/monitor", headers=ro, timeout=5)
    assert response.status_code == 400 and response.json()["error"].startswith("NOPERM")


# -- an ACL user's REST token (real Redis: Redis itself enforces the ACL) ----------------------------
@pytest.fixture(scope="module")
def redis_kv(tmp_path_factory):
    require_binary("redis-server")
    with Sandbox(tmp_path_factory.mktemp("acl"), areas=["kv"], backend="redis") as sb, httpx.Client(timeout=10) as http:
        yield Live(sb, http)


def _arity_args(http: httpx.Client, url: str, std: dict[str, str], names: list[str], key: str) -> dict[str, list]:
    """Arguments of the right count for each command (from Redis's own COMMAND INFO), so Redis gets
    past its arity check to the ACL check; None for commands this Redis does not know."""
    out: dict[str, list] = {}
    for name in names:
        wire = "FCALL" if name.startswith("JSON.") else name
        info = http.post(url + "/", headers=std, json=["COMMAND", "INFO", wire]).json()["result"][0]
        if info is None:
            out[name] = None
            continue
        arity, subcommands = info[1], info[9] if len(info) > 9 else []
        if subcommands:  # a container (ACL, CONFIG, OBJECT, ...): Redis checks the subcommand first
            sub = subcommands[0]
            count = sub[1] - 2 if sub[1] > 0 else max(-sub[1] - 2, 0)
            out[name] = [sub[0].split("|", 1)[1]] + [key] * min(count, 1) + ["1"] * max(count - 1, 0)
            continue
        count = arity - 1 if arity > 0 else max(-arity - 1, 1)
        out[name] = [key] + ["1"] * (count - 1) if count else []
    return out


def test_acl_rest_token_is_refused_every_command_outside_its_acl(redis_kv: Live):
    url, http = redis_kv.url + "/kv", redis_kv.http
    std = redis_kv.auth("kv")
    user, password = f"limited{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    setuser = ["ACL", "SETUSER", user, "on", f">{password}", "resetkeys", "~app:*", "-@all", "+get", "+set"]
    assert http.post(url + "/", headers=std, json=setuser).json() == {"result": "OK"}
    token = http.post(url + "/", headers=std, json=["ACL", "RESTTOKEN", user, password]).json()["result"]
    assert token and http.post(url + "/", headers=std, json=["SET", "outside", "untouched"]).json() == {"result": "OK"}
    acl = {"Authorization": f"Bearer {token}"}

    # inside its rights
    assert http.get(url + "/SET/app:1/v", headers=acl).json() == {"result": "OK"}
    assert http.get(url + "/GET/app:1", headers=acl).json() == {"result": "v"}
    # the right command on a key outside its pattern
    response = http.get(url + "/SET/outside/changed", headers=acl)
    assert response.status_code == 400 and response.json()["error"].startswith("NOPERM")

    outside = sorted(name for name, c in COMMANDS.items() if name not in ("GET", "SET"))
    args = _arity_args(http, url, std, outside, "outside")
    unknown_here = []
    for name in outside:
        argv = [name, *(args[name] if args[name] is not None else ["outside"])]
        response = http.post(url + "/", headers=acl, json=argv)
        assert response.status_code == 400, (name, response.text)
        error = response.json()["error"]
        if COMMANDS[name].unsupported:
            assert error.startswith("ERR Command is not available"), (name, error)
        elif args[name] is None:
            unknown_here.append(name)  # newer than this Redis: refused as unknown
            assert "unknown command" in error.lower() or error.startswith("NOPERM"), (name, error)
        else:
            assert error.startswith("NOPERM"), (name, error)
        [element] = http.post(url + "/pipeline", headers=acl, json=[argv]).json()
        assert "error" in element, (name, element)
    assert len(unknown_here) < len(outside) / 4, unknown_here
    assert http.get(url + "/GET/outside", headers=std).json() == {"result": "untouched"}
    # and a wrong password never yields a token
    response = http.post(url + "/", headers=std, json=["ACL", "RESTTOKEN", user, "wrong"])
    assert response.status_code == 400 and response.json()["error"].startswith("WRONGPASS")


# -- rotation and reset take effect on the very next request ---------------------------------------
def test_rotated_queue_token_fails_on_the_very_next_request(tmp_path):
    with Sandbox(tmp_path, areas=["account", "queue"]) as sb, httpx.Client(timeout=10) as http:
        env = sb.env
        devapi = {"Authorization": basic(env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"])}
        logs = sb.url + "/queue/v2/workflows/logs"
        old = {"Authorization": f"Bearer {env['SVC_QUEUE_TOKEN']}"}
        assert http.get(logs, headers=old).status_code == 200
        record = http.post(env["SVC_DEVAPI_URL"] + "/queue/user/rotatetoken", headers=devapi).json()
        assert record["token"] != env["SVC_QUEUE_TOKEN"]
        response = http.get(logs, headers=old)
        assert response.status_code == 401 and set(response.json()) == {"error"}
        assert http.get(logs, headers={"Authorization": f"Bearer {record['token']}"}).status_code == 200
        current = http.get(env["SVC_DEVAPI_URL"] + "/queue/user", headers=devapi).json()
        assert (current["token"], current["password"]) == (record["token"], record["password"])


def test_reset_kv_password_revokes_both_tokens_on_the_very_next_request(tmp_path):
    with Sandbox(tmp_path, areas=["kv"], backend=kv_backend()) as sb, httpx.Client(timeout=10) as http:
        env = sb.env
        url = env["SVC_KV_URL"] + "/GET/k"
        for name in ("SVC_KV_TOKEN", "SVC_KV_READONLY_TOKEN"):
            assert http.get(url, headers={"Authorization": f"Bearer {env[name]}"}).status_code == 200
        sb.area("kv").reset_password()
        for name in ("SVC_KV_TOKEN", "SVC_KV_READONLY_TOKEN"):
            assert http.get(url, headers={"Authorization": f"Bearer {env[name]}"}).status_code == 401
            assert http.get(url, params={"_token": env[name]}).status_code == 401
        new = sb.env
        assert http.get(url, headers={"Authorization": f"Bearer {new['SVC_KV_TOKEN']}"}).status_code == 200


# -- constant-time comparison ----------------------------------------------------------------------
def _auth_code_paths():
    from svckit.sandbox import auth

    return {
        "kv": KVArea.principal_for,
        "shared secret compare": auth.same_secret,
        "devapi basic": auth.basic_check,
        "queue and vector bearer": auth.bearer_check,
    }


def test_auth_code_paths_compare_with_compare_digest():
    for name, function in _auth_code_paths().items():
        source = inspect.getsource(function)
        assert "compare_digest" in source or "same_secret(" in source, name
        for line in source.splitlines():  # no plain == / != on a token or key
            code = line.split("#")[0]
            if any(word in code for word in ("token", "key", "password")) and ("==" in code or "!=" in code):
                assert "scheme" in code or "len(" in code, f"{name}: {line.strip()}"


def test_every_area_calls_compare_digest_on_a_wrong_credential(guarded: Live, monkeypatch):
    """Behaviour: a request with a wrong credential makes the server call hmac.compare_digest with
    the bytes it was given (a dict lookup or == would not)."""
    seen: list[bytes] = []
    real = hmac.compare_digest

    def spy(a, b):
        seen.append(a if isinstance(a, bytes) else str(a).encode())
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    probes = {
        "kv": ("GET", "/kv/GET/k", "Bearer probe-kv-0123456789"),
        "vector": ("GET", "/vector/dense/info", "Bearer probe-vector-0123456789"),
        "devapi": ("GET", "/devapi/v2/queue/user", basic("sandbox@svckit.local", "probe-devapi-0123456789")),
        "queue": ("GET", "/queue/v2/workflows/logs", "Bearer probe-queue-0123456789"),
    }
    for area, (method, path, header) in probes.items():
        seen.clear()
        response = guarded.http.request(method, guarded.url + path, headers={"Authorization": header})
        assert response.status_code == 401, area
        probe = f"probe-{area}-0123456789".encode()
        assert any(probe in value for value in seen), f"{area}: compare_digest never saw the given credential"
