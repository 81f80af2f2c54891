"""The delivery engine: every message the sandbox keeps is delivered by HTTP to its URL, on the
sandbox's event loop, tried again on failure, and put in the DLQ when its retries are spent.

- **Due times.** A heap of (due ms, seq). :meth:`Deliveries.submit` (any thread) adds messages after
  the transaction that kept them committed; :meth:`Deliveries.start` loads every message that is not
  final, so a message accepted before a crash is delivered after the restart (at least once: one whose
  attempt was cut short by the crash is delivered again).
- **Slots.** An attempt starts when the account's ``max_global_parallelism`` allows (a plan change
  applies at once, to the messages already waiting too: the store tells the engine), and its flow
  control key's ``parallelism`` and ``rate`` per ``period``. A queue delivers in order: a message of a
  queue holds one of the queue's ``parallelism`` slots from its first attempt until it is final (its
  retries included), so with parallelism 1 the next waits for it; a paused queue starts nothing.
- **An attempt** marks the message ACTIVE, sends it (method, the forwarded headers, ``User-Agent:
  Upstash-QStash``, ``Upstash-Message-Id``, ``Upstash-Retried``, ``Upstash-Signature`` and, where they
  apply, ``Upstash-Topic-Name``, ``Upstash-Schedule-Id``, ``Upstash-Caller-Ip``) with its timeout, and
  records the outcome in one transaction: DELIVERED on a 2xx; else RETRY at the backoff's time
  (:mod:`.backoff`; the destination's Retry-After wins), or FAILED into the DLQ when the retries are
  spent or the destination answered 489 with ``Upstash-NonRetryable-Error: true``. A callback message is
  made after every attempt of a message that has one, a failure-callback message when it fails.
- **Redirects are not followed**, and the client ignores proxy variables: a delivery goes to the
  loopback URL that was checked at publish (:mod:`.destination`), nowhere else; a workflow registered
  in the sandbox (:mod:`svckit.sandbox.workflow.local`) gets its deliveries in process, through httpx's
  ASGI transport.
- **Workflow runs** (messages of a run, :mod:`svckit.sandbox.workflow`): :attr:`Deliveries.runs` gives a
  run's delivery its body and headers before the attempt and records what the outcome means for the run.

Times in the table are Unix milliseconds. ``backoff_scale`` multiplies every retry delay: 1 as the
hosted service (12 s before the first retry); tests and demos pass less (``Sandbox(queue_backoff_scale=...)``).
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import contextlib
import heapq
import json
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from svckit.errors import DiskError
from svckit.queue.models import EventState
from svckit.sandbox.delivery.backoff import asked_delay, retry_delay
from svckit.sandbox.delivery.options import FlowControl, flow_control_of
from svckit.sandbox.delivery.records import (
    WAITING,
    NewMessage,
    Waiting,
    add_event,
    header_map,
    insert_message,
    waiting_of,
)
from svckit.sandbox.delivery.signing import signature
from svckit.sandbox.http import off_loop
from svckit.sandbox.store import Store, StoreClosed, now_ms

log = logging.getLogger(__name__)

USER_AGENT = "Upstash-QStash"
#: the most of a destination's response body kept (for the DLQ, the events and callbacks)
RESPONSE_KEPT = 64 * 1024
NON_RETRYABLE_STATUS = 489
#: the headers every delivery sets itself: a forwarded copy of one (the Python workflow SDK forwards
#: every header it got, the signature among them) is dropped, never sent beside it
DELIVERY_HEADERS = frozenset({"user-agent", "upstash-message-id", "upstash-retried", "upstash-signature",
                              "upstash-topic-name", "upstash-schedule-id", "upstash-caller-ip"})
#: seconds before an attempt that failed inside the sandbox (not at the destination) is made again
FAULT_RETRY = 1.0


@dataclass
class _Pending:
    seq: int
    due: int
    lane: str | None = None  # the queue
    flow: FlowControl | None = None
    holds_lane: bool = False


class _Unserved(Exception):
    """A message's URL may not be delivered to now (:attr:`Deliveries.refusal`): it waits."""


@dataclass
class _Outcome:
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def final_failure(self) -> bool:
        return self.status == NON_RETRYABLE_STATUS and self.headers.get("upstash-nonretryable-error") == "true"


@dataclass
class _Rate:
    start: float = 0.0
    count: int = 0


def _http_clients(local_app: Any) -> tuple[httpx.AsyncClient, httpx.AsyncClient | None]:
    """The engine's HTTP clients: to the network (no proxy variables, no redirects: module docstring),
    and, with ``local_app``, to the workflows served in this process through httpx's ASGI transport,
    where an exception of the app is its 500, as a real server's would be: counted, retried, DLQ'd."""
    network = httpx.AsyncClient(trust_env=False, follow_redirects=False,
                                limits=httpx.Limits(max_connections=None, max_keepalive_connections=64))
    if local_app is None:
        return network, None
    return network, httpx.AsyncClient(transport=httpx.ASGITransport(app=local_app, raise_app_exceptions=False))


class Deliveries:
    """The delivery engine of one sandbox (module docstring)."""

    #: the HTTP clients :meth:`start` makes: to the network, and to the workflows of :attr:`local`
    _client: httpx.AsyncClient | None
    _local_client: httpx.AsyncClient | None

    def __init__(self, store: Store, *, signing_key: Callable[[], str], account: Callable[[], Mapping[str, Any]],
                 backoff_scale: float = 1.0) -> None:
        self.store = store
        self.signing_key = signing_key
        self.account = account
        self.backoff_scale = backoff_scale
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client = None
        self._heap: list[tuple[int, int]] = []
        self._pending: dict[int, _Pending] = {}
        self._ready: dict[str | None, list[tuple[int, _Pending]]] = {}
        self._queues: dict[str, tuple[int, bool]] = {}  # name -> (parallelism, paused)
        self._lane_held: Counter[str] = Counter()
        self._flow_active: Counter[str] = Counter()
        self._rates: dict[str, _Rate] = {}
        self._active = 0
        self._global = 10
        self._attempts: dict[int, asyncio.Task[None]] = {}  # by message seq
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        #: the served workflow runs (:class:`svckit.sandbox.workflow.runs.ServedRuns`): the body and
        #: headers of a run's delivery, and what its outcome means for the run
        self.runs: Any = None
        #: workflows served in this process (:mod:`svckit.sandbox.workflow.local`): which URLs, and
        #: their ASGI app, delivered to through httpx's ASGI transport instead of the network
        self.local: tuple[Callable[[str], bool], Any] | None = None
        self._local_client = None
        #: why a URL may not be delivered to now (None: it may): the publisher's loopback rule, asked
        #: again before each attempt, since a registered workflow's URL is no longer served after a
        #: restart until it is registered again; such a message waits (no attempt is spent), as on a
        #: full disk, and is delivered once its URL is served
        self.refusal: Callable[[str], str | None] = lambda url: None
        self._told_waiting: set[int] = set()

    # -- lifecycle (on the event loop) ----------------------------------------------------------
    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._client, self._local_client = _http_clients(None if self.local is None else self.local[1])
        self._global = int(self.account()["max_global_parallelism"])
        self.store.account_listeners.append(self._account_changed)
        self._queues = {r["name"]: (r["parallelism"], bool(r["paused"]))
                        for r in await off_loop(self.store.query, "SELECT * FROM queues")}
        rows = await off_loop(self.store.query, (
            "SELECT seq, due_at, queue_name, flow_control_key, flow_control_value, state FROM messages "
            f"WHERE state IN ({','.join('?' * len(WAITING))}) ORDER BY seq"), WAITING)
        for row in rows:
            self._add(*waiting_of(row), holds_lane=row["state"] == EventState.RETRY.value)
        self._task = asyncio.create_task(self._run(), name="svckit-deliveries")

    async def stop(self) -> None:
        """Stop delivering: attempts in flight are cut short (they are delivered again at the next start)."""
        with contextlib.suppress(ValueError):
            self.store.account_listeners.remove(self._account_changed)
        if self._task is not None:
            self._task.cancel()
        for attempt in list(self._attempts.values()):
            attempt.cancel()
        await asyncio.gather(*(t for t in [self._task, *self._attempts.values()] if t is not None),
                             return_exceptions=True)
        for client in (self._client, self._local_client):
            if client is not None:
                await client.aclose()

    # -- from any thread ------------------------------------------------------------------------
    def submit(self, items: list[Waiting]) -> None:
        """Deliver these messages (as :func:`.records.insert_message` returned them), kept and committed
        by the caller."""
        self._call(self._add_many, items)

    def forget(self, seqs: list[int]) -> None:
        """These messages were canceled: deliver them no more (an attempt in flight is cut short, and
        not recorded)."""
        self._call(self._forget, seqs)

    def queue_changed(self, name: str, parallelism: int | None, paused: bool = False) -> None:
        """A queue was made, changed (``parallelism``) or deleted (None)."""
        self._call(self._set_queue, name, parallelism, paused)

    def _account_changed(self, record: Mapping[str, Any]) -> None:
        """A plan change: its ``max_global_parallelism`` holds from now on, for the messages waiting too."""
        self._call(self._set_global, int(record["max_global_parallelism"]))

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        if self._loop is None or self._loop.is_closed():
            return  # not started, or stopped: the next start loads the messages from the store
        self._loop.call_soon_threadsafe(fn, *args)

    # -- the loop's side ------------------------------------------------------------------------
    def _set_global(self, limit: int) -> None:
        self._global = limit
        self._wake.set()

    def _add_many(self, items: list[Waiting]) -> None:
        for item in items:
            self._add(*item)

    def _add(self, seq: int, due: int, lane: str | None, key: str | None, value: str | None, *,
             holds_lane: bool = False) -> None:
        flow = flow_control_of(key, value) if key else None
        self._pending[seq] = _Pending(seq, due, lane, flow, holds_lane)
        if holds_lane and lane is not None:
            self._lane_held[lane] += 1
        heapq.heappush(self._heap, (due, seq))
        self._wake.set()

    def _forget(self, seqs: list[int]) -> None:
        for seq in seqs:
            attempt = self._attempts.get(seq)
            if attempt is not None:  # cut short: a workflow not yet running never starts
                attempt.cancel()
            self._told_waiting.discard(seq)
            pending = self._pending.pop(seq, None)
            if pending is not None:
                self._release_lane(pending)
                ready = self._ready.get(pending.lane, [])
                with contextlib.suppress(ValueError):
                    ready.remove((seq, pending))
        self._wake.set()

    def _set_queue(self, name: str, parallelism: int | None, paused: bool) -> None:
        if parallelism is None:
            self._queues.pop(name, None)
        else:
            self._queues[name] = (parallelism, paused)
        self._wake.set()

    def _release_lane(self, pending: _Pending) -> None:
        if pending.holds_lane and pending.lane is not None:
            pending.holds_lane = False
            self._lane_held[pending.lane] -= 1

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            wait = self._pump()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    def _pump(self) -> float | None:
        """Start every attempt that is due and has its slots; the seconds until one may be (None: none waits)."""
        now = now_ms()
        while self._heap and self._heap[0][0] <= now:
            due, seq = heapq.heappop(self._heap)
            pending = self._pending.get(seq)
            if pending is not None and pending.due == due:
                bisect.insort(self._ready.setdefault(pending.lane, []), (seq, pending), key=lambda item: item[0])
        soonest: float | None = None
        for lane, ready in self._ready.items():
            parallelism, paused = self._queues.get(lane, (1, False)) if lane is not None else (0, False)
            if paused or self._active >= self._global:
                continue
            kept, lane_blocked = [], False
            for i, (seq, pending) in enumerate(ready):
                if self._active >= self._global:  # nothing more starts until an attempt ends
                    kept += ready[i:]
                    break
                if lane is not None and not pending.holds_lane and (
                        lane_blocked or self._lane_held[lane] >= parallelism):
                    lane_blocked = True  # in order: nothing after the first that waits for the queue
                    kept.append((seq, pending))
                    continue
                wait = self._slot_wait(pending, now)
                if wait is not None:
                    kept.append((seq, pending))
                    soonest = wait if soonest is None else min(soonest, wait)
                    continue
                self._begin(pending, now)
            ready[:] = kept
        if self._heap:
            until = max(0.0, (self._heap[0][0] - now) / 1000)
            soonest = until if soonest is None else min(soonest, until)
        return soonest

    def _slot_wait(self, pending: _Pending, now: int) -> float | None:
        """None when its flow control key lets an attempt of ``pending`` start now; else seconds to wait
        (a rate's period), or a long wait that a finishing attempt cuts short (a parallelism slot). The
        account's global bound is :meth:`_pump`'s."""
        flow = pending.flow
        if flow is None:
            return None
        if flow.parallelism is not None and self._flow_active[flow.key] >= flow.parallelism:
            return 3600.0
        if flow.rate is not None:
            rate = self._rates.setdefault(flow.key, _Rate(now / 1000))
            if now / 1000 - rate.start >= flow.period:
                rate.start, rate.count = now / 1000, 0
            if rate.count >= flow.rate:
                return rate.start + flow.period - now / 1000
        return None

    def _begin(self, pending: _Pending, now: int) -> None:
        self._active += 1
        if pending.flow is not None:
            self._flow_active[pending.flow.key] += 1
            if pending.flow.rate is not None:
                self._rates[pending.flow.key].count += 1
        if pending.lane is not None and not pending.holds_lane:
            pending.holds_lane = True
            self._lane_held[pending.lane] += 1
        task = asyncio.create_task(self._attempt(pending), name=f"svckit-delivery-{pending.seq}")
        self._attempts[pending.seq] = task
        task.add_done_callback(lambda done: self._attempts.pop(pending.seq) if self._attempts.get(pending.seq) is done
                               else None)

    async def _attempt(self, pending: _Pending) -> None:
        next_due: int | None = None
        try:
            job = await off_loop(self._begin_attempt, pending.seq)
            self._told_waiting.discard(pending.seq)
            if job is None:
                return  # canceled meanwhile
            outcome = await self._send(job)
            next_due, made = await off_loop(self._record, job, outcome)
            self._add_many(made)
        except StoreClosed:
            return  # the sandbox is stopping: the message is delivered again at the next start
        except DiskError as exc:  # its row is still waiting: delivered again once the disk takes writes
            log.warning("message seq %s waits until the disk takes writes again: %s", pending.seq, exc)
            next_due = now_ms() + int(FAULT_RETRY * 1000)
        except _Unserved as exc:  # still waiting, no attempt spent: asked again in a second
            if pending.seq not in self._told_waiting:
                self._told_waiting.add(pending.seq)
                log.warning("message seq %s waits until its URL is served: %s", pending.seq, exc)
            next_due = now_ms() + int(FAULT_RETRY * 1000)
        except Exception:  # one message's fault must not stop the engine
            log.exception("delivering message seq %s failed; trying again in %s s", pending.seq, FAULT_RETRY)
            next_due = now_ms() + int(FAULT_RETRY * 1000)  # its row is still waiting: nothing is lost
        finally:
            self._active -= 1
            if pending.flow is not None:
                self._flow_active[pending.flow.key] -= 1
            if next_due is None:
                if self._pending.pop(pending.seq, None) is not None:
                    self._release_lane(pending)
            else:
                pending.due = next_due
                heapq.heappush(self._heap, (next_due, pending.seq))
            self._wake.set()

    # -- in a thread: the store -----------------------------------------------------------------
    def _begin_attempt(self, seq: int) -> dict[str, Any] | None:
        account = self.account()
        now = now_ms()
        with self.store.transaction() as db:
            row = db.execute("SELECT * FROM messages WHERE seq = ?", (seq,)).fetchone()
            if row is None or row["state"] not in WAITING:
                return None
            refused = self.refusal(row["url"])  # None for a workflow served in process too
            if refused is not None:
                raise _Unserved(refused)
            job = dict(row, local=self.local is not None and self.local[0](row["url"]))
            job["options"] = json.loads(row["options"])
            job["headers"] = json.loads(row["headers"])
            if row["run_seq"] is not None and not self.runs.prepare(db, job):  # its run has ended
                db.execute("UPDATE messages SET state = ?, due_at = NULL WHERE seq = ?", (EventState.CANCELED.value, seq))
                add_event(db, seq, row["message_id"], EventState.CANCELED.value, now)
                return None
            db.execute("UPDATE messages SET state = ? WHERE seq = ?", (EventState.ACTIVE.value, seq))
            add_event(db, seq, row["message_id"], EventState.ACTIVE.value, now)
        job["timeout"] = job["options"].get("timeout") or float(account["timeout"])
        job["key"] = self.signing_key()
        return job

    async def _send(self, job: dict[str, Any]) -> _Outcome:
        headers = [(name, value) for name, value in job["headers"] if name.lower() not in DELIVERY_HEADERS]
        headers += [("User-Agent", USER_AGENT), ("Upstash-Message-Id", job["message_id"]),
                    ("Upstash-Retried", str(job["retried"])),
                    ("Upstash-Signature", signature(job["key"], job["url"], job["body"]))]
        for header, column in (("Upstash-Topic-Name", "topic_name"), ("Upstash-Schedule-Id", "schedule_id"),
                               ("Upstash-Caller-Ip", "caller_ip")):
            if job[column]:
                headers.append((header, job[column]))
        client = self._local_client if job["local"] else self._client
        assert client is not None
        try:
            async with client.stream(job["method"], job["url"], headers=headers, content=job["body"],
                                           timeout=job["timeout"]) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk[:RESPONSE_KEPT - len(body)]
                    if len(body) >= RESPONSE_KEPT:
                        break
                return _Outcome(response.status_code, {k.lower(): v for k, v in response.headers.items()}, bytes(body))
        except httpx.TimeoutException:
            return _Outcome(error=f"the destination did not answer within {job['timeout']:g} s (the message's timeout)")
        except httpx.HTTPError as exc:
            return _Outcome(error=f"the destination could not be reached: {type(exc).__name__}: {exc}")

    def _record(self, job: dict[str, Any], outcome: _Outcome) -> tuple[int | None, list[Waiting]]:
        """The outcome of an attempt, in one transaction; the message's next due time (None: final) and
        the callback messages it made."""
        now = now_ms()
        seq, message_id, retried = job["seq"], job["message_id"], job["retried"]
        error = outcome.error
        if error is None and not outcome.ok:
            error = f"the destination answered {outcome.status}"
        made: list[NewMessage] = []
        next_due: int | None = None
        account = self.account() if not outcome.ok else {}
        with self.store.transaction() as db:
            state = db.execute("SELECT state FROM messages WHERE seq = ?", (seq,)).fetchone()["state"]
            if state != EventState.ACTIVE.value:
                return None, []  # canceled while it was delivered
            response = (outcome.status, json.dumps(sorted(outcome.headers.items())), outcome.body)
            dlq_id = None
            if not outcome.ok and job["run_seq"] is not None and self.runs.ended(db, job):
                # a step of a run that failed while this delivery was made (a sibling branch): cut by
                # that failure, delivered again if the run is resumed; not retried, not a failure of its own
                self._settle(db, job, EventState.CANCELED.value, response, error, now)
                return None, []
            if outcome.ok:
                state = EventState.DELIVERED.value
                self._settle(db, job, state, response, error, now)
            elif retried < job["max_retries"] and not outcome.final_failure:
                wait = asked_delay(outcome.headers)
                wait = (retry_delay(job["options"].get("retry_delay"), retried) if wait is None else wait)
                next_due = now + int(wait * self.backoff_scale * 1000)
                state = EventState.RETRY.value
                db.execute("UPDATE messages SET state = ?, retried = ?, due_at = ?, response_status = ?, "
                           "response_headers = ?, response_body = ? WHERE seq = ?",
                           (EventState.RETRY.value, retried + 1, next_due, *response, seq))
                add_event(db, seq, message_id, EventState.ERROR.value, now, error=error, status=outcome.status,
                          next_at=next_due)
                add_event(db, seq, message_id, EventState.RETRY.value, now, next_at=next_due)
            else:
                state = EventState.FAILED.value
                self._settle(db, job, state, response, error, now)
                if job["run_seq"] is None or job["kind"] == "message":  # a run's callbacks: its entry tells them
                    dlq_id = self._to_dlq(db, job, outcome, error, now, int(account.get("max_dlq_size") or 0))
                if job["options"].get("failure_callback", {}).get("url"):
                    made.append(self._callback(db, job, outcome, "failure_callback", now, dlq_id=dlq_id))
            if job["options"].get("callback", {}).get("url"):
                made.append(self._callback(db, job, outcome, "callback", now))
            if job["run_seq"] is not None:
                self.runs.recorded(db, job, outcome.status, outcome.headers, outcome.body, error, state, dlq_id, now)
            kept = [insert_message(db, message, now) for message in made]
        return next_due, kept

    @staticmethod
    def _settle(db: Any, job: dict[str, Any], state: str, response: tuple[Any, ...], error: str | None,
                now: int) -> None:
        """The message's final ``state`` (DELIVERED, FAILED or CANCELED), with the attempt's ``response``
        (status, headers as JSON, body), and its event (the attempt's error, None for a 2xx)."""
        db.execute("UPDATE messages SET state = ?, due_at = NULL, response_status = ?, response_headers = ?, "
                   "response_body = ? WHERE seq = ?", (state, *response, job["seq"]))
        add_event(db, job["seq"], job["message_id"], state, now, error=error, status=response[0])

    @staticmethod
    def _to_dlq(db: Any, job: dict[str, Any], outcome: _Outcome, error: str, now: int, limit: int) -> str:
        dlq_id = f"dlq_{uuid.uuid4().hex}"
        body = outcome.body.decode("utf-8", "replace") if outcome.status is not None else error
        db.execute("INSERT INTO dlq (dlq_id, message_seq, created_at, message_id, response_status, response_body, "
                   "not_before) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (dlq_id, job["seq"], now, job["message_id"], outcome.status, body, job["not_before"]))
        if limit:  # the account's max_dlq_size: the oldest entries make room
            db.execute("DELETE FROM dlq WHERE dlq_id IN (SELECT dlq_id FROM dlq ORDER BY created_at DESC, "
                       "dlq_id DESC LIMIT -1 OFFSET ?)", (limit,))
        return dlq_id

    def _callback(self, db: Any, job: dict[str, Any], outcome: _Outcome, kind: str, now: int, *,
                  dlq_id: str | None = None) -> NewMessage:
        """The message a callback (``kind`` callback or failure_callback) of this attempt is delivered as."""
        settings = job["options"][kind]
        report: dict[str, Any] = {
            "status": outcome.status or 0, "header": header_map(list(outcome.headers.items())),
            "body": base64.b64encode(outcome.body).decode(), "retried": job["retried"],
            "maxRetries": job["max_retries"], "sourceMessageId": job["message_id"], "url": job["url"],
            "method": job["method"], "sourceHeader": header_map(job["headers"]),
            "sourceBody": base64.b64encode(job["body"]).decode(), "notBefore": job["not_before"],
            "createdAt": job["created_at"], "topicName": job["topic_name"], "endpointName": job["endpoint_name"],
            "scheduleId": job["schedule_id"], "callerIP": job["caller_ip"]}
        if dlq_id is not None:
            report["dlqId"] = dlq_id
        if outcome.error is not None:
            report["error"] = outcome.error
        message = NewMessage(
            url=settings["url"], body=json.dumps({k: v for k, v in report.items() if v is not None}).encode(),
            method=settings.get("method", "POST"),
            headers=[("content-type", "application/json"), *map(tuple, settings.get("headers", []))],
            options={"retry_delay": settings.get("retry_delay"), "timeout": settings.get("timeout")},
            max_retries=3 if settings.get("retries") is None else settings["retries"],
            not_before=now + int(1000 * (settings.get("delay") or 0)), kind=kind, source_seq=job["seq"],
            caller_ip=job["caller_ip"])
        if job["run_seq"] is not None:
            self.runs.callback(db, job, message, report, now)
        return message
