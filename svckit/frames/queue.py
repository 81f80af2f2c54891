"""Queue frames: workflow runs and their steps, the DLQ, the events log folded by message, waiting
messages, queues, URL groups and schedules; and how a person names a run."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import pandas as pd

from svckit.frames._columns import Column, build, models, plain
from svckit.queue.models import (
    DlqMessage,
    Event,
    EventState,
    Message,
    QueueInfo,
    RunState,
    Schedule,
    StepGroupType,
    UrlGroup,
    WorkflowRun,
)

#: how many trailing characters of a run id name it among the runs on screen (``…51Ts9a``)
SHORT_ID = 6


def run_key(run: WorkflowRun) -> str:
    """A run's identity: several runs may share a workflowRunId (a resumed run keeps it), so the key
    is ``<workflowRunId>@<workflowRunCreatedAt ms>``."""
    return f"{run.workflow_run_id}@{run.workflow_run_created_at}"


def workflow_name(url: str | None) -> str:
    """The workflow a URL serves, as people call it: the last segment of its path
    (``https://shop.example.com/api/workflows/order`` is ``order``); the host when there is no path."""
    if not url:
        return "?"
    parts = urlsplit(url)
    return parts.path.rstrip("/").rsplit("/", 1)[-1] or parts.netloc or url


def short_id(run_id: str | None) -> str:
    """The last :data:`SHORT_ID` characters of a run id: the random part, where ids differ."""
    return (run_id or "?")[-SHORT_ID:]


def run_name(url: str | None, label: str | None, run_id: str | None, *, whole_id: bool = False) -> str:
    """What a person calls a run of ``url``: its workflow (:func:`workflow_name`), its label when
    it has one, and its id, short (:func:`short_id`) unless ``whole_id``: ``order · checkout · 51Ts9a``."""
    rid = (run_id or "?") if whole_id else short_id(run_id)
    return " · ".join([workflow_name(url), *([label] if label else []), rid])


def _resumes(runs: Sequence[WorkflowRun]) -> list[int]:
    """Each run's place among the runs given that share its workflowRunId, by creation time: 0 is
    the original, 1 the first run resumed from it (through the DLQ), 2 the next, and so on."""
    times: dict[str, list[int]] = {}
    for r in runs:
        times.setdefault(r.workflow_run_id, []).append(r.workflow_run_created_at)
    for created in times.values():
        created.sort()
    return [bisect_left(times[r.workflow_run_id], r.workflow_run_created_at) for r in runs]


def _run_names(runs: Sequence[WorkflowRun], resumes: Sequence[int]) -> list[str]:
    """What a person calls each run: ``order · checkout · 51Ts9a``, and ``· resumed`` (``resumed 2``,
    ...) after a run resumed under the same id. Unique among ``runs`` whatever their order: names
    that would be equal show the whole id, and, failing that, the creation time in ms."""

    def name(r: WorkflowRun, k: int, whole_id: bool, at: bool) -> str:
        parts = [run_name(r.workflow_url, r.label, r.workflow_run_id, whole_id=whole_id)]
        parts += ["resumed" if k == 1 else f"resumed {k}"] if k else []
        return " · ".join(parts) + (f" @{r.workflow_run_created_at}" if at else "")

    names = [name(r, k, False, False) for r, k in zip(runs, resumes)]
    for at in (False, True):
        twice = {n for n, c in Counter(names).items() if c > 1}
        names = [name(r, k, True, at) if n in twice else n
                 for n, r, k in zip(names, runs, resumes)]
    return names


def _failed_step(run: WorkflowRun) -> str | None:
    return next((s.step_name for s in reversed(run.all_steps) if plain(s.state) == "STEP_FAILED"), None)

def _ms_between(start: str, end: str) -> Any:
    """A duration in ms between two Unix-ms fields of a row (None when either is missing)."""
    def get(item: Any) -> int | None:
        a, b = (item.get(f) if isinstance(item, dict) else getattr(item, f) for f in (start, end))
        return None if a is None or b is None else b - a

    return get


RUN_COLUMNS = (
    Column("key", "string", run_key),
    Column("workflow_run_id", "string"),
    Column("workflow_url", "string"),
    Column("state", "category", "workflow_state", categories=[s.value for s in RunState]),
    Column("created_at", "utc_ms", "workflow_run_created_at"),
    Column("completed_at", "utc_ms", "workflow_run_completed_at"),
    Column("duration", "duration_ms", _ms_between("workflow_run_created_at", "workflow_run_completed_at")),
    Column("groups", "Int64", lambda r: len(r.steps), "count"),
    Column("steps", "Int64", lambda r: len(r.all_steps), "count"),
    Column("failed_steps", "Int64", lambda r: sum("FAIL" in str(plain(s.state)).upper() for s in r.all_steps)),
    Column("last_step", "string", lambda r: r.all_steps[-1].step_name if r.all_steps else None),
    Column("label", "string"),
    Column("workflow", "string", lambda r: workflow_name(r.workflow_url)),
    Column("short_id", "string", lambda r: short_id(r.workflow_run_id)),
    Column("resumed", "bool"),
    Column("run_name", "string"),
    Column("failed_step", "string", _failed_step),
)


def runs_frame(runs: Any, *, newest_first: bool = False) -> pd.DataFrame:
    """Workflow runs, one row per run: ``key, workflow_run_id, workflow_url, state, created_at,
    completed_at, duration, groups, steps, failed_steps, last_step, label, workflow, short_id,
    resumed, run_name, failed_step``.

    ``runs`` is a list of ``WorkflowRun`` (or wire dicts), a ``LogsPage``, or any iterable such as
    ``q.iter_runs()``. ``key`` is :func:`run_key` (the workflowRunId is shared by a resumed run).
    ``newest_first`` orders the rows by creation, newest first (the timeline's Gantt rows).

    How a person tells the runs apart: ``workflow`` is :func:`workflow_name` of the URL, ``short_id``
    :func:`short_id`; ``resumed`` is true for a run created after another of the given runs with the
    same workflowRunId (the earliest is the original, the later ones were resumed from the DLQ);
    ``run_name`` puts them together, unique among the rows (``invoice-export · finance · 0KaY1z ·
    resumed``). ``failed_step`` is the name of the run's last STEP_FAILED step, if any.
    """
    runs = models(runs, WorkflowRun, "runs")
    if newest_first:
        runs = sorted(runs, key=lambda r: r.workflow_run_created_at, reverse=True)
    resumes = _resumes(runs)
    return build(RUN_COLUMNS, runs, resumed=[k > 0 for k in resumes], run_name=_run_names(runs, resumes))


def _step_rows(run: WorkflowRun, now: pd.Timestamp) -> list[dict[str, Any]]:
    """The rows of one run's steps, with the time to the next event and the timeline's bar.

    A step created before the run was kept from the earlier run it was resumed from (not run again):
    its bar is the instant the run started, and the groups' starts, which end the bars before them,
    count only the steps this run ran. A run none of whose steps is as late as its creation ran none
    of them itself and kept none (clocks apart, not a resume): its steps are drawn as they are."""
    completed = run.workflow_run_completed_at
    began = run.workflow_run_created_at
    if not any(s.created_at >= began for s in run.all_steps):
        began = min((s.created_at for s in run.all_steps), default=began)
    run_start = pd.Timestamp(began, unit="ms", tz="UTC")
    in_progress = plain(run.workflow_state) == RunState.RUN_STARTED.value
    starts = [min((s.created_at for s in g.steps if s.created_at >= began), default=None) for g in run.steps]
    attempts: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    for gi, g in enumerate(run.steps):
        # the next event after this group: the next group this run started later (the kept steps
        # of a resumed run keep their older times, so no negative durations)
        own = starts[gi]
        nxt = next((t for t in starts[gi + 1:] if t is not None and (own is None or t >= own)), completed)
        gtype = plain(g.type)
        for position, s in enumerate(g.steps):
            kept = s.created_at < began
            # the bar ends at the next event; inside a sequential group, at the following step
            end = g.steps[position + 1].created_at if gtype != "parallel" and position + 1 < len(g.steps) else nxt
            start = run_start if kept else pd.Timestamp(s.created_at, unit="ms", tz="UTC")
            running = end is None and in_progress and not kept
            if running:
                bar_end = max(now, start)
            elif kept or end is None:
                bar_end = start
            else:
                bar_end = max(start, pd.Timestamp(end, unit="ms", tz="UTC"))
            retries = attempts.get(s.step_name, 0)
            attempts[s.step_name] = retries + 1
            rows.append({
                "workflow_run_id": run.workflow_run_id, "group": gi, "group_type": gtype,
                "lane": position if gtype == "parallel" else 0, "step_id": s.step_id,
                "step_name": s.step_name, "step_type": s.step_type, "call_type": s.call_type,
                "state": s.state, "message_id": s.message_id, "concurrent": s.concurrent, "out": s.out,
                "created": s.created_at, "next": nxt, "start": start, "end": bar_end, "running": running,
                "position": position, "retries": retries, "kept": kept,
            })
    return rows


STEP_COLUMNS = (
    Column("workflow_run_id", "string"),
    Column("group", "Int64"),
    Column("group_type", "category", categories=[t.value for t in StepGroupType]),
    Column("lane", "Int64"),
    Column("step_id", "Int64"),
    Column("step_name", "string"),
    Column("step_type", "category"),
    Column("call_type", "category"),
    Column("state", "category"),
    Column("message_id", "string"),
    Column("concurrent", "Int64"),
    Column("out", "string"),
    Column("created_at", "utc_ms", "created"),
    Column("next_event_at", "utc_ms", "next"),
    Column("duration", "duration_ms", _ms_between("created", "next")),
    Column("start", "utc"),
    Column("end", "utc"),
    Column("running", "bool"),
    Column("position", "int64"),
    Column("retries", "int64", unit="count"),
    Column("kept", "bool"),
)


def steps_frame(run: Any, *, now: datetime | None = None) -> pd.DataFrame:
    """Steps of one run (or of several: pass a list), one row per step.

    Columns: ``workflow_run_id, group, group_type, lane, step_id, step_name, step_type, call_type,
    state, message_id, concurrent, out, created_at, next_event_at, duration, start, end, running,
    position, retries``.

    ``group`` is the step group's position; ``lane`` is the step's position inside a parallel group
    (0 for sequential steps), so a timeline can draw parallel steps side by side; ``position`` is
    the step's position inside its group whatever its type. ``duration`` is the time to the next
    event: the start of the next group that started later (a resumed run keeps the older times of
    the steps it did not run again), or the run's completion for the last group (NaT while the run
    is still going).

    The timeline's bar is ``start`` (the step's createdAt) to ``end``: the next event, except inside
    a sequential group of several steps, where it is the following step of that group. ``running``:
    the run is still going and the step has no next event, so its bar ends ``now`` (default: the
    current time). A failed or canceled run without a completion time ends its last steps where they
    started. ``retries`` counts the earlier attempts of the same step name in the run (the service
    records each failed attempt as its own STEP_RETRY entry before the next try).

    ``kept``: the step was kept from the earlier run this one was resumed from (its createdAt is before
    the run's workflowRunCreatedAt): it did not run again. Its ``created_at`` is when it ran in that
    run; its bar is the instant this run started (``start`` = ``end`` = the run's creation), not the
    time between the two runs. (A run with no step as late as its own creation kept none: clocks.)
    """
    now_ts = pd.Timestamp(now or datetime.now(UTC))
    return build(STEP_COLUMNS, [row for r in models(run, WorkflowRun, "runs") for row in _step_rows(r, now_ts)])


# -- queue: DLQ entries, the events log, messages, queues, URL groups, schedules --------------------
DLQ_COLUMNS = (
    Column("dlq_id", "string"),
    Column("workflow_run_id", "string"),
    Column("workflow_url", "string", lambda m: m.workflow_url or m.url),
    Column("label", "string"),
    Column("entered_at", "utc_ms", "created_at"),
    Column("not_before", "utc_ms"),
    Column("workflow_created_at", "utc_ms"),
    Column("response_status", "Int64"),
    Column("response_body", "string"),
    Column("max_retries", "Int64"),
    Column("message_id", "string"),
    Column("flow_control_key", "string"),
)


def dlq_frame(messages: Any) -> pd.DataFrame:
    """DLQ entries, one row per entry: ``dlq_id, workflow_run_id, workflow_url, label, entered_at,
    not_before, workflow_created_at, response_status, response_body, max_retries, message_id,
    flow_control_key``. ``messages`` is a ``DlqPage``, a list of ``DlqMessage`` (or wire dicts), or
    ``q.iter_dlq()``."""
    return build(DLQ_COLUMNS, models(messages, DlqMessage, "messages"))


_EVENT_STATES = [s.value for s in EventState]
EVENT_COLUMNS = (
    Column("time", "utc_ms"),
    Column("state", "category", categories=_EVENT_STATES),
    Column("workflow_run_id", "string"),
    Column("step_name", "string"),
    Column("message_id", "string"),
    Column("url", "string"),
    Column("label", "string"),
    Column("response_status", "Int64"),
    Column("error", "string"),
    Column("next_delivery_at", "utc_ms", "next_delivery_time"),
    Column("url_group", "string", "topic_name"),
    Column("queue", "string", "queue_name"),
    Column("schedule_id", "string"),
)


def events_frame(events: Any) -> pd.DataFrame:
    """The events log, one row per delivery: ``time, state, workflow_run_id, step_name, message_id,
    url, label, response_status, error, next_delivery_at, url_group, queue, schedule_id``; ``state``
    is a category of the event states. ``events`` is an ``EventsPage``, a list of ``Event`` (or wire
    dicts), or ``q.iter_events()``."""
    return build(EVENT_COLUMNS, models(events, Event, "events"))


#: the states that end a message; with ERROR, the events whose response status is one of its answers
_FINAL_EVENTS = ("DELIVERED", "FAILED", "CANCELED")

DELIVERY_COLUMNS = (
    Column("message_id", "string"),
    Column("url", "string"),
    Column("state", "category", categories=_EVENT_STATES),
    Column("attempts", "Int64", unit="count"),
    Column("statuses", "string", lambda m: " ".join(m["statuses"]) or None),
    Column("last_status", "Int64", lambda m: int(m["statuses"][-1]) if m["statuses"] else None),
    Column("first_at", "utc_ms"),
    Column("last_at", "utc_ms"),
    Column("next_retry_at", "utc_ms"),
    Column("in_dlq", "boolean", lambda m: m["state"] == "FAILED"),
    Column("url_group", "string"),
    Column("queue", "string"),
    Column("schedule_id", "string"),
    Column("label", "string"),
    Column("error", "string"),
)


def deliveries_frame(events: Any) -> pd.DataFrame:
    """The events log folded by message, one row per message, newest first: ``message_id, url, state,
    attempts, statuses, last_status, first_at, last_at, next_retry_at, in_dlq, url_group, queue,
    schedule_id, label, error``. ``attempts`` counts its deliveries (ACTIVE events); ``statuses`` the
    destination's answers in order (``"503 503 200"``); ``in_dlq`` is True once it FAILED. Events of
    workflow steps fold by their message too. ``events`` as :func:`events_frame` takes them."""
    rows = sorted(models(events, Event, "events"), key=lambda e: e.time)
    folded: dict[str, dict[str, Any]] = {}
    for e in rows:
        state = plain(e.state)
        m = folded.setdefault(e.message_id or "", {
            "message_id": e.message_id, "url": e.url, "state": state, "attempts": 0, "statuses": [],
            "first_at": e.time, "last_at": e.time, "next_retry_at": None, "url_group": e.topic_name,
            "queue": e.queue_name, "schedule_id": e.schedule_id, "label": e.label, "error": None})
        m["state"], m["last_at"] = state, e.time
        m["attempts"] += state == "ACTIVE"
        if e.response_status is not None and state in ("ERROR", *_FINAL_EVENTS):
            m["statuses"].append(str(e.response_status))
        m["next_retry_at"] = e.next_delivery_time if state in ("ERROR", "RETRY") else None
        if e.error:
            m["error"] = e.error
        if state == "DELIVERED":
            m["error"] = None
    return build(DELIVERY_COLUMNS, sorted(folded.values(), key=lambda m: m["last_at"], reverse=True))


MESSAGE_COLUMNS = (
    Column("message_id", "string"),
    Column("url", "string"),
    Column("method", "string"),
    Column("due", "utc_ms", "not_before"),
    Column("created_at", "utc_ms"),
    Column("max_retries", "Int64"),
    Column("url_group", "string", "topic_name"),
    Column("queue", "string", "queue_name"),
    Column("schedule_id", "string"),
    Column("label", "string"),
)


def messages_frame(messages: Any) -> pd.DataFrame:
    """Messages waiting for delivery (``q.message(id)``), one row each: ``message_id, url, method, due,
    created_at, max_retries, url_group, queue, schedule_id, label``."""
    return build(MESSAGE_COLUMNS, models(messages, Message, "messages"))


QUEUE_COLUMNS = (
    Column("name", "string"),
    Column("parallelism", "Int64"),
    Column("lag", "Int64", unit="count"),
    Column("paused", "boolean"),
    Column("created_at", "utc_ms"),
    Column("updated_at", "utc_ms"),
)


def queues_frame(queues: Any) -> pd.DataFrame:
    """Queues (``q.queues()``), one row each: ``name, parallelism, lag, paused, created_at, updated_at``."""
    return build(QUEUE_COLUMNS, models(queues, QueueInfo, "queues"))


URL_GROUP_COLUMNS = (
    Column("url_group", "string", lambda ge: ge[0].name),
    Column("endpoint_url", "string", lambda ge: ge[1].url if ge[1] else None),
    Column("endpoint_name", "string", lambda ge: ge[1].name if ge[1] else None),
    Column("created_at", "utc_ms", lambda ge: ge[0].created_at),
)


def url_groups_frame(groups: Any) -> pd.DataFrame:
    """URL groups (``q.url_groups()``), one row per endpoint: ``url_group, endpoint_url, endpoint_name,
    created_at`` (a group with no endpoint: one row, the endpoint columns empty)."""
    return build(URL_GROUP_COLUMNS, [(g, e) for g in models(groups, UrlGroup, "groups") for e in (g.endpoints or [None])])


SCHEDULE_COLUMNS = (
    Column("schedule_id", "string"),
    Column("destination", "string"),
    Column("cron", "string"),
    Column("paused", "boolean", "is_paused"),
    Column("next_at", "utc_ms", "next_schedule_time"),
    Column("last_at", "utc_ms", "last_schedule_time"),
    Column("last_states", "string",
           lambda r: ", ".join(sorted(set((r.last_schedule_states or {}).values()))) or None),
    Column("queue", "string", "queue_name"),
    Column("label", "string"),
    Column("error", "string"),
)


def schedules_frame(schedules: Any) -> pd.DataFrame:
    """Schedules (``q.schedules()``), one row each: ``schedule_id, destination, cron, paused, next_at,
    last_at, last_states, queue, label, error``."""
    return build(SCHEDULE_COLUMNS, models(schedules, Schedule, "schedules"))
