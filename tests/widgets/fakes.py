"""In-memory stand-ins for the queue and vector clients, speaking the client contract (real models).

The widgets' unit tests use these where the sandbox cannot serve the case cheaply (thousands of runs);
``FakeQueue`` behaves like the service on what the timeline relies on, and
``tests/widgets/test_timeline_fake_parity.py`` runs the same scenarios against it and against the real
client on the sandbox and compares what they answer."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from svckit.errors import BadRequest, NotFound, UnprocessableEntity
from svckit.queue.client import Listings
from svckit.queue.models import DlqMessage, DlqPage, LogsPage, ResumeResult, WorkflowRun
from svckit.queue.protocol import MAX_DLQ_COUNT, _logs_params, build_dlq_request, run_headers
from svckit.vector.models import IndexInfo, QueryResult, RangeResult, VectorRecord

T0 = 1_763_800_000_000  # ms


def make_run(i: int, state: str, *, run_id: str | None = None, created: int | None = None,
             label: str | None = None, parallel: bool = True, dlq_id: str | None = None,
             url: str | None = None, **config: Any) -> WorkflowRun:
    """A run shaped like the sandbox's: an Initial step, a retried fetch, three parallel shards (when
    ``parallel``), a report step ending the way ``state`` says. ``config``: retries, flow control."""
    created = T0 + i * 60_000 if created is None else created
    groups: list[dict[str, Any]] = [
        {"type": "sequential", "steps": [{"stepName": "init", "stepType": "Initial", "callType": "step",
                                           "state": "STEP_SUCCESS", "createdAt": created, "concurrent": 1,
                                           "messageId": f"m{i}-0"}]},
        {"type": "sequential", "steps": [
            {"stepId": 1, "stepName": "fetch", "stepType": "Run", "callType": "step", "state": "STEP_RETRY",
             "createdAt": created + 1000, "concurrent": 1, "messageId": f"m{i}-1"},
            {"stepId": 1, "stepName": "fetch", "stepType": "Run", "callType": "step", "state": "STEP_SUCCESS",
             "createdAt": created + 3000, "concurrent": 1, "out": '{"rows": 42}', "messageId": f"m{i}-2"}]},
    ]
    if parallel:
        groups.append({"type": "parallel", "steps": [
            {"stepId": 2 + k, "stepName": f"shard-{k}", "stepType": "Run", "callType": "step",
             "state": "STEP_SUCCESS", "createdAt": created + 5000 + 10 * k, "concurrent": 3,
             "out": f'"shard {k} ok"', "messageId": f"m{i}-p{k}"} for k in range(3)]})
    last_state = {"RUN_FAILED": "STEP_FAILED", "RUN_STARTED": "STEP_PROGRESS"}.get(state, "STEP_SUCCESS")
    groups.append({"type": "sequential", "steps": [
        {"stepId": 9, "stepName": "report", "stepType": "Run", "callType": "step", "state": last_state,
         "createdAt": created + 9000, "concurrent": 1, "messageId": f"m{i}-9"}]})
    completed = None if state == "RUN_STARTED" else created + 12_000
    return WorkflowRun.model_validate({
        "workflowRunId": run_id or f"wfr_{i:04d}", "workflowUrl": url or f"http://127.0.0.1:9/flow/{i % 3}",
        "workflowState": state, "workflowRunCreatedAt": created, "workflowRunCompletedAt": completed,
        "steps": groups, "label": label, "dlqId": dlq_id, **config})


#: the run settings a resume or restart keeps unless an override replaces them
_CONFIG = ("retries", "flow_control_key", "flow_control_value")


class FakeQueue(Listings):
    """The queue client's workflow and DLQ methods over lists in memory, as the service answers them:

    - the logs take every filter of ``Queue.workflow_logs`` (``workflow_created_at`` too), validated by
      the client's own protocol code, so a bad argument fails here as it does there;
    - lists are newest first (ties: the run made last first) and paged by opaque cursors the fake hands
      out (a cursor it did not hand out is a 400, ``BadRequest``); ``dlq()`` pages too, 100 at most;
    - resume and restart (one or many) keep the failed run's label, retries and flow control unless an
      override replaces them, consume the DLQ entry (the old run loses its ``dlq_id``), and make a
      fresh run (which the fake finishes at once, RUN_SUCCESS: it executes nothing);
    - unknown ids are ``NotFound``; canceling a run that is not in progress is ``UnprocessableEntity``.

    ``dlq``: the DLQ entries (default: one per failed run); ``dlq_ids_on_runs``: runs carry their DLQ
    id (the sandbox sends it) instead of leaving the timeline to find it in the DLQ. ``calls`` records
    each call by name and arguments."""

    def __init__(self, runs: Sequence[WorkflowRun], *, dlq_ids_on_runs: bool = False,
                 dlq: Sequence[DlqMessage] | None = None) -> None:
        self.calls: list[tuple[str, dict]] = []
        self.dlq_ids_on_runs = dlq_ids_on_runs
        self._runs: list[WorkflowRun] = []  # index = the order the runs were made (the service's seq)
        self._cursors: dict[str, tuple[int, str]] = {}
        if dlq is None:
            dlq = [self._entry(f"dlq-{r.workflow_run_id}-{r.workflow_run_created_at}", r,
                               r.workflow_run_completed_at or r.workflow_run_created_at)
                   for r in runs if r.workflow_state == "RUN_FAILED"]
        self.dlq_entries: dict[str, DlqMessage] = {m.dlq_id: m for m in dlq}
        held = {(m.workflow_run_id, m.workflow_created_at): m.dlq_id for m in dlq}
        for run in runs:
            self._runs.append(run.model_copy(update={
                "dlq_id": held.get((run.workflow_run_id, run.workflow_run_created_at))}))

    @property
    def runs(self) -> list[WorkflowRun]:
        """The runs as the logs show them (with or without their DLQ ids)."""
        return [r if self.dlq_ids_on_runs else r.model_copy(update={"dlq_id": None}) for r in self._runs]

    # -- paging ------------------------------------------------------------------------------------
    def _page(self, rows: list[tuple[tuple[int, str], Any]], cursor: str | None, count: int) -> tuple[list, str | None]:
        """``rows`` (sort key, item), newest first after ``cursor``; the next opaque cursor or None."""
        rows = sorted(rows, key=lambda row: row[0], reverse=True)
        if cursor is not None:
            if cursor not in self._cursors:
                raise BadRequest("cursor: not a cursor returned by this server", status=400)
            after = self._cursors[cursor]
            rows = [row for row in rows if row[0] < after]
        page = rows[:count]
        if len(rows) <= count:
            return [item for _, item in page], None
        token = uuid.uuid4().hex
        self._cursors[token] = page[-1][0]
        return [item for _, item in page], token

    # -- workflow runs -----------------------------------------------------------------------------
    def workflow_logs(self, **filters: Any) -> LogsPage:
        self.calls.append(("logs", {k: v for k, v in filters.items() if v is not None}))
        params = _logs_params(**filters)  # the client's validation and wire values
        tests = {"workflowRunId": lambda r, v: r.workflow_run_id == v,
                 "workflowUrl": lambda r, v: r.workflow_url == v,
                 "workflowCreatedAt": lambda r, v: r.workflow_run_created_at == int(v),
                 "state": lambda r, v: getattr(r.workflow_state, "value", r.workflow_state) == v,
                 "fromDate": lambda r, v: r.workflow_run_created_at >= int(v),
                 "toDate": lambda r, v: r.workflow_run_created_at <= int(v),
                 "label": lambda r, v: r.label == v}
        rows = [((r.workflow_run_created_at, f"{seq:012d}"), r) for seq, r in enumerate(self.runs)
                if all(tests[name](r, value) for name, value in params.items() if name in tests)]
        runs, cursor = self._page(rows, params.get("cursor"), int(params.get("count", 10)))
        return LogsPage(cursor=cursor, runs=runs)

    def cancel(self, run_id: str) -> None:
        self.calls.append(("cancel", {"run_id": run_id}))
        mine = [k for k, r in enumerate(self._runs) if r.workflow_run_id == run_id]
        if not mine:
            raise NotFound(f"no workflow run {run_id!r}", status=404)
        started = [k for k in mine if self._runs[k].workflow_state == "RUN_STARTED"]
        if not started:
            raise UnprocessableEntity(f"workflow run {run_id!r} is not in progress", status=422)
        for k in started:
            self._runs[k] = self._runs[k].model_copy(update={"workflow_state": "RUN_CANCELED"})

    # -- the DLQ -----------------------------------------------------------------------------------
    @staticmethod
    def _entry(dlq_id: str, run: WorkflowRun, entered: int) -> DlqMessage:
        return DlqMessage(dlq_id=dlq_id, workflow_run_id=run.workflow_run_id, workflow_url=run.workflow_url,
                          url=run.workflow_url, workflow_created_at=run.workflow_run_created_at, created_at=entered,
                          label=run.label, max_retries=run.retries, flow_control_key=run.flow_control_key,
                          flow_control_value=run.flow_control_value)

    def dlq(self, cursor: str | None = None, count: int | None = None, **filters: Any) -> DlqPage:
        self.calls.append(("dlq", {"cursor": cursor, "count": count, **filters}))
        params = build_dlq_request(cursor, count, **filters).params or {}
        tests = {"workflowRunId": lambda m, v: m.workflow_run_id == v,
                 "workflowUrl": lambda m, v: m.workflow_url in ([v] if isinstance(v, str) else v),
                 "workflowCreatedAt": lambda m, v: m.workflow_created_at == int(v),
                 "label": lambda m, v: m.label in ([v] if isinstance(v, str) else v)}
        unknown = set(params) - set(tests) - {"cursor", "count"}
        if unknown:  # never answer as if a filter were applied when it is not
            raise NotImplementedError(f"FakeQueue.dlq does not filter by {', '.join(sorted(unknown))}")
        rows = [((m.created_at or 0, m.dlq_id), m) for m in self.dlq_entries.values()
                if all(tests[name](m, value) for name, value in params.items() if name in tests)]
        messages, nxt = self._page(rows, params.get("cursor"), int(params.get("count", MAX_DLQ_COUNT)))
        return DlqPage(cursor=nxt, messages=messages)

    def _consume(self, dlq_ids: Sequence[str]) -> list[WorkflowRun]:
        missing = [d for d in dict.fromkeys(dlq_ids) if d not in self.dlq_entries]
        if missing:  # checked first: nothing starts
            raise NotFound(f"no DLQ entry {', '.join(repr(m) for m in missing)}", status=404)
        failed = []
        for dlq_id in dlq_ids:
            self.dlq_entries.pop(dlq_id)
            k = next(k for k, r in enumerate(self._runs) if r.dlq_id == dlq_id)
            self._runs[k] = self._runs[k].model_copy(update={"dlq_id": None})
            failed.append(self._runs[k])
        return failed

    def _from_dlq(self, name: str, dlq_ids: Sequence[str], overrides: dict[str, Any]) -> list[ResumeResult]:
        self.calls.append((name, {"dlq_ids": list(dlq_ids), **overrides}))
        run_headers(**overrides)  # the client's validation of the overrides
        results = []
        for old in self._consume(dlq_ids):
            created = max(r.workflow_run_created_at for r in self._runs) + 1000
            config = {k: overrides[k] if overrides.get(k) is not None else getattr(old, k) for k in _CONFIG}
            new = make_run(0, "RUN_SUCCESS", run_id=overrides.get("run_id") or old.workflow_run_id,
                           created=created, label=old.label, url=old.workflow_url, **config)
            self._runs.append(new)
            results.append(ResumeResult(workflow_run_id=new.workflow_run_id, workflow_created_at=created))
        return results

    def resume(self, dlq_id: str, **overrides: Any) -> ResumeResult:
        return self._from_dlq("resume", [dlq_id], overrides)[0]

    def resume_many(self, dlq_ids: Sequence[str], **overrides: Any) -> list[ResumeResult]:
        return self._from_dlq("resume_many", dlq_ids, overrides)

    def restart_many(self, dlq_ids: Sequence[str], **overrides: Any) -> list[ResumeResult]:
        return self._from_dlq("restart_many", dlq_ids, overrides)

    def delete_dlq_many(self, dlq_ids: Sequence[str]) -> int:
        self.calls.append(("delete_dlq_many", {"dlq_ids": list(dlq_ids)}))
        present = [d for d in dict.fromkeys(dlq_ids) if d in self.dlq_entries]
        self._consume(present)
        return len(present)


class RecordingVector:
    """Stands in for svckit.vector.Vector (it satisfies VectorQueries): records each query_data call and
    answers with two fixed hits, stored as the index's only vectors."""

    HITS = ({"id": "doc-7", "score": 0.9, "data": "sourdough"}, {"id": "doc-6", "score": 0.5})

    def __init__(self, fail_with: Exception | None = None) -> None:
        self.calls: list[dict] = []
        self.fail_with = fail_with

    def query_data(self, data, **kw) -> list[QueryResult] | list[list[QueryResult]]:
        self.calls.append({"data": data, **kw})
        if self.fail_with is not None:
            raise self.fail_with
        one = [QueryResult.model_validate(h) for h in self.HITS]
        return [one for _ in data] if isinstance(data, list) and len(data) > 1 else one

    def _records(self) -> list[VectorRecord]:
        return [VectorRecord(id=h["id"], data=h.get("data")) for h in sorted(self.HITS, key=lambda h: h["id"])]

    def fetch(self, ids=None, **kw) -> list[VectorRecord | None]:
        by_id = {r.id: r for r in self._records()}
        return [by_id.get(i) for i in ids]

    def range(self, cursor="", limit=100, **kw) -> RangeResult:
        return RangeResult(next_cursor="", vectors=[r for r in self._records() if r.id >= cursor][:limit])

    def list_namespaces(self) -> list[str]:
        return [""]

    def info(self) -> IndexInfo:
        return IndexInfo.model_validate({"vectorCount": len(self.HITS), "namespaces": {"": {"vectorCount": 2}}})
