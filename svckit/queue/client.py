"""Clients of the queue service interface (spec area D), Bearer auth.

:class:`_QueueCore` validates arguments and builds requests and parses replies without I/O;
:class:`Queue` and :class:`AsyncQueue` only send. Dates in filters are ``datetime`` (a naive one is
taken as UTC) or Unix milliseconds (int).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

import httpx

from svckit._http import DEFAULT_TIMEOUT, ApiRequest, AsyncTransport, BearerAuth, RetryPolicy, SyncTransport
from svckit.account.client import decode_reply
from svckit.config import Settings
from svckit.errors import InvalidArgument, ProtocolError
from svckit.queue.models import DlqPage, LogsPage, ResumeResult, RunState, WorkflowRun

#: the spec's default and maximum of ``count`` on the logs operation.
MAX_LOGS_COUNT = 10
#: the sandbox's maximum page size of ``GET /v2/dlq`` (not in the spec).
MAX_DLQ_COUNT = 100
_STATES = tuple(s.value for s in RunState)


def to_unix_ms(argument: str, value: datetime | int) -> int:
    """``datetime`` (naive = UTC) or Unix milliseconds -> Unix milliseconds."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return int(value.timestamp() * 1000)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(argument, f"must be a datetime or Unix milliseconds (int), got {value!r}")
    if value < 0:
        raise InvalidArgument(argument, f"must not be negative, got {value}")
    return value


def _text(argument: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgument(argument, f"must be a non-empty string, got {value!r}")
    return value


def _count(argument: str, value: Any, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidArgument(argument, f"must be an integer from 1 to {maximum}, got {value!r}")
    return value


class _QueueCore:
    """Requests and reply parsing of area D, shared by the sync and async clients."""

    @staticmethod
    def logs_params(
        *, cursor: str | None = None, workflow_run_id: str | None = None, workflow_url: str | None = None,
        workflow_created_at: datetime | int | None = None, state: RunState | str | None = None,
        from_date: datetime | int | None = None, to_date: datetime | int | None = None,
        count: int | None = None, label: str | None = None,
    ) -> dict[str, str]:
        params: dict[str, Any] = {}
        if cursor is not None:
            params["cursor"] = _text("cursor", cursor)
        if workflow_run_id is not None:
            params["workflowRunId"] = _text("workflow_run_id", workflow_run_id)
        if workflow_url is not None:
            params["workflowUrl"] = _text("workflow_url", workflow_url)
        if workflow_created_at is not None:
            params["workflowCreatedAt"] = to_unix_ms("workflow_created_at", workflow_created_at)
        if state is not None:
            value = state.value if isinstance(state, RunState) else state
            if value not in _STATES:
                raise InvalidArgument("state", f"must be one of {', '.join(_STATES)}, got {state!r}")
            params["state"] = value
        if from_date is not None:
            params["fromDate"] = to_unix_ms("from_date", from_date)
        if to_date is not None:
            params["toDate"] = to_unix_ms("to_date", to_date)
        if "fromDate" in params and "toDate" in params and params["fromDate"] > params["toDate"]:
            raise InvalidArgument("from_date", "must not be after to_date")
        if count is not None:
            params["count"] = _count("count", count, MAX_LOGS_COUNT)
        if label is not None:
            params["label"] = _text("label", label)
        return {k: str(v) for k, v in params.items()}

    @classmethod
    def logs_request(cls, **filters: Any) -> ApiRequest:
        return ApiRequest("GET", "/v2/workflows/logs", params=cls.logs_params(**filters), idempotent=True)

    @staticmethod
    def resume_request(dlq_id: str, *, flow_control_key: str | None = None,
                       flow_control_value: str | None = None, retries: int | None = None,
                       run_id: str | None = None) -> ApiRequest:
        headers: dict[str, str] = {}
        if flow_control_key is not None:
            headers["Service-Flow-Control-Key"] = _text("flow_control_key", flow_control_key)
        if flow_control_value is not None:
            headers["Service-Flow-Control-Value"] = _text("flow_control_value", flow_control_value)
        if retries is not None:
            if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
                raise InvalidArgument("retries", f"must be a non-negative integer, got {retries!r}")
            headers["Service-Retries"] = str(retries)
        if run_id is not None:
            headers["Service-Workflow-RunId"] = _text("run_id", run_id)
        # Not idempotent: each resume creates a fresh run.
        return ApiRequest("POST", f"/v2/dlq/resume/{quote(_text('dlq_id', dlq_id), safe='')}", headers=headers)

    @staticmethod
    def dlq_request(cursor: str | None = None, count: int | None = None) -> ApiRequest:
        params: dict[str, str] = {}
        if cursor is not None:
            params["cursor"] = _text("cursor", cursor)
        if count is not None:
            params["count"] = str(_count("count", count, MAX_DLQ_COUNT))
        return ApiRequest("GET", "/v2/dlq", params=params, idempotent=True)

    @staticmethod
    def cancel_request(run_id: str) -> ApiRequest:
        return ApiRequest("DELETE", f"/v2/workflows/runs/{quote(_text('run_id', run_id), safe='')}",
                          idempotent=True)

    @staticmethod
    def trigger_request(url: str, body: Any = None, *, run_id: str | None = None, label: str | None = None,
                        retries: int | None = None, flow_control_key: str | None = None,
                        flow_control_value: str | None = None) -> ApiRequest:
        headers = dict(_QueueCore.resume_request("x", flow_control_key=flow_control_key,
                                                 flow_control_value=flow_control_value, retries=retries,
                                                 run_id=run_id).headers)
        if label is not None:
            headers["Service-Label"] = _text("label", label)
        content = None if body is None else json.dumps(body).encode()
        if content is not None:
            headers["Content-Type"] = "application/json"
        return ApiRequest("POST", f"/v2/trigger/{_text('url', url)}", headers=headers, content=content)

    @staticmethod
    def parse(model: Any, body: Any, what: str) -> Any:
        if not isinstance(body, Mapping):
            raise ProtocolError(f"{what}: expected a JSON object, got {type(body).__name__}")
        try:
            return model.model_validate(body)
        except ValueError as exc:
            raise ProtocolError(f"{what}: reply does not match the spec: {exc}") from None


def _settings_args(settings: Settings) -> tuple[str, str]:
    url, token = settings.require("queue_url", "queue_token")
    return url, token


def _progress(enabled: bool, desc: str) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(desc=desc, unit=" runs" if desc == "runs" else " msgs")


class Queue:
    """Synchronous client of the queue service interface (workflow logs, DLQ, resume, cancel)."""

    def __init__(self, url: str, token: str, *, timeout: float | None = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None, transport: httpx.BaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self._http = SyncTransport(self.url, BearerAuth(token), timeout=timeout, retry=retry,
                                   transport=transport)

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> Queue:
        return cls(*_settings_args(settings), **options)

    @classmethod
    def from_env(cls, **options: Any) -> Queue:
        return cls.from_settings(Settings.from_env(), **options)

    def _call(self, request: ApiRequest) -> Any:
        return decode_reply(self._http.send(request), f"{request.method} {request.path}", self._http.redact)

    def workflow_logs(self, **filters: Any) -> LogsPage:
        """One page of runs, newest first. Filters: ``cursor``, ``workflow_run_id``, ``workflow_url``,
        ``workflow_created_at``, ``state``, ``from_date``, ``to_date`` (inclusive), ``count`` (1..10),
        ``label``. Dates are datetime (naive = UTC) or Unix ms."""
        return _QueueCore.parse(LogsPage, self._call(_QueueCore.logs_request(**filters)), "workflow logs")

    def iter_runs(self, progress: bool = False, **filters: Any) -> Iterator[WorkflowRun]:
        """Every run matching ``filters``, following cursors to the end (a tqdm bar when ``progress``)."""
        bar = _progress(progress, "runs")
        try:
            while True:
                page = self.workflow_logs(**filters)
                yield from page.runs
                if bar is not None:
                    bar.update(len(page.runs))
                if not page.cursor:
                    return
                filters["cursor"] = page.cursor
        finally:
            if bar is not None:
                bar.close()

    def resume(self, dlq_id: str, *, flow_control_key: str | None = None, flow_control_value: str | None = None,
               retries: int | None = None, run_id: str | None = None) -> ResumeResult:
        """Resume the failed run of DLQ entry ``dlq_id`` as a fresh run; steps that succeeded keep their
        output and are not executed again. Each override is sent as its Service-* header only when given."""
        request = _QueueCore.resume_request(dlq_id, flow_control_key=flow_control_key,
                                            flow_control_value=flow_control_value, retries=retries, run_id=run_id)
        return _QueueCore.parse(ResumeResult, self._call(request), "resume")

    def dlq(self, cursor: str | None = None, count: int | None = None) -> DlqPage:
        """One page of DLQ entries (failed runs), newest first."""
        return _QueueCore.parse(DlqPage, self._call(_QueueCore.dlq_request(cursor, count)), "dlq")

    def iter_dlq(self, progress: bool = False) -> Iterator[Any]:
        bar = _progress(progress, "dlq")
        cursor = None
        try:
            while True:
                page = self.dlq(cursor)
                yield from page.messages
                if bar is not None:
                    bar.update(len(page.messages))
                if not page.cursor:
                    return
                cursor = page.cursor
        finally:
            if bar is not None:
                bar.close()

    def cancel(self, run_id: str) -> None:
        """Cancel the in-progress run(s) with ``run_id`` (``DELETE /v2/workflows/runs/{id}``)."""
        self._call(_QueueCore.cancel_request(run_id))

    def trigger(self, url: str, body: Any = None, **options: Any) -> ResumeResult:
        """Start a run of the workflow at ``url`` (``POST /v2/trigger/{url}``; the sandbox serves it).
        Options: ``run_id``, ``label``, ``retries``, ``flow_control_key``, ``flow_control_value``."""
        return _QueueCore.parse(ResumeResult, self._call(_QueueCore.trigger_request(url, body, **options)),
                                "trigger")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Queue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Queue({self.url!r}, auth={self._http.auth!r})"


class AsyncQueue:
    """Asynchronous twin of :class:`Queue`."""

    def __init__(self, url: str, token: str, *, timeout: float | None = DEFAULT_TIMEOUT,
                 retry: RetryPolicy | None = None, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self._http = AsyncTransport(self.url, BearerAuth(token), timeout=timeout, retry=retry,
                                    transport=transport)

    @classmethod
    def from_settings(cls, settings: Settings, **options: Any) -> AsyncQueue:
        return cls(*_settings_args(settings), **options)

    @classmethod
    def from_env(cls, **options: Any) -> AsyncQueue:
        return cls.from_settings(Settings.from_env(), **options)

    async def _call(self, request: ApiRequest) -> Any:
        return decode_reply(await self._http.send(request), f"{request.method} {request.path}",
                            self._http.redact)

    async def workflow_logs(self, **filters: Any) -> LogsPage:
        return _QueueCore.parse(LogsPage, await self._call(_QueueCore.logs_request(**filters)), "workflow logs")

    async def iter_runs(self, progress: bool = False, **filters: Any) -> AsyncIterator[WorkflowRun]:
        bar = _progress(progress, "runs")
        try:
            while True:
                page = await self.workflow_logs(**filters)
                for run in page.runs:
                    yield run
                if bar is not None:
                    bar.update(len(page.runs))
                if not page.cursor:
                    return
                filters["cursor"] = page.cursor
        finally:
            if bar is not None:
                bar.close()

    async def resume(self, dlq_id: str, *, flow_control_key: str | None = None,
                     flow_control_value: str | None = None, retries: int | None = None,
                     run_id: str | None = None) -> ResumeResult:
        request = _QueueCore.resume_request(dlq_id, flow_control_key=flow_control_key,
                                            flow_control_value=flow_control_value, retries=retries, run_id=run_id)
        return _QueueCore.parse(ResumeResult, await self._call(request), "resume")

    async def dlq(self, cursor: str | None = None, count: int | None = None) -> DlqPage:
        return _QueueCore.parse(DlqPage, await self._call(_QueueCore.dlq_request(cursor, count)), "dlq")

    async def iter_dlq(self) -> AsyncIterator[Any]:
        cursor = None
        while True:
            page = await self.dlq(cursor)
            for message in page.messages:
                yield message
            if not page.cursor:
                return
            cursor = page.cursor

    async def cancel(self, run_id: str) -> None:
        await self._call(_QueueCore.cancel_request(run_id))

    async def trigger(self, url: str, body: Any = None, **options: Any) -> ResumeResult:
        request = _QueueCore.trigger_request(url, body, **options)
        return _QueueCore.parse(ResumeResult, await self._call(request), "trigger")

    async def aclose(self) -> None:
        await self._http.aclose()

    async def close(self) -> None:
        await self.aclose()

    async def __aenter__(self) -> AsyncQueue:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"AsyncQueue({self.url!r}, auth={self._http.auth!r})"
