"""The remote bench's key-value jobs: 100,000 keys (20,000 under ``shop:``) and a 100,000-field hash.

The peer is upstash-redis, used as its README shows: SCAN with a COUNT of 1,000 in a cursor loop, one
request after another, pipelines for many keys. Where the peer has no such job (the explorer, the
analysis, frames) it does the same reads that way: its round trips are what a user writing it by
hand would pay.
"""

from __future__ import annotations

import random
from typing import Any

import pandas as pd
from _remote import Ctx, Job

from svckit import frames
from svckit.kv import analyze_keyspace, bulk_delete, bulk_expire, bulk_export, describe_keys, read_page
from svckit.widgets import KVExplorer

SHOP, OTHER, HASH_FIELDS = 20_000, 80_000, 100_000
PAGE = 1000


def _mset(kv: Any, prefix: str, n: int) -> None:
    for start in range(0, n, 10_000):
        kv.mset({f"{prefix}{i}": f"value {i}" for i in range(start, min(n, start + 10_000))})


def _shop(ctx: Ctx) -> None:
    _mset(ctx.connect_direct().kv, "shop:", SHOP)


def _chain(call: Any) -> int:
    """Calls a cursor walk takes (``call(cursor)`` returns the next cursor and a page): the
    sequential floor of any job built on it."""
    cursor, calls = 0, 0
    while True:
        cursor, _ = call(cursor)
        calls += 1
        if int(cursor) == 0:
            return calls


def _scan_chain(kv: Any, match: str, count: int) -> int:
    return _chain(lambda cursor: kv.scan(cursor, match=match, count=count))


def seed(ctx: Ctx) -> None:
    kv = ctx.connect_direct().kv
    kv.flushdb()
    _mset(kv, "shop:", SHOP)
    _mset(kv, "other:", OTHER - 1)
    for start in range(0, HASH_FIELDS, 10_000):
        kv.hset("big:hash", mapping={f"f{i}": f"v{i}" for i in range(start, start + 10_000)})
    ctx.data["kv"] = {"shop": _scan_chain(kv, "shop:*", PAGE), "all": _scan_chain(kv, "*", PAGE),
                      "all5000": _scan_chain(kv, "*", 5000),
                      "hash": _chain(lambda cursor: kv.hscan("big:hash", cursor, count=PAGE))}


def _redis(ctx: Ctx) -> Any:
    import upstash_redis

    return ctx.peer("upstash-redis", lambda: upstash_redis.Redis(ctx.env["SVC_KV_URL"], ctx.env["SVC_KV_TOKEN"],
                                                                rest_encoding=None, allow_telemetry=False))


def _peer_scan(r: Any, match: str = "*", count: int = PAGE) -> list[str]:
    keys, cursor = [], 0
    while True:
        cursor, batch = r.scan(cursor, match=match, count=count)
        keys.extend(batch)
        if int(cursor) == 0:
            return keys


def _peer_describe(r: Any, keys: list[str]) -> pd.DataFrame:
    """TYPE and PTTL in one pipeline per 1,000 keys, then the lengths in another, one after another."""
    rows = []
    for start in range(0, len(keys), PAGE):
        batch = keys[start:start + PAGE]
        pipe = r.pipeline()
        for key in batch:
            pipe.type(key)
            pipe.pttl(key)
        meta = pipe.exec()
        pipe = r.pipeline()
        for i, _ in enumerate(batch):
            pipe.strlen(batch[i]) if meta[2 * i] == "string" else pipe.hlen(batch[i])
        lengths = pipe.exec()
        rows += [{"key": k, "type": meta[2 * i], "pttl": meta[2 * i + 1], "length": lengths[i]}
                 for i, k in enumerate(batch)]
    return pd.DataFrame(rows)


# -- the jobs ---------------------------------------------------------------------------------


def scan_ours(ctx: Ctx) -> None:
    assert len(set(ctx.connect().kv.scan_iter(match="shop:*"))) == SHOP


def scan_peer(ctx: Ctx) -> None:
    assert len(set(_peer_scan(_redis(ctx), "shop:*"))) == SHOP


def explorer_ours(ctx: Ctx) -> None:
    w = KVExplorer(ctx.connect().kv, pattern="shop:*")
    assert len(w.visible_frame) == 25 and w.dbsize == SHOP + OTHER


def explorer_peer(ctx: Ctx) -> None:
    r = _redis(ctx)
    assert r.dbsize() == SHOP + OTHER
    cursor, keys = 0, list[str]()
    while len(keys) < 25:
        cursor, batch = r.scan(cursor, match="shop:*", count=PAGE)
        keys += batch
    assert len(_peer_describe(r, keys[:25])) == 25


def hash_ours(ctx: Ctx) -> None:
    kv, n = ctx.connect().kv, 0
    page = read_page(kv, "big:hash", "hash")
    n += len(page)
    while page.next_cursor is not None:
        page = read_page(kv, "big:hash", "hash", cursor=page.next_cursor)
        n += len(page)
    assert n == HASH_FIELDS


def hash_peer(ctx: Ctx) -> None:
    r, cursor, n = _redis(ctx), 0, 0
    while True:
        cursor, fields = r.hscan("big:hash", cursor, count=PAGE)
        n += len(fields)
        if int(cursor) == 0:
            break
    assert n == HASH_FIELDS


def analysis_ours(sample: int | None):
    def job(ctx: Ctx) -> None:
        report = analyze_keyspace(ctx.connect().kv, sample=sample, progress=False)
        assert report.total_keys == SHOP + OTHER
    return job


def analysis_peer(sample: int | None):
    def job(ctx: Ctx) -> None:
        r = _redis(ctx)
        r.dbsize()
        keys = _peer_scan(r)
        chosen = keys if sample is None else random.Random(0).sample(keys, sample)
        assert len(_peer_describe(r, chosen)) == len(chosen)
    return job


def delete_ours(ctx: Ctx) -> None:
    assert bulk_delete(ctx.connect().kv, "shop:*", progress=False).done == SHOP


def delete_peer(ctx: Ctx) -> None:
    r, cursor, done = _redis(ctx), 0, 0
    while True:
        cursor, keys = r.scan(cursor, match="shop:*", count=PAGE)
        if keys:
            done += r.unlink(*keys)
        if int(cursor) == 0:
            break
    assert done == SHOP


def expire_ours(ctx: Ctx) -> None:
    assert bulk_expire(ctx.connect().kv, "shop:*", 3600, progress=False).done == SHOP


def expire_peer(ctx: Ctx) -> None:
    r, cursor, done = _redis(ctx), 0, 0
    while True:
        cursor, keys = r.scan(cursor, match="shop:*", count=PAGE)
        if keys:
            pipe = r.pipeline()
            for key in keys:
                pipe.expire(key, 3600)
            done += sum(pipe.exec())
        if int(cursor) == 0:
            break
    assert done == SHOP


def export_ours(ctx: Ctx) -> None:
    frame = bulk_export(ctx.connect().kv, "shop:*", format="frame", progress=False).frame
    assert frame is not None and len(frame) == SHOP


def export_peer(ctx: Ctx) -> None:
    r, cursor, records = _redis(ctx), 0, []
    while True:
        cursor, keys = r.scan(cursor, match="shop:*", count=PAGE)
        if keys:
            pipe = r.pipeline()
            for key in keys:
                pipe.get(key)
            records += [{"key": k, "value": v} for k, v in zip(keys, pipe.exec())]
        if int(cursor) == 0:
            break
    assert len(pd.DataFrame(records)) == SHOP


def frame_ours(ctx: Ctx) -> None:
    kv = ctx.connect().kv
    assert len(frames.keys_frame(describe_keys(kv, list(kv.scan_iter())))) == SHOP + OTHER


def frame_peer(ctx: Ctx) -> None:
    r = _redis(ctx)
    assert len(_peer_describe(r, _peer_scan(r))) == SHOP + OTHER


def _floor(name: str, extra: int = 0):
    return lambda ctx: ctx.data["kv"][name] + extra


JOBS = [
    Job("kv", "scan 20k of 100k keys (scan_iter)", scan_ours, _floor("shop"), scan_peer),
    Job("kv", "explorer: first page", explorer_ours, lambda ctx: 2, explorer_peer),
    Job("kv", "page a 100k-field hash", hash_ours, _floor("hash"), hash_peer),
    Job("kv", "analysis, sampled (10k of 100k)", analysis_ours(10_000), _floor("all5000", 1), analysis_peer(10_000)),
    Job("kv", "analysis, complete (100k)", analysis_ours(None), _floor("all5000", 1), analysis_peer(None)),
    Job("kv", "bulk delete 20k of 100k", delete_ours, _floor("shop", 1), delete_peer, prepare=_shop),
    Job("kv", "bulk expire 20k of 100k", expire_ours, _floor("shop", 1), expire_peer, prepare=_shop),
    Job("kv", "bulk export 20k of 100k (frame)", export_ours, _floor("shop", 1), export_peer, prepare=_shop),
    Job("kv", "keys frame of 100k keys", frame_ours, _floor("all", 1), frame_peer),
]
