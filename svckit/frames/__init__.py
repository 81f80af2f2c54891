"""Every client result as a tidy pandas DataFrame.

Plain functions rather than a ``df.svc`` accessor: the inputs are client results (lists of models,
pipeline replies, account records), not DataFrames, so there is nothing for an accessor to hang off;
a function named after what it builds reads best at the call site::

    from svckit import frames
    frames.keys_frame(meta)                 # one row per key: type, TTL, memory, length
    frames.value_frame("hash", kv.hgetall("user:1"))
    frames.pipeline_frame(commands, pipe.exec())
    frames.query_frame(v.query_data("red shoes", include_metadata=True))
    frames.records_frame(v.iter_range(include_metadata=True)); frames.namespaces_frame(v.info())
    frames.hits_frame(hits); frames.explain_frame(explain_hits(v, "red shoes"))
    frames.runs_frame(q.iter_runs()); frames.steps_frame(run)
    frames.dlq_frame(q.iter_dlq()); frames.events_frame(q.iter_events())
    frames.account_limits_frame(account.queue_account())

One module per area (:mod:`~svckit.frames.kv`, :mod:`~svckit.frames.vector`,
:mod:`~svckit.frames.queue`, :mod:`~svckit.frames.account`), each frame described by its columns
(``KEYS_COLUMNS``, ``RUN_COLUMNS`` ...: name, source, dtype, unit) and made by the one builder,
:func:`svckit.frames._columns.build`; so a frame of empty input has the same columns and dtypes.

Conventions (so the widgets and notebooks can rely on them):
- integers that can be missing are pandas nullable ``Int64``; scores are ``Float64``;
- times are timezone-aware UTC datetimes (from Unix seconds or milliseconds, as the spec gives them);
- small closed vocabularies (key types, run and step states, plan types) are ``category``;
- every frame is marked to display readably in a notebook (:mod:`svckit.display`: ``49 ms``,
  ``2026-11-26 02:11:04``, shortened URLs, the units its columns give: ``1.3 MiB``, ``2,003``),
  which changes its display only, never its data.

Every function takes the pydantic models of the clients (:mod:`svckit.queue.models`,
:mod:`svckit.vector.models`); a plain dict with the spec's wire names (``workflowRunId``), as the
local vector index and raw HTTP replies give, is validated into its model once at the door, so an
invalid record fails there with pydantic's ``ValidationError`` rather than as a half-empty row.
How a limit or a usage reads (``format_limit``, ``GROUP_TITLES``) is :mod:`svckit.display`'s, and
``format_bytes`` :mod:`svckit.kv.formats`'; they are here too for the callers that know them here.
"""

from svckit.display import GROUP_TITLES, format_limit
from svckit.frames.account import (
    ACCOUNT_GROUPS,
    ACCOUNT_LIMITS,
    ACCOUNT_RESOURCES,
    RESOURCE_KINDS,
    account_limits_frame,
    account_usage_frame,
    comparison_frame,
    resource_usage_frame,
    resources_frame,
)
from svckit.frames.kv import KEY_TYPES, keys_frame, pipeline_frame, value_frame
from svckit.frames.queue import (
    SHORT_ID,
    deliveries_frame,
    dlq_frame,
    events_frame,
    messages_frame,
    queues_frame,
    run_key,
    run_name,
    runs_frame,
    schedules_frame,
    short_id,
    steps_frame,
    url_groups_frame,
    workflow_name,
)
from svckit.frames.vector import (
    explain_frame,
    explain_terms_frame,
    fusion_stats_frame,
    hits_frame,
    namespaces_frame,
    query_frame,
    records_frame,
)
from svckit.kv.formats import format_bytes

__all__ = [
    "ACCOUNT_GROUPS",
    "ACCOUNT_LIMITS",
    "ACCOUNT_RESOURCES",
    "GROUP_TITLES",
    "KEY_TYPES",
    "RESOURCE_KINDS",
    "SHORT_ID",
    "account_limits_frame",
    "account_usage_frame",
    "comparison_frame",
    "deliveries_frame",
    "dlq_frame",
    "events_frame",
    "explain_frame",
    "explain_terms_frame",
    "format_bytes",
    "format_limit",
    "fusion_stats_frame",
    "hits_frame",
    "keys_frame",
    "messages_frame",
    "namespaces_frame",
    "pipeline_frame",
    "query_frame",
    "queues_frame",
    "records_frame",
    "resource_usage_frame",
    "resources_frame",
    "run_key",
    "run_name",
    "runs_frame",
    "schedules_frame",
    "short_id",
    "steps_frame",
    "url_groups_frame",
    "value_frame",
    "workflow_name",
]
