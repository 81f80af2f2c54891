"""svckit.kv.keyspace over real HTTP against the sandbox (every backend): bounded SCAN with its
progress count, key descriptions in one pipeline, values of every type read page by page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from svckit import frames
from svckit.errors import InvalidArgument
from svckit.kv import (
    KV,
    AsyncKV,
    KeyInfo,
    KeyScan,
    Progress,
    ValuePage,
    adescribe_keys,
    aread_page,
    ascan_keys,
    describe_keys,
    keyspace,
    queue_read,
    read_page,
    scan_keys,
)
from svckit.sandbox import Sandbox
from tests.kv.conftest import afill, fill

N = 650  # elements of each large value: several pages, and past 512, where hashes leave the one-piece listpack
PAGE = 100


class CountingTransport(httpx.HTTPTransport):
    """A real HTTP transport that counts the requests it sends."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return super().handle_request(request)


@pytest.fixture
def counted(kv_sandbox: Sandbox, kv: KV[str]) -> Iterator[tuple[KV[str], CountingTransport]]:
    transport = CountingTransport()
    with KV.from_settings(kv_sandbox.settings, transport=transport) as client:
        yield client, transport


def _fill(kv: KV[str]) -> None:
    """One large value of every paged type, a string, and a key with an expiry."""
    pipe = kv.pipeline()
    pipe.hset("big:hash", mapping={f"f{i:03}": f"v{i}" for i in range(N)})
    pipe.sadd("big:set", *(f"m{i:03}" for i in range(N)))
    pipe.zadd("big:zset", {f"z{i:03}": float(i) for i in range(N)})
    pipe.rpush("big:list", *(f"e{i:03}" for i in range(N)))
    for i in range(N):
        pipe.xadd("big:stream", {"n": str(i)}, f"{1_700_000_000_000 + i}-0")
    pipe.set("greeting", "hello", ex=600)
    pipe.exec()


def _all_pages(kv: KV[str], key: str, key_type: str, count: int = PAGE) -> list[ValuePage]:
    pages = [read_page(kv, key, key_type, count=count)]
    while pages[-1].next_cursor is not None:
        pages.append(read_page(kv, key, key_type, cursor=pages[-1].next_cursor, count=count))
        assert len(pages) <= N, "paging does not end"
    return pages


# -- bounded scanning -----------------------------------------------------------------------------


def test_scan_stops_after_max_calls_with_its_progress_and_carries_on(kv: KV[str]) -> None:
    fill(kv, {f"user:{i}": "x" for i in range(300)} | {f"other:{i}": "y" for i in range(50)})
    seen: list[Progress] = []
    scan = scan_keys(kv, KeyScan("user:*", count=10), max_calls=3, progress=seen.append)
    assert (scan.calls, scan.scanned, scan.complete) == (3, 30, False)
    assert [(p.phase, p.done, p.total, p.unit) for p in seen] == [("scan", n, None, "keys") for n in (10, 20, 30)]
    assert seen[-1].note == f"{len(scan.keys):,} matching"
    assert all(k.startswith("user:") for k in scan.keys)
    assert scan.cursor != 0

    scan_keys(kv, scan, max_calls=3)  # the same scan goes on from its cursor
    assert scan.calls == 6
    scan_keys(kv, scan, count=1000)
    assert scan.complete and scan.cursor == 0
    assert sorted(scan.keys) == sorted(f"user:{i}" for i in range(300))  # each key once


def test_scan_stops_at_the_limit_of_keys(kv: KV[str]) -> None:
    fill(kv, {f"k{i}": "1" for i in range(500)})
    scan = scan_keys(kv, "k*", count=20, limit=30)
    assert 30 <= len(scan.keys) < 500
    assert not scan.complete
    assert len(scan_keys(kv, scan, limit=60).keys) >= 60


def test_scan_iter_asks_for_a_page_worth_a_round_trip(kv: KV[str],
                                                     counted: tuple[KV[str], CountingTransport]) -> None:
    fill(kv, {f"shop:{i}": "1" for i in range(3000)})
    client, transport = counted
    assert len(set(client.scan_iter(match="shop:*"))) == 3000
    # COUNT 1000, not Redis's 10: about 3 SCAN calls (and the last one's 0), not 300
    assert len(transport.requests) <= 5
    assert all(b"1000" in r.content or b"1000" in r.url.raw_path for r in transport.requests)


def test_scan_by_type_and_an_empty_keyspace(kv: KV[str]) -> None:
    assert scan_keys(kv, "*").keys == []
    _fill(kv)
    assert scan_keys(kv, "*", type="zset").keys == ["big:zset"]
    assert scan_keys(kv, KeyScan("big:*", "hash")).keys == ["big:hash"]
    with pytest.raises(InvalidArgument):
        KeyScan("*", count=0)


# -- describing keys ------------------------------------------------------------------------------


def test_describe_is_one_request_lengths_one_more(kv_sandbox: Sandbox, kv: KV[str],
                                                  counted: tuple[KV[str], CountingTransport]) -> None:
    _fill(kv)
    client, transport = counted
    keys = ["big:hash", "big:set", "big:zset", "big:list", "big:stream", "greeting", "missing"]

    infos = describe_keys(client, keys, lengths=False)
    assert len(transport.requests) == 1
    assert transport.requests[0].url.path.endswith("/pipeline")
    by_key = {i.key: i for i in infos}
    assert [i.key for i in infos] == keys
    assert [by_key[k].type for k in keys] == ["hash", "set", "zset", "list", "stream", "string", "none"]
    assert 0 < by_key["greeting"].pttl <= 600_000
    assert by_key["big:hash"].pttl == -1 and by_key["missing"].pttl == -2
    if kv_sandbox.area("kv").backend_name != "fakeredis":  # type: ignore[attr-defined]
        assert by_key["big:list"].memory > 0
    else:  # fakeredis has no MEMORY USAGE: its error leaves the field empty, the rest still comes back
        assert by_key["big:list"].memory is None
    assert by_key["missing"].memory is None
    assert all(i.length is None for i in infos)

    # with lengths, still one request (one describe script per key); fakeredis has no EVAL_RO, so
    # the first describe falls back to two pipelines and the client remembers not to try again. On
    # the cluster the script's text reaches only the first key's master at first: the keys of the
    # other masters (NOSCRIPT) are described again with it, a second request once, then one request
    backend = kv_sandbox.area("kv").backend_name  # type: ignore[attr-defined]
    scripted = backend != "fakeredis"
    kv.script_flush()  # no master has the script yet (SCRIPT FLUSH reaches every node of a cluster)
    for requests in {"fakeredis": (3, 2), "redis-cluster": (2, 1)}.get(backend, (1, 1)):
        transport.requests.clear()
        infos = describe_keys(client, keys)
        assert len(transport.requests) == requests
        assert [i.length for i in infos] == [N, N, N, N, N, len("hello"), None]
    if scripted:  # the script's text once (it caches it on the server), its SHA1 for the other keys
        assert transport.requests[-1].content.count(b"MEMORY") == 1

    transport.requests.clear()
    assert describe_keys(client, []) == []
    assert transport.requests == []


def test_many_keys_are_described_a_batch_per_request_in_order(kv_sandbox: Sandbox, kv: KV[str],
                                                              counted: tuple[KV[str], CountingTransport]) -> None:
    keys = [f"k{i}" for i in range(2500)]
    fill(kv, {k: "x" * (i % 7) for i, k in enumerate(keys) if i % 5})
    client, transport = counted
    # first with no master holding the describe script (on the cluster the keys of the masters that
    # have not cached it yet are described again with its text), then with every master holding it
    kv.script_flush()
    for _ in range(2):
        transport.requests.clear()
        infos = describe_keys(client, keys)
        assert [i.key for i in infos] == keys  # in the order asked, whatever order the batches came back in
        assert [i.length for i in infos] == [None if i % 5 == 0 else i % 7 for i in range(2500)]
    if kv_sandbox.area("kv").backend_name != "fakeredis":  # type: ignore[attr-defined]
        assert len(transport.requests) == 3  # batches of DESCRIBE_BATCH (1,000), sent side by side


def test_the_describe_script_tells_what_the_two_pipelines_tell(kv: KV[str]) -> None:
    _fill(kv)
    kv.json_set("doc", "$", {"a": [1, 2]})
    keys = ["big:hash", "big:set", "big:zset", "big:list", "big:stream", "greeting", "doc", "missing"]
    scripted = describe_keys(kv, keys)
    keyspace._NO_SCRIPT.add(kv)
    piped = describe_keys(kv, keys)
    assert [(i.type, i.memory, i.length, i.pttl > 0) for i in scripted] == [
        (i.type, i.memory, i.length, i.pttl > 0) for i in piped]
    assert scripted[-1].type == "none" and scripted[0].length == N


def test_keys_frame_takes_what_describe_and_scan_return(kv: KV[str]) -> None:
    _fill(kv)
    df = frames.keys_frame(describe_keys(kv, ["greeting", "big:list"]))
    assert df["key"].tolist() == ["greeting", "big:list"]
    assert df["type"].tolist() == ["string", "list"]
    assert df["length"].tolist() == [5, N]
    assert 0 < df["ttl_s"][0] <= 600 and df["ttl_s"].isna()[1]
    assert sorted(frames.keys_frame(scan_keys(kv, "big:*"))["key"]) == sorted(
        ["big:hash", "big:set", "big:zset", "big:list", "big:stream"])
    assert frames.keys_frame([KeyInfo("x")])["type"].isna().all()


# -- paged reading --------------------------------------------------------------------------------


def test_every_paged_type_is_read_whole_across_pages(kv: KV[str]) -> None:
    _fill(kv)
    hash_pages = _all_pages(kv, "big:hash", "hash")
    fields: dict[str, str] = {}
    for page in hash_pages:
        fields.update(page.items)
    assert fields == {f"f{i:03}": f"v{i}" for i in range(N)}
    assert len(hash_pages) > 1 and hash_pages[-1].complete

    set_pages = _all_pages(kv, "big:set", "set")
    members = {m for page in set_pages for m in page.items}
    assert members == {f"m{i:03}" for i in range(N)} and len(set_pages) > 1

    list_pages = _all_pages(kv, "big:list", "list")
    assert [len(p) for p in list_pages] == [PAGE] * (N // PAGE) + [N % PAGE]
    assert [p.start for p in list_pages] == list(range(0, N, PAGE))
    assert [e for p in list_pages for e in p.items] == [f"e{i:03}" for i in range(N)]

    zset_pages = _all_pages(kv, "big:zset", "zset")
    assert [m for p in zset_pages for m, _ in p.items] == [f"z{i:03}" for i in range(N)]
    assert [s for p in zset_pages for _, s in p.items] == [float(i) for i in range(N)]

    stream_pages = _all_pages(kv, "big:stream", "stream")
    assert [len(p) for p in stream_pages] == [PAGE] * (N // PAGE) + [N % PAGE]
    entries = [e for p in stream_pages for e in p.items]
    assert [fields["n"] for _, fields in entries] == [str(i) for i in range(N)]  # no entry twice
    assert stream_pages[0].next_cursor == f"{1_700_000_000_000 + PAGE - 1}-0"


def test_whole_values_read_on_a_pipeline_equal_their_pages_put_together(kv: KV[str]) -> None:
    """What bulk export queues: one read per key on one pipeline, the whole value of every type."""
    _fill(kv)
    kv.json_set("doc", "$", {"a": {"b": [1, 2]}})
    types = {key: kv.type(key) for key in ("big:hash", "big:set", "big:zset", "big:list", "big:stream",
                                            "greeting", "doc")}
    assert set(types.values()) >= {"hash", "set", "zset", "list", "stream", "string"}
    pipe = kv.pipeline()
    decoders = {key: queue_read(pipe, key, key_type) for key, key_type in types.items()}
    replies = pipe.exec()
    assert len(replies) == len(types)  # one command per key
    whole = {key: decode(reply) for (key, decode), reply in zip(decoders.items(), replies, strict=True)}
    for key, key_type in types.items():
        pages = _all_pages(kv, key, key_type, count=37)
        value = whole[key]
        assert (value.key, value.type, value.complete, value.start) == (key, key_type, True, 0)
        if key_type == "hash":
            assert value.items == {f: v for page in pages for f, v in page.items.items()} and len(pages) > 1
        elif key_type == "set":
            assert sorted(value.items) == sorted(m for page in pages for m in page.items) and len(pages) > 1
        elif key_type in ("list", "zset", "stream"):
            assert value.items == [item for page in pages for item in page.items] and len(value) == N
        else:  # a string or a JSON document is one page
            assert [value.items] == [page.items for page in pages]
        assert read_page(kv, key, key_type, count=None) == value  # the same reader on the client


def test_value_frame_of_a_later_page_keeps_true_indexes_and_ranks(kv: KV[str]) -> None:
    _fill(kv)
    second = read_page(kv, "big:list", "list", cursor=PAGE, count=PAGE)
    assert frames.value_frame(second)["index"].tolist() == list(range(PAGE, 2 * PAGE))
    zsecond = read_page(kv, "big:zset", "zset", cursor=PAGE, count=10)
    z = frames.value_frame(zsecond)
    assert z["rank"].tolist() == list(range(PAGE, PAGE + 10))
    assert z["member"].tolist() == [f"z{i:03}" for i in range(PAGE, PAGE + 10)]
    stream = frames.value_frame(read_page(kv, "big:stream", "stream", count=3))
    assert stream["n"].tolist() == ["0", "1", "2"]
    assert frames.value_frame(read_page(kv, "big:hash", "hash", count=PAGE))["field"].is_monotonic_increasing


def test_strings_json_and_missing_keys_are_one_page(kv: KV[str]) -> None:
    _fill(kv)
    page = read_page(kv, "greeting")  # the type is read when not given
    assert (page.type, page.items, page.complete, len(page)) == ("string", "hello", True, 1)
    assert frames.value_frame(page)["value"].tolist() == ["hello"]
    kv.json_set("doc", "$", {"a": {"b": [1, 2]}})
    doc_type = kv.type("doc")
    doc = read_page(kv, "doc", doc_type)
    assert doc.complete
    shown = frames.value_frame(doc) if doc_type == "ReJSON-RL" else frames.value_frame("json", doc.items)
    assert shown["path"].tolist() == ["$.a.b[0]", "$.a.b[1]"]
    gone = read_page(kv, "missing")
    assert (gone.type, gone.items, gone.complete, len(gone)) == ("none", None, True, 0)
    with pytest.raises(InvalidArgument):
        read_page(kv, "big:list", "list", count=0)


def test_bytes_client_pages_carry_on(kv: KV[str], kv_bytes: KV[bytes]) -> None:
    _fill(kv)
    first = read_page(kv_bytes, b"big:stream", "stream", count=PAGE)
    second = read_page(kv_bytes, b"big:stream", "stream", cursor=first.next_cursor, count=PAGE)
    assert second.items[0][1] == {b"n": str(PAGE).encode()}


# -- the async shells -----------------------------------------------------------------------------


async def test_async_scan_describe_and_pages(akv: AsyncKV[str]) -> None:
    await akv.rpush("big:list", *(f"e{i:03}" for i in range(N)))
    await afill(akv, {f"user:{i}": "x" for i in range(40)})
    calls: list[int] = []
    scan = await ascan_keys(akv, KeyScan("user:*", count=5), max_calls=2, progress=lambda p: calls.append(p.done))
    assert (scan.calls, calls, scan.complete) == (2, [5, 10], False)
    await ascan_keys(akv, scan)
    assert sorted(scan.keys) == sorted(f"user:{i}" for i in range(40))

    (info,) = await adescribe_keys(akv, ["big:list"])
    assert (info.type, info.pttl, info.length) == ("list", -1, N)

    items: list[Any] = []
    cursor: Any = None
    while True:
        page = await aread_page(akv, "big:list", cursor=cursor, count=PAGE)
        items += page.items
        if page.complete:
            break
        cursor = page.next_cursor
    assert items == [f"e{i:03}" for i in range(N)]


def test_the_element_iterators_walk_a_value_a_thousand_at_a_time(
        kv: KV[str], counted: tuple[KV[str], CountingTransport]) -> None:
    kv.hset("h", mapping={f"f{i}": str(i) for i in range(2500)})
    kv.sadd("s", *(f"m{i}" for i in range(2500)))
    kv.zadd("z", {f"z{i}": float(i) for i in range(2500)})
    client, transport = counted
    assert dict(client.hscan_iter("h")) == {f"f{i}": str(i) for i in range(2500)}
    assert set(client.sscan_iter("s")) == {f"m{i}" for i in range(2500)}
    assert dict(client.zscan_iter("z", match="z1*")) == {f"z{i}": float(i) for i in range(2500)
                                                          if str(i).startswith("1")}
    # COUNT 1000 a call, not Redis's 10: a handful of requests, not 750
    assert len(transport.requests) <= 12


async def test_the_async_element_iterators(akv: AsyncKV[str]) -> None:
    await akv.hset("h", mapping={"a": "1", "b": "2"})
    await akv.sadd("s", "x", "y")
    await akv.zadd("z", {"p": 1.0})
    assert dict([pair async for pair in akv.hscan_iter("h")]) == {"a": "1", "b": "2"}
    assert {m async for m in akv.sscan_iter("s")} == {"x", "y"}
    assert [pair async for pair in akv.zscan_iter("z")] == [("p", 1.0)]
