"""``seed("demo")`` for the queue area: a handful of realistic workflows and runs of each.

Deterministic (no randomness; the flaky step fails exactly twice per run) and quick (about a second),
so the workflow timeline has real runs to show and tests can rely on what is there:

=================  ==========================================  ==================================
workflow           what it does                                runs seeded
=================  ==========================================  ==================================
order              reserve stock, charge + notify in parallel,  3 x RUN_SUCCESS (labels checkout,
                   ship                                         checkout, vip)
payment-sync       a step that fails twice, then succeeds       1 x RUN_SUCCESS with 2 STEP_RETRY
newsletter-fanout  a parallel fan-out to four segments          1 x RUN_SUCCESS
invoice-export     the ledger upload always fails               2 x RUN_FAILED, both in the DLQ
data-backfill      a long SleepFor step                         1 x RUN_CANCELED
=================  ==========================================  ==================================

The runs are created once per data directory (a meta flag in the store); the workflows are
registered on every start so DLQ entries stay resumable after a restart.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from svckit.sandbox.workflow.local import WorkflowContext
from svckit.sandbox.workflow.runner import RunHandle, WorkflowRunner

log = logging.getLogger(__name__)

BASE = "https://shop.example.com/api/workflows"
ORDER_URL = f"{BASE}/order"
PAYMENT_SYNC_URL = f"{BASE}/payment-sync"
FANOUT_URL = f"{BASE}/newsletter-fanout"
INVOICE_URL = f"{BASE}/invoice-export"
BACKFILL_URL = f"{BASE}/data-backfill"
SEEDED_FLAG = "seeded:demo:served"  # the demo runs of a data directory from before runs were served: seed again


def order_workflow(context: WorkflowContext) -> dict[str, Any]:
    order = context.body or {}
    items = order.get("items", [])
    reservation = context.run("reserve-stock", lambda: {"reserved": len(items), "warehouse": "ams-1"})
    total = round(sum(i["qty"] * i["price"] for i in items), 2)
    done = context.parallel({
        "charge-card": lambda: {"charged": total, "currency": "EUR", "status": "captured"},
        "send-confirmation": lambda: {"to": order.get("email"), "template": "order-confirmed"},
    })
    shipment = context.run("create-shipment",
                           lambda: {"carrier": "postnl", "tracking": f"3S{order.get('id', 0):08d}"})
    return {"reservation": reservation, **done, "shipment": shipment}


def make_payment_sync() -> Callable[[WorkflowContext], Any]:
    attempts: Counter[str] = Counter()
    lock = threading.Lock()

    def fetch_settlements() -> dict[str, Any]:
        # Fails on its first two attempts in every run, like a gateway that is briefly unavailable.
        with lock:
            attempts[threading.current_thread().name] += 1
            n = attempts[threading.current_thread().name]
        if n <= 2:
            raise ConnectionError(f"payment gateway returned 503 (attempt {n})")
        return {"settlements": 17, "amount": 2481.5}

    def payment_sync(context: WorkflowContext) -> Any:
        batch = context.run("fetch-settlements", fetch_settlements)
        return context.run("book-settlements", lambda: {"booked": batch["settlements"]})

    return payment_sync


def newsletter_fanout(context: WorkflowContext) -> Any:
    segments = ["new-customers", "returning", "vip", "dormant"]
    audience = context.run("load-audience", lambda: {s: 100 + 25 * i for i, s in enumerate(segments)})

    def sender(segment: str) -> Callable[[], dict[str, Any]]:
        return lambda: {"segment": segment, "sent": audience[segment]}

    sent = context.parallel({f"send-{s}": sender(s) for s in segments})
    return context.run("report", lambda: {"total": sum(v["sent"] for v in sent.values())})


def invoice_export(context: WorkflowContext) -> Any:
    invoices = context.run("collect-invoices", lambda: {"count": 42, "month": (context.body or {}).get("month")})

    def upload() -> Any:
        raise PermissionError("ledger API rejected the upload: 403 invalid API key")

    return context.run("upload-to-ledger", upload) if invoices["count"] else None


def data_backfill(context: WorkflowContext) -> Any:
    context.run("plan-batches", lambda: {"batches": 120})
    context.sleep("wait-for-maintenance-window", 60)
    return context.run("copy-batches", lambda: {"copied": 120})


def register_demo(runner: WorkflowRunner) -> None:
    runner.register(ORDER_URL, order_workflow)
    runner.register(PAYMENT_SYNC_URL, make_payment_sync())
    runner.register(FANOUT_URL, newsletter_fanout)
    runner.register(INVOICE_URL, invoice_export)
    runner.register(BACKFILL_URL, data_backfill)


def seed_demo(runner: WorkflowRunner, timeout: float = 30.0) -> None:
    """Register the demo workflows and, once per data directory, run them (blocks until done)."""
    register_demo(runner)
    if runner.store.get_meta(SEEDED_FLAG):
        return
    handles: list[RunHandle] = []
    orders = [
        ("checkout", {"id": 1001, "email": "ada@example.com", "items": [{"sku": "MUG-01", "qty": 2, "price": 9.5}]}),
        ("checkout", {"id": 1002, "email": "lin@example.com", "items": [{"sku": "TEE-M", "qty": 1, "price": 24.0}]}),
        ("vip", {"id": 1003, "email": "grace@example.com",
                 "items": [{"sku": "LAMP-2", "qty": 1, "price": 89.0}, {"sku": "BULB", "qty": 4, "price": 3.25}]}),
    ]
    for label, order in orders:
        handles.append(runner.trigger(ORDER_URL, order, label=label))
    handles.append(runner.trigger(PAYMENT_SYNC_URL, {"day": "2026-11-21"}, label="nightly"))
    handles.append(runner.trigger(FANOUT_URL, {"campaign": "winter-sale"}, label="marketing"))
    for month in ("2026-09", "2026-10"):
        handles.append(runner.trigger(INVOICE_URL, {"month": month}, label="finance", retries=1,
                                      flow_control_key="ledger-api", flow_control_value="parallelism=1"))
    backfill = runner.trigger(BACKFILL_URL, {"table": "orders"}, label="ops")
    if runner.wait_for_step(backfill, "wait-for-maintenance-window", timeout=timeout):
        runner.cancel(backfill.workflow_run_id)
    for handle in [*handles, backfill]:
        runner.wait(handle, timeout=timeout)
    runner.store.set_meta(SEEDED_FLAG, "1")
    log.info("demo: %d workflow runs seeded", len(handles) + 1)
