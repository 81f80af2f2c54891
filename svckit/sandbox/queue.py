"""Area D of the sandbox: the queue service interface under ``/queue`` (paths carry /v2), Bearer auth.

The bearer token is the CURRENT ``token`` of the queue account record in the store, read on every
request, so a token rotated through /devapi/v2 is refused from the very next request on.

Routes (the runs' and the DLQ's endpoints are in :mod:`svckit.sandbox.queue_routes`, the messages',
queues', URL groups', schedules' in :mod:`svckit.sandbox.delivery`): the spec's two, then what the hosted
service's SDKs call (state rules in docs/errors.md; the filters, pages and reply shapes in
:mod:`svckit.sandbox.queue_reads`):
- ``GET  /v2/workflows/logs``           every filter of the spec; newest first; ``count`` 1..10
  (default 10; a larger value is rejected with 400, see docs/errors.md); cursor pagination that returns
  every run exactly once and leaves ``cursor`` out on the last page.
- ``POST /v2/dlq/resume/{dlqId}``       the four optional Service-* headers; removes the DLQ entry.
- ``POST /v2/dlq/resume``               many at once: ``{"dlqIds": [...]}`` (or ``?dlqIds=`` repeated);
  ``{"workflowRuns": [{workflowRunId, workflowCreatedAt}, ...]}`` in the order given.
- ``POST /v2/dlq/restart/{dlqId}``, ``POST /v2/dlq/restart``   the same, from the first step.
- ``GET  /v2/dlq``                      the qstash SDK's DLQ message shape and every filter of its
  ``DlqFilter`` and of the workflow SDK's list, newest first, ``count`` 1..100 (default 100), cursor.
- ``GET|DELETE /v2/dlq/{dlqId}``        one entry; delete answers ``"OK"``.
- ``DELETE /v2/dlq``                    ``{"dlqIds": [...]}`` -> ``{"deleted": n}``.
- ``DELETE /v2/workflows/runs/{id}``    cancel, like the real service (200 ``"OK"``; 404; 422 when
  the run is not in progress); with ``?cancel=false`` the run's app ends it (the body is its response).
- ``DELETE /v2/workflows/runs``         cancel many -> ``{"cancelled": n}``: the workflow SDK's query
  (``?workflowRunIds=`` repeated; or the run filters, ``workflowUrl`` a prefix unless
  ``workflowUrlExactMatch=true``, at most ``count``, default 100, newest first; or ``count`` alone:
  every run in progress, ``count`` of them); or the older body ``{"workflowRunIds": [...]}``,
  ``{"workflowUrl": prefix}``, ``{}`` / nothing (every run in progress).
- ``GET  /v2/events``                   the events log (one event per state of each message) in the
  qstash SDK's shape and with its ``LogFilter``; newest first, ``count`` 1..1000 (default 1000), cursor.
- ``POST /v2/trigger/{workflowUrl}``    start a run of the workflow at that URL (registered in the sandbox, or
  an app's ``serve()`` on loopback): its Init message (body = payload; headers Service-Workflow-RunId,
  Service-Retries, Service-Label, Service-Flow-Control-Key/-Value).

The workflow SDK's ``Client`` (``/v2/workflows/...``):
- ``GET  /v2/workflows/events?groupBy=workflowRunId``   ``logs()``: the runs, as ``/v2/workflows/logs``.
- ``POST /v2/workflows/dlq/resume``, ``/restart``, ``DELETE /v2/workflows/dlq``   by ``?dlqIds=``
  (repeated), or one page of the entries the DLQ filters select (none: every entry), ``count``
  (default 100, at most 1000) at a time, newest first, with the ``cursor`` of the next page; reply
  ``{workflowRuns}`` or ``{deleted}``, plus ``cursor`` while entries remain.
- ``POST /v2/batch``                    messages, published as one (:mod:`svckit.sandbox.delivery`); an
  Init message of a workflow run (``Client.trigger()``) starts the run, ``deduplicated`` for a run id
  already in progress. Every message is accepted, or none (413 for a message too large).
- ``POST /v2/workflows/dlq/callback/{dlqId}``   call the run's failure function again:
  ``{workflowRunId, workflowCreatedAt}``; 404; 422 when the run has no failure callback or it has not failed.

Every run is one kind, whoever serves its workflow: the user's app with the vendor's ``serve()``, or
the sandbox itself for the workflows registered on :attr:`QueueArea.runner`
(:mod:`svckit.sandbox.workflow`).

Message size: a run's message may not be larger than the queue account's ``max_message_size``, read
from the live record (a plan upgrade changes it at once): a trigger body over it is answered 413
``{"error"}`` before it is read (the area's body cap is that limit, unless ``queue_max_body_bytes``
sets another), and trigger, resume and restart answer 413 when the run's first message is over it.

Sources for the shapes the spec does not show: qstash 3.4.0's ``dlq.py``, ``log.py`` and
``message.py`` (installed) for the DLQ and events; @upstash/workflow 1.3.3's ``Client`` and ``DLQ``
(``src/client/index.ts``, ``src/client/dlq.ts``, and ``buildBulkActionQueryParameters``: ids, filters,
``count`` and ``cursor`` as query parameters, arrays repeated).
"""

from __future__ import annotations

from starlette.types import ASGIApp

from svckit.sandbox.area import Area, Health, SandboxContext
from svckit.sandbox.auth import bearer_check
from svckit.sandbox.delivery.burst import BurstLimit
from svckit.sandbox.delivery.engine import Deliveries
from svckit.sandbox.delivery.publish import Publisher
from svckit.sandbox.delivery.resources import Resources
from svckit.sandbox.delivery.routes import MessageRoutes
from svckit.sandbox.delivery.schedules import Schedules
from svckit.sandbox.http import AuthGate, json_app, off_loop
from svckit.sandbox.queue_routes import ROUTES
from svckit.sandbox.store import Store
from svckit.sandbox.workflow.routes import WorkflowRoutes
from svckit.sandbox.workflow.runner import WorkflowRunner


class QueueArea(Area):
    """Queue service interface plus the local workflow runner (``self.runner``)."""

    prefix = "/queue"

    def __init__(self, ctx: SandboxContext) -> None:
        super().__init__(ctx)
        self.store = Store.acquire(ctx)
        self.store.ensure_queue_account(ctx.credentials.devapi_email)
        # the local QStash: messages kept in the store and delivered to loopback (svckit/sandbox/delivery)
        options = ctx.options
        self.deliveries = Deliveries(self.store, signing_key=lambda: self.store.signing_keys()[0],
                                     account=self.store.queue_account, backoff_scale=options.queue_backoff_scale)
        self.publisher = Publisher(self.store, self.deliveries, options.allow_destinations)
        # the workflows the sandbox serves itself (the demo's, a test's): delivered to in process
        self.runner = WorkflowRunner(self.store, self.publisher, workers=options.queue_workers,
                                     retry_delay=options.queue_retry_delay)
        self.publisher.local = self.runner.serves
        self.deliveries.local = (self.runner.serves, self.runner.app)
        self.messages = MessageRoutes(self.store, self.publisher, self.deliveries)
        self.resources = Resources(self.store, self.publisher, self.deliveries)
        self.schedules = Schedules(self.store, self.publisher)
        self.workflows = WorkflowRoutes(self.store, self.publisher, self.deliveries)

    def max_message_size(self) -> int:
        """The account's current ``max_message_size`` (bytes), from the live record."""
        return int(self.store.queue_account()["max_message_size"])

    @property
    def max_body_bytes(self) -> int:
        """The account's ``max_message_size``, unless the ``queue_max_body_bytes`` option sets another cap."""
        cap = self.ctx.options.queue_max_body_bytes
        return self.max_message_size() if cap is None else cap

    def body_too_large(self, limit: int) -> str:
        if self.ctx.options.queue_max_body_bytes is not None:
            return super().body_too_large(limit)
        return (f"request body too large: the queue interface reads at most the account's max_message_size "
                f"of {limit} bytes per request (a trigger's body is its message); send a smaller body, or "
                "move to a plan with a larger max_message_size (POST /devapi/v2/queue-upgrade)")

    def app(self) -> ASGIApp:
        store = self.store
        app = json_app([*ROUTES, *self.messages.routes(), *self.resources.routes(), *self.schedules.routes(),
                        *self.workflows.routes()])
        app.state.area = self  # what the endpoints act on
        limited = BurstLimit(app, lambda: int(store.queue_account()["max_requests_per_second"]))
        return AuthGate(limited, bearer_check(store.queue_token, "queue token",
                                              " (a rotated token stops working at once)"),
                        'Bearer realm="queue"')

    async def holds(self) -> str:
        [row] = self.store.query("SELECT (SELECT COUNT(*) FROM runs) AS runs, (SELECT COUNT(*) FROM dlq) AS dlq")
        return f"{row['runs']:,} workflow runs, {row['dlq']:,} in the DLQ"

    async def health(self) -> list[Health]:
        return [await self.store.health()]

    def env(self, base_url: str) -> dict[str, str]:
        # Read from the store each time: it reflects a rotation done through /devapi/v2.
        current, upcoming = self.store.signing_keys()
        return {"SVC_QUEUE_URL": f"{base_url}{self.prefix}", "SVC_QUEUE_TOKEN": self.store.queue_token(),
                "SVC_QUEUE_CURRENT_SIGNING_KEY": current, "SVC_QUEUE_NEXT_SIGNING_KEY": upcoming}

    async def seed(self, name: str) -> None:
        if name == "demo":
            from svckit.sandbox.demo_workflows import seed_demo

            await off_loop(seed_demo, self.runner)

    async def start(self) -> None:
        await self.deliveries.start()
        await self.schedules.start()

    async def stop(self) -> None:
        await self.schedules.stop()
        await self.deliveries.stop()
        self.store.release()
