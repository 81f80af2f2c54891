"""Accepting messages: ``POST /v2/publish``, ``/v2/enqueue``, the plain messages of ``/v2/batch`` and
each firing of a schedule become message rows, written in one transaction (a batch is kept whole or
not at all) before the publisher is answered, then handed to the delivery engine.

Before anything is written every message is checked: the account's per-message limits
(:mod:`.quota`), its destination and callback URLs (:mod:`.destination`'s loopback rule), its URL
group (it must exist and hold endpoints) and its queue (made on first use, within ``max_queues``).
Then, in the transaction: deduplication (``Upstash-Deduplication-Id``, or a hash of the destination,
headers and body with ``Upstash-Content-Based-Deduplication``; ten minutes, answered with the first
message's ids and ``deduplicated: true``), the day's message count, and the rows, one per URL
(a URL group fans out to each endpoint, each message with ``topicName`` and ``endpointName``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass
from typing import Any

from svckit.sandbox.delivery.destination import NAME, Destination, DestinationError, check_url
from svckit.sandbox.delivery.engine import Deliveries
from svckit.sandbox.delivery.options import MessageOptions
from svckit.sandbox.delivery.quota import check_message, check_room, retries_of, take_daily
from svckit.sandbox.delivery.records import NewMessage, Waiting, copy_of, insert_message
from svckit.sandbox.http import ApiError
from svckit.sandbox.store import Store, now_ms
from svckit.sandbox.workflow.runs import ServedRuns
from svckit.sandbox.workflow.wire import WorkflowMessage

DEDUP_WINDOW_MS = 10 * 60 * 1000
#: a message retried from the DLQ is one of its own: tied to no source message (a callback's) nor run
UNTIED = dict.fromkeys(("source_seq", "run_seq", "history_no", "call_type", "step_name"))


def check_name(what: str, name: str) -> str:
    if not NAME.match(name):
        raise ApiError(400, f"{what} {name!r}: use only letters, digits, '.', '_' and '-' (at most 256)")
    return name


@dataclass(frozen=True)
class Publish:
    """One message to accept: where to, with what options and body, on which queue."""

    destination: Destination
    options: MessageOptions
    body: bytes
    queue: str | None = None
    schedule_id: str | None = None
    #: the workflow run it belongs to (:mod:`svckit.sandbox.workflow`), if any
    workflow: WorkflowMessage | None = None


class Publisher:
    """Accepts messages for one sandbox (module docstring); ``allowed``: hosts delivered to beside loopback."""

    def __init__(self, store: Store, engine: Deliveries, allowed: Collection[str] = ()) -> None:
        self.store, self.engine, self.allowed = store, engine, frozenset(allowed)
        self.runs = ServedRuns(engine.forget, engine.submit)
        engine.runs = self.runs
        engine.refusal = self.refusal
        #: URLs served in this process (the sandbox's registered workflows): no loopback rule for them
        self.local: Callable[[str], bool] = lambda url: False

    def check_url(self, url: str, what: str) -> str:
        if self.local(url):
            return url
        try:
            return check_url(url, self.allowed, what=what)
        except DestinationError as exc:
            raise ApiError(400, str(exc)) from None

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be delivered to (the engine asks before each attempt), or None."""
        try:
            self.check_url(url, "destination")
        except ApiError as exc:
            return f"{exc.message} (no workflow is registered at this URL either)"
        return None

    def check_urls(self, destination: Destination, options: MessageOptions) -> None:
        """The loopback rule for every URL a message names: its destination and its callbacks."""
        if destination.url is not None:
            self.check_url(destination.url, "destination")
        for what, settings in (("callback", options.callback), ("failure callback", options.failure_callback)):
            if settings.url is not None:
                self.check_url(settings.url, what)

    def publish(self, items: list[Publish], caller_ip: str | None) -> list[Any]:
        """Accept ``items`` (all or none); each one's answer: ``{messageId, url, deduplicated?}``, or a
        list of them for a URL group."""
        account = self.store.queue_account()
        for item in items:
            check_message(item.options, len(item.body), account)
            self.check_urls(item.destination, item.options)
            if item.queue is not None:
                check_name("queue", item.queue)
        now = now_ms()
        answers: list[Any] = []
        waiting: list[Waiting] = []
        new_queues: list[str] = []
        with self.store.transaction() as db:  # a refusal below (the day's limit) undoes it all
            db.execute("DELETE FROM dedup WHERE expires_at < ?", (now,))
            for item in items:
                key = self._dedup_key(item)
                seen = None if key is None else db.execute("SELECT result FROM dedup WHERE key = ?", (key,)).fetchone()
                if seen is not None:
                    answers.append(_deduplicated(json.loads(seen["result"])))
                    continue
                if item.queue is not None and self._ensure_queue(db, item.queue, account, now):
                    new_queues.append(item.queue)
                results = []
                for message, result in self._messages(db, item, account, caller_ip, now):
                    if item.workflow is not None and not self.runs.admit(db, item.workflow, message, item.options, now):
                        results.append({**result, "deduplicated": True})  # an Init of a run in progress
                        continue
                    waiting.append(insert_message(db, message, now))
                    results.append(result)
                answers.append(results if item.destination.group is not None else results[0])
                if key is not None:
                    db.execute("INSERT OR REPLACE INTO dedup (key, result, expires_at) VALUES (?, ?, ?)",
                               (key, json.dumps(answers[-1]), now + DEDUP_WINDOW_MS))
            take_daily(db, account, len(waiting), now / 1000)
        for name in new_queues:
            self.engine.queue_changed(name, 1)
        self.engine.submit(waiting)
        return answers

    def retry(self, dlq_ids: list[str]) -> list[dict[str, str]]:
        """Deliver the messages of these DLQ entries again, each as a new message (its own retries, the
        same URL, body, headers and options); the entries are consumed. Unknown ids, and entries of
        workflow runs, are skipped: the answer lists the new message of each entry retried."""
        now = now_ms()
        answers, waiting = [], []
        with self.store.transaction() as db:
            for dlq_id in dict.fromkeys(dlq_ids):
                row = db.execute("SELECT m.* FROM dlq d JOIN messages m ON m.seq = d.message_seq WHERE d.dlq_id = ?",
                                 (dlq_id,)).fetchone()
                if row is None:
                    continue
                db.execute("DELETE FROM dlq WHERE dlq_id = ?", (dlq_id,))
                message = copy_of(row, **UNTIED)
                waiting.append(insert_message(db, message, now))
                answers.append({"messageId": message.message_id, "dlqId": dlq_id})
        self.engine.submit(waiting)
        return answers

    @staticmethod
    def _dedup_key(item: Publish) -> str | None:
        where = item.destination.url or f"group:{item.destination.group}"
        if item.queue is not None:
            where = f"queue:{item.queue}:{where}"
        if item.options.deduplication_id is not None:
            return f"id:{where}:{item.options.deduplication_id}"
        if item.options.content_based_deduplication:
            digest = hashlib.sha256()
            for part in (where.encode(), json.dumps(sorted(item.options.forward)).encode(), item.body):
                digest.update(len(part).to_bytes(8, "big") + part)
            return f"content:{digest.hexdigest()}"
        return None

    @staticmethod
    def _ensure_queue(db: Any, name: str, account: Any, now: int) -> bool:
        """Make queue ``name`` on first use (parallelism 1); whether it was made."""
        if not check_room(db, "queues", "queues", "max_queues", account, {"name": name}):
            return False
        db.execute("INSERT INTO queues (name, parallelism, paused, created_at, updated_at) VALUES (?, 1, 0, ?, ?)",
                   (name, now, now))
        return True

    def _messages(self, db: Any, item: Publish, account: Any, caller_ip: str | None,
                  now: int) -> list[tuple[NewMessage, dict[str, Any]]]:
        """The message rows of ``item``: one, or one per endpoint of its URL group; with each one's answer."""
        options = item.options
        group = item.destination.group
        if group is None:
            targets = [(item.destination.url, None)]
        else:
            targets = [(r["url"], r["name"]) for r in db.execute(
                "SELECT url, name FROM topic_endpoints WHERE topic = ? ORDER BY rowid", (group,))]
            if not targets:
                raise ApiError(404, f"no URL group {group!r} with endpoints: add them with POST /v2/topics/{group}/endpoints")
        not_before = options.not_before * 1000 if options.not_before is not None else now + int(options.delay * 1000)
        settings = {"retry_delay": options.retry_delay, "timeout": options.timeout, "redact": list(options.redact),
                    "callback": asdict(options.callback), "failure_callback": asdict(options.failure_callback)}
        flow = options.flow_control
        made = []
        for url, endpoint in targets:
            message = NewMessage(
                url=url, body=item.body, method=options.method, headers=list(options.forward), options=settings,
                max_retries=retries_of(options, account), not_before=not_before, topic_name=group,
                endpoint_name=endpoint, queue_name=item.queue, schedule_id=item.schedule_id, caller_ip=caller_ip,
                label=options.label, flow_control_key=flow.key if flow else None,
                flow_control_value=flow.value if flow else None)
            made.append((message, {"messageId": message.message_id, "url": url}))
        return made


def _deduplicated(answer: Any) -> Any:
    if isinstance(answer, list):
        return [{**a, "deduplicated": True} for a in answer]
    return {**answer, "deduplicated": True}
