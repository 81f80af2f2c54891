"""Client of the queue service interface (spec area D): workflow runs, DLQ, resume, cancel."""

from svckit.queue.client import MAX_LOGS_COUNT, AsyncQueue, Queue, to_unix_ms
from svckit.queue.models import (
    CallType,
    DlqMessage,
    DlqPage,
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

__all__ = [
    "MAX_LOGS_COUNT",
    "AsyncQueue",
    "CallType",
    "DlqMessage",
    "DlqPage",
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
    "to_unix_ms",
]
