"""Client of the queue service interface (spec area D): workflow runs, the DLQ (list, get, delete,
resume, restart), cancel, and the events log."""

from svckit.queue.client import AsyncQueue, Queue, WorkflowRuns
from svckit.queue.models import (
    CallType,
    DlqMessage,
    DlqPage,
    Event,
    EventsPage,
    EventState,
    LogsPage,
    ResumeResult,
    RunState,
    Step,
    StepGroup,
    StepGroupType,
    StepState,
    StepType,
    WorkflowRun,
)
from svckit.queue.protocol import MAX_DLQ_COUNT, MAX_EVENTS_COUNT, MAX_LOGS_COUNT, to_unix_ms

__all__ = [
    "MAX_DLQ_COUNT",
    "MAX_EVENTS_COUNT",
    "MAX_LOGS_COUNT",
    "AsyncQueue",
    "CallType",
    "DlqMessage",
    "DlqPage",
    "Event",
    "EventState",
    "EventsPage",
    "LogsPage",
    "Queue",
    "ResumeResult",
    "RunState",
    "Step",
    "StepGroup",
    "StepGroupType",
    "StepState",
    "StepType",
    "WorkflowRun",
    "WorkflowRuns",
    "to_unix_ms",
]
