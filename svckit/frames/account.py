"""Account frames: the queue account's limits and usage, what the account holds and what each
resource uses against its limits, and two plans' limits side by side."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from svckit._units import mark
from svckit.account.plans import daily_limit_field
from svckit.account.resources import AccountResources, limit_of
from svckit.display import format_limit, plan_text, usage_text
from svckit.errors import mask
from svckit.frames._columns import Column, build, plain, secret_value

#: D1 limit fields: name -> (group, label, unit). Units follow the spec: sizes in bytes, delay and
#: timeout in seconds, DLQ retention in milliseconds. Order is display order.
ACCOUNT_LIMITS: dict[str, tuple[str, str, str]] = {
    "max_requests_per_second": ("throughput", "Requests per second", "requests/s"),
    "max_requests_per_day": ("throughput", "Requests per day (soft)", "requests/day"),
    "max_requests_per_day_hard": ("throughput", "Requests per day (hard)", "requests/day"),
    "max_message_size": ("sizes", "Message size", "bytes"),
    "max_events_size": ("sizes", "Events size", "bytes"),
    "max_dlq_size": ("dlq", "DLQ size", "messages"),
    "max_dlq_retention_time_milis": ("dlq", "DLQ retention", "ms"),
    "max_retries": ("dlq", "Retries per message", "retries"),
    "max_schedules": ("scheduling", "Schedules", "schedules"),
    "max_delay": ("scheduling", "Maximum delay", "s"),
    "timeout": ("scheduling", "Request timeout", "s"),
    "max_parallelism": ("parallelism", "Parallelism per endpoint", "requests"),
    "max_global_parallelism": ("parallelism", "Global parallelism", "requests"),
    "max_topics": ("plan", "URL groups", "URL groups"),  # the record's "topics" are the API's URL groups
    "max_endpoints_per_topic": ("plan", "Endpoints per URL group", "endpoints"),
    "max_queues": ("plan", "Queues", "queues"),
    "type": ("plan", "Plan type", ""),
    "reserved_type": ("plan", "Reserved plan", ""),
    "reserved_price": ("plan", "Reserved price", "USD"),
    "prod_pack_enabled": ("plan", "Production pack", ""),
    "last_plan_upgrade_time": ("plan", "Last plan upgrade", "unix s"),
}
#: the limits' groups, in display order (their titles: :data:`svckit.display.GROUP_TITLES`)
ACCOUNT_GROUPS: tuple[str, ...] = ("throughput", "sizes", "dlq", "scheduling", "parallelism", "plan")


def _record(account: Any) -> dict[str, Any]:
    if isinstance(account, Mapping):
        return dict(account)
    dump = getattr(account, "model_dump", None)
    if callable(dump):
        return {k: secret_value(v) for k, v in dump().items() if k not in ("token", "password")}
    return {name: getattr(account, name) for name in ACCOUNT_LIMITS if hasattr(account, name)}


LIMIT_COLUMNS = (
    Column("group", "category", categories=ACCOUNT_GROUPS), Column("limit", "string"), Column("label", "string"),
    Column("value", "object"), Column("unit", "string"), Column("numeric", "Float64"), Column("display", "string"),
)
COMPARE_COLUMNS = (Column("compare", "object"), Column("compare_display", "string"))


def account_limits_frame(account: Any, compare: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """The queue account record as one row per limit: ``group, limit, label, value, unit, display``.

    ``value`` keeps the raw value (object: ints, booleans, strings); ``numeric`` is a Float64 copy
    for numeric limits (NA otherwise) that charts use. With ``compare`` (for example
    ``PLAN_PRESETS["paid"]``) two more columns ``compare`` and ``compare_display`` hold that
    plan's value. Secrets (token, password) are never part of the frame.
    """
    record = _record(account)
    rows = []
    for name, (group, label, unit) in ACCOUNT_LIMITS.items():
        if name not in record:
            continue
        value = secret_value(record[name])
        numeric = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        if unit in ("unix s", "USD"):
            numeric = None  # not a limit to compare between plans
        shown = plan_text if name == "reserved_type" else format_limit  # a plan by its display name
        row = {"group": group, "limit": name, "label": label, "value": value, "unit": unit,
               "numeric": numeric, "display": shown(value, unit)}
        if compare is not None:
            other = secret_value(compare.get(name))
            row["compare"] = other
            row["compare_display"] = shown(other, unit) if name in compare else "—"
        rows.append(row)
    return build((*LIMIT_COLUMNS, *(COMPARE_COLUMNS if compare is not None else ())), rows)


#: what the account holds, counted from the queue service's lists: measure -> (label, the limit field)
ACCOUNT_RESOURCES: dict[str, tuple[str, str]] = {
    "schedules": ("Schedules", "max_schedules"), "queues": ("Queues", "max_queues"),
    "url_groups": ("URL groups", "max_topics"),
}

USAGE_COLUMNS = (
    Column("measure", "string", lambda r: r[0]), Column("label", "string", lambda r: r[1]),
    Column("used", "Int64", lambda r: r[2], "count"), Column("limit", "Int64", lambda r: r[3], "count"),
    Column("limit_field", "string", lambda r: r[4]),
    Column("share", "Float64", lambda r: r[2] / r[3] * 100 if r[3] else None, "percent"),
    Column("display", "string", lambda r: usage_text(r[2], r[3])),
)


def account_usage_frame(account: Any, stats: Any, *, counts: Mapping[str, int] | None = None,
                        today: str | None = None) -> pd.DataFrame:
    """What the queue account uses against its limits: one row per measure, ``measure, label, used,
    limit, share`` (``used`` as a percentage of ``limit``, NA where there is no limit) and ``display``.

    Rows: the requests (messages) accepted today (UTC) against the daily limit, the DLQ's entries
    against ``max_dlq_size``, the resources in ``counts`` (``schedules``, ``queues``, ``url_groups``:
    :data:`ACCOUNT_RESOURCES`, counted by the caller) against theirs, then the message log events of
    the stats' period by state (``delivered``, ``retry``, ``failed`` ..., no limit). ``stats`` is a
    :class:`svckit.account.QueueStats`."""
    record = _record(account)
    day = today or datetime.now(UTC).strftime("%Y-%m-%d")
    field = daily_limit_field(str(plain(record.get("type", ""))))
    per_day = int(record.get(field) or 0)
    rows = [("messages_today", "Requests today (UTC)", stats.requests_on(day), per_day, field),
            ("dlq", "Dead-letter queue", stats.dlq_message_count, int(record.get("max_dlq_size") or 0), "max_dlq_size")]
    rows += [(measure, label, (counts or {})[measure], int(record.get(limit) or 0), limit)
             for measure, (label, limit) in ACCOUNT_RESOURCES.items() if measure in (counts or {})]
    rows += [(f"events_{state}", f"Messages {state}", count, None, "")
             for state, count in sorted(stats.messages_by_state().items())]
    return build(USAGE_COLUMNS, rows)


#: the kinds of resource an account holds, in the order the frames list them
RESOURCE_KINDS: tuple[str, ...] = ("Key-value database", "Vector index", "Search index", "Queue account")


def _masked(secret: Any) -> str | None:
    """A token as a frame shows it: ``***abcd``; None where there is none (hidden, or not served)."""
    value = secret_value(secret)
    return mask(value) if value else None


def _vector_summary(index: Any) -> str:
    parts = [str(plain(index.index_type)), f"{index.dimension_count:,} dimensions" if index.dimension_count else "",
             index.similarity_function, index.embedding_model or "", index.sparse_embedding_model or ""]
    return " · ".join(p for p in parts if p)


def _text(i: int) -> Any:
    """A row's ``i``-th value as text, None for none or empty."""
    return lambda row: None if row[i] is None or row[i] == "" else str(row[i])


_RESOURCE_TEXTS = ("name", "id", "plan", "region", "state", "endpoint", "token", "summary")
RESOURCE_COLUMNS = (
    Column("kind", "category", lambda row: row[0], categories=RESOURCE_KINDS),
    *(Column(name, "string", _text(i)) for i, name in enumerate(_RESOURCE_TEXTS, 1)),
    Column("storage", "Int64", lambda row: row[9], "bytes"),
    Column("created", "utc_s", lambda row: row[10] or None),
)


def resources_frame(resources: AccountResources) -> pd.DataFrame:
    """What the account holds (:meth:`svckit.account.Account.resources`), one row per resource:
    ``kind`` (:data:`RESOURCE_KINDS`), ``name, id, plan, region, state, endpoint`` (the REST URL),
    ``token`` (masked: ``***abcd``; NA where the record has none), ``summary`` (port and TLS, an
    index's type, dimensions, metric and model, the queue plan's name), ``storage`` (bytes, from the
    stats read; NA where none) and ``created`` (UTC)."""
    rows: list[tuple[Any, ...]] = []
    for db in resources.databases:
        stats = resources.database_stats.get(db.database_id)
        summary = " · ".join(x for x in (f"port {db.port}" if db.port else "", "TLS" if db.tls else "no TLS") if x)
        rows.append(("Key-value database", db.database_name, db.database_id, db.type, db.region, db.state,
                     db.rest_url, _masked(db.rest_token), summary, stats.current_storage if stats else None,
                     db.creation_time))
    for ix in resources.vector_indexes:
        vstats = resources.vector_stats.get(ix.id)
        rows.append(("Vector index", ix.name, ix.id, ix.type, ix.region, None, ix.url, _masked(ix.token),
                     _vector_summary(ix), vstats.storage_usage if vstats else None, ix.creation_time))
    for sx in resources.search_indexes:
        rows.append(("Search index", sx.name, sx.id, sx.type, sx.region, None, sx.url or None, _masked(sx.token),
                     "", None, sx.creation_time))
    for acct in resources.queue_accounts:
        rows.append(("Queue account", "queue", acct.id, acct.plan, str(getattr(acct, "region", "") or ""),
                     plain(acct.state), None, _masked(acct.token), plan_text(acct.plan), None, acct.creation_time))
    return build(RESOURCE_COLUMNS, rows)


RESOURCE_USAGE_COLUMNS = (
    Column("kind", "category", lambda row: row[0], categories=RESOURCE_KINDS),
    *(Column(name, "string", lambda row, i=i: row[i]) for i, name in ((1, "name"), (2, "id"), (3, "measure"))),
    Column("used", "Int64", lambda row: row[4]), Column("limit", "Int64", lambda row: row[5]),
    Column("unit", "string", lambda row: row[6]),
    Column("share", "Float64", lambda row: row[4] / row[5] if row[5] else None, "share"),
    Column("display", "string", lambda row: usage_text(row[4], row[5], row[6])),
)


def resource_usage_frame(resources: AccountResources, *, today: str | None = None) -> pd.DataFrame:
    """What each resource uses against its limits, one row per measured quantity (long form):
    ``kind, name, id, measure, used, limit, unit, share, display``. ``unit`` is ``bytes`` (storage)
    or ``count``; ``limit`` is NA where the record gives none or ``-1`` (no limit), and so is
    ``share`` (``used / limit``, a share of 1); ``display`` is the row as read (``1.3 MiB``,
    ``12 of 10,000``). A resource whose stats could not be read has no rows (``resources.errors``
    says why). Measures: a database's commands today (UTC), storage and keys; a vector index's
    vectors, queries and updates today and storage; a queue account's messages today (UTC, against
    its daily limit) and its DLQ."""
    day = today or datetime.now(UTC).strftime("%Y-%m-%d")
    rows: list[tuple[Any, ...]] = []  # kind, name, id, measure, used, limit, unit
    for db in resources.databases:
        if (stats := resources.database_stats.get(db.database_id)) is None:
            continue
        rows += [("Key-value database", db.database_name, db.database_id, measure, used, limit, unit)
                 for measure, used, limit, unit in (
                     ("Commands today", stats.daily_net_commands, limit_of(db.db_request_limit), "count"),
                     ("Storage", stats.current_storage, db.storage_limit, "bytes"),
                     ("Keys", stats.keys, None, "count")) if used is not None]
    for ix in resources.vector_indexes:
        if (vstats := resources.vector_stats.get(ix.id)) is None:
            continue
        rows += [("Vector index", ix.name, ix.id, measure, used, limit, unit) for measure, used, limit, unit in (
            ("Vectors", vstats.current_vector_count, limit_of(ix.max_vector_count), "count"),
            ("Queries today", vstats.daily_query_count, limit_of(ix.max_daily_queries), "count"),
            ("Updates today", vstats.daily_update_count, limit_of(ix.max_daily_updates), "count"),
            ("Storage", vstats.storage_usage, None, "bytes"))]
    for acct in resources.queue_accounts:
        if (qstats := resources.queue_stats.get(acct.id)) is None:
            continue
        # the queue page's own measures (today's messages against the plan's daily limit, the DLQ)
        queue_usage = account_usage_frame(acct, qstats, today=day).set_index("measure")
        rows += [("Queue account", "queue", acct.id, measure, int(queue_usage.at[key, "used"]),
                  limit_of(queue_usage.at[key, "limit"]), "count")
                 for measure, key in (("Messages today", "messages_today"), ("DLQ", "dlq"))]
    return build(RESOURCE_USAGE_COLUMNS, rows)


def comparison_frame(limits: pd.DataFrame) -> pd.DataFrame:
    """The numeric rows of an :func:`account_limits_frame` made with ``compare``, plus
    ``current_pct`` and ``compare_pct``: both values as a share (0-100) of the larger one, so limits
    of very different magnitudes share one axis (a missing value counts as 0)."""
    numeric = limits[limits["numeric"].notna()].copy()
    other = pd.to_numeric(numeric["compare"], errors="coerce").astype("Float64")
    current = numeric["numeric"].astype("Float64")
    top = pd.concat([current, other], axis=1).max(axis=1).replace(0, pd.NA)
    numeric["current_pct"] = (current / top * 100).fillna(0).astype(float)
    numeric["compare_pct"] = (other / top * 100).fillna(0).astype(float)
    return mark(numeric)
