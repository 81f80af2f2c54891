"""The workflow protocol of the vendor's ``serve()`` SDKs as the local QStash speaks it (sans I/O).

A run's app publishes messages that carry ``Upstash-Workflow-RunId``; the first one
(``Upstash-Workflow-Init: true``) starts the run, each later one is a step it finished (or planned,
or a ``context.call`` to a third party, ``Upstash-Workflow-CallType: toCallback``). QStash keeps the
run's history and delivers it whole each time: the body of a delivery to the workflow URL is a JSON
array, element 0 the run's first payload, then every step message the app published before and up to
the one delivered, each ``{"messageId", "body": base64, "callType": "step"}``.

Headers arrive here by their neutral lower-case names (``service-workflow-runid``:
:mod:`svckit.sandbox.headers`); the names of forwarded headers keep the vendor's spelling
(``upstash-workflow-sdk-version``), as the SDKs read them. Sources: ``@upstash/workflow`` 1.3.3 and
``upstash-workflow`` 2.0.0 (``serve``, ``workflow_parser``, ``workflow_requests``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from svckit.sandbox.delivery.engine import DELIVERY_HEADERS
from svckit.sandbox.delivery.options import HOP_BY_HOP, PREFIX

RUN_ID, INIT, URL, CALL_TYPE = (PREFIX + n for n in ("workflow-runid", "workflow-init", "workflow-url",
                                                     "workflow-calltype"))
#: the protocol version a delivery to a workflow URL carries (a forwarded header of every step message);
#: a callback or failure callback never does, so the SDK takes it as the call it is
VERSION = "upstash-workflow-sdk-version"
#: headers of a delivery that are the delivery's own: a forwarded copy (the Python SDK forwards every
#: header it got, signature included) never reaches the destination
OWN = DELIVERY_HEADERS | {"upstash-workflow-runid", "upstash-workflow-url", "upstash-workflow-createdat",
                          "content-type", "content-length", "host"}
STEP_TYPES_WITH_DELAY = ("SleepFor", "SleepUntil")
NON_WORKFLOW = ("detected a non-workflow destination for trigger/invoke. make sure you are sending the request "
                "to the correct endpoint")


@dataclass(frozen=True)
class WorkflowMessage:
    """What makes a published message part of a run: its run id, whether it starts the run, the
    workflow URL and its call type (``step``, or ``toCallback`` for a call to a third party), and the
    headers its callback and failure callback are delivered with (``Upstash-Callback-Forward-X``)."""

    run_id: str
    init: bool
    url: str | None
    call_type: str
    callback_headers: tuple[tuple[str, str], ...] = ()
    failure_headers: tuple[tuple[str, str], ...] = ()
    call_step: tuple[tuple[str, str], ...] = ()
    #: whether the message said ``Upstash-Workflow-Init`` at all: one that names a run no one has made
    #: and does not say it continues one starts it (a trigger that sets only the run's id and options)
    init_given: bool = True


def forwards(headers: Mapping[str, str], prefix: str) -> tuple[tuple[str, str], ...]:
    """``<prefix>forward-X: v`` headers as ``(x, v)``, hop-by-hop ones dropped."""
    start = prefix + "forward-"
    return tuple((name[len(start):], value) for name, value in headers.items()
                 if name.startswith(start) and name[len(start):] and name[len(start):] not in HOP_BY_HOP)


def workflow_of(headers: Mapping[str, str]) -> WorkflowMessage | None:
    """The run a message belongs to, from its neutral lower-case headers; None for a plain message."""
    run_id = (headers.get(RUN_ID) or "").strip()
    if not run_id:
        return None
    callback = forwards(headers, PREFIX + "callback-")
    step = tuple((name.removeprefix("upstash-workflow-"), value) for name, value in callback
                 if name in ("upstash-workflow-stepid", "upstash-workflow-stepname", "upstash-workflow-steptype"))
    return WorkflowMessage(
        run_id=run_id, init=(headers.get(INIT) or "").strip().lower() == "true", url=headers.get(URL),
        init_given=INIT in headers,
        call_type=(headers.get(CALL_TYPE) or "step").strip(),
        callback_headers=tuple(p for p in callback if p[0] != VERSION),
        failure_headers=tuple(p for p in forwards(headers, PREFIX + "failure-callback-") if p[0] != VERSION),
        call_step=step)


def user_forwards(forward: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The run's own headers among a message's forwarded ones (the trigger's, or every header the
    Python SDK got): what each delivery of the run carries, the protocol's headers left out."""
    return [(n, v) for n, v in forward if not n.startswith("upstash-") and n not in OWN]


def merge(*lists: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Header lists joined, a later list's value replacing an earlier one of the same name."""
    out: dict[str, tuple[str, str]] = {}
    for pairs in lists:
        for name, value in pairs:
            out[name.lower()] = (name, value)
    return list(out.values())


def step_of(body: bytes) -> dict[str, Any] | None:
    """The step a message's body describes (``{"stepId", "stepName", "stepType", "out", ...}``), if it
    is one."""
    try:
        step = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return step if isinstance(step, dict) and isinstance(step.get("stepType"), str) else None


def history_body(initial: bytes, init_id: str, entries: Iterable[tuple[str, bytes]]) -> bytes:
    """The body of a delivery to the workflow URL: the run's first payload, then ``entries``
    (message id, body) in the order they were published."""
    items = [(init_id, initial), *entries]
    return json.dumps([{"messageId": mid, "body": base64.b64encode(body).decode(), "callType": "step"}
                       for mid, body in items]).encode()


def wait_result(step: Mapping[str, Any], event_id: str, data: bytes | None) -> bytes:
    """The step a ``waitForEvent`` ends with (``step`` as the wait gave it, with its ``timeout``): the
    event's body (base64) when it was notified, none and ``waitTimeout: true`` when its time ran out."""
    result: dict[str, Any] = {**step, "waitEventId": event_id, "waitTimeout": data is None}
    if data is not None:
        result["out"] = base64.b64encode(data).decode()
    return json.dumps(result).encode()


def header_pairs(given: Any) -> list[tuple[str, str]]:
    """Headers given as a JSON object of ``name: value`` or ``name: [values]`` (a wait's
    ``timeoutHeaders``) as lower-case pairs, vendor prefixes made neutral."""
    if not isinstance(given, dict):
        return []
    out = []
    for name, value in given.items():
        lower = str(name).lower()
        if lower.startswith("upstash-"):
            lower = PREFIX + lower[len("upstash-"):]
        for one in value if isinstance(value, list) else [value]:
            out.append((lower, str(one)))
    return out

