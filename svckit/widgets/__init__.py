"""Jupyter widgets over the svckit clients (docs/architecture.md: how they are built).

    from svckit.widgets import KVExplorer, AccountDashboard
    KVExplorer(c.kv)                 # browse, edit, console, monitor, pub/sub, bulk actions
    AccountDashboard(c.account)      # every resource of the account, drill into each; the queue account: limits, rotate / upgrade
    AccountDashboard(c.account, presets=svckit.sandbox.plans.PLAN_PRESETS)  # ... compared with a plan
    Deliveries(c.queue, label="billing")   # messages as they are delivered, followed live

Every widget weighs kilobytes when displayed (its charts are drawn by the notebook's own plotly.js,
``_chart``) and writes a static view beside itself that a saved or exported notebook shows with no
kernel (``_static``). Widgets are imported lazily so ``import svckit.widgets`` stays cheap. Shared
pieces: drawing in ``_common``, threads in ``_jobs``, figures in ``_plots``.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> "module:attribute"; a new widget adds one line here.
_WIDGETS: dict[str, str] = {
    "KVExplorer": "svckit.widgets.kv_explorer:KVExplorer",
    "AccountDashboard": "svckit.widgets.account_dashboard:AccountDashboard",
    "VectorPlayground": "svckit.widgets.vector_playground:VectorPlayground",
    "WorkflowTimeline": "svckit.widgets.workflow_timeline:WorkflowTimeline",
    "KeyspaceReport": "svckit.widgets.keyspace_report:KeyspaceReport",
    "MonitorProfiler": "svckit.widgets.monitor_profiler:MonitorProfiler",
    "Deliveries": "svckit.widgets.deliveries:Deliveries",
}

__all__ = ["AccountDashboard", "Deliveries", "KVExplorer", "KeyspaceReport", "MonitorProfiler",
           "VectorPlayground", "WorkflowTimeline"]


def __getattr__(name: str) -> Any:
    target = _WIDGETS.get(name)
    if target is None:
        raise AttributeError(f"module 'svckit.widgets' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WIDGETS})
