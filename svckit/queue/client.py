"""Clients of the queue service interface (spec area D), Bearer auth.

:mod:`svckit.queue.protocol` validates arguments, builds the requests and decodes the replies, all
without I/O; :class:`Queue` and :class:`AsyncQueue` only send; their ``iter_*`` listings (:class:`Listings`,
:class:`AsyncListings`) follow cursors through the one cursor loop (:mod:`svckit._cursor`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from svckit._client import AsyncClient, ClientBase, ClientOptions, SyncClient
from svckit._cursor import ARun, Pages, Run, alisting, listing
from svckit._http import BearerAuth
from svckit._progress import Cancel, ProgressArg
from svckit.queue.messages_client import AsyncMessages, Messages
from svckit.queue.models import DlqMessage, DlqPage, Event, EventsPage, LogsPage, ResumeResult, WorkflowRun
from svckit.queue.protocol import (
    MAX_DLQ_COUNT,
    MAX_EVENTS_COUNT,
    MAX_LOGS_COUNT,
    build_cancel_many_request,
    build_cancel_request,
    build_delete_dlq_many_request,
    build_delete_dlq_request,
    build_dlq_message_request,
    build_dlq_request,
    build_events_request,
    build_from_dlq_request,
    build_logs_request,
    build_trigger_request,
    decode_count,
    decode_model,
    decode_runs_started,
)

if TYPE_CHECKING:
    from typing import Unpack


class _QueueBase(ClientBase):
    """What Queue and AsyncQueue share (:mod:`svckit._client`): the URL and token (SVC_QUEUE_URL,
    SVC_QUEUE_TOKEN)."""

    _settings_fields = ("queue_url", "queue_token")

    def __init__(self, url: str, token: str, **options: Unpack[ClientOptions]) -> None:
        super().__init__(url, BearerAuth(token), **options)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r}, auth={self._http.auth!r})"


@runtime_checkable
class WorkflowRuns(Protocol):
    """What the workflow timeline needs of a queue client: :class:`Queue` satisfies it, and so does
    any stand-in (a test fake, a recorded replay) with these methods."""

    def workflow_logs(self, **filters: Any) -> LogsPage: ...
    def iter_runs(self, progress: ProgressArg = False, *, cancel: Cancel = None, limit: int | None = None,
                  **filters: Any) -> Run[WorkflowRun]: ...
    def cancel(self, run_id: str) -> None: ...
    def dlq(self, cursor: str | None = None, count: int | None = None, **filters: Any) -> DlqPage: ...
    def iter_dlq(self, progress: ProgressArg = False, count: int = MAX_DLQ_COUNT, *, cancel: Cancel = None,
                 limit: int | None = None, **filters: Any) -> Run[DlqMessage]: ...
    def delete_dlq_many(self, dlq_ids: Sequence[str]) -> int: ...
    def resume(self, dlq_id: str, **overrides: Any) -> ResumeResult: ...
    def resume_many(self, dlq_ids: Sequence[str], **overrides: Any) -> list[ResumeResult]: ...
    def restart_many(self, dlq_ids: Sequence[str], **overrides: Any) -> list[ResumeResult]: ...


class Listings:
    """``iter_runs``, ``iter_dlq`` and ``iter_events``, written once over ``workflow_logs``, ``dlq``
    and ``events``: :class:`Queue`'s, and a stand-in's with those methods (a test fake). Each follows
    cursors through the one cursor loop (:mod:`svckit._cursor`), in pages of the most the service
    takes unless ``count`` says otherwise, and returns a :class:`~svckit._cursor.Run` (an iterator
    that says ``complete``, ``cancelled``, ``count``, ``requests``). ``progress`` and ``cancel`` as in
    :mod:`svckit._progress` (a cancelled listing stops before its next page, ``cancelled`` True);
    ``limit`` stops after that many items."""

    if TYPE_CHECKING:
        def workflow_logs(self, **filters: Any) -> LogsPage: ...
        def dlq(self, cursor: str | None = None, count: int | None = None, **filters: Any) -> DlqPage: ...
        def events(self, cursor: str | None = None, count: int | None = None, **filters: Any) -> EventsPage: ...

    def iter_runs(self, progress: ProgressArg = False, *, cancel: Cancel = None, limit: int | None = None,
                  **filters: Any) -> Run[WorkflowRun]:
        """Every run matching ``filters`` (those of ``workflow_logs``), newest first."""
        filters = {"count": MAX_LOGS_COUNT, **filters}
        return listing(lambda at: self.workflow_logs(**filters, cursor=at),
                       Pages("runs", progress=progress, cancel=cancel, limit=limit))

    def iter_dlq(self, progress: ProgressArg = False, count: int = MAX_DLQ_COUNT, *, cancel: Cancel = None,
                 limit: int | None = None, **filters: Any) -> Run[DlqMessage]:
        """Every DLQ entry matching ``filters``, ``count`` a page."""
        return listing(lambda at: self.dlq(at, count, **filters),
                       Pages("messages", progress=progress, cancel=cancel, limit=limit))

    def iter_events(self, progress: ProgressArg = False, count: int = MAX_EVENTS_COUNT, *, cancel: Cancel = None,
                    limit: int | None = None, **filters: Any) -> Run[Event]:
        """Every event matching ``filters``, newest first, ``count`` a page."""
        return listing(lambda at: self.events(at, count, **filters),
                       Pages("events", progress=progress, cancel=cancel, limit=limit))


class AsyncListings:
    """The asyncio twin of :class:`Listings` (``async for``; an :class:`~svckit._cursor.ARun`)."""

    if TYPE_CHECKING:
        def workflow_logs(self, **filters: Any) -> Awaitable[LogsPage]: ...
        def dlq(self, cursor: str | None = None, count: int | None = None, **filters: Any) -> Awaitable[DlqPage]: ...
        def events(self, cursor: str | None = None, count: int | None = None,
                   **filters: Any) -> Awaitable[EventsPage]: ...

    def iter_runs(self, progress: ProgressArg = False, *, cancel: Cancel = None, limit: int | None = None,
                  **filters: Any) -> ARun[WorkflowRun]:
        filters = {"count": MAX_LOGS_COUNT, **filters}
        return alisting(lambda at: self.workflow_logs(**filters, cursor=at),
                        Pages("runs", progress=progress, cancel=cancel, limit=limit))

    def iter_dlq(self, progress: ProgressArg = False, count: int = MAX_DLQ_COUNT, *, cancel: Cancel = None,
                 limit: int | None = None, **filters: Any) -> ARun[DlqMessage]:
        return alisting(lambda at: self.dlq(at, count, **filters),
                        Pages("messages", progress=progress, cancel=cancel, limit=limit))

    def iter_events(self, progress: ProgressArg = False, count: int = MAX_EVENTS_COUNT, *, cancel: Cancel = None,
                    limit: int | None = None, **filters: Any) -> ARun[Event]:
        return alisting(lambda at: self.events(at, count, **filters),
                        Pages("events", progress=progress, cancel=cancel, limit=limit))


class Queue(Listings, Messages, _QueueBase, SyncClient):
    """Synchronous client of the queue service interface: workflow logs, the DLQ (list, get, delete,
    resume, restart), cancel, the events log."""

    # -- workflow runs ---------------------------------------------------------------------------
    def workflow_logs(self, **filters: Any) -> LogsPage:
        """One page of runs, newest first. Filters: ``cursor``, ``workflow_run_id``, ``workflow_url``,
        ``workflow_created_at``, ``state``, ``from_date``, ``to_date`` (inclusive), ``count`` (1..10),
        ``label``. Dates are datetime (naive = UTC) or Unix ms."""
        return decode_model(LogsPage, self._call(build_logs_request(**filters)), "workflow logs")

    def cancel(self, run_id: str) -> None:
        """Cancel the in-progress run(s) with ``run_id`` (``DELETE /v2/workflows/runs/{id}``); NotFound
        for an unknown id, UnprocessableEntity when none of them is in progress."""
        self._call(build_cancel_request(run_id))

    def cancel_many(self, run_ids: Sequence[str]) -> int:
        """Cancel the runs in progress among ``run_ids``; returns how many were canceled (ids of
        finished or unknown runs are skipped)."""
        return decode_count(self._call(build_cancel_many_request(run_ids=run_ids)), "cancelled", "cancel")

    def cancel_by_url(self, url_prefix: str) -> int:
        """Cancel every run in progress whose workflow URL starts with ``url_prefix``; returns how many."""
        return decode_count(self._call(build_cancel_many_request(url_prefix=url_prefix)), "cancelled", "cancel")

    def cancel_all(self) -> int:
        """Cancel every run in progress; returns how many."""
        return decode_count(self._call(build_cancel_many_request(all_runs=True)), "cancelled", "cancel")

    def trigger(self, url: str, body: Any = None, **options: Any) -> ResumeResult:
        """Start a run of the workflow at ``url`` (``POST /v2/trigger/{url}``; the sandbox serves it).
        Options: ``run_id``, ``label``, ``retries``, ``flow_control_key``, ``flow_control_value``."""
        return decode_model(ResumeResult, self._call(build_trigger_request(url, body, **options)), "trigger")

    # -- DLQ -------------------------------------------------------------------------------------
    def dlq(self, cursor: str | None = None, count: int | None = None, **filters: Any) -> DlqPage:
        """One page of DLQ entries (failed runs), newest first; filters as :func:`build_dlq_request`."""
        return decode_model(DlqPage, self._call(build_dlq_request(cursor, count, **filters)), "dlq")

    def dlq_message(self, dlq_id: str) -> DlqMessage:
        """One DLQ entry (NotFound when there is none, e.g. resumed, restarted or deleted)."""
        return decode_model(DlqMessage, self._call(build_dlq_message_request(dlq_id)), "dlq message")

    def delete_dlq(self, dlq_id: str) -> None:
        """Remove one DLQ entry; its run stays RUN_FAILED and can no longer be resumed."""
        self._call(build_delete_dlq_request(dlq_id))

    def delete_dlq_many(self, dlq_ids: Sequence[str]) -> int:
        """Remove DLQ entries; returns how many existed (unknown ids are skipped)."""
        return decode_count(self._call(build_delete_dlq_many_request(dlq_ids)), "deleted", "delete dlq")

    def resume(self, dlq_id: str, **overrides: Any) -> ResumeResult:
        """Resume the failed run of DLQ entry ``dlq_id`` as a fresh run; steps that succeeded keep their
        output and are not executed again. Overrides (``flow_control_key``, ``flow_control_value``,
        ``retries``, ``run_id``) are sent as their Service-* header only when given."""
        return decode_model(ResumeResult, self._call(build_from_dlq_request("resume", dlq_id, **overrides)),
                            "resume")

    def resume_many(self, dlq_ids: Sequence[str], **overrides: Any) -> list[ResumeResult]:
        """:meth:`resume` for several entries in one request; the fresh runs in the order given. If one
        id is unknown nothing is resumed (NotFound)."""
        return decode_runs_started(self._call(build_from_dlq_request("resume", list(dlq_ids), **overrides)),
                                   "resume")

    def restart(self, dlq_id: str, **overrides: Any) -> ResumeResult:
        """Start the failed run of DLQ entry ``dlq_id`` again from its first step (nothing is kept)."""
        return decode_model(ResumeResult, self._call(build_from_dlq_request("restart", dlq_id, **overrides)),
                            "restart")

    def restart_many(self, dlq_ids: Sequence[str], **overrides: Any) -> list[ResumeResult]:
        """:meth:`restart` for several entries in one request, like :meth:`resume_many`."""
        return decode_runs_started(self._call(build_from_dlq_request("restart", list(dlq_ids), **overrides)),
                                   "restart")

    # -- events log ------------------------------------------------------------------------------
    def events(self, cursor: str | None = None, count: int | None = None, **filters: Any) -> EventsPage:
        """One page of the events log (one event per delivery), newest first; filters as
        :func:`build_events_request`."""
        return decode_model(EventsPage, self._call(build_events_request(cursor, count, **filters)), "events")


class AsyncQueue(AsyncListings, AsyncMessages, _QueueBase, AsyncClient):
    """Asynchronous twin of :class:`Queue`."""

    async def workflow_logs(self, **filters: Any) -> LogsPage:
        return decode_model(LogsPage, await self._call(build_logs_request(**filters)), "workflow logs")

    async def cancel(self, run_id: str) -> None:
        await self._call(build_cancel_request(run_id))

    async def cancel_many(self, run_ids: Sequence[str]) -> int:
        return decode_count(await self._call(build_cancel_many_request(run_ids=run_ids)), "cancelled", "cancel")

    async def cancel_by_url(self, url_prefix: str) -> int:
        return decode_count(await self._call(build_cancel_many_request(url_prefix=url_prefix)), "cancelled",
                            "cancel")

    async def cancel_all(self) -> int:
        return decode_count(await self._call(build_cancel_many_request(all_runs=True)), "cancelled", "cancel")

    async def trigger(self, url: str, body: Any = None, **options: Any) -> ResumeResult:
        request = build_trigger_request(url, body, **options)
        return decode_model(ResumeResult, await self._call(request), "trigger")

    async def dlq(self, cursor: str | None = None, count: int | None = None, **filters: Any) -> DlqPage:
        return decode_model(DlqPage, await self._call(build_dlq_request(cursor, count, **filters)), "dlq")

    async def dlq_message(self, dlq_id: str) -> DlqMessage:
        return decode_model(DlqMessage, await self._call(build_dlq_message_request(dlq_id)), "dlq message")

    async def delete_dlq(self, dlq_id: str) -> None:
        await self._call(build_delete_dlq_request(dlq_id))

    async def delete_dlq_many(self, dlq_ids: Sequence[str]) -> int:
        return decode_count(await self._call(build_delete_dlq_many_request(dlq_ids)), "deleted", "delete dlq")

    async def resume(self, dlq_id: str, **overrides: Any) -> ResumeResult:
        request = build_from_dlq_request("resume", dlq_id, **overrides)
        return decode_model(ResumeResult, await self._call(request), "resume")

    async def resume_many(self, dlq_ids: Sequence[str], **overrides: Any) -> list[ResumeResult]:
        request = build_from_dlq_request("resume", list(dlq_ids), **overrides)
        return decode_runs_started(await self._call(request), "resume")

    async def restart(self, dlq_id: str, **overrides: Any) -> ResumeResult:
        request = build_from_dlq_request("restart", dlq_id, **overrides)
        return decode_model(ResumeResult, await self._call(request), "restart")

    async def restart_many(self, dlq_ids: Sequence[str], **overrides: Any) -> list[ResumeResult]:
        request = build_from_dlq_request("restart", list(dlq_ids), **overrides)
        return decode_runs_started(await self._call(request), "restart")

    async def events(self, cursor: str | None = None, count: int | None = None, **filters: Any) -> EventsPage:
        return decode_model(EventsPage, await self._call(build_events_request(cursor, count, **filters)), "events")
