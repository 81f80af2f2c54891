"""A run's message may not be larger than the queue account's ``max_message_size``, as the live account
record says: a plan change applies from the next request on, to triggers and to resumed runs."""

from __future__ import annotations

import httpx
import pytest

from svckit.sandbox import Sandbox
from svckit.sandbox.plans import PLAN_PRESETS
from svckit.sandbox.workflow.runner import MessageTooLarge
from tests.conftest import basic

URL = "https://app.example.com/api/workflows/sized"
FREE = PLAN_PRESETS["free"]["max_message_size"]  # 1 MiB
ENTERPRISE = PLAN_PRESETS["queue_enterprise_1m"]["max_message_size"]  # 50 MiB


def upgrade(sb: Sandbox, http: httpx.Client, plan: str) -> None:
    env = sb.env
    r = http.post(env["SVC_DEVAPI_URL"] + "/queue-upgrade", json={"customer_id": env["SVC_DEVAPI_EMAIL"],
                  "plan_name": plan}, headers={"Authorization": basic(env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"])})
    assert r.status_code == 200, r.text


def queue_auth(sb: Sandbox) -> dict[str, str]:
    return {"Authorization": f"Bearer {sb.env['SVC_QUEUE_TOKEN']}"}


@pytest.mark.timeout(120)
def test_a_trigger_over_max_message_size_is_413_until_the_plan_allows_it(queue_sandbox):
    runner = queue_sandbox.area("queue").runner
    runner.register(URL, lambda context: context.run("size", lambda: len(context.body["blob"])))
    body = {"blob": "b" * (FREE + 1)}
    with httpx.Client(timeout=60) as http:
        r = http.post(f"{queue_sandbox.url}/queue/v2/trigger/{URL}", json=body, headers=queue_auth(queue_sandbox))
        assert r.status_code == 413 and set(r.json()) == {"error"}
        assert f"max_message_size of {FREE} bytes" in r.json()["error"]
        assert runner.store.query("SELECT COUNT(*) AS n FROM runs")[0]["n"] == 0  # nothing was enqueued

        upgrade(queue_sandbox, http, "queue_enterprise_1m")
        r = http.post(f"{queue_sandbox.url}/queue/v2/trigger/{URL}", json=body, headers=queue_auth(queue_sandbox))
        assert r.status_code == 200, r.text
        handle = runner.handle(r.json()["workflowRunId"], r.json()["workflowCreatedAt"])
        assert runner.wait(handle) == "RUN_SUCCESS"

        too_big = {"blob": "b" * (ENTERPRISE + 1)}
        r = http.post(f"{queue_sandbox.url}/queue/v2/trigger/{URL}", json=too_big, headers=queue_auth(queue_sandbox))
        assert r.status_code == 413 and f"max_message_size of {ENTERPRISE} bytes" in r.json()["error"]


def test_a_python_trigger_over_the_limit_raises(queue_sandbox):
    runner = queue_sandbox.area("queue").runner
    runner.register(URL, lambda context: None)
    with pytest.raises(MessageTooLarge, match=f"max_message_size of {FREE} bytes") as caught:
        runner.trigger(URL, {"blob": "é" * FREE})  # the size is counted in UTF-8 bytes
    assert caught.value.size == FREE * 2 + len('{"blob":""}')
    runner.trigger(URL, {"blob": "é" * (FREE // 2 - 20)})  # just under: accepted


@pytest.mark.timeout(120)
def test_resuming_a_run_whose_message_outgrew_the_plan_is_413(queue_sandbox):
    runner = queue_sandbox.area("queue").runner
    runner.register(URL, lambda context: context.run("fail", lambda: 1 / 0))
    with httpx.Client(timeout=60) as http:
        upgrade(queue_sandbox, http, "queue_enterprise_1m")
        handle = runner.trigger(URL, {"blob": "b" * (2 * FREE)}, retries=0)
        assert runner.wait(handle) == "RUN_FAILED"
        dlq_id = runner.store.query("SELECT dlq_id FROM dlq")[0]["dlq_id"]
        upgrade(queue_sandbox, http, "paid")  # 1 MiB again
        for path in (f"/v2/dlq/resume/{dlq_id}", f"/v2/dlq/restart/{dlq_id}"):
            r = http.post(f"{queue_sandbox.url}/queue{path}", headers=queue_auth(queue_sandbox))
            assert r.status_code == 413 and "max_message_size of 1048576 bytes" in r.json()["error"], r.text
        assert runner.store.query("SELECT dlq_id FROM dlq")[0]["dlq_id"] == dlq_id  # the entry stays
