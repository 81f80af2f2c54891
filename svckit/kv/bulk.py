"""Bulk actions on every key under a pattern: a dry run first, then delete, set or clear TTL, export.

::

    from svckit.kv import KV, plan_bulk, bulk_delete, bulk_expire, bulk_export, pattern_for_prefix
    kv = KV.from_env()
    plan = plan_bulk(kv, "session:*")            # counts and samples, SCAN in bounded steps
    plan.count, plan.sample[:5], plan.complete
    summary = bulk_expire(kv, plan, 3600)        # EXPIRE in pipelines of 500, with a progress bar
    frame = bulk_export(kv, pattern_for_prefix("user", ":"), format="frame").frame
    summary = bulk_delete(kv, "session:*", cancel=stop_event)   # UNLINK; stops between batches
    summary.matched, summary.done, summary.failed, summary.errors, summary.cancelled

Why a run looks like this:
- SCAN walks the keyspace in bounded steps (:func:`svckit.kv.keyspace.walk_keys`, one call at a
  time), so a million keys never sit in one reply; SCAN may return a key twice, so every run keeps
  the keys it has seen (the walk's seen-set, not a second list of them) and acts on each one once:
  the counts are exact.
- Each batch of at most ``batch`` keys is one pipeline (one request) with one command per key, so
  each key's outcome is known: done (the command took effect), skipped (the key was already gone,
  or had no TTL to clear) or failed (its error is kept, up to ``max_errors`` of them). Delete sends
  one UNLINK naming the whole batch instead: its reply is the exact number removed (on a Redis
  Cluster, whose UNLINK takes keys of one slot only, one UNLINK per key).
- The batches run beside the SCAN walk, a few at a time (:class:`svckit._inflight.InFlight`): far
  from the service a run takes about as long as its chain of SCAN calls, not that plus a round trip
  per batch. Their outcomes are counted in the order they were sent.
- ``cancel`` (a ``threading.Event`` or a callable returning True) is checked before each batch is
  sent and between SCAN calls; the batches already sent finish. A cancelled run reports exactly
  what it did before stopping. ``progress`` is
  :mod:`svckit._progress`'s (a tqdm bar, nothing, or a hook called with a ``Progress``): after each
  batch, phase the action's name, ``done`` the keys touched (done + skipped + failed) of the plan's
  ``count`` when known, unit ``"keys"``, note ``"12 batches"``, and the requests made so far
  (``round_trips``: SCAN calls and batch requests); the dry run reports its walk.
- Writes are refused before any request under a Read Only token (the client's ``readonly``), and a
  gateway's NOPERM refusal of the command (a client built from the Read Only token without saying
  so) stops the run with the same advice: use a Standard token. A NOPERM refusal of a key (an ACL
  token, ``ACL RESTTOKEN``, whose user may touch only part of the keyspace) fails that key only:
  it is counted and its error kept, and the run goes on. The dry run only reads, but SCAN itself is
  refused to the Read Only token, so it too needs the Standard token.

Only the sync client is served: a bulk run is a long loop of requests, which a notebook runs in a
thread (the KV explorer's Bulk tab does) rather than on the event loop.
"""

from __future__ import annotations

import csv
import functools
import json
import re
import time
from collections.abc import Callable, Generator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from svckit._inflight import InFlight
from svckit._progress import Cancel, ProgressArg, Reporter, is_cancelled
from svckit._units import mark
from svckit.errors import CommandError, InvalidArgument, SvcError
from svckit.kv.keyspace import SCAN_COUNT, KeyScan, queue_read, walk_keys

if TYPE_CHECKING:
    import pandas as pd

    from svckit.kv.client import KV, BasePipeline

DEFAULT_BATCH = 500
DEFAULT_SCAN_COUNT = SCAN_COUNT
DEFAULT_MAX_ERRORS = 100
GLOB_SPECIALS = "\\*?[]"
ACTIONS = ("delete", "expire", "persist", "export")
EXPORT_FORMATS = ("csv", "jsonl", "frame")


def pattern_for_prefix(prefix: str, delimiter: str = ":") -> str:
    """The SCAN pattern of a key-tree node: every key under ``prefix`` + ``delimiter``, with the glob
    characters of both escaped (``pattern_for_prefix("a*b", ":")`` is ``a\\*b:*``). A prefix that
    already ends with the delimiter is not given a second one; an empty prefix is every key."""
    if not prefix:
        return "*"
    node = prefix if not delimiter or prefix.endswith(delimiter) else prefix + delimiter
    return "".join("\\" + ch if ch in GLOB_SPECIALS else ch for ch in node) + "*"


def _readonly_error(action: str) -> InvalidArgument:
    return InvalidArgument("kv", f"bulk {action} writes keys, and this client uses the Read Only token, which "
                                 "may not: use a client with the Standard token (SVC_KV_TOKEN, "
                                 "KV.from_env() without readonly=True)")


def _refuse_readonly(kv: Any, action: str) -> None:
    if getattr(kv, "readonly", False):
        raise _readonly_error(action)


def _is_noperm(exc: BaseException) -> bool:
    return isinstance(exc, CommandError) and "NOPERM" in str(exc)


#: Redis's refusal of a key the ACL user may not touch (7.0 wording, then 7.2's), not of the command
_KEY_NOPERM = re.compile(r"\bNOPERM\b.*\bto access (?:one of the keys|a key)\b", re.IGNORECASE)


def _is_key_noperm(exc: BaseException) -> bool:
    return isinstance(exc, CommandError) and _KEY_NOPERM.search(str(exc)) is not None


def _is_crossslot(exc: BaseException) -> bool:
    """A Redis Cluster's refusal of a command whose keys hash to several slots."""
    return isinstance(exc, CommandError) and "CROSSSLOT " in str(exc)


# -- the dry run ----------------------------------------------------------------------------------


@dataclass
class BulkPlan:
    """What a bulk action would touch: ``count`` keys matching ``pattern`` (and ``type``), a
    ``sample`` of them, after ``calls`` SCAN requests; ``complete`` is False when the dry run
    stopped early (``limit``, ``max_calls`` or ``cancel``), so ``count`` is then a lower bound;
    ``cancelled`` is True when ``cancel`` stopped it (:mod:`svckit._progress`)."""

    pattern: str
    type: str | None = None
    count: int = 0
    sample: list[Any] = field(default_factory=list)
    calls: int = 0
    complete: bool = False
    elapsed: float = 0.0
    total: int | None = None  #: the keyspace's size (DBSIZE) when the dry run read it
    cancelled: bool = False


def _walk(kv: KV[Any], scan: KeyScan, **options: Any) -> Generator[tuple[KeyScan, list[Any]], None, None]:
    """:func:`~svckit.kv.keyspace.walk_keys` keeping only its seen-set (repeats dropped, each
    step's keys handed over and not kept again), the Read Only token's SCAN refusal said plainly."""
    try:
        yield from walk_keys(kv, scan, keep=False, **options)
    except CommandError as exc:
        if _is_noperm(exc):
            raise InvalidArgument("kv", "SCAN is refused to the Read Only token, so bulk actions (even a "
                                        "dry run) need a client with the Standard token (SVC_KV_TOKEN)") from exc
        raise


def _dbsize(kv: KV[Any]) -> int | None:
    try:
        return int(kv.dbsize())
    except SvcError:
        return None


def plan_bulk(kv: KV[Any], pattern: str = "*", *, type: str | None = None, sample: int = 20,
              scan_count: int = DEFAULT_SCAN_COUNT, limit: int | None = None, max_calls: int | None = None,
              total: int | None = None, cancel: Cancel = None, progress: ProgressArg = True) -> BulkPlan:
    """The dry run: SCAN the keyspace in bounded steps and count (exactly, repeats dropped) the keys
    a bulk action on ``pattern`` would touch, keeping the first ``sample`` of them. Stops early at
    ``limit`` keys, ``max_calls`` SCAN calls or ``cancel`` (checked between SCAN calls; then
    ``complete`` is False). Writes nothing, so a Read Only client may call it, but the server
    refuses SCAN to that token. ``progress`` reports the walk (:func:`~svckit.kv.walk_keys`):
    phase ``"scan"``, keys walked of ``total`` (DBSIZE, read when progress is on and it is not
    given), note ``"1,234 matching"``."""
    started = time.perf_counter()
    plan = BulkPlan(pattern, type)
    if total is None and progress is not False:
        total = _dbsize(kv)
    plan.total = total
    scan = KeyScan(pattern, type, scan_count)
    with closing(_walk(kv, scan, total=total, cancel=cancel, progress=progress)) as steps:
        for state, new in steps:
            plan.count += len(new)
            plan.calls = state.calls
            room = sample - len(plan.sample)
            if room > 0:
                plan.sample.extend(new[:room])
            if (limit is not None and plan.count >= limit) or (max_calls is not None and plan.calls >= max_calls):
                break
    plan.complete, plan.cancelled = scan.complete, scan.cancelled
    plan.elapsed = time.perf_counter() - started
    return plan


# -- running an action -----------------------------------------------------------------------------


@dataclass
class BulkSummary:
    """What a bulk run did. ``matched``: distinct keys SCAN found (each acted on once); ``done``:
    keys the action took effect on (deleted, TTL set or cleared, exported); ``skipped``: keys the
    command left as they were (already gone, or no TTL to clear); ``failed``: keys whose command
    failed, with up to ``max_errors`` of their messages in ``errors`` (key -> message).
    ``cancelled`` runs stopped between batches; ``pending`` keys were found but not acted on then.
    An export's ``path`` (csv / jsonl) or ``frame`` (DataFrame) holds what it wrote."""

    action: str
    pattern: str
    matched: int = 0
    done: int = 0
    skipped: int = 0
    failed: int = 0
    pending: int = 0
    errors: dict[Any, str] = field(default_factory=dict)
    cancelled: bool = False
    complete: bool = False
    batches: int = 0
    scan_calls: int = 0
    elapsed: float = 0.0
    expected: int | None = None
    path: Path | None = None
    frame: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.cancelled

    def text(self) -> str:
        """One line a person reads: what was done, what failed, how long it took."""
        verb = {"delete": "deleted", "expire": "TTL set on", "persist": "TTL cleared on",
                "export": "exported"}.get(self.action, self.action)
        parts = [f"{self.matched:,} keys matched {self.pattern!r}", f"{verb} {self.done:,}"]
        if self.skipped:
            why = "had no TTL or were gone" if self.action == "persist" else "were already gone"
            parts.append(f"{self.skipped:,} {why}")
        if self.failed:
            parts.append(f"{self.failed:,} failed")
        if self.cancelled:
            parts.append(f"cancelled after {self.batches:,} batches ({self.pending:,} found but not touched)")
        parts.append(f"{self.batches:,} batch{'' if self.batches == 1 else 'es'} in {self.elapsed:.1f} s")
        where = f" → {self.path}" if self.path is not None else ""
        return " · ".join(parts) + where


class _Action:
    """What one action sends for a batch of keys (``send``, on a worker thread beside the SCAN walk)
    and what the replies mean (``take``, back on the caller's thread): a subclass per action."""

    name = ""
    #: requests one batch makes
    requests = 1

    def send(self, kv: KV[Any], keys: Sequence[Any]) -> Any:
        raise NotImplementedError

    def take(self, keys: Sequence[Any], sent: Any, summary: BulkSummary, max_errors: int) -> None:
        self.account(keys, sent, summary, max_errors)

    @staticmethod
    def account(keys: Sequence[Any], replies: Sequence[Any], summary: BulkSummary, max_errors: int) -> None:
        for key, reply in zip(keys, replies, strict=True):
            if isinstance(reply, SvcError):
                if _is_noperm(reply) and not _is_key_noperm(reply):  # the command itself is refused
                    raise _readonly_error(summary.action) from reply
                summary.failed += 1
                if len(summary.errors) < max_errors:
                    summary.errors[key] = str(reply)
            elif reply:
                summary.done += 1
            else:
                summary.skipped += 1


class _Delete(_Action):
    """One UNLINK naming every key of the batch: its reply counts the keys removed, the rest were
    already gone, and the gateway parses one command instead of ``batch`` of them. UNLINK fails for
    no single key but one the token may not touch (an ACL user's key pattern), which refuses the
    whole command, and on a Redis Cluster for keys in several slots (CROSSSLOT): then the batch is
    asked again key by key, so the others go and each key's outcome is known. After a CROSSSLOT
    every batch goes key by key at once: on a cluster, a batch of SCAN's keys spans slots."""

    name = "delete"

    def __init__(self) -> None:
        self.each_key = False  # set once a CROSSSLOT said the keys live on a cluster

    def send(self, kv: KV[Any], keys: Sequence[Any]) -> Any:
        if not self.each_key:
            removed = kv.pipeline().unlink(*keys).exec()[0]
            if len(keys) == 1 or not (_is_key_noperm(removed) or _is_crossslot(removed)):
                return removed
            self.each_key = _is_crossslot(removed)
        pipe = kv.pipeline()
        for key in keys:
            pipe.unlink(key)
        return pipe.exec()

    def take(self, keys: Sequence[Any], sent: Any, summary: BulkSummary, max_errors: int) -> None:
        if isinstance(sent, list):  # asked key by key
            self.account(keys, sent, summary, max_errors)
            return
        if isinstance(sent, SvcError):
            self.account(keys, [sent] * len(keys), summary, max_errors)
            return
        summary.done += int(sent)
        summary.skipped += len(keys) - int(sent)


class _EachKey(_Action):
    """One command per key in one pipeline (EXPIRE, PERSIST): a reply of 1 took effect, 0 did not."""

    def __init__(self, name: str, command: Callable[[BasePipeline, Any], Any]) -> None:
        self.name, self.command = name, command

    def send(self, kv: KV[Any], keys: Sequence[Any]) -> Any:
        pipe = kv.pipeline()
        for key in keys:
            self.command(pipe, key)
        return pipe.exec()


def export_value(key_type: str, value: Any) -> Any:
    """A value as plain JSON data: a string as is, a hash as an object, a list as an array, a set as
    a sorted array, a sorted set as ``[[member, score], ...]``, a stream as ``[[id, {fields}], ...]``,
    a JSON document as the document."""
    if key_type == "set":
        return sorted(value, key=str)
    if key_type == "zset":
        return [[m, float(s)] for m, s in value]
    if key_type == "stream":
        return [[i, dict(f)] for i, f in value]
    if key_type == "ReJSON-RL":
        doc = json.loads(value) if isinstance(value, str) else value
        return doc[0] if isinstance(doc, list) and len(doc) == 1 else doc
    return value


class _Export(_Action):
    """Per batch: TYPE and PTTL of every key (one pipeline), then each value's read (another). The
    records go to the sink on the caller's thread, batch after batch in SCAN order."""

    name = "export"
    requests = 2

    def __init__(self, sink: Callable[[dict[str, Any]], Any]) -> None:
        self.sink = sink

    def send(self, kv: KV[Any], keys: Sequence[Any]) -> Any:
        pipe = kv.pipeline()
        for key in keys:
            pipe.type(key).pttl(key)
        meta = pipe.exec()
        pipe = kv.pipeline()
        reads: list[tuple[int, str, Any, Callable[[Any], Any]]] = []
        replies: list[Any] = [None] * len(keys)
        for i, key in enumerate(keys):
            key_type, pttl = meta[2 * i], meta[2 * i + 1]
            if isinstance(key_type, SvcError) or isinstance(pttl, SvcError):
                replies[i] = key_type if isinstance(key_type, SvcError) else pttl
            elif key_type == "none":
                replies[i] = False  # gone since SCAN saw it
            else:
                try:
                    reads.append((i, key_type, pttl, queue_read(pipe, key, key_type)))
                except InvalidArgument:
                    replies[i] = CommandError(f"no export for type {key_type!r}")
        records = []
        for (i, key_type, pttl, decode), value in zip(reads, pipe.exec() if reads else [], strict=True):
            if isinstance(value, SvcError):
                replies[i] = value
            elif value is None or (key_type != "string" and not value):
                replies[i] = False  # gone between TYPE and the read
            else:
                records.append({"key": keys[i], "type": key_type, "ttl_ms": pttl if pttl >= 0 else None,
                                "value": export_value(key_type, decode(value).items)})
                replies[i] = True
        return replies, records

    def take(self, keys: Sequence[Any], sent: Any, summary: BulkSummary, max_errors: int) -> None:
        replies, records = sent
        for record in records:
            self.sink(record)
        self.account(keys, replies, summary, max_errors)


def _run(kv: KV[Any], action: _Action, target: str | BulkPlan, *, type: str | None, batch: int,
         scan_count: int, cancel: Cancel, progress: ProgressArg, max_errors: int) -> BulkSummary:
    if batch < 1:
        raise InvalidArgument("batch", f"a batch needs at least 1 key, got {batch!r}")
    if action.name != "export":
        _refuse_readonly(kv, action.name)
    plan = target if isinstance(target, BulkPlan) else None
    pattern = plan.pattern if plan is not None else str(target)
    scan = KeyScan(pattern, plan.type if plan is not None else type, scan_count)
    summary = BulkSummary(action.name, pattern, expected=plan.count if plan is not None and plan.complete else None)
    started = time.perf_counter()
    pending: list[Any] = []

    def took(keys: Sequence[Any], sent: Any) -> None:
        action.take(keys, sent, summary, max_errors)
        summary.batches += 1
        report(action.name, summary.done + summary.skipped + summary.failed, summary.expected, unit="keys",
               note=f"{summary.batches:,} batches", round_trips=summary.scan_calls + summary.batches * action.requests)

    # the batches run beside the SCAN walk, a few at a time (InFlight), so far from the service the run
    # takes about as long as its SCAN chain rather than the chain plus a round trip per batch
    with Reporter(progress) as report, InFlight() as beside, closing(_walk(kv, scan, cancel=cancel)) as steps:
        for state, new in steps:
            summary.matched += len(new)
            summary.scan_calls = state.calls
            pending.extend(new)
            while pending and (len(pending) >= batch or state.complete) and not is_cancelled(cancel):
                keys, pending = pending[:batch], pending[batch:]
                beside.submit(action.send, kv, keys, then=functools.partial(took, keys))
    summary.complete = scan.complete and not pending
    summary.cancelled = not summary.complete  # the walk and the batches stop early only when cancelled
    summary.pending = len(pending)
    summary.elapsed = time.perf_counter() - started
    return summary


def bulk_delete(kv: KV[Any], target: str | BulkPlan, *, type: str | None = None, batch: int = DEFAULT_BATCH,
                scan_count: int = DEFAULT_SCAN_COUNT, cancel: Cancel = None, progress: ProgressArg = True,
                max_errors: int = DEFAULT_MAX_ERRORS) -> BulkSummary:
    """UNLINK every key matching ``target`` (a pattern, or a :class:`BulkPlan`'s pattern and type),
    in pipelines of at most ``batch`` keys; ``done`` counts keys removed, ``skipped`` keys already
    gone. Refused under a Read Only token before any request."""
    return _run(kv, _Delete(), target, type=type, batch=batch, scan_count=scan_count, cancel=cancel,
                progress=progress, max_errors=max_errors)


def bulk_expire(kv: KV[Any], target: str | BulkPlan, seconds: int, *, type: str | None = None,
                batch: int = DEFAULT_BATCH, scan_count: int = DEFAULT_SCAN_COUNT, cancel: Cancel = None,
                progress: ProgressArg = True, max_errors: int = DEFAULT_MAX_ERRORS) -> BulkSummary:
    """EXPIRE every matching key in ``seconds`` (a positive number: to remove the expiry use
    :func:`bulk_persist`)."""
    if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 1:
        raise InvalidArgument("seconds", f"a TTL in whole seconds >= 1, got {seconds!r}; bulk_persist clears TTLs")
    expire = _EachKey("expire", lambda pipe, key: pipe.expire(key, seconds))
    return _run(kv, expire, target, type=type, batch=batch, scan_count=scan_count, cancel=cancel,
                progress=progress, max_errors=max_errors)


def bulk_persist(kv: KV[Any], target: str | BulkPlan, *, type: str | None = None, batch: int = DEFAULT_BATCH,
                 scan_count: int = DEFAULT_SCAN_COUNT, cancel: Cancel = None, progress: ProgressArg = True,
                 max_errors: int = DEFAULT_MAX_ERRORS) -> BulkSummary:
    """PERSIST every matching key (clear its TTL); ``skipped`` counts keys that had none."""
    persist = _EachKey("persist", lambda pipe, key: pipe.persist(key))
    return _run(kv, persist, target, type=type, batch=batch, scan_count=scan_count, cancel=cancel,
                progress=progress, max_errors=max_errors)


def _csv_row(record: dict[str, Any]) -> list[Any]:
    value = record["value"]
    text = value if record["type"] == "string" else json.dumps(value, ensure_ascii=False, default=str)
    return [record["key"], record["type"], "" if record["ttl_ms"] is None else record["ttl_ms"], text]


def export_frame(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """What an export wrote, as a DataFrame (``bulk_export(..., format="frame").frame``), one row per
    exported key: ``key, type, ttl_ms`` (nullable) and ``value`` (Python data)."""
    import pandas as pd

    return mark(pd.DataFrame({
        "key": pd.array([r["key"] for r in records], dtype="object"),
        "type": pd.array([r["type"] for r in records], dtype="string"),
        "ttl_ms": pd.array([r["ttl_ms"] for r in records], dtype="Int64"),
        "value": pd.array([r["value"] for r in records], dtype="object"),
    }), ttl_ms="ms")


def read_export(path: str | Path) -> list[dict[str, Any]]:
    """Records of a CSV or JSON lines export (by its suffix), values parsed back to Python data:
    what a round trip compares, and how an export is loaded elsewhere."""
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as fh:
        if path.suffix == ".csv":
            rows = list(csv.DictReader(fh))
            return [{"key": r["key"], "type": r["type"], "ttl_ms": int(r["ttl_ms"]) if r["ttl_ms"] else None,
                     "value": r["value"] if r["type"] == "string" else json.loads(r["value"])} for r in rows]
        return [json.loads(line) for line in fh if line.strip()]


def bulk_export(kv: KV[Any], target: str | BulkPlan, *, format: str = "jsonl", path: str | Path | None = None,
                type: str | None = None, batch: int = DEFAULT_BATCH, scan_count: int = DEFAULT_SCAN_COUNT,
                cancel: Cancel = None, progress: ProgressArg = True,
                max_errors: int = DEFAULT_MAX_ERRORS) -> BulkSummary:
    """Write every matching key with its type, TTL (ms, None without expiry) and whole value:
    ``format="csv"`` (columns ``key,type,ttl_ms,value``, non-string values as JSON text),
    ``"jsonl"`` (one JSON object a line) to ``path``, or ``"frame"`` (``summary.frame``, a DataFrame).
    Reading only, so a Read Only client may export, as far as the server lets it SCAN."""
    if format not in EXPORT_FORMATS:
        raise InvalidArgument("format", f"must be one of {', '.join(EXPORT_FORMATS)}, not {format!r}")
    if format != "frame" and path is None:
        raise InvalidArgument("path", f"a {format} export needs a path to write to")
    records: list[dict[str, Any]] = []
    fh: TextIO | None = None
    sink: Callable[[dict[str, Any]], Any] = records.append
    if format != "frame":
        out = Path(path)  # type: ignore[arg-type]
        fh = out.open("w", encoding="utf-8", newline="")
        if format == "csv":
            writer = csv.writer(fh)
            writer.writerow(["key", "type", "ttl_ms", "value"])
            sink = lambda r: writer.writerow(_csv_row(r))
        else:
            sink = lambda r: fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")  # type: ignore[union-attr]
    try:
        summary = _run(kv, _Export(sink), target, type=type, batch=batch, scan_count=scan_count, cancel=cancel,
                       progress=progress, max_errors=max_errors)
    finally:
        if fh is not None:
            fh.close()
    if format == "frame":
        summary.frame = export_frame(records)
    else:
        summary.path = Path(path)  # type: ignore[arg-type]
    return summary


def run_bulk(kv: KV[Any], action: str, target: str | BulkPlan, *, seconds: int | None = None,
             format: str = "jsonl", path: str | Path | None = None, **options: Any) -> BulkSummary:
    """One entry point by name (what the explorer's dropdown calls): ``delete``, ``expire``
    (``seconds``), ``persist`` or ``export`` (``format``, ``path``)."""
    if action == "delete":
        return bulk_delete(kv, target, **options)
    if action == "expire":
        return bulk_expire(kv, target, seconds, **options)  # type: ignore[arg-type]
    if action == "persist":
        return bulk_persist(kv, target, **options)
    if action == "export":
        return bulk_export(kv, target, format=format, path=path, **options)
    raise InvalidArgument("action", f"must be one of {', '.join(ACTIONS)}, not {action!r}")


__all__ = [
    "ACTIONS",
    "EXPORT_FORMATS",
    "BulkPlan",
    "BulkSummary",
    "bulk_delete",
    "bulk_expire",
    "bulk_export",
    "bulk_persist",
    "export_frame",
    "export_value",
    "pattern_for_prefix",
    "plan_bulk",
    "read_export",
    "run_bulk",
]
