"""svckit's own ``serve()``: workflow functions written in Python, served inside the sandbox as the app
their runs' deliveries go to, speaking the vendor SDKs' protocol (:mod:`.wire`). Their runs are served
runs like any other: the delivery engine delivers to their URLs, they publish their steps, the runs
log, the DLQ and the timeline see one kind of run.

A workflow is a function of one argument, the :class:`WorkflowContext`::

    def order(context):
        order = context.body                                     # the trigger payload (JSON)
        stock = context.run("reserve-stock", lambda: reserve(order))
        paid = context.parallel({"charge-card": charge, "send-receipt": receipt})
        context.sleep("cool-down", 0.2)
        return context.run("ship", lambda: ship(order, stock))

Each delivery replays the function against the run's history: a step already in it returns its stored
output; the first one that is not runs (``context.run``), or waits (``context.sleep``: a step message
due after the sleep), and is published as the run's next step, and the delivery ends there. A parallel
group publishes a plan per branch; each plan's delivery runs its branch (side by side, each retried
on its own), and the delivery of the group's last result goes on (the JS SDK's protocol). A step
that raises answers the delivery 500 with ``Upstash-Error-Step-Name``, so QStash retries it and, its
retries spent, fails the run into the DLQ. The function's return value ends the run (its response).
On a run's failure the local QStash calls back (``Upstash-Workflow-Is-Failure``) and the workflow's
``failure_function`` gets a :class:`WorkflowFailure`.

Step functions run on worker threads (``workers`` at once), never on the sandbox's event loop.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse

from svckit.sandbox.http import off_loop
from svckit.sandbox.workflow.wire import VERSION

log = logging.getLogger(__name__)

#: what every answer of a workflow endpoint carries (the SDKs' protocol version; QStash checks it)
PROTOCOL = {"Upstash-Workflow-Sdk-Version": "1"}


class Suspend(BaseException):
    """The delivery's step is published: the function stops here until the next delivery. A
    BaseException so that a workflow's own ``except Exception`` cannot swallow it."""


class StepFailed(Exception):
    """A step raised (``kind``: the exception's type): the delivery fails (500), QStash retries it."""

    def __init__(self, name: str, error: str, kind: str = "StepFailed") -> None:
        self.name, self.error, self.kind = name, error, kind
        super().__init__(f"step {name!r} failed: {kind}: {error}")


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class WorkflowFailure:
    """What a failure function is given: the run that failed and why."""

    run_id: str
    url: str
    body: Any
    label: str | None
    dlq_id: str | None
    status: int
    response: str


Workflow = Callable[["WorkflowContext"], Any]
FailureFunction = Callable[[WorkflowFailure], Any]


def _json(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return raw.decode("utf-8", "replace")


class WorkflowContext:
    """The ``context`` a workflow function gets, for one delivery of one run (module docstring)."""

    def __init__(self, publish: Callable[[list[dict[str, Any]], float], None], run_id: str, url: str,
                 body: Any, label: str | None, history: list[dict[str, Any]], created_at: int | None = None) -> None:
        """``history``: the steps the delivery carries, in order (results, and plans of parallel steps);
        ``created_at``: the run's creation (Unix ms; runs sharing an id differ in it)."""
        self._publish = publish
        self.workflow_run_created_at = created_at
        self._done = {int(s["stepId"]): s for s in history if s.get("stepId")}
        self._planned = {s.get("targetStep") for s in history if not s.get("stepId")}
        self._last = history[-1] if history else None
        self._next = 1
        self.workflow_run_id, self.url, self.body, self.label = run_id, url, body, label

    def run(self, name: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn()`` as step ``name`` (retried on failure); its JSON-serialisable result. A step the
        run already did returns its stored output instead."""
        step_id = self._take()
        if step_id in self._done:
            return self._value(step_id, name)
        self._publish([_result(step_id, name, self._call(name, fn), 1)], 0)
        raise Suspend

    def sleep(self, name: str, seconds: float) -> None:
        """A ``SleepFor`` step: the run goes on ``seconds`` later."""
        step_id = self._take()
        if step_id in self._done:
            self._value(step_id, name)
            return
        self._publish([{"stepId": step_id, "stepName": name, "stepType": "SleepFor", "sleepFor": seconds,
                        "concurrent": 1}], seconds)
        raise Suspend

    def parallel(self, steps: Mapping[str, Callable[[], Any]] | None = None, /,
                 **named: Callable[[], Any]) -> dict[str, Any]:
        """Several steps side by side, one parallel group: ``context.parallel({"charge": f, "mail": g})``
        or ``context.parallel(charge=f, mail=g)``; ``{name: result}`` in the given order. As the JS SDK
        does it: one plan message per branch, each branch run (and retried) in its plan's own delivery,
        the run going on in the delivery of the group's last result."""
        branches = {**(steps or {}), **named}
        if not branches:
            raise ValueError("parallel: give at least one step")
        ids = {name: self._take() for name in branches}
        if all(i in self._done for i in ids.values()):
            return {name: self._value(ids[name], name) for name in branches}
        last = self._last
        if last is not None and not last.get("stepId") and last.get("targetStep") in ids.values():
            name = next(n for n, i in ids.items() if i == last["targetStep"])  # this delivery is its plan's
            self._publish([_result(ids[name], name, self._call(name, branches[name]), len(branches))], 0)
            raise Suspend
        if any(i in self._done or i in self._planned for i in ids.values()):
            raise Suspend  # the delivery of one of the group's results, not the last: the last one goes on
        self._publish([{"stepId": 0, "stepName": name, "stepType": "Run", "concurrent": len(branches),
                        "targetStep": ids[name]} for name in branches], 0)
        raise Suspend

    def _take(self) -> int:
        step_id, self._next = self._next, self._next + 1
        return step_id

    def _value(self, step_id: int, name: str) -> Any:
        step = self._done[step_id]
        if step.get("stepName") != name:
            raise StepFailed(name, f"incompatible step: step {step_id} of this run is {step.get('stepName')!r}, the "
                                   f"code's is {name!r}; code may change only after the step that failed")
        out = step.get("out")
        return json.loads(out) if isinstance(out, str) and out else None

    @staticmethod
    def _call(name: str, fn: Callable[[], Any]) -> Any:
        try:
            result = fn()
            json.dumps(result)
        except Suspend:
            raise
        except Exception as exc:  # a step's failure is the delivery's (retried)
            raise StepFailed(name, str(exc), type(exc).__name__) from exc
        return result


def _result(step_id: int, name: str, value: Any, concurrent: int) -> dict[str, Any]:
    return {"stepId": step_id, "stepName": name, "stepType": "Run", "out": json.dumps(value), "concurrent": concurrent}


@dataclass
class Registered:
    fn: Workflow
    failure_function: FailureFunction | None = None


class WorkflowApp:
    """The endpoint of every registered workflow (an ASGI app; the delivery engine's local transport).

    ``publish(url, run_id, steps, delay)`` publishes a run's step messages, ``start(url, body)`` a new
    run, ``end(run_id, response)`` ends one: the runner's (:mod:`.runner`)."""

    def __init__(self, workers: int, publish: Callable[..., None], start: Callable[..., str],
                 end: Callable[[str, str], None]) -> None:
        self.workflows: dict[str, Registered] = {}
        self._publish, self._start, self._end = publish, start, end
        self._limiter = anyio.CapacityLimiter(workers)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        try:
            response = await self._answer(request)
        except Exception as exc:  # as a server answers its app's fault: a 500, logged
            log.exception("workflow app: the delivery to %s failed", request.url)
            response = JSONResponse({"error": type(exc).__name__, "message": error_text(exc)}, status_code=500)
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> JSONResponse:
        url = str(request.url).partition("?")[0]
        registered = self.workflows.get(url)
        if registered is None:
            return JSONResponse({"error": f"no workflow registered at {url}"}, status_code=404)
        body = await request.body()
        headers = request.headers
        if headers.get("upstash-workflow-is-failure") == "true":
            return await self._failure(registered, body, headers.get("upstash-label"))
        if VERSION not in headers:  # a first call: start a run with this body
            run_id = await off_loop(self._start, url, _json(body))
            return JSONResponse({"workflowRunId": run_id}, headers=PROTOCOL)
        run_id = headers.get("upstash-workflow-runid", "")
        entries = json.loads(body)
        history = [step for entry in entries[1:] if entry.get("callType") == "step"
                   and isinstance(step := _json(base64.b64decode(entry["body"])), dict)]
        created = headers.get("upstash-workflow-createdat", "")
        context = WorkflowContext(lambda steps, delay: self._publish(url, run_id, steps, delay), run_id, url,
                                  _json(base64.b64decode(entries[0]["body"])), headers.get("upstash-label"), history,
                                  int(created) if created.isdigit() else None)
        return await off_loop(self._execute, registered.fn, context, limiter=self._limiter)

    def _execute(self, fn: Workflow, context: WorkflowContext) -> JSONResponse:
        try:
            result = fn(context)
        except Suspend:
            return JSONResponse({"workflowRunId": context.workflow_run_id}, headers=PROTOCOL)
        except StepFailed as exc:
            return JSONResponse({"error": exc.kind, "message": exc.error}, status_code=500,
                                headers={**PROTOCOL, "Upstash-Error-Step-Name": exc.name})
        except Exception as exc:  # noqa: BLE001 - code outside any step failed: the delivery fails
            return JSONResponse({"error": type(exc).__name__, "message": f"workflow code failed outside a step: "
                                 f"{error_text(exc)}"}, status_code=500, headers=PROTOCOL)
        self._end(context.workflow_run_id, json.dumps(result))
        return JSONResponse({"workflowRunId": context.workflow_run_id}, headers=PROTOCOL)

    async def _failure(self, registered: Registered, body: bytes, label: str | None) -> JSONResponse:
        if registered.failure_function is None:  # as the JS SDK answers then: nothing to call, and fine
            return JSONResponse({}, headers={"Upstash-Workflow-Failure-Callback-Notfound": "true"})
        report = json.loads(body)
        failure = WorkflowFailure(
            run_id=report.get("workflowRunId", ""), url=report.get("url", ""),
            body=_json(base64.b64decode(report.get("sourceBody") or "")), label=label, dlq_id=report.get("dlqId"),
            status=int(report.get("status") or 0), response=base64.b64decode(report.get("body") or "").decode("utf-8", "replace"))
        try:
            result = await off_loop(registered.failure_function, failure, limiter=self._limiter)
        except Exception as exc:  # noqa: BLE001 - a failed callback: recorded as CALLBACK_FAIL
            return JSONResponse({"error": error_text(exc)}, status_code=500)
        return JSONResponse({"result": result})
