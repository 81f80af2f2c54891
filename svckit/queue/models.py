"""Models of the queue service interface (spec area D): workflow runs, steps, DLQ, resume result.

Field names follow the wire (camelCase) through aliases, with snake_case attributes; models accept
either. Enum-typed fields accept unknown values as plain ``str`` (new step types and states keep
appearing), and unknown extra fields are kept.
"""

from __future__ import annotations

import base64
from datetime import datetime, timezone
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic.alias_generators import to_camel


class RunState(str, Enum):
    """Workflow run states (also the values of the ``state`` filter)."""

    RUN_STARTED = "RUN_STARTED"
    RUN_SUCCESS = "RUN_SUCCESS"
    RUN_FAILED = "RUN_FAILED"
    RUN_CANCELED = "RUN_CANCELED"


class StepState(str, Enum):
    STEP_SUCCESS = "STEP_SUCCESS"
    STEP_RETRY = "STEP_RETRY"
    STEP_FAILED = "STEP_FAILED"
    STEP_PROGRESS = "STEP_PROGRESS"
    STEP_CANCELED = "STEP_CANCELED"


class EventState(str, Enum):
    """States of an entry of the events log (``GET /v2/events``; the qstash SDK's ``LogState``). The
    sandbox writes one event per state each message goes through: CREATED, ACTIVE (an attempt in
    flight), ERROR and RETRY (a retry follows), DELIVERED, FAILED (into the DLQ) or CANCELED."""

    CREATED = "CREATED"
    ACTIVE = "ACTIVE"
    RETRY = "RETRY"
    ERROR = "ERROR"
    DELIVERED = "DELIVERED"
    FAILED = "FAILED"
    CANCEL_REQUESTED = "CANCEL_REQUESTED"
    CANCELED = "CANCELED"
    IN_PROGRESS = "IN_PROGRESS"


class StepType(str, Enum):
    INITIAL = "Initial"
    RUN = "Run"
    SLEEP_FOR = "SleepFor"
    SLEEP_UNTIL = "SleepUntil"
    CALL = "Call"
    WAIT = "Wait"
    NOTIFY = "Notify"
    INVOKE = "Invoke"


class CallType(str, Enum):
    STEP = "step"
    TO_CALLBACK = "toCallback"
    FROM_CALLBACK = "fromCallback"


class StepGroupType(str, Enum):
    SEQUENTIAL = "sequential"
    PARALLEL = "parallel"


def _open(default: Any = ..., **kw: Any) -> Any:
    # left_to_right: the enum first, then plain str (smart mode would always choose str).
    return Field(default, union_mode="left_to_right", **kw)


def ms_to_datetime(ms: int | None) -> datetime | None:
    """Unix milliseconds -> aware UTC datetime (None stays None)."""
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow", frozen=True)

    def to_wire(self) -> dict[str, Any]:
        """The model as the server sends it (camelCase, absent optionals left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class Step(_Wire):
    """One step of a run. ``step_id`` is None on the Initial step; ``out`` is the step's output as the
    server stores it (a JSON text in the sandbox), present on steps that produced one."""

    step_id: int | None = None
    step_name: str
    step_type: StepType | str = _open()
    call_type: CallType | str = _open(CallType.STEP)
    message_id: str | None = None
    out: str | None = None
    concurrent: int = 1
    state: StepState | str = _open()
    created_at: int

    @property
    def created(self) -> datetime:
        return ms_to_datetime(self.created_at)  # type: ignore[return-value]


class StepGroup(_Wire):
    """Steps that ran one after another (``sequential``) or side by side (``parallel``)."""

    type: StepGroupType | str = _open()
    steps: list[Step] = Field(default_factory=list)


class FailureFunctionCall(_Wire):
    """The call of a failed run's failure function (the workflow SDK's ``FailureFunctionLog``): its
    state (``CALLBACK_INPROGRESS``, ``CALLBACK_SUCCESS``, ``CALLBACK_FAIL``), the failure it was told
    (``fail_status``, ``fail_response``) and what it answered."""

    message_id: str | None = None
    url: str | None = None
    state: str
    fail_status: int | None = None
    fail_response: str | None = None
    dlq_id: str | None = None
    response_status: int | None = None
    response_body: str | None = None


class WorkflowRun(_Wire):
    """One workflow run (spec table D2). Several runs may share a ``workflow_run_id`` (a resumed run
    keeps it); ``workflow_run_id`` + ``workflow_run_created_at`` identify one run.

    The optional fields after ``steps`` are what the sandbox (and the real service) add beyond D2:
    the label, the flow control and retry configuration, the DLQ entry of a failed run, what the run
    returned (``workflow_run_response``, as its app sent it) and its failure function's call.
    """

    workflow_run_id: str
    workflow_url: str
    workflow_state: RunState | str = _open()
    workflow_run_created_at: int
    workflow_run_completed_at: int | None = None
    steps: list[StepGroup] = Field(default_factory=list)
    label: str | None = None
    flow_control_key: str | None = None
    flow_control_value: str | None = None
    retries: int | None = None
    dlq_id: str | None = None
    workflow_run_response: str | None = None
    failure_function: FailureFunctionCall | None = None

    @property
    def created_at(self) -> datetime:
        """``workflow_run_created_at`` as an aware UTC datetime."""
        return ms_to_datetime(self.workflow_run_created_at)  # type: ignore[return-value]

    @property
    def completed_at(self) -> datetime | None:
        return ms_to_datetime(self.workflow_run_completed_at)

    @property
    def all_steps(self) -> list[Step]:
        """Every step of every group, in order."""
        return [step for group in self.steps for step in group.steps]

    def step(self, name: str) -> Step | None:
        """The last recorded step called ``name`` (its final attempt), or None."""
        found = [s for s in self.all_steps if s.step_name == name]
        return found[-1] if found else None


class LogsPage(_Wire):
    """One page of ``GET /v2/workflows/logs``; ``cursor`` is None on the last page."""

    cursor: str | None = None
    runs: list[WorkflowRun] = Field(default_factory=list)


class ResumeResult(_Wire):
    """Reply of ``POST /v2/dlq/resume/{dlqId}`` (spec D3): the fresh run."""

    workflow_run_id: str
    workflow_created_at: int

    @property
    def created_at(self) -> datetime:
        return ms_to_datetime(self.workflow_created_at)  # type: ignore[return-value]


class _Delivery(_Wire):
    """What a DLQ entry and an event share: the message as it was delivered to the workflow URL (the
    qstash SDK's ``Message`` fields), and the run it belongs to."""

    message_id: str | None = None
    url: str | None = None
    method: str | None = None
    headers: dict[str, list[str]] | None = Field(None, alias="header")
    max_retries: int | None = None
    response_status: int | None = None
    response_body: str | None = None
    label: str | None = None
    flow_control_key: str | None = None
    flow_control_value: str | None = None
    parallelism: int | None = None
    rate: int | None = None
    period: int | None = Field(None, description="seconds")
    workflow_run_id: str | None = None
    workflow_url: str | None = None
    workflow_created_at: int | None = None
    topic_name: str | None = Field(None, description="the URL group it was published to")
    endpoint_name: str | None = None
    queue_name: str | None = None
    schedule_id: str | None = None

    @property
    def workflow_created(self) -> datetime | None:
        return ms_to_datetime(self.workflow_created_at)


class DlqMessage(_Delivery):
    """One DLQ entry holding a failed run: the message of the step that failed (``GET /v2/dlq``, the
    shape the qstash SDK reads). ``body`` is the run's payload; ``not_before`` the time its first
    attempt became deliverable, ``created_at`` the time it entered the DLQ (both Unix ms)."""

    dlq_id: str
    body: str | None = None
    not_before: int | None = None
    created_at: int | None = None
    caller_ip: str | None = Field(None, alias="callerIP")
    response_headers: dict[str, list[str]] | None = Field(None, alias="responseHeader")

    @property
    def created(self) -> datetime | None:
        return ms_to_datetime(self.created_at)


class DlqPage(_Wire):
    """One page of ``GET /v2/dlq``; ``cursor`` is None on the last page."""

    cursor: str | None = None
    messages: list[DlqMessage] = Field(default_factory=list)


class Event(_Delivery):
    """One entry of the events log (``GET /v2/events``): one delivery of a message and how it ended.
    ``body`` is base64 on the wire (:attr:`payload` decodes it); ``error`` and ``next_delivery_time``
    are set on a failed attempt (the latter only when a retry follows)."""

    time: int
    state: EventState | str = _open()
    error: str | None = None
    next_delivery_time: int | None = None
    body: str | None = None
    step_name: str | None = None

    @property
    def at(self) -> datetime:
        return ms_to_datetime(self.time)  # type: ignore[return-value]

    @property
    def payload(self) -> str | None:
        """The delivered body, decoded from base64 (None when there was none)."""
        return None if self.body is None else base64.b64decode(self.body).decode("utf-8", "replace")


class EventsPage(_Wire):
    """One page of ``GET /v2/events``, newest first; ``cursor`` is None on the last page."""

    cursor: str | None = None
    events: list[Event] = Field(default_factory=list)


class RunsStarted(_Wire):
    """Reply of the bulk resume and restart (``POST /v2/dlq/resume``, ``/v2/dlq/restart``): the fresh
    runs, in the order of the DLQ ids given."""

    workflow_runs: list[ResumeResult] = Field(default_factory=list)


# -- messages (the local QStash: svckit/queue/messaging.py) -------------------------------------------
class Published(_Wire):
    """What a publish, an enqueue or a batch item answers: the message's id (one per endpoint of a URL
    group, each with its ``url``), and whether it was a duplicate of one published before."""

    message_id: str
    url: str | None = None
    deduplicated: bool = False


class Message(_Wire):
    """A message waiting for delivery (``GET /v2/messages/{id}``); ``not_before`` and ``created_at`` are
    Unix ms, ``headers`` what the destination gets."""

    message_id: str
    url: str
    method: str = "POST"
    headers: dict[str, list[str]] | None = Field(None, alias="header")
    body: str | None = None
    body_base64: str | None = None
    max_retries: int | None = None
    not_before: int | None = None
    created_at: int | None = None
    topic_name: str | None = None
    endpoint_name: str | None = None
    queue_name: str | None = None
    schedule_id: str | None = None
    callback: str | None = None
    failure_callback: str | None = None
    caller_ip: str | None = Field(None, alias="callerIP")
    label: str | None = None
    flow_control_key: str | None = None

    @property
    def due(self) -> datetime | None:
        return ms_to_datetime(self.not_before)


class QueueInfo(_Wire):
    """A queue (``GET /v2/queues``): ``lag`` messages wait in it; ``parallelism`` are delivered at once."""

    name: str
    parallelism: int
    lag: int = 0
    paused: bool = False
    created_at: int | None = None
    updated_at: int | None = None


class Endpoint(_Wire):
    url: str
    name: str | None = None


class UrlGroup(_Wire):
    """A URL group (``/v2/topics``): a message published to it goes to every endpoint."""

    name: str
    endpoints: list[Endpoint] = Field(default_factory=list)
    created_at: int | None = None
    updated_at: int | None = None


class Schedule(_Wire):
    """A schedule (``/v2/schedules``): a message published to ``destination`` on ``cron``. Times Unix ms;
    ``last_schedule_states`` maps the last firing's message ids to IN_PROGRESS, SUCCESS or FAIL."""

    schedule_id: str
    destination: str
    cron: str
    method: str = "POST"
    created_at: int | None = None
    is_paused: bool = False
    body: str | None = None
    retries: int | None = None
    queue_name: str | None = None
    label: str | None = None
    callback: str | None = None
    failure_callback: str | None = None
    last_schedule_time: int | None = None
    next_schedule_time: int | None = None
    last_schedule_states: dict[str, str] | None = None
    error: str | None = None

    @property
    def next_at(self) -> datetime | None:
        return ms_to_datetime(self.next_schedule_time)


class SigningKeys(_Wire):
    """The keys deliveries are signed with (``GET /v2/keys``): give both to the endpoint's verifier."""

    current: SecretStr
    next: SecretStr
