"""The vendor's Python workflow SDK (``upstash-workflow``, its FastAPI ``Serve``), unchanged, in an app
on loopback, run by the sandbox as the local QStash: steps, a sleep, a call to a third party, a step
that fails into the DLQ with its failure function, its resume (svckit's client: the steps that
succeeded are not run again) and restart, and cancel. The app gets the sandbox's settings under the
vendor's names (``env=``, as ``svckit sandbox --env vendor`` prints them), so ``serve()`` verifies every
delivery with the signing keys. Runs are started as the SDK's docs say: a message published to the
workflow's URL (the qstash SDK's ``publish_json``).

One sandbox and one app for the module; each test has workflows, labels and counters of its own.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI, Request
from qstash import QStash
from upstash_workflow import AsyncWorkflowContext
from upstash_workflow.fastapi import Serve

from svckit.config import vendor_env
from svckit.queue import Queue
from svckit.sandbox import Sandbox
from svckit.sandbox.app_server import AppServer
from tests.conftest import eventually, running

ran: Counter[str] = Counter()
switches: dict[str, bool] = {}
failures: list[tuple[str, int, str]] = []
calls: list[Any] = []


def workflows(app: FastAPI, env: dict[str, str]) -> None:
    serve = Serve(app)

    @app.post("/third")
    async def third(request: Request) -> dict[str, Any]:
        calls.append(await request.json())
        return {"carrier": "postnl"}

    @serve.post("/wf/steps", env=env)
    async def steps(context: AsyncWorkflowContext[dict[str, Any]]) -> None:
        order = context.request_payload

        async def charge() -> dict[str, Any]:
            return {"paid": order["total"]}

        paid = await context.run("charge", charge)
        await context.sleep("cool-down", 1)
        reply = await context.call("carrier", url=f"{context.url.rsplit('/wf/', 1)[0]}/third", method="POST",
                                   body={"order": order["id"]})

        async def book() -> dict[str, Any]:
            return {"paid": paid, "carrier": reply.body, "status": reply.status}

        await context.run("book", book)

    async def on_failure(context: AsyncWorkflowContext[Any], status: int, message: str, header: Any) -> str:
        failures.append((context.workflow_run_id, status, message))
        return "noted"

    for key in ("resume", "restart"):
        flaky(serve, env, key, on_failure)
    flaky(serve, env, "held", on_failure, retries=0)

    @serve.post("/wf/twin", env=env)
    async def twin(context: AsyncWorkflowContext[dict[str, Any]]) -> None:
        async def charge() -> dict[str, Any]:
            return {"paid": context.request_payload["total"]}

        paid = await context.run("charge", charge)
        await context.sleep("cool-down", 1)

        async def book() -> dict[str, Any]:
            return {"booked": paid}

        await context.run("book", book)

    @serve.post("/wf/slow", env=env)
    async def slow(context: AsyncWorkflowContext[Any]) -> None:
        await context.sleep("a-long-nap", 3600)


def flaky(serve: Serve, env: dict[str, str], key: str, on_failure: Any, retries: int = 1) -> None:
    """``/wf/flaky-<key>``: its "ship" step fails until ``switches[key]`` is False."""
    @serve.post(f"/wf/flaky-{key}", env=env, retries=retries, failure_function=on_failure)
    async def workflow(context: AsyncWorkflowContext[Any]) -> None:
        async def charge() -> str:
            ran[key] += 1
            return "charged"

        async def ship() -> str:
            if switches.get(key, True):
                raise RuntimeError("carrier down")
            return "shipped"

        await context.run("charge", charge)
        await context.run("ship", ship)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("serve"), areas=["account", "queue"], queue_backoff_scale=0.001) as sb:
        yield sb


class HoldsTheInit:
    """The app, but its answer to the Init delivery of ``/wf/flaky-held`` (its second request: the first
    is the publish that starts the run) comes a second late: the step the Init published is delivered,
    and fails the run, while the Init's delivery is still in flight."""

    def __init__(self, app: Any) -> None:
        self.app, self.seen = app, 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        held = scope["type"] == "http" and scope["path"] == "/wf/flaky-held"
        if held:
            self.seen += 1
        if not (held and self.seen == 2):
            return await self.app(scope, receive, send)
        sent: list[Any] = []

        async def keep(message: Any) -> None:
            sent.append(message)

        await self.app(scope, receive, keep)
        await asyncio.sleep(1)
        for message in sent:
            await send(message)


@pytest.fixture(scope="module")
def app(sandbox: Sandbox) -> Iterator[AppServer]:
    api = FastAPI()
    workflows(api, vendor_env(sandbox.env))
    with AppServer(HoldsTheInit(api)) as server:
        yield server


@pytest.fixture
def qstash(sandbox: Sandbox) -> QStash:
    return QStash(sandbox.env["SVC_QUEUE_TOKEN"], base_url=sandbox.env["SVC_QUEUE_URL"])


@pytest.fixture
def queue(sandbox: Sandbox) -> Iterator[Queue]:
    with Queue.from_settings(sandbox.settings) as client:
        yield client


def ended(queue: Queue, url: str, n: int = 1) -> list[Any]:
    def done() -> list[Any] | None:
        runs = queue.workflow_logs(workflow_url=url).runs
        return runs if len(runs) >= n and all(r.workflow_state.value != "RUN_STARTED" for r in runs) else None

    return eventually(done, f"{n} run(s) of {url} ended", 30)


def steps(run: Any) -> list[tuple[str, str, str, str]]:
    return [(g.type.value, s.step_name, str(getattr(s.step_type, "value", s.step_type)), s.state.value)
            for g in run.steps for s in g.steps]


def start(qstash: QStash, app: AppServer, path: str, body: Any = None) -> str:
    """Start a run of the workflow at ``path`` as the SDK's docs say: publish to its URL. The URL."""
    url = f"{app.url}{path}"
    qstash.message.publish_json(url=url, body=body or {})
    return url


def test_a_run_of_steps_a_sleep_and_a_call_succeeds_with_every_step_in_the_logs(qstash, app, queue):
    url = start(qstash, app, "/wf/steps", {"id": 7, "total": 42})
    [run] = ended(queue, url)
    assert run.workflow_state.value == "RUN_SUCCESS"
    assert steps(run) == [
        ("sequential", "init", "Initial", "STEP_SUCCESS"), ("sequential", "charge", "Run", "STEP_SUCCESS"),
        ("sequential", "cool-down", "SleepFor", "STEP_SUCCESS"), ("sequential", "carrier", "Call", "STEP_SUCCESS"),
        ("sequential", "book", "Run", "STEP_SUCCESS")]
    book = run.steps[-1].steps[0]
    assert json.loads(book.out) == {"paid": {"paid": 42}, "carrier": {"carrier": "postnl"}, "status": 200}
    assert {"order": 7} in calls


def failed_entry(qstash: QStash, app: AppServer, queue: Queue, key: str) -> tuple[str, Any]:
    url = start(qstash, app, f"/wf/flaky-{key}")
    return url, eventually(lambda: next(iter(queue.dlq(workflow_url=url).messages), None), f"the run of {url} in the DLQ")


def test_a_failing_step_retries_into_the_dlq_calls_the_failure_function_and_resumes_without_rerunning_steps(
        qstash, app, queue):
    key = "resume"
    url, entry = failed_entry(qstash, app, queue, key)
    assert entry.response_status == 500 and "carrier down" in entry.response_body
    [failed] = eventually(lambda: [r for r in queue.workflow_logs(workflow_url=url).runs
                                   if r.failure_function and r.failure_function.state == "CALLBACK_SUCCESS"],
                          "the failure function's call")
    assert failed.workflow_state.value == "RUN_FAILED" and failed.workflow_run_id == entry.workflow_run_id
    assert [s[1:] for s in steps(failed)] == [("init", "Initial", "STEP_SUCCESS"), ("charge", "Run", "STEP_SUCCESS"),
                                              ("step 2", "Run", "STEP_RETRY"), ("step 2", "Run", "STEP_FAILED")]
    assert (failed.workflow_run_id, 500, "carrier down") in failures

    switches[key] = False
    resumed = queue.resume(entry.dlq_id)
    assert resumed.workflow_run_id == entry.workflow_run_id
    runs = ended(queue, url, 2)
    latest = next(r for r in runs if r.workflow_run_created_at == resumed.workflow_created_at)
    assert latest.workflow_state.value == "RUN_SUCCESS"
    assert [s[1] for s in steps(latest)] == ["init", "charge", "ship"]
    assert ran[key] == 1  # the step that succeeded was kept, not run again
    assert queue.dlq(workflow_url=url).messages == []


def test_a_run_that_fails_while_an_earlier_delivery_is_in_flight_resumes_from_its_failed_step(qstash, app, queue):
    """The Init's answer comes after the step it published failed the run (retries 0): the Init did its
    work, so the resume keeps "charge" and runs only "ship" (it ran "charge" again, and failed, when
    the failure cut the Init's delivery and the resume made it again)."""
    key = "held"
    url, entry = failed_entry(qstash, app, queue, key)
    [failed] = ended(queue, url)
    assert failed.workflow_state.value == "RUN_FAILED" and ran[key] == 1
    eventually(lambda: [e for e in queue.iter_events(workflow_run_id=failed.workflow_run_id)
                        if e.step_name == "init" and e.state.value == "DELIVERED"], "the Init's late answer recorded")
    switches[key] = False
    resumed = queue.resume(entry.dlq_id)
    runs = ended(queue, url, 2)
    latest = next(r for r in runs if r.workflow_run_created_at == resumed.workflow_created_at)
    assert latest.workflow_state.value == "RUN_SUCCESS" and ran[key] == 1
    assert [s[1] for s in steps(latest)] == ["init", "charge", "ship"]


def test_a_failed_run_restarted_from_the_dlq_runs_every_step_again(qstash, app, queue):
    key = "restart"
    url, entry = failed_entry(qstash, app, queue, key)
    switches[key] = False
    [restarted] = queue.restart_many([entry.dlq_id])
    runs = ended(queue, url, 2)
    assert sorted(r.workflow_state.value for r in runs) == ["RUN_FAILED", "RUN_SUCCESS"]
    assert any(r.workflow_run_created_at == restarted.workflow_created_at for r in runs)
    assert ran[key] == 2


def test_cancel_ends_a_sleeping_run(qstash, app, queue):
    url = start(qstash, app, "/wf/slow")
    run = eventually(lambda: next((r for r in queue.workflow_logs(workflow_url=url).runs
                                   if any(s[1] == "a-long-nap" for s in steps(r))), None), "the run to sleep")
    queue.cancel(run.workflow_run_id)
    [canceled] = ended(queue, url)
    assert canceled.workflow_state.value == "RUN_CANCELED"
    assert steps(canceled)[-1][1:] == ("a-long-nap", "SleepFor", "STEP_CANCELED")


def test_a_workflow_registered_in_the_sandbox_is_served_like_an_app_of_the_sdk(sandbox, qstash, app, queue):
    """One runner: ``runner.register`` only names the function the local QStash delivers a URL's messages
    to (in process); the run is published, delivered, logged and evented exactly as the SDK's app's."""
    def twin(context: Any) -> Any:
        paid = context.run("charge", lambda: {"paid": context.body["total"]})
        context.sleep("cool-down", 1)
        return context.run("book", lambda: {"booked": paid})

    registered = "https://shop.example/wf/twin"
    sandbox.area("queue").runner.register(registered, twin)
    served = start(qstash, app, "/wf/twin", {"total": 9})
    qstash.message.publish_json(url=registered, body={"total": 9})  # as to the app: the SDK's own call
    [ours], [theirs] = ended(queue, registered), ended(queue, served)
    assert ours.workflow_state.value == theirs.workflow_state.value == "RUN_SUCCESS"
    assert steps(ours) == steps(theirs) == [
        ("sequential", "init", "Initial", "STEP_SUCCESS"), ("sequential", "charge", "Run", "STEP_SUCCESS"),
        ("sequential", "cool-down", "SleepFor", "STEP_SUCCESS"), ("sequential", "book", "Run", "STEP_SUCCESS")]
    assert [json.loads(s.out) for g in ours.steps[1:] for s in g.steps if s.out] == \
        [json.loads(s.out) for g in theirs.steps[1:] for s in g.steps if s.out]

    def deliveries(run: Any) -> list[tuple[str | None, list[str]]]:
        """The run's messages in the order they were made, each with its step and its events' states."""
        messages: dict[str, tuple[str | None, list[str]]] = {}
        for event in reversed(list(queue.iter_events(workflow_run_id=run.workflow_run_id))):  # oldest first
            messages.setdefault(event.message_id, (event.step_name, []))[1].append(event.state.value)
        return list(messages.values())

    # the last delivery's DELIVERED comes just after the run's end (the app ends the run, then answers)
    made = [(step, ["CREATED", "ACTIVE", "DELIVERED"]) for step in ("init", "charge", "cool-down", "book")]
    eventually(lambda: deliveries(ours) == deliveries(theirs) == made,
               lambda: f"ours {deliveries(ours)}, theirs {deliveries(theirs)}, not {made}", 10)
    with pytest.raises(ModuleNotFoundError):  # the runner that ran workflows in threads of its own is gone
        __import__("svckit.sandbox.runner")
