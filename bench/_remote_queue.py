"""The remote bench's workflow and account jobs: 1,000 successful runs and 1,000 failed ones (each in
the DLQ) made by the sandbox's own workflow runner, and the queue account.

Seeding goes through ``POST /v2/trigger/{url}`` (straight to the sandbox, up to 8 at a time): the
runner executes each workflow, records its steps and moves each failure to the DLQ exactly as it does
for a notebook. It runs the demo workflows, which the sandbox registers only when it starts with
``seed="demo"``. The peer is qstash's ``QStash``: its DLQ ``list`` in a cursor loop with its default
page (100, the most the service takes). qstash has no workflow-runs call and no SDK reads the account
record, so those jobs have no peer.
"""

from __future__ import annotations

import math
import time
from typing import Any

from _remote import Ctx, Job

from svckit._inflight import InFlight
from svckit.account import Account
from svckit.errors import NotFound
from svckit.queue import Queue, RunState
from svckit.queue.protocol import MAX_DLQ_COUNT, MAX_LOGS_COUNT
from svckit.sandbox.demo_workflows import INVOICE_URL, ORDER_URL
from svckit.sandbox.plans import PLAN_PRESETS
from svckit.widgets import AccountDashboard, WorkflowTimeline

RUNS = 1_000  # runs loaded into the timeline (its default max_runs)
FAILED = 1_000  # failed runs, each leaving a DLQ entry


def _order(i: int) -> dict[str, Any]:
    return {"id": i, "email": f"user{i}@example.com",
            "items": [{"sku": "MUG-01", "qty": 1 + i % 3, "price": 9.5}]}


def seed(ctx: Ctx) -> None:
    settings = ctx.connect_direct().settings
    # 2,000 runs are more than the free plan's 1,000 messages a day: the account moves up a tier first
    account = Account.from_settings(settings)
    account.set_queue_plan(account.queue_account().id, "qstash_fixed_10m")
    queue = Queue.from_settings(settings)
    try:
        with InFlight(8) as flight:
            for i in range(FAILED):  # retries=0: the ledger upload fails at once, into the DLQ
                flight.submit(lambda i=i: queue.trigger(INVOICE_URL, {"month": f"m{i}"}, retries=0))
            for i in range(RUNS):
                flight.submit(queue.trigger, ORDER_URL, _order(i))
    except NotFound as exc:
        raise RuntimeError("the sandbox serves no demo workflows: start it with seed='demo'") from exc
    deadline = time.monotonic() + 120
    while queue.workflow_logs(state=RunState.RUN_STARTED, count=1).runs:
        if time.monotonic() > deadline:
            raise RuntimeError("the seeded workflow runs did not finish within 120 s")
        time.sleep(0.2)
    total = sum(1 for _ in queue.iter_runs())
    dlq = sum(1 for _ in queue.iter_dlq())
    ctx.data["queue"] = {"runs": min(total, RUNS), "dlq": dlq}


# -- the jobs ---------------------------------------------------------------------------------


def timeline_ours(ctx: Ctx) -> None:
    w = WorkflowTimeline(ctx.connect().queue, max_runs=RUNS)
    assert w.run_count == ctx.data["queue"]["runs"] and not w.error


def dlq_ours(ctx: Ctx) -> None:
    assert sum(1 for _ in ctx.connect().queue.iter_dlq()) == ctx.data["queue"]["dlq"]


def _qstash(ctx: Ctx) -> Any:
    from qstash import QStash

    return ctx.peer("qstash", lambda: QStash(ctx.env["SVC_QUEUE_TOKEN"], base_url=ctx.env["SVC_QUEUE_URL"]))


def dlq_peer(ctx: Ctx) -> None:
    client, cursor, n = _qstash(ctx), None, 0
    while True:
        res = client.dlq.list(cursor=cursor)
        n += len(res.messages)
        cursor = res.cursor
        if cursor is None:
            break
    assert n == ctx.data["queue"]["dlq"]


def dashboard_ours(ctx: Ctx) -> None:
    w = AccountDashboard(ctx.connect().account, presets=PLAN_PRESETS, page="queue")
    assert w.account is not None and w.message_kind != "error"


def first_page_ours(ctx: Ctx) -> None:
    """The first page's read alone: every resource of the account and its usage (Account.resources)."""
    resources = ctx.connect().account.resources()
    assert resources.databases and resources.queue_accounts and not resources.errors


JOBS = [
    Job("workflow", "timeline: load 1,000 runs", timeline_ours,
        lambda ctx: math.ceil(ctx.data["queue"]["runs"] / MAX_LOGS_COUNT),
        peer_note="qstash has no workflow-runs call"),
    Job("workflow", "DLQ walk of 1,002 entries", dlq_ours,
        lambda ctx: math.ceil(ctx.data["queue"]["dlq"] / MAX_DLQ_COUNT), dlq_peer),
    Job("account", "account dashboard: load", dashboard_ours, lambda ctx: 1,
        peer_note="no SDK reads the account"),
    Job("account", "account resources: lists + stats", first_page_ours, lambda ctx: 2,
        peer_note="no SDK reads the account"),
]
