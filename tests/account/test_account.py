"""Area C over real HTTP against the sandbox: every route, every D1 field, auth, errors."""

from __future__ import annotations

import time

import httpx
import pytest

from svckit.account import QueueAccount
from svckit.errors import AuthError, InvalidArgument, NotFound
from svckit.sandbox.plans import PLAN_PRESETS
from tests.conftest import basic

D1_FIELDS = [
    "customer_id", "id", "password", "token", "active", "state", "last_plan_upgrade_time", "max_message_size",
    "max_requests_per_day", "max_requests_per_day_hard", "max_endpoints_per_topic", "max_requests_per_second",
    "max_dlq_size", "max_retries", "max_topics", "max_schedules", "max_events_size",
    "max_dlq_retention_time_milis", "max_delay", "max_parallelism", "max_global_parallelism", "max_queues",
    "prod_pack_enabled", "timeout", "type", "reserved_type", "reserved_price", "created_by", "creation_time",
]


def _plain(acct: QueueAccount) -> dict:
    out = {}
    for name in D1_FIELDS:
        value = getattr(acct, name)
        out[name] = value.get_secret_value() if name in ("token", "password") else getattr(value, "value", value)
    return out


def test_queue_account_round_trips_every_d1_field(account, raw_devapi, queue_sandbox):
    wire = raw_devapi.get("/queue/user").json()
    assert sorted(wire) == sorted(D1_FIELDS)
    acct = account.queue_account()
    assert _plain(acct) == wire
    assert acct.customer_id == queue_sandbox.env["SVC_DEVAPI_EMAIL"] and acct.created_by == acct.customer_id
    assert acct.type == "free" and acct.reserved_type == "" and acct.state == "active" and acct.active is True
    assert acct.token.get_secret_value() == queue_sandbox.env["SVC_QUEUE_TOKEN"]
    assert acct.limits == {k: v for k, v in PLAN_PRESETS["free"].items() if k in acct.limits}
    assert acct.token.get_secret_value() not in repr(acct) and acct.password.get_secret_value() not in str(acct)


def test_rotate_invalidates_old_token_and_password_at_once(account, queue, raw_devapi, queue_sandbox):
    before = account.queue_account()
    queue.workflow_logs()  # the current token works
    after = account.rotate_queue_token()
    assert after.token != before.token and after.password != before.password
    assert after.id == before.id and after.max_retries == before.max_retries
    assert _plain(account.queue_account()) == _plain(after)
    with pytest.raises(AuthError):
        queue.workflow_logs()  # the very next request with the old token
    assert queue_sandbox.env["SVC_QUEUE_TOKEN"] == after.token.get_secret_value()
    with type(queue).from_settings(queue_sandbox.settings) as fresh:
        assert fresh.workflow_logs().runs == []


@pytest.mark.parametrize("plan", ["paid", "queue_enterprise_1m", "queue_enterprise_10m"])
def test_upgrade_applies_plan_limits_and_upgrade_time(account, plan):
    before = account.queue_account()
    started = int(time.time())
    assert account.upgrade_queue_plan(before.customer_id, plan) == "OK"
    after = account.queue_account()
    for name, value in PLAN_PRESETS[plan].items():
        assert getattr(getattr(after, name), "value", getattr(after, name)) == value, name
    assert after.plan == plan and after.type == "paid"
    assert started <= after.last_plan_upgrade_time <= int(time.time())
    assert after.token == before.token and after.id == before.id


def test_upgrade_errors(account, raw_devapi):
    with pytest.raises(InvalidArgument):
        account.upgrade_queue_plan("x@example.com", "platinum")
    with pytest.raises(NotFound):
        account.upgrade_queue_plan("someone-else@example.com", "paid")
    r = raw_devapi.post("/queue-upgrade", json={"customer_id": "sandbox@svckit.local", "plan_name": "platinum"})
    assert r.status_code == 400 and "plan_name" in r.json()["error"]
    r = raw_devapi.post("/queue-upgrade", json={"plan_name": "paid"})
    assert r.status_code == 400 and r.json() == {"error": "customer_id: required"}
    r = raw_devapi.post("/queue-upgrade", content=b"{not json")
    assert r.status_code == 400 and "JSON" in r.json()["error"]


def test_rename_search_index(account, raw_devapi, queue_sandbox):
    store = queue_sandbox.area("account").store
    assert account.rename_search_index("idx_products", "catalog") == "OK"
    assert store.search_indexes()["idx_products"] == "catalog"
    with pytest.raises(NotFound) as info:
        account.rename_search_index("idx_missing", "x")
    assert info.value.body == {"error": "search index 'idx_missing' not found"}
    r = raw_devapi.post("/search/idx_products/rename", json={"name": 5})
    assert r.status_code == 400 and r.json() == {"error": "name: must be a non-empty string"}
    r = raw_devapi.post("/search/idx_products/rename", json={})
    assert r.status_code == 400 and r.json() == {"error": "name: required"}
    with pytest.raises(InvalidArgument):
        account.rename_search_index("idx_products", "")


ROUTES = [("POST", "/search/idx_products/rename", {"name": "n"}), ("GET", "/queue/user", None),
          ("POST", "/queue/user/rotatetoken", None),
          ("POST", "/queue-upgrade", {"customer_id": "sandbox@svckit.local", "plan_name": "paid"}),
          ("GET", "/no/such/route", None)]


@pytest.mark.parametrize("method, path, body", ROUTES)
def test_every_route_needs_valid_basic_credentials(queue_sandbox, method, path, body):
    env = queue_sandbox.env
    email, key = env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"]
    bad = {
        "missing": {},
        "wrong scheme": {"Authorization": f"Bearer {key}"},
        "not base64": {"Authorization": "Basic %%%"},
        "no colon": {"Authorization": "Basic " + "c2FuZGJveA=="},
        "wrong key": {"Authorization": basic(email, key + "x")},
        "wrong email": {"Authorization": basic("other@svckit.local", key)},
    }
    with httpx.Client(base_url=env["SVC_DEVAPI_URL"]) as c:
        for why, headers in bad.items():
            r = c.request(method, path, json=body, headers=headers)
            assert r.status_code == 401, why
            assert set(r.json()) == {"error"} and key not in r.text
            assert r.headers["WWW-Authenticate"].startswith("Basic")
    acct_token = queue_sandbox.area("account").store.queue_token()
    assert acct_token  # unchanged by any refused request: rotation needs valid credentials
    if path == "/queue/user/rotatetoken":
        assert queue_sandbox.env["SVC_QUEUE_TOKEN"] == acct_token


def test_unknown_route_with_valid_credentials_is_a_json_404(raw_devapi):
    r = raw_devapi.get("/no/such/route")
    assert r.status_code == 404 and r.json() == {"error": "not found"}


def test_wrong_credentials_raise_auth_error_without_the_key(queue_sandbox):
    from svckit.account import Account

    with Account(queue_sandbox.env["SVC_DEVAPI_URL"], "sandbox@svckit.local", "wrong-key-123456789") as a:
        with pytest.raises(AuthError) as info:
            a.queue_account()
    assert "wrong-key-123456789" not in str(info.value)


async def test_async_account_client(aaccount, account):
    acct = await aaccount.queue_account()
    assert _plain(acct) == _plain(account.queue_account())
    assert await aaccount.rename_search_index("idx_support_articles", "help-center") == "OK"
    assert await aaccount.upgrade_queue_plan(acct.customer_id, "queue_enterprise_1m") == "OK"
    assert (await aaccount.queue_account()).reserved_type == "queue_enterprise_1m"
    rotated = await aaccount.rotate_queue_token()
    assert rotated.token != acct.token
    with pytest.raises(InvalidArgument):
        await aaccount.upgrade_queue_plan(acct.customer_id, "free")
