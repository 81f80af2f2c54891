"""Key-value frames: keys with their metadata, a value of any key type, pipeline replies."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from svckit._units import mark
from svckit.frames._columns import Column, build, is_error
from svckit.kv.keyspace import KeyInfo, KeyScan, ValuePage

#: TYPE replies, in the order the explorer lists them (ReJSON-RL is a JSON document).
KEY_TYPES: tuple[str, ...] = ("string", "hash", "list", "set", "zset", "stream", "ReJSON-RL", "none")


def _ttl_ms(row: Mapping[str, Any] | str) -> int | None:
    """A key's time to live in ms from ``pttl`` (ms) or ``ttl`` (s); None without expiry (-1),
    for a missing key (-2), a failed read or a bare key name."""
    if isinstance(row, str):
        return None
    if row.get("pttl") is not None and not is_error(row["pttl"]):
        ms = int(row["pttl"])
    elif row.get("ttl") is not None and not is_error(row["ttl"]):
        ms = int(row["ttl"]) * 1000 if int(row["ttl"]) >= 0 else int(row["ttl"])
    else:
        return None
    return ms if ms >= 0 else None


def _ttl_s(row: Mapping[str, Any] | str) -> int | None:
    ms = _ttl_ms(row)
    return None if ms is None else (ms + 999) // 1000  # ceil to whole seconds, the way TTL reports it


def _int(row: Mapping[str, Any] | str, name: str) -> int | None:
    value = None if isinstance(row, str) else row.get(name)
    return None if value is None or is_error(value) else int(value)


def _memory(row: Mapping[str, Any] | str) -> int | None:
    return _int(row, "memory")


def _length(row: Mapping[str, Any] | str) -> int | None:
    return _int(row, "length")


KEYS_COLUMNS = (
    Column("key", "string", lambda r: r if isinstance(r, str) else r["key"]),
    Column("type", "category", lambda r: None if isinstance(r, str) else r.get("type"), categories=KEY_TYPES),
    Column("ttl_s", "Int64", _ttl_s, "seconds"),
    Column("expires", "duration_ms", _ttl_ms),
    Column("memory_bytes", "Int64", _memory, "bytes"),
    Column("length", "Int64", _length, "count"),
)


def keys_frame(rows: Iterable[KeyInfo | Mapping[str, Any] | str] | KeyScan) -> pd.DataFrame:
    """Keys with their metadata: ``key, type, ttl_s, expires, memory_bytes, length``.

    ``rows`` is what :mod:`svckit.kv.keyspace` returns (``describe_keys``' :class:`KeyInfo` list,
    or a :class:`KeyScan` whose keys become rows with only the key), or dicts with ``key`` and any
    of ``type``, ``pttl`` (ms; -1 no expiry, -2 missing) or ``ttl`` (s), ``memory`` (bytes) and
    ``length``, or bare key strings. ``ttl_s`` is NA for keys without expiry; ``expires`` is the same
    as a duration.
    """
    given = rows.keys if isinstance(rows, KeyScan) else rows
    return build(KEYS_COLUMNS, [dataclasses.asdict(r) if isinstance(r, KeyInfo) else r for r in given])


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


def _first(row: Sequence[Any]) -> Any:
    return row[0]


def _second(row: Sequence[Any]) -> Any:
    return row[1]


#: the columns of a value of each key type; rows are (index, value) pairs, (rank, member, score)
#: triples, (id, fields) stream entries and (path, value) JSON leaves
VALUE_COLUMNS: dict[str, tuple[Column, ...]] = {
    "string": (Column("value", "object", lambda v: v),),
    "hash": (Column("field", "string", _first), Column("value", "object", _second)),
    "list": (Column("index", "Int64", _first), Column("value", "object", _second)),
    "set": (Column("member", "object", lambda m: m),),
    "zset": (Column("rank", "Int64", _first), Column("member", "object", _second),
             Column("score", "Float64", lambda r: float(r[2]))),
    "stream": (Column("id", "string", lambda e: str(e[0])),
               Column("time", "utc_ms", lambda e: _stream_id_parts(e[0])[0]),
               Column("seq", "Int64", lambda e: _stream_id_parts(e[0])[1])),
    "json": (Column("path", "string", _first), Column("value", "object", _second),
             Column("json_type", "category", lambda r: _json_type(r[1]))),
    "none": (Column("value", "object"),),
}


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
    t = "json" if t == "rejson-rl" else t
    if t not in VALUE_COLUMNS:
        raise ValueError(f"value_frame: unknown key type {key_type!r}; expected one of {', '.join(KEY_TYPES)}")
    rows: list[Any]
    if t == "string":
        rows = [value]
    elif t == "hash":
        rows = sorted((value or {}).items())
    elif t == "list":
        rows = list(enumerate(value or [], start))
    elif t == "set":
        rows = sorted(value or [], key=str)
    elif t == "zset":
        rows = [(rank, m, s) for rank, (m, s) in enumerate(value or [], start)]
    elif t == "stream":
        rows = list(value or [])
        fields = pd.DataFrame([dict(e[1]) for e in rows], index=range(len(rows)))
        return mark(pd.concat([build(VALUE_COLUMNS[t], rows), fields], axis=1))
    elif t == "json":
        doc = json.loads(value) if isinstance(value, str) else value
        # JSON.GET with a $ path returns a one-element list of matches: show the document itself.
        if isinstance(doc, list) and len(doc) == 1 and isinstance(doc[0], (dict, list)):
            doc = doc[0]
        rows = _flatten_json(doc)
    else:
        rows = []
    return build(VALUE_COLUMNS[t], rows)


PIPELINE_COLUMNS = (
    Column("command", "string", _first),
    Column("ok", "boolean", lambda r: not is_error(r[1])),
    Column("result", "object", lambda r: None if is_error(r[1]) else r[1]),
    Column("error", "string", lambda r: str(r[1]) if is_error(r[1]) else None),
)


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
    return build(PIPELINE_COLUMNS, zip(cmds, results))
