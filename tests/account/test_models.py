"""Models and client-side validation: no sandbox needed, requests are observed with MockTransport."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import httpx
import pytest

from svckit.account import Account, QueueAccount, QueueAccountState, ReservedType
from svckit.errors import InvalidArgument
from svckit.queue import Queue, RunState, Step, StepState, StepType, WorkflowRun

TOKEN = "qtok_0123456789SECRETSECRET"
PASSWORD = "sig_PASSWORDPASSWORD99"

RECORD = {
    "customer_id": "team_42", "id": "0b7f1c5e-1d2a-4c1b-9a55-0a9c3f0e5b11", "password": PASSWORD,
    "token": TOKEN, "active": True, "state": "active", "last_plan_upgrade_time": 1700000000,
    "max_message_size": 1048576, "max_requests_per_day": 1000, "max_requests_per_day_hard": 1500,
    "max_endpoints_per_topic": 100, "max_requests_per_second": 100, "max_dlq_size": 1000, "max_retries": 3,
    "max_topics": 10, "max_schedules": 10, "max_events_size": 1000, "max_dlq_retention_time_milis": 259200000,
    "max_delay": 604800, "max_parallelism": 10, "max_global_parallelism": 10, "max_queues": 10,
    "prod_pack_enabled": False, "timeout": 900, "type": "free", "reserved_type": "", "reserved_price": 0.0,
    "created_by": "ada@example.com", "creation_time": 1690000000,
}


def test_queue_account_keeps_every_field_and_hides_secrets():
    acct = QueueAccount.model_validate(RECORD)
    for name, value in RECORD.items():
        got = getattr(acct, name)
        got = got.get_secret_value() if name in ("token", "password") else got
        assert got == value, name
    assert acct.state is QueueAccountState.ACTIVE and acct.reserved_type is ReservedType.NONE
    for text in (repr(acct), str(acct), acct.model_dump_json()):
        assert TOKEN not in text and PASSWORD not in text


def test_unknown_enum_values_and_extra_fields_are_kept():
    acct = QueueAccount.model_validate({**RECORD, "state": "suspended", "type": "team",
                                        "reserved_type": "queue_enterprise_100m", "region": "eu-central-1"})
    assert acct.state == "suspended" and not isinstance(acct.state, QueueAccountState)
    assert acct.reserved_type == "queue_enterprise_100m"
    assert acct.model_extra == {"region": "eu-central-1"}
    run = WorkflowRun.model_validate({
        "workflowRunId": "wfr_1", "workflowUrl": "https://x.example/wf", "workflowState": "RUN_PAUSED",
        "workflowRunCreatedAt": 1_700_000_000_000, "invoker": "api",
        "steps": [{"type": "sequential", "steps": [
            {"stepName": "init", "stepType": "Initial", "callType": "step", "state": "STEP_SUCCESS",
             "createdAt": 1_700_000_000_000, "concurrent": 1},
            {"stepId": 1, "stepName": "wait", "stepType": "WaitForWebhook", "callType": "toCallback",
             "state": "STEP_WAITING", "createdAt": 1_700_000_000_500, "concurrent": 1, "timeout": 30}]}],
    })
    assert run.workflow_state == "RUN_PAUSED" and run.model_extra == {"invoker": "api"}
    init, wait = run.all_steps
    assert init.step_type is StepType.INITIAL and init.step_id is None and init.state is StepState.STEP_SUCCESS
    assert wait.step_type == "WaitForWebhook" and wait.state == "STEP_WAITING" and wait.model_extra == {"timeout": 30}
    assert run.created_at == datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)
    assert run.completed_at is None


def _recording() -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if "/resume/" in request.url.path:
            return httpx.Response(200, json={"workflowRunId": "wfr_1", "workflowCreatedAt": 1})
        return httpx.Response(200, json={"runs": []})

    return httpx.MockTransport(handler), seen


@pytest.mark.parametrize("kwargs, argument", [
    ({"state": "RUN_DONE"}, "state"),
    ({"count": 11}, "count"),
    ({"count": 0}, "count"),
    ({"from_date": "yesterday"}, "from_date"),
    ({"to_date": -5}, "to_date"),
    ({"from_date": 2000, "to_date": 1000}, "from_date"),
    ({"workflow_run_id": ""}, "workflow_run_id"),
])
def test_invalid_filters_are_refused_before_any_request(kwargs, argument):
    transport, seen = _recording()
    with Queue("http://127.0.0.1:9/queue", TOKEN, transport=transport) as q:
        with pytest.raises(InvalidArgument) as info:
            q.workflow_logs(**kwargs)
    assert info.value.argument == argument and seen == []


def test_dates_accept_datetime_naive_as_utc_and_unix_ms():
    transport, seen = _recording()
    naive = datetime(2026, 1, 2, 3, 4, 5)
    aware = datetime(2026, 1, 2, 4, 4, 5, tzinfo=timezone(timedelta(hours=1)))
    with Queue("http://127.0.0.1:9/queue", TOKEN, transport=transport) as q:
        q.workflow_logs(from_date=naive, to_date=aware, workflow_created_at=1767323045000, state=RunState.RUN_FAILED)
    params = dict(seen[0].url.params)
    assert params == {"fromDate": "1767323045000", "toDate": "1767323045000",
                      "workflowCreatedAt": "1767323045000", "state": "RUN_FAILED"}


def test_resume_sends_only_the_headers_given():
    transport, seen = _recording()
    with Queue("http://127.0.0.1:9/queue", TOKEN, transport=transport) as q:
        for kwargs in ({}, {"retries": 0}, {"run_id": "wfr_x", "flow_control_key": "k"}):
            assert q.resume("dlq_1", **kwargs).workflow_run_id == "wfr_1"
    sent = [{k: v for k, v in r.headers.items() if k.startswith("service-")} for r in seen]
    assert sent == [{}, {"service-retries": "0"},
                    {"service-workflow-runid": "wfr_x", "service-flow-control-key": "k"}]


def test_plan_name_is_refused_before_any_request():
    transport, seen = _recording()
    with Account("http://127.0.0.1:9/devapi/v2", "a@b.c", "key", transport=transport) as a:
        with pytest.raises(InvalidArgument) as info:
            a.upgrade_queue_plan("a@b.c", "free")
    assert info.value.argument == "plan_name" and seen == []


def test_client_reprs_hide_credentials():
    q = Queue("http://127.0.0.1:9/queue", TOKEN)
    a = Account("http://127.0.0.1:9/devapi/v2", "a@b.c", PASSWORD)
    assert TOKEN not in repr(q) and PASSWORD not in repr(a)
    q.close()
    a.close()


def test_step_out_is_optional():
    step = Step(step_name="x", step_type="Run", state="STEP_PROGRESS", created_at=1)
    assert step.out is None and step.call_type == "step"


def test_the_dashboard_types_its_client_with_a_protocol_that_account_satisfies():
    from svckit.account import Account, QueueAccountAdmin

    with Account("http://127.0.0.1:9/v2", "ada@example.com", "key-not-used") as real:
        assert isinstance(real, QueueAccountAdmin)
    assert not isinstance(object(), QueueAccountAdmin)
