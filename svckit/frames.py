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

Conventions (so the widgets and notebooks can rely on them):
- integers that can be missing are pandas nullable ``Int64``; scores are ``Float64``;
- times are timezone-aware UTC datetimes (from Unix seconds or milliseconds, as the spec gives them);
- small closed vocabularies (key types, run and step states, plan types) are ``category``;
- every frame is marked to display readably in a notebook (:mod:`svckit.display`: ``49 ms``,
  ``2026-11-26 02:11:04``, shortened URLs), which changes its display only, never its data.

Every function takes the pydantic models of the clients (:mod:`svckit.queue.models`,
:mod:`svckit.vector.models`); a plain dict with the spec's wire names (``workflowRunId``), as the
local vector index and raw HTTP replies give, is validated into its model once at the door, so an
invalid record fails there with pydantic's ``ValidationError`` rather than as a half-empty row.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlsplit

import pandas as pd
from pydantic import BaseModel

from svckit._units import duration_text
from svckit.account.plans import daily_limit_field, plan_title
from svckit.account.resources import AccountResources, limit_of
from svckit.display import mark
from svckit.errors import mask
from svckit.kv.formats import format_bytes
from svckit.kv.keyspace import KeyInfo, KeyScan, ValuePage
from svckit.queue.models import (
    DlqMessage,
    Event,
    EventState,
    Message,
    QueueInfo,
    RunState,
    Schedule,
    StepGroupType,
    UrlGroup,
    WorkflowRun,
)
from svckit.vector.models import NamespaceInfo, QueryResult, VectorRecord

_M = TypeVar("_M", bound=BaseModel)
_P = ParamSpec("_P")

__all__ = [
    "ACCOUNT_LIMITS",
    "ACCOUNT_RESOURCES",
    "KEY_TYPES",
    "RESOURCE_KINDS",
    "account_limits_frame",
    "comparison_frame",
    "format_bytes",
    "format_limit",
    "keys_frame",
    "namespaces_frame",
    "pipeline_frame",
    "query_frame",
    "records_frame",
    "resource_usage_frame",
    "resources_frame",
    "runs_frame",
    "steps_frame",
    "value_frame",
]

#: TYPE replies, in the order the explorer lists them (ReJSON-RL is a JSON document).
KEY_TYPES: tuple[str, ...] = ("string", "hash", "list", "set", "zset", "stream", "ReJSON-RL", "none")


# -- small helpers ---------------------------------------------------------------------------------
#: the unit of each numeric column of a frame that has one (:func:`svckit._units.mark`), by function
_UNITS: dict[str, dict[str, str]] = {
    "keys_frame": {"ttl_s": "seconds", "memory_bytes": "bytes", "length": "count"},
    "query_frame": {"score": "score"},
    "hits_frame": {"score": "score", "sparse_terms": "count"},
    "namespaces_frame": {"vector_count": "count", "pending_vector_count": "count"},
    "explain_frame": dict.fromkeys(("score", "recomputed", "dense_score", "sparse_score", "dense_part",
                                    "sparse_part"), "score"),
    "explain_terms_frame": {**dict.fromkeys(("query_weight", "doc_weight", "contribution", "idf"), "score"),
                            "tf": "count", "doc_len": "count"},
    "fusion_stats_frame": {"candidates": "count", **dict.fromkeys(("mean", "std", "low", "high"), "score")},
    "runs_frame": {"groups": "count", "steps": "count"},
    "steps_frame": {"retries": "count"},
    "deliveries_frame": {"attempts": "count"},
    "queues_frame": {"lag": "count"},
    "account_usage_frame": {"used": "count", "limit": "count", "share": "percent"},
    "resources_frame": {"storage": "bytes"},
    "resource_usage_frame": {"share": "share"},
}


def _readable(build: Callable[_P, pd.DataFrame]) -> Callable[_P, pd.DataFrame]:
    """Mark the frames a function builds to display readably in a notebook (:mod:`svckit.display`:
    durations as ``49 ms``, times in UTC to the second, the units of :data:`_UNITS`: ``1.3 MiB``,
    ``2,003``, scores in six decimals); the data stays as built."""
    units = _UNITS.get(build.__name__, {})

    @functools.wraps(build)
    def marked(*args: _P.args, **kwargs: _P.kwargs) -> pd.DataFrame:
        return mark(build(*args, **kwargs), **units)

    return marked


def _plain(value: Any) -> Any:
    """An enum member's value (the models keep unknown states as plain ``str``)."""
    return value.value if isinstance(value, Enum) else value


def _secret_value(value: Any) -> Any:
    """Plain value of a field: enum members become their value (``PlanType.FREE`` -> ``"free"``)."""
    value = _plain(value)
    getter = getattr(value, "get_secret_value", None)
    return getter() if callable(getter) else value


def _utc(values: Iterable[Any], unit: str) -> pd.Series:
    """Unix ``unit`` ("s" or "ms") numbers -> UTC datetimes; None stays NaT."""
    numbers = pd.to_numeric(pd.Series(list(values), dtype="object"), errors="coerce")
    return pd.to_datetime(numbers, unit=unit, utc=True)


def _category(values: Iterable[Any], categories: Sequence[str] | None = None) -> pd.Categorical:
    """A categorical of wire values: enum members become their value, so unknown states that the
    models keep as plain strings and known ones compare and group alike."""
    values = [getattr(v, "value", v) for v in values]
    if categories is not None:
        extra = sorted({v for v in values if v is not None and v not in categories})
        return pd.Categorical(values, categories=[*categories, *extra])
    return pd.Categorical(values)


def _is_error(value: Any) -> bool:
    return isinstance(value, BaseException)


def _models(given: Any, model: type[_M], page_field: str) -> list[_M]:
    """Validate once at the door: a page (model, wire dict, or any object with ``page_field``), one
    item (model or wire dict), or any iterable of items -> a list of ``model``; None items (ids
    that ``fetch`` did not find) are left out."""
    if isinstance(given, Mapping):
        items = given.get(page_field, [given])
    elif isinstance(given, model):
        items = [given]
    elif not isinstance(given, (list, tuple)) and hasattr(given, page_field):
        items = getattr(given, page_field)
    else:
        items = given
    return [i if isinstance(i, model) else model.model_validate(i, from_attributes=True) for i in items if i is not None]


# -- key-value -------------------------------------------------------------------------------------
@_readable
def keys_frame(rows: Iterable[KeyInfo | Mapping[str, Any] | str] | KeyScan) -> pd.DataFrame:
    """Keys with their metadata: ``key, type, ttl_s, expires, memory_bytes, length``.

    ``rows`` is what :mod:`svckit.kv.keyspace` returns (``describe_keys``' :class:`KeyInfo` list,
    or a :class:`KeyScan` whose keys become rows with only the key), or dicts with ``key`` and any
    of ``type``, ``pttl`` (ms; -1 no expiry, -2 missing) or ``ttl`` (s), ``memory`` (bytes) and
    ``length``, or bare key strings. ``ttl_s`` is NA for keys without expiry; ``expires`` is the same
    as a duration.
    """
    given = rows.keys if isinstance(rows, KeyScan) else rows
    rows = [dataclasses.asdict(r) if isinstance(r, KeyInfo) else r for r in given]
    if all(isinstance(r, str) for r in rows):
        # bare key names (a full scan): no dict per row, metadata columns empty
        n = len(rows)
        return pd.DataFrame({
            "key": pd.array(rows, dtype="string"),
            "type": _category([None] * n, KEY_TYPES),
            "ttl_s": pd.array([None] * n, dtype="Int64"),
            "expires": pd.to_timedelta(pd.Series([float("nan")] * n, dtype="float64"), unit="ms"),
            "memory_bytes": pd.array([None] * n, dtype="Int64"),
            "length": pd.array([None] * n, dtype="Int64"),
        })
    records = [{"key": r} if isinstance(r, str) else dict(r) for r in rows]  # type: ignore[arg-type]
    keys = [r["key"] for r in records]
    ttl_ms: list[Any] = []
    for r in records:
        if r.get("pttl") is not None and not _is_error(r["pttl"]):
            ms = int(r["pttl"])
        elif r.get("ttl") is not None and not _is_error(r["ttl"]):
            ms = int(r["ttl"]) * 1000 if int(r["ttl"]) >= 0 else int(r["ttl"])
        else:
            ms = None
        ttl_ms.append(ms if ms is not None and ms >= 0 else None)

    def ints(name: str) -> pd.array:
        vals = [r.get(name) for r in records]
        return pd.array([None if v is None or _is_error(v) else int(v) for v in vals], dtype="Int64")

    ttl = pd.array(ttl_ms, dtype="Int64")
    frame = pd.DataFrame(
        {
            "key": pd.array(keys, dtype="string"),
            "type": _category([r.get("type") for r in records], KEY_TYPES),
            # ceil to whole seconds, the way TTL reports it
            "ttl_s": (ttl + 999) // 1000,
            "expires": pd.to_timedelta(pd.Series(ttl, dtype="Float64").astype("float64"), unit="ms"),
            "memory_bytes": ints("memory"),
            "length": ints("length"),
        }
    )
    return frame


def _flatten_json(value: Any, path: str = "$") -> list[tuple[str, Any]]:
    if isinstance(value, Mapping):
        if not value:
            return [(path, {})]
        out: list[tuple[str, Any]] = []
        for k, v in value.items():
            child = f"{path}.{k}" if str(k).isidentifier() else f"{path}[{json.dumps(str(k))}]"
            out.extend(_flatten_json(v, child))
        return out
    if isinstance(value, list):
        if not value:
            return [(path, [])]
        out = []
        for i, v in enumerate(value):
            out.extend(_flatten_json(v, f"{path}[{i}]"))
        return out
    return [(path, value)]


def _stream_id_parts(entry_id: str) -> tuple[int | None, int | None]:
    ms, _, seq = str(entry_id).partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        return None, None


@_readable
def value_frame(key_type: str | ValuePage, value: Any = None) -> pd.DataFrame:
    """A value of any key type as rows: ``value_frame(page)`` for a :class:`ValuePage` of
    :func:`svckit.kv.keyspace.read_page` (list indexes and sorted-set ranks count from the page's
    ``start``), or ``value_frame(type, value)`` for a helper's reply.

    ====================  =============================================================
    string                one row: ``value``
    hash                  ``field, value`` (sorted by field)
    list                  ``index, value``
    set                   ``member`` (sorted)
    zset                  ``rank, member, score`` from ``[(member, score), ...]``
    stream                ``id, time (UTC from the id's milliseconds), seq`` + one column per field
    ReJSON-RL / json      flattened: ``path, value, json_type`` (a ``$``-rooted path per leaf)
    ====================  =============================================================
    """
    start = 0
    if isinstance(key_type, ValuePage):
        page = key_type
        key_type, value, start = page.type, page.items, page.start
    t = (key_type or "").lower()
    if t == "string":
        return pd.DataFrame({"value": pd.array([value], dtype="object")})
    if t == "hash":
        items = sorted((value or {}).items())
        return pd.DataFrame({"field": pd.array([k for k, _ in items], dtype="string"),
                             "value": pd.array([v for _, v in items], dtype="object")})
    if t == "list":
        values = list(value or [])
        return pd.DataFrame({"index": pd.array(range(start, start + len(values)), dtype="Int64"),
                             "value": pd.array(values, dtype="object")})
    if t == "set":
        return pd.DataFrame({"member": pd.array(sorted(value or [], key=str), dtype="object")})
    if t == "zset":
        pairs = [(m, s) for m, s in (value or [])]
        return pd.DataFrame({
            "rank": pd.array(range(start, start + len(pairs)), dtype="Int64"),
            "member": pd.array([m for m, _ in pairs], dtype="object"),
            "score": pd.array([float(s) for _, s in pairs], dtype="Float64"),
        })
    if t == "stream":
        entries = list(value or [])
        ids = [str(e[0]) for e in entries]
        parts = [_stream_id_parts(i) for i in ids]
        fields = pd.DataFrame([dict(e[1]) for e in entries], index=range(len(entries)))
        head = pd.DataFrame({
            "id": pd.array(ids, dtype="string"),
            "time": _utc([p[0] for p in parts], "ms"),
            "seq": pd.array([p[1] for p in parts], dtype="Int64"),
        })
        return pd.concat([head, fields], axis=1)
    if t in ("rejson-rl", "json"):
        doc = value
        if isinstance(doc, str):
            doc = json.loads(doc)
        # JSON.GET with a $ path returns a one-element list of matches: show the document itself.
        if isinstance(doc, list) and len(doc) == 1 and isinstance(doc[0], (dict, list)):
            doc = doc[0]
        rows = _flatten_json(doc)
        return pd.DataFrame({
            "path": pd.array([p for p, _ in rows], dtype="string"),
            "value": pd.array([v for _, v in rows], dtype="object"),
            "json_type": _category([_json_type(v) for _, v in rows]),
        })
    if t == "none":
        return pd.DataFrame({"value": pd.array([], dtype="object")})
    raise ValueError(f"value_frame: unknown key type {key_type!r}; expected one of {', '.join(KEY_TYPES)}")


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


@_readable
def pipeline_frame(results: Sequence[Any], commands: Sequence[Sequence[Any]] | None = None) -> pd.DataFrame:
    """Pipeline or transaction replies, one row per command: ``command, ok, result, error``, in the
    order sent (the index is the command's position, from 0, as the replies' list counts).

    Failed elements are exception values (``CommandError``), as the clients return them; ``error``
    carries their message and ``ok`` is False for them.
    """
    results = list(results)
    cmds = [" ".join(str(a) for a in c) for c in commands] if commands is not None else [None] * len(results)
    if len(cmds) != len(results):
        raise ValueError(f"pipeline_frame: {len(cmds)} commands but {len(results)} results")
    return pd.DataFrame({
        "command": pd.array(cmds, dtype="string"),
        "ok": pd.array([not _is_error(r) for r in results], dtype="boolean"),
        "result": pd.array([None if _is_error(r) else r for r in results], dtype="object"),
        "error": pd.array([str(r) if _is_error(r) else None for r in results], dtype="string"),
    })


# -- vector ----------------------------------------------------------------------------------------
def _vector_frame(items: Sequence[QueryResult | VectorRecord],
                  leading: Mapping[str, pd.api.extensions.ExtensionArray]) -> pd.DataFrame:
    """``leading`` columns, then ``id, data, vector, sparse_indices, sparse_values`` and one
    ``metadata.<name>`` column per metadata field (nested fields dotted) of vector items."""
    sparse = [i.sparse_vector for i in items]
    frame = pd.DataFrame({
        **leading,
        "id": pd.array([i.id for i in items], dtype="string"),
        "data": pd.array([i.data for i in items], dtype="string"),
        "vector": pd.array([i.vector for i in items], dtype="object"),
        "sparse_indices": pd.array([None if sp is None else sp.indices for sp in sparse], dtype="object"),
        "sparse_values": pd.array([None if sp is None else sp.values for sp in sparse], dtype="object"),
    })
    metas = [dict(i.metadata or {}) for i in items]
    if any(metas):
        meta = pd.json_normalize(metas).add_prefix("metadata.").convert_dtypes()
        frame = pd.concat([frame, meta.set_index(frame.index)], axis=1)
    return frame


@_readable
def query_frame(results: Any) -> pd.DataFrame:
    """Query results, one row per hit: ``[query,] rank, id, score, data, vector, sparse_indices,
    sparse_values`` plus one ``metadata.<name>`` column per metadata field (nested fields dotted).
    ``rank`` counts from 1, as the widgets and the explanations do (the best hit is rank 1).

    A batch (a list of lists) gets a leading ``query`` column with the query's position. Accepts
    ``QueryResult`` models, the wire dicts of the local index, or a resumable query's first page
    (``ResumableQueryResult``: its ``scores``).
    """
    scores = results.get("scores") if isinstance(results, Mapping) else getattr(results, "scores", None)
    results = list(results if scores is None else scores)
    batch = bool(results) and isinstance(results[0], (list, tuple))
    groups = [_models(group, QueryResult, "scores") for group in (results if batch else [results])]
    hits = [hit for group in groups for hit in group]
    leading = {
        "query": pd.array([qi for qi, group in enumerate(groups) for _ in group], dtype="Int64"),
        "rank": pd.array([rank for group in groups for rank in range(1, len(group) + 1)], dtype="Int64"),
    }
    if not batch:
        del leading["query"]
    frame = _vector_frame(hits, leading)
    frame.insert(frame.columns.get_loc("id") + 1, "score", pd.array([h.score for h in hits], dtype="Float64"))
    return frame


@_readable
def records_frame(records: Any) -> pd.DataFrame:
    """Stored vectors (``fetch``, a ``range`` page, ``iter_range``), one row per vector: ``id, data,
    vector, sparse_indices, sparse_values`` and the ``metadata.<name>`` columns. ``None`` entries (ids
    that ``fetch`` did not find) are left out. Accepts ``VectorRecord`` models or wire dicts."""
    return _vector_frame(_models(records, VectorRecord, "vectors"), {})


@_readable
def namespaces_frame(info: Any) -> pd.DataFrame:
    """Per-namespace counts of an index (``IndexInfo`` or the wire ``info`` dict), one row per
    namespace, the default namespace ("") first: ``namespace, vector_count, pending_vector_count``."""
    given = info.get("namespaces") if isinstance(info, Mapping) else info.namespaces
    namespaces = {name: NamespaceInfo.model_validate(ns, from_attributes=True) for name, ns in (given or {}).items()}
    names = sorted(namespaces)
    return pd.DataFrame({
        "namespace": pd.array(names, dtype="string"),
        "vector_count": pd.array([namespaces[n].vector_count for n in names], dtype="Int64"),
        "pending_vector_count": pd.array([namespaces[n].pending_vector_count for n in names], dtype="Int64"),
    })


@_readable
def hits_frame(items: Sequence[Any]) -> pd.DataFrame:
    """One query's hits as the playground shows them: :func:`query_frame` with ``rank`` as int64,
    ``score`` as float64, and ``sparse_terms`` (the sparse vector's size) in place of its indices and
    values. Accepts the clients' QueryResult models (or their dicts)."""
    df = query_frame(list(items))
    df["rank"] = df["rank"].astype("int64")
    df["score"] = df["score"].astype("float64")
    df["id"] = df["id"].astype(str)
    df["sparse_terms"] = pd.array([None if v is None else len(v) for v in df["sparse_indices"]], dtype="Int64")
    return df.drop(columns=["sparse_indices", "sparse_values"])


def _nullable(values: Sequence[Any], dtype: str) -> pd.api.extensions.ExtensionArray:
    return pd.array([None if v is None else v for v in values], dtype=dtype)


@_readable
def explain_frame(explanation: Any) -> pd.DataFrame:
    """An explanation of a query's hits (:func:`svckit.vector.explain.explain_hits`), one row per hit:
    ``rank, id, score`` (as the query returned it), ``recomputed`` (from the parts), ``dense_rank,
    dense_score, sparse_rank, sparse_score``, ``dense_part, sparse_part`` (what each side adds to a
    fused score: ``1/(k+rank)`` for RRF, the normalised score for DBSF), ``terms`` (the query's words
    whose BM25 terms matched, best first) and ``formula`` (the arithmetic, in words)."""
    hits = list(explanation.hits)
    return pd.DataFrame({
        "rank": pd.array([h.rank for h in hits], dtype="Int64"),
        "id": pd.array([h.id for h in hits], dtype="string"),
        "score": pd.array([h.score for h in hits], dtype="Float64"),
        "recomputed": pd.array([h.recomputed for h in hits], dtype="Float64"),
        "dense_rank": _nullable([h.dense_rank for h in hits], "Int64"),
        "dense_score": _nullable([h.dense_score for h in hits], "Float64"),
        "sparse_rank": _nullable([h.sparse_rank for h in hits], "Int64"),
        "sparse_score": _nullable([h.sparse_score for h in hits], "Float64"),
        "dense_part": _nullable([h.dense_part for h in hits], "Float64"),
        "sparse_part": _nullable([h.sparse_part for h in hits], "Float64"),
        "terms": pd.array([", ".join(t.word or t.term for t in h.terms) for h in hits], dtype="string"),
        "formula": pd.array([h.formula for h in hits], dtype="string"),
    })


@_readable
def explain_terms_frame(explanation: Any, hit_id: str | None = None) -> pd.DataFrame:
    """The matched BM25 terms of the explained hits (or of one), one row per (hit, term): ``rank, id,
    word`` (as the query typed it), ``term`` (its stem, what the index stores), ``dimension,
    query_weight, doc_weight, contribution, tf, doc_len, idf``; a hit's contributions add up to its
    sparse score. ``tf``, ``doc_len`` and ``idf`` are known for a local index only (NA from the
    service)."""
    rows = [(h, t) for h in explanation.hits if hit_id is None or h.id == hit_id for t in h.terms]
    return pd.DataFrame({
        "rank": pd.array([h.rank for h, _ in rows], dtype="Int64"),
        "id": pd.array([h.id for h, _ in rows], dtype="string"),
        "word": pd.array([t.word or t.term for _, t in rows], dtype="string"),
        "term": pd.array([t.term for _, t in rows], dtype="string"),
        "dimension": pd.array([t.dimension for _, t in rows], dtype="Int64"),
        "query_weight": pd.array([t.query_weight for _, t in rows], dtype="Float64"),
        "doc_weight": pd.array([t.doc_weight for _, t in rows], dtype="Float64"),
        "contribution": pd.array([t.contribution for _, t in rows], dtype="Float64"),
        "tf": _nullable([t.tf for _, t in rows], "Int64"),
        "doc_len": _nullable([t.doc_len for _, t in rows], "Int64"),
        "idf": _nullable([t.idf for _, t in rows], "Float64"),
    })


@_readable
def fusion_stats_frame(explanation: Any) -> pd.DataFrame:
    """The candidate lists of a fused query, one row per side: ``side, candidates`` and, for DBSF, the
    normalisation ``mean, std, low`` (μ − 3σ, maps to 0) and ``high`` (μ + 3σ, maps to 1)."""
    stats = list(explanation.stats)
    return pd.DataFrame({
        "side": pd.array([s.side for s in stats], dtype="string"),
        "candidates": pd.array([s.candidates for s in stats], dtype="Int64"),
        **{name: pd.array([getattr(s, name) for s in stats], dtype="float64")
           for name in ("mean", "std", "low", "high")},
    })


# -- queue -----------------------------------------------------------------------------------------
#: how many trailing characters of a run id name it among the runs on screen (``…51Ts9a``)
SHORT_ID = 6


def run_key(run: WorkflowRun) -> str:
    """A run's identity: several runs may share a workflowRunId (a resumed run keeps it), so the key
    is ``<workflowRunId>@<workflowRunCreatedAt ms>``."""
    return f"{run.workflow_run_id}@{run.workflow_run_created_at}"


def workflow_name(url: str | None) -> str:
    """The workflow a URL serves, as people call it: the last segment of its path
    (``https://shop.example.com/api/workflows/order`` is ``order``); the host when there is no path."""
    if not url:
        return "?"
    parts = urlsplit(url)
    return parts.path.rstrip("/").rsplit("/", 1)[-1] or parts.netloc or url


def short_id(run_id: str | None) -> str:
    """The last :data:`SHORT_ID` characters of a run id: the random part, where ids differ."""
    return (run_id or "?")[-SHORT_ID:]


def run_name(url: str | None, label: str | None, run_id: str | None, *, whole_id: bool = False) -> str:
    """What a person calls a run of ``url``: its workflow (:func:`workflow_name`), its label when
    it has one, and its id, short (:func:`short_id`) unless ``whole_id``: ``order · checkout · 51Ts9a``."""
    rid = (run_id or "?") if whole_id else short_id(run_id)
    return " · ".join([workflow_name(url), *([label] if label else []), rid])


def _resumes(runs: Sequence[WorkflowRun]) -> list[int]:
    """Each run's place among the runs given that share its workflowRunId, by creation time: 0 is
    the original, 1 the first run resumed from it (through the DLQ), 2 the next, and so on."""
    times: dict[str, list[int]] = {}
    for r in runs:
        times.setdefault(r.workflow_run_id, []).append(r.workflow_run_created_at)
    for created in times.values():
        created.sort()
    return [bisect_left(times[r.workflow_run_id], r.workflow_run_created_at) for r in runs]


def _run_names(runs: Sequence[WorkflowRun], resumes: Sequence[int]) -> list[str]:
    """What a person calls each run: ``order · checkout · 51Ts9a``, and ``· resumed`` (``resumed 2``,
    ...) after a run resumed under the same id. Unique among ``runs`` whatever their order: names
    that would be equal show the whole id, and, failing that, the creation time in ms."""

    def name(r: WorkflowRun, k: int, whole_id: bool, at: bool) -> str:
        parts = [run_name(r.workflow_url, r.label, r.workflow_run_id, whole_id=whole_id)]
        parts += ["resumed" if k == 1 else f"resumed {k}"] if k else []
        return " · ".join(parts) + (f" @{r.workflow_run_created_at}" if at else "")

    names = [name(r, k, False, False) for r, k in zip(runs, resumes)]
    for at in (False, True):
        twice = {n for n, c in Counter(names).items() if c > 1}
        names = [name(r, k, True, at) if n in twice else n
                 for n, r, k in zip(names, runs, resumes)]
    return names


def _failed_step(run: WorkflowRun) -> str | None:
    return next((s.step_name for s in reversed(run.all_steps) if _plain(s.state) == "STEP_FAILED"), None)


@_readable
def runs_frame(runs: Any, *, newest_first: bool = False) -> pd.DataFrame:
    """Workflow runs, one row per run: ``key, workflow_run_id, workflow_url, state, created_at,
    completed_at, duration, groups, steps, failed_steps, last_step, label, workflow, short_id,
    resumed, run_name, failed_step``.

    ``runs`` is a list of ``WorkflowRun`` (or wire dicts), a ``LogsPage``, or any iterable such as
    ``q.iter_runs()``. ``key`` is :func:`run_key` (the workflowRunId is shared by a resumed run).
    ``newest_first`` orders the rows by creation, newest first (the timeline's Gantt rows).

    How a person tells the runs apart: ``workflow`` is :func:`workflow_name` of the URL, ``short_id``
    :func:`short_id`; ``resumed`` is true for a run created after another of the given runs with the
    same workflowRunId (the earliest is the original, the later ones were resumed from the DLQ);
    ``run_name`` puts them together, unique among the rows (``invoice-export · finance · 0KaY1z ·
    resumed``). ``failed_step`` is the name of the run's last STEP_FAILED step, if any.
    """
    runs = _models(runs, WorkflowRun, "runs")
    if newest_first:
        runs = sorted(runs, key=lambda r: r.workflow_run_created_at, reverse=True)
    steps = [r.all_steps for r in runs]
    created = _utc([r.workflow_run_created_at for r in runs], "ms")
    completed = _utc([r.workflow_run_completed_at for r in runs], "ms")
    resumes = _resumes(runs)
    return pd.DataFrame({
        "key": pd.array([run_key(r) for r in runs], dtype="string"),
        "workflow_run_id": pd.array([r.workflow_run_id for r in runs], dtype="string"),
        "workflow_url": pd.array([r.workflow_url for r in runs], dtype="string"),
        "state": _category([r.workflow_state for r in runs], [s.value for s in RunState]),
        "created_at": created,
        "completed_at": completed,
        "duration": completed - created,
        "groups": pd.array([len(r.steps) for r in runs], dtype="Int64"),
        "steps": pd.array([len(s) for s in steps], dtype="Int64"),
        "failed_steps": pd.array([sum("FAIL" in str(_plain(st.state)).upper() for st in s) for s in steps],
                                 dtype="Int64"),
        "last_step": pd.array([s[-1].step_name if s else None for s in steps], dtype="string"),
        "label": pd.array([r.label for r in runs], dtype="string"),
        "workflow": pd.array([workflow_name(r.workflow_url) for r in runs], dtype="string"),
        "short_id": pd.array([short_id(r.workflow_run_id) for r in runs], dtype="string"),
        "resumed": pd.array([k > 0 for k in resumes], dtype="bool"),
        "run_name": pd.array(_run_names(runs, resumes), dtype="string"),
        "failed_step": pd.array([_failed_step(r) for r in runs], dtype="string"),
    })


def _step_rows(run: WorkflowRun, now: pd.Timestamp) -> list[dict[str, Any]]:
    """The rows of one run's steps, with the time to the next event and the timeline's bar.

    A step created before the run was kept from the earlier run it was resumed from (not run again):
    its bar is the instant the run started, and the groups' starts, which end the bars before them,
    count only the steps this run ran. A run none of whose steps is as late as its creation ran none
    of them itself and kept none (clocks apart, not a resume): its steps are drawn as they are."""
    completed = run.workflow_run_completed_at
    began = run.workflow_run_created_at
    if not any(s.created_at >= began for s in run.all_steps):
        began = min((s.created_at for s in run.all_steps), default=began)
    run_start = pd.Timestamp(began, unit="ms", tz="UTC")
    in_progress = _plain(run.workflow_state) == RunState.RUN_STARTED.value
    starts = [min((s.created_at for s in g.steps if s.created_at >= began), default=None) for g in run.steps]
    attempts: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    for gi, g in enumerate(run.steps):
        # the next event after this group: the next group this run started later (the kept steps
        # of a resumed run keep their older times, so no negative durations)
        own = starts[gi]
        nxt = next((t for t in starts[gi + 1:] if t is not None and (own is None or t >= own)), completed)
        gtype = _plain(g.type)
        for position, s in enumerate(g.steps):
            kept = s.created_at < began
            # the bar ends at the next event; inside a sequential group, at the following step
            end = g.steps[position + 1].created_at if gtype != "parallel" and position + 1 < len(g.steps) else nxt
            start = run_start if kept else pd.Timestamp(s.created_at, unit="ms", tz="UTC")
            running = end is None and in_progress and not kept
            if running:
                bar_end = max(now, start)
            elif kept or end is None:
                bar_end = start
            else:
                bar_end = max(start, pd.Timestamp(end, unit="ms", tz="UTC"))
            retries = attempts.get(s.step_name, 0)
            attempts[s.step_name] = retries + 1
            rows.append({
                "workflow_run_id": run.workflow_run_id, "group": gi, "group_type": gtype,
                "lane": position if gtype == "parallel" else 0, "step_id": s.step_id,
                "step_name": s.step_name, "step_type": s.step_type, "call_type": s.call_type,
                "state": s.state, "message_id": s.message_id, "concurrent": s.concurrent, "out": s.out,
                "created": s.created_at, "next": nxt, "start": start, "end": bar_end, "running": running,
                "position": position, "retries": retries, "kept": kept,
            })
    return rows


@_readable
def steps_frame(run: Any, *, now: datetime | None = None) -> pd.DataFrame:
    """Steps of one run (or of several: pass a list), one row per step.

    Columns: ``workflow_run_id, group, group_type, lane, step_id, step_name, step_type, call_type,
    state, message_id, concurrent, out, created_at, next_event_at, duration, start, end, running,
    position, retries``.

    ``group`` is the step group's position; ``lane`` is the step's position inside a parallel group
    (0 for sequential steps), so a timeline can draw parallel steps side by side; ``position`` is
    the step's position inside its group whatever its type. ``duration`` is the time to the next
    event: the start of the next group that started later (a resumed run keeps the older times of
    the steps it did not run again), or the run's completion for the last group (NaT while the run
    is still going).

    The timeline's bar is ``start`` (the step's createdAt) to ``end``: the next event, except inside
    a sequential group of several steps, where it is the following step of that group. ``running``:
    the run is still going and the step has no next event, so its bar ends ``now`` (default: the
    current time). A failed or canceled run without a completion time ends its last steps where they
    started. ``retries`` counts the earlier attempts of the same step name in the run (the service
    records each failed attempt as its own STEP_RETRY entry before the next try).

    ``kept``: the step was kept from the earlier run this one was resumed from (its createdAt is before
    the run's workflowRunCreatedAt): it did not run again. Its ``created_at`` is when it ran in that
    run; its bar is the instant this run started (``start`` = ``end`` = the run's creation), not the
    time between the two runs. (A run with no step as late as its own creation kept none: clocks.)
    """
    now_ts = pd.Timestamp(now or datetime.now(UTC))
    rows = [row for r in _models(run, WorkflowRun, "runs") for row in _step_rows(r, now_ts)]
    created = _utc([r["created"] for r in rows], "ms")
    nxt = _utc([r["next"] for r in rows], "ms")
    return pd.DataFrame({
        "workflow_run_id": pd.array([r["workflow_run_id"] for r in rows], dtype="string"),
        "group": pd.array([r["group"] for r in rows], dtype="Int64"),
        "group_type": _category([r["group_type"] for r in rows], [t.value for t in StepGroupType]),
        "lane": pd.array([r["lane"] for r in rows], dtype="Int64"),
        "step_id": pd.array([r["step_id"] for r in rows], dtype="Int64"),
        "step_name": pd.array([r["step_name"] for r in rows], dtype="string"),
        "step_type": _category([r["step_type"] for r in rows]),
        "call_type": _category([r["call_type"] for r in rows]),
        "state": _category([r["state"] for r in rows]),
        "message_id": pd.array([r["message_id"] for r in rows], dtype="string"),
        "concurrent": pd.array([r["concurrent"] for r in rows], dtype="Int64"),
        "out": pd.array([r["out"] for r in rows], dtype="string"),
        "created_at": created,
        "next_event_at": nxt,
        "duration": nxt - created,
        "start": pd.to_datetime(pd.Series([r["start"] for r in rows], dtype="object"), utc=True),
        "end": pd.to_datetime(pd.Series([r["end"] for r in rows], dtype="object"), utc=True),
        "running": pd.array([r["running"] for r in rows], dtype="bool"),
        "position": pd.array([r["position"] for r in rows], dtype="int64"),
        "retries": pd.array([r["retries"] for r in rows], dtype="int64"),
        "kept": pd.array([r["kept"] for r in rows], dtype="bool"),
    })


# -- queue: DLQ entries and the events log ---------------------------------------------------------
__all__ += ["dlq_frame", "events_frame", "run_key", "run_name", "short_id", "workflow_name"]


@_readable
def dlq_frame(messages: Any) -> pd.DataFrame:
    """DLQ entries, one row per entry: ``dlq_id, workflow_run_id, workflow_url, label, entered_at,
    not_before, workflow_created_at, response_status, response_body, max_retries, message_id,
    flow_control_key``. ``messages`` is a ``DlqPage``, a list of ``DlqMessage`` (or wire dicts), or
    ``q.iter_dlq()``."""
    rows = _models(messages, DlqMessage, "messages")
    return pd.DataFrame({
        "dlq_id": pd.array([m.dlq_id for m in rows], dtype="string"),
        "workflow_run_id": pd.array([m.workflow_run_id for m in rows], dtype="string"),
        "workflow_url": pd.array([m.workflow_url or m.url for m in rows], dtype="string"),
        "label": pd.array([m.label for m in rows], dtype="string"),
        "entered_at": _utc([m.created_at for m in rows], "ms"),
        "not_before": _utc([m.not_before for m in rows], "ms"),
        "workflow_created_at": _utc([m.workflow_created_at for m in rows], "ms"),
        "response_status": pd.array([m.response_status for m in rows], dtype="Int64"),
        "response_body": pd.array([m.response_body for m in rows], dtype="string"),
        "max_retries": pd.array([m.max_retries for m in rows], dtype="Int64"),
        "message_id": pd.array([m.message_id for m in rows], dtype="string"),
        "flow_control_key": pd.array([m.flow_control_key for m in rows], dtype="string"),
    })


@_readable
def events_frame(events: Any) -> pd.DataFrame:
    """The events log, one row per delivery: ``time, state, workflow_run_id, step_name, message_id,
    url, label, response_status, error, next_delivery_at``; ``state`` is a category of the event
    states. ``events`` is an ``EventsPage``, a list of ``Event`` (or wire dicts), or ``q.iter_events()``."""
    rows = _models(events, Event, "events")
    return pd.DataFrame({
        "time": _utc([e.time for e in rows], "ms"),
        "state": _category([e.state for e in rows], [s.value for s in EventState]),
        "workflow_run_id": pd.array([e.workflow_run_id for e in rows], dtype="string"),
        "step_name": pd.array([e.step_name for e in rows], dtype="string"),
        "message_id": pd.array([e.message_id for e in rows], dtype="string"),
        "url": pd.array([e.url for e in rows], dtype="string"),
        "label": pd.array([e.label for e in rows], dtype="string"),
        "response_status": pd.array([e.response_status for e in rows], dtype="Int64"),
        "error": pd.array([e.error for e in rows], dtype="string"),
        "next_delivery_at": _utc([e.next_delivery_time for e in rows], "ms"),
        "url_group": pd.array([e.topic_name for e in rows], dtype="string"),
        "queue": pd.array([e.queue_name for e in rows], dtype="string"),
        "schedule_id": pd.array([e.schedule_id for e in rows], dtype="string"),
    })


#: the states that end a message; with ERROR, the events whose response status is one of its answers
_FINAL_EVENTS = ("DELIVERED", "FAILED", "CANCELED")


@_readable
def deliveries_frame(events: Any) -> pd.DataFrame:
    """The events log folded by message, one row per message, newest first: ``message_id, url, state,
    attempts, statuses, last_status, first_at, last_at, next_retry_at, in_dlq, url_group, queue,
    schedule_id, label, error``. ``attempts`` counts its deliveries (ACTIVE events); ``statuses`` the
    destination's answers in order (``"503 503 200"``); ``in_dlq`` is True once it FAILED. Events of
    workflow steps fold by their message too. ``events`` as :func:`events_frame` takes them."""
    rows = sorted(_models(events, Event, "events"), key=lambda e: e.time)
    folded: dict[str, dict[str, Any]] = {}
    for e in rows:
        state = _plain(e.state)
        m = folded.setdefault(e.message_id or "", {
            "message_id": e.message_id, "url": e.url, "state": state, "attempts": 0, "statuses": [],
            "first_at": e.time, "last_at": e.time, "next_retry_at": None, "url_group": e.topic_name,
            "queue": e.queue_name, "schedule_id": e.schedule_id, "label": e.label, "error": None})
        m["state"], m["last_at"] = state, e.time
        m["attempts"] += state == "ACTIVE"
        if e.response_status is not None and state in ("ERROR", *_FINAL_EVENTS):
            m["statuses"].append(str(e.response_status))
        m["next_retry_at"] = e.next_delivery_time if state in ("ERROR", "RETRY") else None
        if e.error:
            m["error"] = e.error
        if state == "DELIVERED":
            m["error"] = None
    ordered = sorted(folded.values(), key=lambda m: m["last_at"], reverse=True)
    return pd.DataFrame({
        "message_id": pd.array([m["message_id"] for m in ordered], dtype="string"),
        "url": pd.array([m["url"] for m in ordered], dtype="string"),
        "state": _category([m["state"] for m in ordered], [s.value for s in EventState]),
        "attempts": pd.array([m["attempts"] for m in ordered], dtype="Int64"),
        "statuses": pd.array([" ".join(m["statuses"]) or None for m in ordered], dtype="string"),
        "last_status": pd.array([int(m["statuses"][-1]) if m["statuses"] else None for m in ordered], dtype="Int64"),
        "first_at": _utc([m["first_at"] for m in ordered], "ms"),
        "last_at": _utc([m["last_at"] for m in ordered], "ms"),
        "next_retry_at": _utc([m["next_retry_at"] for m in ordered], "ms"),
        "in_dlq": pd.array([m["state"] == "FAILED" for m in ordered], dtype="boolean"),
        "url_group": pd.array([m["url_group"] for m in ordered], dtype="string"),
        "queue": pd.array([m["queue"] for m in ordered], dtype="string"),
        "schedule_id": pd.array([m["schedule_id"] for m in ordered], dtype="string"),
        "label": pd.array([m["label"] for m in ordered], dtype="string"),
        "error": pd.array([m["error"] for m in ordered], dtype="string"),
    })


@_readable
def messages_frame(messages: Any) -> pd.DataFrame:
    """Messages waiting for delivery (``q.message(id)``), one row each: ``message_id, url, method, due,
    created_at, max_retries, url_group, queue, schedule_id, label``."""
    rows = _models(messages, Message, "messages")
    return pd.DataFrame({
        "message_id": pd.array([m.message_id for m in rows], dtype="string"),
        "url": pd.array([m.url for m in rows], dtype="string"),
        "method": pd.array([m.method for m in rows], dtype="string"),
        "due": _utc([m.not_before for m in rows], "ms"),
        "created_at": _utc([m.created_at for m in rows], "ms"),
        "max_retries": pd.array([m.max_retries for m in rows], dtype="Int64"),
        "url_group": pd.array([m.topic_name for m in rows], dtype="string"),
        "queue": pd.array([m.queue_name for m in rows], dtype="string"),
        "schedule_id": pd.array([m.schedule_id for m in rows], dtype="string"),
        "label": pd.array([m.label for m in rows], dtype="string"),
    })


@_readable
def queues_frame(queues: Any) -> pd.DataFrame:
    """Queues (``q.queues()``), one row each: ``name, parallelism, lag, paused, created_at, updated_at``."""
    rows = _models(queues, QueueInfo, "queues")
    return pd.DataFrame({
        "name": pd.array([r.name for r in rows], dtype="string"),
        "parallelism": pd.array([r.parallelism for r in rows], dtype="Int64"),
        "lag": pd.array([r.lag for r in rows], dtype="Int64"),
        "paused": pd.array([r.paused for r in rows], dtype="boolean"),
        "created_at": _utc([r.created_at for r in rows], "ms"),
        "updated_at": _utc([r.updated_at for r in rows], "ms"),
    })


@_readable
def url_groups_frame(groups: Any) -> pd.DataFrame:
    """URL groups (``q.url_groups()``), one row per endpoint: ``url_group, endpoint_url, endpoint_name,
    created_at`` (a group with no endpoint: one row, the endpoint columns empty)."""
    rows = _models(groups, UrlGroup, "groups")
    flat = [(g, e) for g in rows for e in (g.endpoints or [None])]
    return pd.DataFrame({
        "url_group": pd.array([g.name for g, _ in flat], dtype="string"),
        "endpoint_url": pd.array([e.url if e else None for _, e in flat], dtype="string"),
        "endpoint_name": pd.array([e.name if e else None for _, e in flat], dtype="string"),
        "created_at": _utc([g.created_at for g, _ in flat], "ms"),
    })


@_readable
def schedules_frame(schedules: Any) -> pd.DataFrame:
    """Schedules (``q.schedules()``), one row each: ``schedule_id, destination, cron, paused, next_at,
    last_at, last_states, queue, label, error``."""
    rows = _models(schedules, Schedule, "schedules")
    return pd.DataFrame({
        "schedule_id": pd.array([r.schedule_id for r in rows], dtype="string"),
        "destination": pd.array([r.destination for r in rows], dtype="string"),
        "cron": pd.array([r.cron for r in rows], dtype="string"),
        "paused": pd.array([r.is_paused for r in rows], dtype="boolean"),
        "next_at": _utc([r.next_schedule_time for r in rows], "ms"),
        "last_at": _utc([r.last_schedule_time for r in rows], "ms"),
        "last_states": pd.array([", ".join(sorted(set((r.last_schedule_states or {}).values()))) or None
                                 for r in rows], dtype="string"),
        "queue": pd.array([r.queue_name for r in rows], dtype="string"),
        "label": pd.array([r.label for r in rows], dtype="string"),
        "error": pd.array([r.error for r in rows], dtype="string"),
    })


# -- account ---------------------------------------------------------------------------------------
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
ACCOUNT_GROUPS: tuple[str, ...] = ("throughput", "sizes", "dlq", "scheduling", "parallelism", "plan")
GROUP_TITLES: dict[str, str] = {
    "throughput": "Throughput", "sizes": "Sizes", "dlq": "Dead-letter queue", "scheduling": "Scheduling",
    "parallelism": "Parallelism", "plan": "Plan",
}


def format_limit(value: Any, unit: str) -> str:
    """A limit as a person reads it: bytes in KiB/MiB, ms/s as durations, big counts with separators."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if unit == "bytes":
        return format_bytes(value)
    if unit == "ms":
        return duration_text(float(value) / 1000)
    if unit == "s":
        return duration_text(float(value))
    if unit == "unix s":
        return "never" if not value else pd.Timestamp(int(value), unit="s", tz="UTC").strftime("%Y-%m-%d %H:%M UTC")
    if unit == "USD":
        return f"${float(value):,.2f}"
    if isinstance(value, (int, float)):
        return f"{value:,}" + (f" {unit}" if unit else "")
    return str(value) if value != "" else "—"


def _record(account: Any) -> dict[str, Any]:
    if isinstance(account, Mapping):
        return dict(account)
    dump = getattr(account, "model_dump", None)
    if callable(dump):
        return {k: _secret_value(v) for k, v in dump().items() if k not in ("token", "password")}
    return {name: getattr(account, name) for name in ACCOUNT_LIMITS if hasattr(account, name)}


def _plan_shown(value: Any, _unit: str) -> str:
    return plan_title(str(_plain(value))) if value else "—"


@_readable
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
        value = _secret_value(record[name])
        numeric = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        if unit in ("unix s", "USD"):
            numeric = None  # not a limit to compare between plans
        shown = _plan_shown if name == "reserved_type" else format_limit  # a plan by its display name
        row = {"group": group, "limit": name, "label": label, "value": value, "unit": unit,
               "numeric": numeric, "display": shown(value, unit)}
        if compare is not None:
            other = _secret_value(compare.get(name))
            row["compare"] = other
            row["compare_display"] = shown(other, unit) if name in compare else "—"
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[
        "group", "limit", "label", "value", "unit", "numeric", "display",
        *(["compare", "compare_display"] if compare is not None else []),
    ])
    frame["group"] = pd.Categorical(frame["group"], categories=list(ACCOUNT_GROUPS))
    frame["numeric"] = frame["numeric"].astype("Float64")
    for col in ("limit", "label", "unit", "display", *(["compare_display"] if compare is not None else [])):
        frame[col] = frame[col].astype("string")
    frame["value"] = frame["value"].astype("object")
    return frame


#: what the account holds, counted from the queue service's lists: measure -> (label, the limit field)
ACCOUNT_RESOURCES: dict[str, tuple[str, str]] = {
    "schedules": ("Schedules", "max_schedules"), "queues": ("Queues", "max_queues"),
    "url_groups": ("URL groups", "max_topics"),
}


@_readable
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
    field = daily_limit_field(str(_plain(record.get("type", ""))))
    per_day = int(record.get(field) or 0)
    rows = [("messages_today", "Requests today (UTC)", stats.requests_on(day), per_day, field),
            ("dlq", "Dead-letter queue", stats.dlq_message_count, int(record.get("max_dlq_size") or 0), "max_dlq_size")]
    rows += [(measure, label, (counts or {})[measure], int(record.get(limit) or 0), limit)
             for measure, (label, limit) in ACCOUNT_RESOURCES.items() if measure in (counts or {})]
    rows += [(f"events_{state}", f"Messages {state}", count, None, "")
             for state, count in sorted(stats.messages_by_state().items())]
    frame = pd.DataFrame([{
        "measure": measure, "label": label, "used": used, "limit": limit, "limit_field": limit_field,
        "share": used / limit * 100 if limit else None,
        "display": f"{used:,} of {limit:,}" if limit is not None else f"{used:,}",
    } for measure, label, used, limit, limit_field in rows],
        columns=["measure", "label", "used", "limit", "limit_field", "share", "display"])
    frame["used"] = frame["used"].astype("Int64")
    frame["limit"] = pd.array(frame["limit"].tolist(), dtype="Int64")
    frame["share"] = pd.array(frame["share"].tolist(), dtype="Float64")
    for col in ("measure", "label", "limit_field", "display"):
        frame[col] = frame[col].astype("string")
    return frame


#: the kinds of resource an account holds, in the order the frames list them
RESOURCE_KINDS: tuple[str, ...] = ("Key-value database", "Vector index", "Search index", "Queue account")


def _masked(secret: Any) -> str | None:
    """A token as a frame shows it: ``***abcd``; None where there is none (hidden, or not served)."""
    value = _secret_value(secret)
    return mask(value) if value else None


def _vector_summary(index: Any) -> str:
    parts = [str(_plain(index.index_type)), f"{index.dimension_count:,} dimensions" if index.dimension_count else "",
             index.similarity_function, index.embedding_model or "", index.sparse_embedding_model or ""]
    return " · ".join(p for p in parts if p)


@_readable
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
                     _plain(acct.state), None, _masked(acct.token), plan_title(acct.plan), None, acct.creation_time))
    columns = ["kind", "name", "id", "plan", "region", "state", "endpoint", "token", "summary", "storage", "created"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["kind"] = _category(frame["kind"], RESOURCE_KINDS)
    for col in ("name", "id", "plan", "region", "state", "endpoint", "token", "summary"):
        frame[col] = frame[col].astype("string").replace("", pd.NA)
    frame["storage"] = pd.array(frame["storage"].tolist(), dtype="Int64")
    frame["created"] = _utc([t or None for t in frame["created"]], "s")
    return frame


def _usage_text(used: int, limit: int | None, unit: str) -> str:
    text = format_bytes if unit == "bytes" else (lambda n: f"{n:,}")
    return f"{text(used)} of {text(limit)}" if limit is not None else text(used)


@_readable
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
    frame = pd.DataFrame([{
        "kind": kind, "name": name, "id": rid, "measure": measure, "used": used, "limit": limit, "unit": unit,
        "share": used / limit if limit else None, "display": _usage_text(used, limit, unit),
    } for kind, name, rid, measure, used, limit, unit in rows],
        columns=["kind", "name", "id", "measure", "used", "limit", "unit", "share", "display"])
    frame["kind"] = _category(frame["kind"], RESOURCE_KINDS)
    for col in ("name", "id", "measure", "unit", "display"):
        frame[col] = frame[col].astype("string")
    for col in ("used", "limit"):
        frame[col] = pd.array(frame[col].tolist(), dtype="Int64")
    frame["share"] = pd.array(frame["share"].tolist(), dtype="Float64")
    return frame


@_readable
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
    return numeric
