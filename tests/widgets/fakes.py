"""In-memory stand-ins for the queue and vector clients, speaking the client contract (real models).

The widgets' unit tests use these to stay fast and deterministic; the sandbox tests in this folder
drive the same widgets against the real clients over HTTP."""

from __future__ import annotations

import itertools
from typing import Any

from svckit.queue.models import DlqMessage, DlqPage, LogsPage, ResumeResult, WorkflowRun
from svckit.vector.models import IndexInfo, QueryResult, RangeResult, VectorRecord

T0 = 1_763_800_000_000  # ms


def make_run(i: int, state: str, *, run_id: str | None = None, created: int | None = None,
             label: str | None = None, parallel: bool = True, dlq_id: str | None = None) -> WorkflowRun:
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
        "workflowRunId": run_id or f"wfr_{i:04d}", "workflowUrl": f"http://127.0.0.1:9/flow/{i % 3}",
        "workflowState": state, "workflowRunCreatedAt": created, "workflowRunCompletedAt": completed,
        "steps": groups, "label": label, "dlqId": dlq_id})


class FakeQueue:
    """Filters, cursor paging (10 per page) and resume like the service, over a list of runs."""

    def __init__(self, runs: list[WorkflowRun], *, dlq_ids_on_runs: bool = False) -> None:
        self.runs = list(runs)
        self.calls: list[tuple[str, dict]] = []
        self.dlq_entries = {f"dlq-{r.workflow_run_id}-{r.workflow_run_created_at}": r
                            for r in runs if r.workflow_state == "RUN_FAILED"}
        if dlq_ids_on_runs:
            self.runs = [r.model_copy(update={"dlq_id": d}) if r.workflow_state == "RUN_FAILED" else r
                         for r in self.runs for d in [f"dlq-{r.workflow_run_id}-{r.workflow_run_created_at}"]]
        self._clock = itertools.count(T0 + 10_000_000, 1000)

    def workflow_logs(self, cursor=None, workflow_run_id=None, workflow_url=None, workflow_created_at=None,
                      state=None, from_date=None, to_date=None, count=None, label=None) -> LogsPage:
        self.calls.append(("logs", {k: v for k, v in locals().items() if k != "self" and v is not None}))
        runs = sorted(self.runs, key=lambda r: r.workflow_run_created_at, reverse=True)
        runs = [r for r in runs
                if (workflow_run_id is None or r.workflow_run_id == workflow_run_id)
                and (workflow_url is None or r.workflow_url == workflow_url)
                and (state is None or r.workflow_state == state)
                and (label is None or r.label == label)
                and (from_date is None or r.workflow_run_created_at >= from_date)
                and (to_date is None or r.workflow_run_created_at <= to_date)]
        start = int(cursor or 0)
        n = min(count or 10, 10)
        page = runs[start:start + n]
        nxt = str(start + n) if start + n < len(runs) else None
        return LogsPage(cursor=nxt, runs=page)

    def dlq(self, cursor=None, count=None) -> DlqPage:
        self.calls.append(("dlq", {}))
        msgs = [DlqMessage(dlq_id=d, workflow_run_id=r.workflow_run_id, workflow_url=r.workflow_url,
                           workflow_created_at=r.workflow_run_created_at) for d, r in self.dlq_entries.items()]
        return DlqPage(cursor=None, messages=msgs)

    def resume(self, dlq_id, flow_control_key=None, flow_control_value=None, retries=None, run_id=None):
        self.calls.append(("resume", {"dlq_id": dlq_id, "flow_control_key": flow_control_key,
                                      "flow_control_value": flow_control_value, "retries": retries,
                                      "run_id": run_id}))
        old = self.dlq_entries.pop(dlq_id)
        created = next(self._clock)
        new = make_run(0, "RUN_SUCCESS", run_id=run_id or old.workflow_run_id, created=created,
                       label=old.label)
        self.runs.append(new)
        return ResumeResult(workflow_run_id=new.workflow_run_id, workflow_created_at=created)

    def resume_many(self, dlq_ids, **overrides) -> list[ResumeResult]:
        return [self.resume(d, **overrides) for d in dlq_ids]

    def restart_many(self, dlq_ids, **overrides) -> list[ResumeResult]:
        self.calls.append(("restart_many", {"dlq_ids": list(dlq_ids), **overrides}))
        return [self.resume(d) for d in dlq_ids]

    def delete_dlq_many(self, dlq_ids) -> int:
        self.calls.append(("delete_dlq_many", {"dlq_ids": list(dlq_ids)}))
        return sum(self.dlq_entries.pop(d, None) is not None for d in dlq_ids)

    def cancel(self, run_id) -> None:
        self.calls.append(("cancel", {"run_id": run_id}))
        self.runs = [r.model_copy(update={"workflow_state": "RUN_CANCELED"})
                     if r.workflow_run_id == run_id and r.workflow_state == "RUN_STARTED" else r for r in self.runs]


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
