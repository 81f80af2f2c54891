"""The workflow-run timeline (:class:`WorkflowTimeline`): ``app`` (filters, the Gantt, a run's steps,
resume and cancel), ``dlq_panel`` (the dead-letter queue), ``run_detail`` (one run as HTML)."""

from svckit.widgets.workflow_timeline.app import WorkflowTimeline
from svckit.widgets.workflow_timeline.dlq_panel import DLQ_ACTIONS

__all__ = ["DLQ_ACTIONS", "WorkflowTimeline"]
