"""Client of the queue service interface (spec area D): workflow runs, the DLQ (list, get, delete,
resume, restart, retry), cancel, the events log, and messages (publish, enqueue, queues, URL groups,
schedules, signing keys).

Every public name is imported on first use (PEP 562, :mod:`svckit._lazy`): importing ``svckit.queue.models``
loads no client, transport or HTTP library.
"""

from typing import TYPE_CHECKING

from svckit._lazy import lazy_exports

if TYPE_CHECKING:  # the public names, each imported on first use (svckit/_lazy.py)
    from svckit.queue.client import AsyncQueue, Queue, WorkflowRuns
    from svckit.queue.models import (
        CallType,
        DlqMessage,
        DlqPage,
        Endpoint,
        Event,
        EventsPage,
        EventState,
        LogsPage,
        Message,
        Published,
        QueueInfo,
        ResumeResult,
        RunState,
        Schedule,
        SigningKeys,
        Step,
        StepGroup,
        StepGroupType,
        StepState,
        StepType,
        UrlGroup,
        WorkflowRun,
    )
    from svckit.queue.protocol import MAX_DLQ_COUNT, MAX_EVENTS_COUNT, MAX_LOGS_COUNT, to_unix_ms

__getattr__, __dir__ = lazy_exports(__name__, __file__)

__all__ = [
    "MAX_DLQ_COUNT",
    "MAX_EVENTS_COUNT",
    "MAX_LOGS_COUNT",
    "AsyncQueue",
    "CallType",
    "DlqMessage",
    "DlqPage",
    "Endpoint",
    "Event",
    "EventState",
    "EventsPage",
    "LogsPage",
    "Message",
    "Published",
    "Queue",
    "QueueInfo",
    "ResumeResult",
    "RunState",
    "Schedule",
    "SigningKeys",
    "Step",
    "StepGroup",
    "StepGroupType",
    "StepState",
    "StepType",
    "UrlGroup",
    "WorkflowRun",
    "WorkflowRuns",
    "to_unix_ms",
]
