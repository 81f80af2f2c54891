"""Messages as the store keeps them (the ``messages`` table of :mod:`svckit.sandbox.schema`) and as the
SDKs read them: a message (``GET /v2/messages/{id}``), its events (``GET /v2/events``) and its DLQ entry.

A message row holds everything its deliveries need (URL, method, the headers the destination gets,
the body, its options as JSON), its state and, while it waits, ``due_at`` (Unix ms): the delivery
engine (:mod:`svckit.sandbox.delivery.engine`) finds every message that is not final there after a
restart. The states are the SDKs' log states: CREATED, ACTIVE (an attempt in flight), RETRY,
DELIVERED, FAILED (in the DLQ), CANCELED. Each change of state writes an ``events`` row in the same
transaction.

Wire shapes: qstash 3.4.0 ``message.py`` ``parse_message_response`` and ``log.py``
``parse_logs_response``, @upstash/qstash 2.12.0 ``Message`` and ``LogEvent`` (keys the SDKs read with
``[...]`` are always present).
"""

from __future__ import annotations

import base64
import json
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from svckit.queue.models import EventState
from svckit.sandbox.delivery.options import flow_control_of

FINAL = frozenset({EventState.DELIVERED.value, EventState.FAILED.value, EventState.CANCELED.value})
WAITING = (EventState.CREATED.value, EventState.ACTIVE.value, EventState.RETRY.value)
#: what a message row is: published (or enqueued, or fired by a schedule), or a callback of one
KINDS = ("message", "callback", "failure_callback")


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex[:24]}"


def canonical(name: str) -> str:
    """A header name in its usual spelling (``x-tenant`` -> ``X-Tenant``), as the SDKs show them."""
    return "-".join(part.capitalize() for part in name.split("-"))


@dataclass
class NewMessage:
    """A message about to be kept: what :func:`insert_message` writes."""

    url: str
    body: bytes
    method: str = "POST"
    headers: list[tuple[str, str]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    max_retries: int = 3
    not_before: int = 0
    kind: str = "message"
    source_seq: int | None = None
    topic_name: str | None = None
    endpoint_name: str | None = None
    queue_name: str | None = None
    schedule_id: str | None = None
    caller_ip: str | None = None
    label: str | None = None
    flow_control_key: str | None = None
    flow_control_value: str | None = None
    message_id: str = field(default_factory=new_message_id)
    #: a message of a served workflow run (:mod:`svckit.sandbox.workflow`): its run, the place of its
    #: step in the run's history (None: not in it), its call type (step, toCallback, fromCallback,
    #: failureCall) and the name of the step it carries (what its events are shown under)
    run_seq: int | None = None
    history_no: int | None = None
    call_type: str | None = None
    step_name: str | None = None


def copy_of(row: Any, **changes: Any) -> NewMessage:
    """A kept message (a ``messages`` row) as a new one, to deliver again: its fields under a new id,
    due now; ``changes`` replace fields."""
    kept = dict(row)  # a row's ``in`` looks among its values, not its columns
    fields = {k: kept[k] for k in NewMessage.__dataclass_fields__ if k in kept and k != "message_id"}
    fields.update(headers=json.loads(kept["headers"]), options=json.loads(kept["options"]), not_before=0)
    return NewMessage(**{**fields, **changes})


#: what the delivery engine takes of a kept message: seq, due (Unix ms), queue, flow control key and value
Waiting = tuple[int, int, str | None, str | None, str | None]


def waiting_of(row: Any) -> Waiting:
    """A message row (or the columns of one) as the delivery engine takes it."""
    return (row["seq"], row["due_at"], row["queue_name"], row["flow_control_key"], row["flow_control_value"])


def insert_message(db: sqlite3.Connection, message: NewMessage, now: int) -> Waiting:
    """Keep ``message`` (inside the caller's transaction), due at its ``not_before`` or now, with its
    CREATED event; returns it as the delivery engine takes it (once the transaction committed)."""
    row = asdict(message)
    row["headers"] = json.dumps(message.headers)
    row["options"] = json.dumps(message.options)
    row.update(created_at=now, state=EventState.CREATED.value, due_at=max(now, message.not_before),
               not_before=message.not_before or now)
    names = list(row)
    seq = db.execute(f"INSERT INTO messages ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                     [row[n] for n in names]).lastrowid
    add_event(db, seq, message.message_id, EventState.CREATED.value, now)
    return waiting_of({**row, "seq": int(seq)})  # type: ignore[arg-type]


def add_event(db: sqlite3.Connection, seq: int, message_id: str, state: str, now: int, *, error: str | None = None,
              status: int | None = None, next_at: int | None = None) -> None:
    db.execute("INSERT INTO events (message_seq, time, message_id, state, error, response_status, "
               "next_delivery_time) VALUES (?, ?, ?, ?, ?, ?, ?)", (seq, now, message_id, state, error, status, next_at))


def cancel_waiting(db: sqlite3.Connection, where: str, args: Sequence[Any], now: int) -> list[int]:
    """Cancel the waiting messages that ``where`` (SQL over ``messages``) selects, each with its CANCELED
    event, inside the caller's transaction; their seqs, for the delivery engine to forget."""
    rows = db.execute(f"SELECT seq, message_id FROM messages WHERE state IN ({','.join('?' * len(WAITING))})"
                      + (f" AND {where}" if where else ""), (*WAITING, *args)).fetchall()
    for row in rows:
        db.execute("UPDATE messages SET state = ?, due_at = NULL WHERE seq = ?", (EventState.CANCELED.value, row["seq"]))
        add_event(db, row["seq"], row["message_id"], EventState.CANCELED.value, now)
    return [row["seq"] for row in rows]


# -- wire shapes ----------------------------------------------------------------------------------
def _present(wire: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in wire.items() if v is not None}


def body_wire(body: bytes | None, name: str = "body") -> dict[str, str]:
    """``body`` as text when it is UTF-8, else as ``<name>Base64``."""
    if body is None:
        return {}
    try:
        return {name: body.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{name}Base64": base64.b64encode(body).decode()}


def header_map(pairs: list[tuple[str, str]] | list[list[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in pairs:
        out.setdefault(canonical(name), []).append(value)
    return out


REDACTED = "REDACTED"


def _shown(row: Any) -> tuple[dict[str, list[str]], bytes | None]:
    """The headers and body of a message as the API shows them (its ``Upstash-Redact-Fields`` applied:
    the delivery itself is never redacted)."""
    redact = json.loads(row["options"]).get("redact") or []
    headers = header_map(json.loads(row["headers"]))
    for name in headers:
        if "header" in redact or f"header[{name.lower()}]" in {r.lower() for r in redact}:
            headers[name] = [REDACTED]
    body = REDACTED.encode() if "body" in redact and row["body"] is not None else row["body"]
    return headers, body


def _flow_control(row: Any) -> dict[str, Any]:
    key = row["flow_control_key"]
    if key is None:
        return {}
    fc = flow_control_of(key, row["flow_control_value"])
    return _present({"flowControlKey": key, "flowControlValue": fc.value, "parallelism": fc.parallelism,
                     "rate": fc.rate, "period": int(fc.period) if fc.value and "period" in fc.value else None})


def message_wire(row: Any) -> dict[str, Any]:
    """A message as ``GET /v2/messages/{id}`` answers it (both SDKs' ``Message``)."""
    options = json.loads(row["options"])
    labels = row["label"].split(",") if row["label"] else None
    headers, body = _shown(row)
    return _present({
        "messageId": row["message_id"], "url": row["url"], "topicName": row["topic_name"],
        "endpointName": row["endpoint_name"], "queueName": row["queue_name"], "method": row["method"],
        "header": headers, **body_wire(body),
        "maxRetries": row["max_retries"], "retryDelayExpression": options.get("retry_delay"),
        "notBefore": row["not_before"], "createdAt": row["created_at"],
        "callback": options.get("callback", {}).get("url"), "failureCallback": options.get("failure_callback", {}).get("url"),
        "scheduleId": row["schedule_id"], "callerIP": row["caller_ip"], "callerIp": row["caller_ip"],
        "label": row["label"], "labels": labels, **_flow_control(row),
    })


def message_event_wire(row: Any) -> dict[str, Any]:
    """An event of a message (``GET /v2/events``): the event's columns joined with its message's."""
    options = json.loads(row["options"])
    headers, body = _shown(row)
    return _present({
        "time": row["time"], "messageId": row["message_id"], "state": row["state"], "error": row["error"],
        "nextDeliveryTime": row["next_delivery_time"], "url": row["url"], "topicName": row["topic_name"],
        "endpointName": row["endpoint_name"], "queueName": row["queue_name"], "scheduleId": row["schedule_id"],
        "header": headers, "body": None if body is None else base64.b64encode(body).decode(),
        "responseStatus": row["response_status"], "method": row["method"], "maxRetries": row["max_retries"],
        "retryDelayExpr": options.get("retry_delay"), "label": row["label"], **_flow_control(row),
    })
