"""The vendor's per-instance queue paths (``/qstash/users``, ``/qstash/user/{id}``,
``/qstash/rotate-token/{id}``, ``/qstash/set-plan/{id}``, ``/qstash/stats/{id}``) answer beside the
spec's, with the same record and through the same store."""

from __future__ import annotations

import pytest

from svckit.sandbox.delivery.stats import PERIODS
from svckit.sandbox.plans import PLAN_PRESETS

PER_ID = [("GET", "/qstash/user/{id}", None), ("POST", "/qstash/rotate-token/{id}", None),
          ("POST", "/qstash/set-plan/{id}", {"plan_name": "paid"}), ("GET", "/qstash/stats/{id}", None)]


def _account(raw_devapi) -> dict:
    return raw_devapi.get("/queue/user").json()


def test_users_lists_the_one_account_and_user_reads_it_by_id(raw_devapi):
    record = _account(raw_devapi)
    listed = raw_devapi.get("/qstash/users")
    assert listed.status_code == 200 and listed.json() == [record]
    one = raw_devapi.get(f"/qstash/user/{record['id']}")
    assert one.status_code == 200 and one.json() == record


@pytest.mark.parametrize(("vendor", "reserved_type"), [("qstash_fixed_1m", "queue_enterprise_1m"),
                                                       ("qstash_fixed_10m", "queue_enterprise_10m"),
                                                       ("qstash_fixed_100m", "queue_enterprise_100m"),
                                                       ("paid", "paid"), ("queue_enterprise_1m", "queue_enterprise_1m")])
def test_set_plan_applies_the_presets_under_the_spec_name(raw_devapi, vendor, reserved_type):
    account_id = _account(raw_devapi)["id"]
    r = raw_devapi.post(f"/qstash/set-plan/{account_id}", json={"plan_name": vendor})
    assert r.status_code == 200 and r.json() == "OK"
    after = raw_devapi.get(f"/qstash/user/{account_id}").json()
    assert after["reserved_type"] == reserved_type
    assert {k: after[k] for k in PLAN_PRESETS[reserved_type]} == dict(PLAN_PRESETS[reserved_type])
    assert after == _account(raw_devapi)  # the spec's path reads the same record


def test_set_plan_refuses_an_unknown_plan_naming_the_accepted_ones(raw_devapi):
    account_id = _account(raw_devapi)["id"]
    r = raw_devapi.post(f"/qstash/set-plan/{account_id}", json={"plan_name": "qstash_fixed_1b"})
    assert r.status_code == 400
    assert "qstash_fixed_1m" in r.json()["error"] and "queue_enterprise_10m" in r.json()["error"]
    assert _account(raw_devapi)["type"] == "free"  # unchanged


def test_rotate_token_by_id_makes_the_old_queue_token_fail(raw_devapi, raw_queue, queue_sandbox):
    before = _account(raw_devapi)
    assert raw_queue.get("/v2/workflows/logs").status_code == 200
    r = raw_devapi.post(f"/qstash/rotate-token/{before['id']}")
    assert r.status_code == 200
    after = r.json()
    assert after["id"] == before["id"] and after["token"] != before["token"] and after["password"] != before["password"]
    assert raw_queue.get("/v2/workflows/logs").status_code == 401  # the old token, at once
    assert raw_queue.get("/v2/workflows/logs", headers={"Authorization": f"Bearer {after['token']}"}).status_code == 200


def test_stats_by_id_is_the_accounts_stats(raw_devapi):
    account_id = _account(raw_devapi)["id"]
    by_id = raw_devapi.get(f"/qstash/stats/{account_id}", params={"period": "1d"})
    plain = raw_devapi.get("/qstash/stats", params={"period": "1d"})
    assert by_id.status_code == plain.status_code == 200
    assert by_id.json().keys() == plain.json().keys() and by_id.json()["days"] == plain.json()["days"]


def test_stats_by_id_refuses_a_bad_period_naming_the_periods(raw_devapi):
    r = raw_devapi.get(f"/qstash/stats/{_account(raw_devapi)['id']}", params={"period": "2h"})
    assert r.status_code == 400 and all(p in r.json()["error"] for p in PERIODS)


@pytest.mark.parametrize(("method", "path", "body"), PER_ID, ids=[p for _, p, _ in PER_ID])
def test_an_unknown_id_is_a_404_and_changes_nothing(raw_devapi, method, path, body):
    before = _account(raw_devapi)
    r = raw_devapi.request(method, path.format(id="00000000-0000-4000-8000-000000000000"), json=body)
    assert r.status_code == 404 and "not found" in r.json()["error"]
    assert _account(raw_devapi) == before
