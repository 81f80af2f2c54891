"""KV over real HTTP against the sandbox, on real Redis, on fakeredis and on a Redis Cluster."""

from __future__ import annotations

import threading
import uuid

import httpx
import pytest

from svckit._http import ApiRequest
from svckit.errors import (
    AuthError,
    CommandError,
    InvalidArgument,
    MethodNotAllowed,
    TransactionDiscarded,
)
from svckit.kv import KV, Message, MonitorEvent
from svckit.kv.protocol import MAX_PATH, WireFormat, decode_reply
from svckit.sandbox import Sandbox
from tests.conftest import wait_until_reading
from tests.kv.conftest import direct_redis, fill

SPECIAL_KEYS = ["a/b", "sp ace", "100%", "q?x=1", "#frag", "ünï ✓", "", ".", "..", "+&=;", "a%2Fb", "l\ni\r\nne"]


def test_special_arguments_reach_redis_byte_exact(kv: KV[str], kv_bytes: KV[bytes], kv_sandbox: Sandbox) -> None:
    for i, key in enumerate(SPECIAL_KEYS):
        assert kv.set(key, f"{key}|{i}")
    for i, key in enumerate(SPECIAL_KEYS):
        assert kv.get(key) == f"{key}|{i}"
    raw_key, raw_value = b"\x00\xff/\xfe.", b"\x80\x00\xff"
    assert kv_bytes.set(raw_key, raw_value)
    assert kv_bytes.get(raw_key) == raw_value
    assert kv.strlen(raw_key) == 3
    assert set(kv_bytes.scan_iter()) == {k.encode() for k in SPECIAL_KEYS} | {raw_key}
    direct = direct_redis(kv_sandbox)
    if direct is not None:  # what Redis itself stored
        assert direct.get(raw_key) == raw_value
        assert direct.get(b"a/b") == b"a/b|0" and direct.get(b"") == b"|6"
        assert direct.get(b"l\ni\r\nne") == b"l\ni\r\nne|11"


def test_raw_bytes_key_with_a_line_feed(kv_bytes: KV[bytes]) -> None:
    # Not UTF-8 (so no JSON form) and a line feed in the key (so no body form takes it out of the
    # path): the path form must carry %0A, and the gateway's route must match across it.
    assert kv_bytes.set(b"\xff\n", b"v") and kv_bytes.get(b"\xff\n") == b"v"


def test_large_arguments_use_body_and_json_forms(kv: KV[str], kv_bytes: KV[bytes]) -> None:
    big = b"\xff\x00" * MAX_PATH
    assert kv_bytes.set("big", big, ex=100)
    assert kv_bytes.get("big") == big and 0 < kv.ttl("big") <= 100
    long_key, long_value = "k" * MAX_PATH, "v" * MAX_PATH
    assert kv.execute("SET", long_key, long_value, "NX") == "OK"
    assert kv.get(long_key) == long_value


def test_binary_values_that_fit_no_request_form_are_refused_before_sending(kv_bytes: KV[bytes]) -> None:
    """Two long non-UTF-8 values in one command: JSON cannot carry them, the body form carries one, and
    the path would pass the URL limit. A clear InvalidArgument says what to do, not httpx's InvalidURL."""
    key, value = f"bin:{uuid.uuid4().hex[:10]}", bytes(range(128, 256)) * 400
    for send in (lambda: kv_bytes.hset(key, mapping={"a": value, "b": value}), lambda: kv_bytes.rpush(key, value, value)):
        with pytest.raises(InvalidArgument, match="one long binary value per command"):
            send()
    assert kv_bytes.exists(key) == 0
    assert kv_bytes.hset(key, "a", value) == 1 and kv_bytes.hset(key, "b", value) == 1  # one at a time fits
    assert kv_bytes.hget(key, "b") == value


def test_strings_and_keys(kv: KV[str], kv_sandbox: Sandbox) -> None:
    # the keys of the multi-key commands share the hash tag {t}: one slot, so a cluster runs them too
    assert kv.set("{t}s", "1", nx=True) and not kv.set("{t}s", "2", nx=True)
    assert kv.incr("{t}s") == 2 and kv.incrby("{t}s", 5) == 7 and kv.decr("{t}s") == 6
    assert kv.incrbyfloat("f", 1.5) == 1.5
    assert kv.mset({"{t}m1": "a", "{t}m2": "b"}) and kv.mget("{t}m1", "{t}nope", "{t}m2") == ["a", None, "b"]
    assert kv.append("{t}m1", "cd") == 3 and kv.getrange("{t}m1", 1, 2) == "cd"
    assert kv.getset("{t}m1", "z") == "acd" and kv.getdel("{t}m1") == "z" and kv.get("{t}m1") is None
    assert kv.exists("{t}s", "{t}m2", "{t}none") == 2 and kv.type("{t}s") == "string" and kv.type("none") == "none"
    assert kv.ttl("{t}s") == -1 and kv.expire("{t}s", 100) and 0 < kv.pttl("{t}s") <= 100_000
    assert kv.persist("{t}s") and kv.ttl("{t}s") == -1 and kv.ttl("none") == -2
    assert kv.dbsize() == 3
    if kv_sandbox.area("kv").backend_name == "fakeredis":  # type: ignore[attr-defined]
        with pytest.raises(CommandError, match="unknown command"):  # fakeredis has no MEMORY
            kv.memory_usage("{t}s")
    else:
        assert isinstance(kv.memory_usage("{t}s"), int) and kv.memory_usage("none") is None
    assert kv.rename("{t}s", "{t}s2") and kv.delete("{t}s2", "{t}none") == 1
    if kv_sandbox.area("kv").backend_name == "redis-cluster":  # type: ignore[attr-defined]
        # keys of several slots: the cluster refuses the command as a whole, and nothing is written
        with pytest.raises(CommandError, match="CROSSSLOT Keys in request don't hash to the same slot"):
            kv.mset({"a": "1", "b": "2"})
        assert kv.exists("a") == kv.exists("b") == 0
    else:
        assert kv.mset({"a": "1", "b": "2"}) and kv.delete("a", "b") == 2
    fill(kv, {f"scan:{i}": str(i) for i in range(30)})
    cursor, page = kv.scan(0, match="scan:*", count=5)
    assert isinstance(cursor, int) and all(k.startswith("scan:") for k in page)
    assert sorted(kv.scan_iter(match="scan:*", count=7)) == sorted(f"scan:{i}" for i in range(30))
    assert kv.ping() == "PONG" and kv.echo("hi") == "hi"


def test_hashes_lists_sets_sorted_sets(kv: KV[str]) -> None:
    assert kv.hset("h", mapping={"a": "1", "b": "2"}) == 2 and kv.hset("h", "c", "3") == 1
    assert kv.hgetall("h") == {"a": "1", "b": "2", "c": "3"} and kv.hget("h", "a") == "1"
    assert kv.hincrby("h", "a", 4) == 5 and kv.hexists("h", "b") and kv.hdel("h", "b") == 1
    assert sorted(kv.hkeys("h")) == ["a", "c"] and kv.hlen("h") == 2 and kv.hmget("h", "a", "x") == ["5", None]
    assert kv.rpush("l", "a", "b", "c") == 3 and kv.lpush("l", "z") == 4
    assert kv.lrange("l", 0, -1) == ["z", "a", "b", "c"] and kv.lpop("l") == "z" and kv.rpop("l") == "c"
    assert kv.llen("l") == 2 and kv.lindex("l", 1) == "b" and kv.lrange("none", 0, -1) == []
    assert kv.sadd("s", "x", "y", "y") == 2 and kv.smembers("s") == {"x", "y"} and kv.sismember("s", "x")
    assert kv.smismember("s", "x", "q") == [True, False] and kv.scard("s") == 2
    assert kv.zadd("z", {"a": 1, "b": 2.5, "c": 3}) == 3
    assert kv.zrange("z", 0, -1) == [("a", 1.0), ("b", 2.5), ("c", 3.0)]
    assert kv.zrange("z", 0, 0, withscores=False) == ["a"]
    assert kv.zscore("z", "b") == 2.5 and kv.zscore("z", "none") is None and kv.zincrby("z", 1, "a") == 2.0
    assert kv.zrank("z", "c") == 2 and kv.zcard("z") == 3 and kv.zpopmax("z") == [("c", 3.0)]


def test_streams_geo_hll_bitmaps_scripting_json(kv: KV[str], kv_bytes: KV[bytes]) -> None:
    first = kv.xadd("st", {"f": "1"})
    kv.xadd("st", {"f": "2", "g": "x"})
    entries = kv.xrange("st", "-", "+")
    assert entries[0] == (first, {"f": "1"}) and entries[1][1] == {"f": "2", "g": "x"}
    assert kv.xlen("st") == 2 and kv.xrange("st", count=1) == entries[:1]
    assert kv.geoadd("geo", (13.361389, 38.115556, "Palermo"), (15.087269, 37.502669, "Catania")) == 2
    dist = kv.geodist("geo", "Palermo", "Catania", "km")
    assert dist is not None and 166 < dist < 167
    assert kv.geosearch("geo", 15, 37, 200, "km") == ["Catania", "Palermo"]
    assert kv.pfadd("hll", "a", "b", "c", "a") and kv.pfcount("hll") == 3
    # BITOP's keys share the hash tag {b}, and JSON.MGET's {j}: one slot each, so a cluster runs them too
    assert kv.setbit("{b}bits", 7, 1) == 0 and kv.getbit("{b}bits", 7) == 1 and kv.bitcount("{b}bits") == 1
    assert kv.bitop("NOT", "{b}inv", "{b}bits") == 1
    assert kv.get("{b}inv") == "\ufffd"  # JSON replies replace invalid UTF-8 (0xFE) ...
    assert kv_bytes.get("{b}inv") == b"\xfe"  # ... base64 mode keeps the byte
    assert kv.eval("return redis.call('INCRBY', KEYS[1], ARGV[1])", ["cnt"], [5]) == 5
    sha = kv.script_load("return 7")
    assert kv.evalsha(sha) == 7 and kv.script_exists(sha, "0" * 40) == [True, False]
    assert kv.json_set("{j}doc", "$", {"title": "svckit", "tags": ["kv"], "n": 1})
    assert kv.json_get("{j}doc") == [{"title": "svckit", "tags": ["kv"], "n": 1}]
    assert kv.json_get("{j}doc", "$.title") == ["svckit"] and kv.json_type("{j}doc", "$.tags") == ["array"]
    assert kv.json_numincrby("{j}doc", "$.n", 2) == [3] and kv.json_arrappend("{j}doc", "$.tags", "json") == [2]
    assert kv.json_strlen("{j}doc", "$.title") == [6] and sorted(kv.json_objkeys("{j}doc")[0]) == ["n", "tags", "title"]
    assert kv.json_mget(["{j}doc", "{j}none"], "$.n") == [[3], None] and kv.json_del("{j}doc", "$.tags") == 1


def test_binary_values_round_trip_in_base64_mode(kv_sandbox: Sandbox, kv: KV[str]) -> None:
    """Peer complaint: binary values cannot round-trip in base64 mode (strict UTF-8 decode)."""
    every_byte = bytes(range(256))
    with KV.from_settings(kv_sandbox.settings, encoding="base64", decode=False) as b64:
        assert b64.encoding == "base64"
        key = every_byte
        assert b64.set(key, every_byte) and b64.get(key) == every_byte
        assert b64.set("line\nbreak\xff", b"a\nb") and b64.get("line\nbreak\xff") == b"a\nb"
        assert b64.hset("hb", b"\xff", every_byte) == 1 and b64.hgetall("hb") == {b"\xff": every_byte}
        assert b64.set("ok", "OK") and b64.get("ok") == b"OK"
    with KV.from_settings(kv_sandbox.settings, encoding="base64") as b64_text:
        assert b64_text.get(key) == every_byte.decode("utf-8", "replace")
        assert b64_text.set("t", "héllo") and b64_text.get("t") == "héllo"


def test_resp2_response_format(kv_sandbox: Sandbox, kv: KV[str]) -> None:
    """Peer complaint: no RESP2."""
    with KV.from_settings(kv_sandbox.settings, response_format="resp2") as r2, \
            KV.from_settings(kv_sandbox.settings, response_format="resp2", decode=False) as r2b:
        assert r2.set("k", "v") and r2.get("k") == "v" and r2.get("none") is None
        assert r2b.set(b"\xff", b"\x00\xfe") and r2b.get(b"\xff") == b"\x00\xfe"
        assert r2.rpush("l", "a", "b") == 2 and r2.lrange("l", 0, -1) == ["a", "b"]
        assert r2.zadd("z", {"m": 1.5}) == 1 and r2.zrange("z", 0, -1) == [("m", 1.5)]
        assert r2.execute("PING") == "PONG"
        with pytest.raises(CommandError, match="WRONGTYPE"):
            r2.incr("l")
        # Transactions answer only in JSON: the resp2 client still gets values.
        assert r2.multi_exec().incr("n").incr("n").exec() == [1, 2]
        assert r2.pipeline().get("k").lrange("l", 0, 0).exec() == ["v", ["a"]]


def test_pipeline_keeps_going_past_an_error(kv: KV[str]) -> None:
    """Peer complaint: a pipeline raises at its first error and the other results are lost."""
    kv.rpush("list", "x")
    pipe = kv.pipeline()
    pipe.set("a", "1")
    pipe.command("INCR", "list")
    pipe.incr("a")
    pipe.command("NOSUCHCOMMAND")
    pipe.hgetall("missing")
    results = pipe.exec()
    assert results[0] is True and results[2] == 2 and results[4] == {}
    assert isinstance(results[1], CommandError) and "WRONGTYPE" in str(results[1])
    assert isinstance(results[3], CommandError)
    assert kv.get("a") == "2" and len(pipe) == 0


def test_discarded_transaction_raises_one_clear_error(kv: KV[str], kv_sandbox: Sandbox) -> None:
    """Peer complaint: a discarded transaction (a single {error}) crashes it."""
    tx = kv.multi_exec().set("{t}t", "1").command("NOSUCHCOMMAND", "x")
    with pytest.raises(TransactionDiscarded) as info:
        tx.exec()
    assert "discarded" in str(info.value)
    assert kv.get("{t}t") is None  # nothing ran
    kv.rpush("{t}list", "x")  # the hash tag {t}: one slot, which a transaction on a cluster needs
    results = kv.multi_exec().set("{t}t", "1").command("INCR", "{t}list").incr("{t}t").exec()
    assert results[0] is True and isinstance(results[1], CommandError) and results[2] == 2
    if kv_sandbox.area("kv").backend_name == "redis-cluster":  # type: ignore[attr-defined]
        # keys of several slots: discarded, and the error says why and what keeps keys together
        with pytest.raises(TransactionDiscarded, match="CROSSSLOT.*one slot.*hash tag") as info:
            kv.multi_exec().set("a", "1").set("b", "1").exec()
        assert kv.exists("a") == kv.exists("b") == 0  # nothing ran


def test_batches_refuse_raw_bytes_before_sending(kv: KV[str]) -> None:
    with pytest.raises(InvalidArgument, match="execute"):
        kv.pipeline().set("a", b"\xff").exec()


def test_monitor_stream(kv_sandbox: Sandbox, kv: KV[str]) -> None:
    """Peer complaint: no monitor stream."""
    with KV.from_settings(kv_sandbox.settings) as watcher, watcher.monitor() as mon:
        kv.set("watched", "va lue")
        kv.get("watched")
        events: list[MonitorEvent] = []
        for event in mon:
            events.append(event)
            if event.command.upper() == "GET":
                break
    sets = [e for e in events if e.command.upper() == "SET"]
    assert sets and sets[-1].args == ["watched", "va lue"] and sets[-1].time.tzinfo is not None
    assert isinstance(sets[-1].db, int) and sets[-1].client and sets[-1].raw.startswith(str(int(sets[-1].time.timestamp()))[:5])


def test_subscribe_and_publish(kv_sandbox: Sandbox, kv: KV[str]) -> None:
    """Peer complaint: no subscribe stream."""
    with KV.from_settings(kv_sandbox.settings) as listener, listener.subscribe("news, daily") as sub:
        first = next(sub)
        assert (first.kind, first.channel, first.count) == ("subscribe", "news, daily", 1)
        assert kv.publish("news, daily", "hello, world") == 1
        message: Message = next(sub)
    assert (message.kind, message.channel, message.data) == ("message", "news, daily", "hello, world")


def test_a_subscription_closed_from_another_thread_ends_quietly_and_publishes_nothing(
        kv_sandbox: Sandbox, kv: KV[str]) -> None:
    """close() from this thread ends a reader blocked in the subscription (no error), and does not
    "wake" it by publishing: another subscriber of the channel gets no extra message."""
    channel = "closing, quietly"
    with KV.from_settings(kv_sandbox.settings) as other, other.subscribe(channel) as witness:
        assert next(witness).kind == "subscribe"
        subscription = kv.subscribe(channel)
        seen: list[str] = []
        outcome: list[object] = []
        confirmed = threading.Event()

        def read() -> None:
            try:
                for message in subscription:
                    seen.append(message.kind)
                    confirmed.set()
                outcome.append("ended")
            except BaseException as exc:  # noqa: BLE001 - the test reports it
                outcome.append(exc)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert confirmed.wait(5), "no subscribe confirmation"
        wait_until_reading(reader)  # past the subscribe confirmation, blocked waiting for a message
        subscription.close()
        reader.join(5)
        assert not reader.is_alive(), "close() did not end the blocked reader"
        assert seen == ["subscribe"] and outcome == ["ended"]
        # the first message the witness sees is the next real one: nothing was sent to stop the reader
        kv.publish(channel, "after close")
        message = next(witness)
    assert (message.kind, message.data) == ("message", "after close")


def test_a_monitor_closed_from_another_thread_ends_quietly(kv_sandbox: Sandbox, kv: KV[str]) -> None:
    monitor = kv.monitor()
    outcome: list[object] = []

    def read() -> None:
        try:
            for _event in monitor:
                pass
            outcome.append("ended")
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    wait_until_reading(reader)
    monitor.close()
    reader.join(5)
    assert not reader.is_alive() and outcome == ["ended"] and monitor.closed
    assert kv.execute("PING") == "PONG"


def test_errors_by_status(kv_sandbox: Sandbox, kv: KV[str]) -> None:
    with pytest.raises(CommandError) as info:
        kv.execute("GET")
    assert "wrong number of arguments" in str(info.value) and info.value.status == 400
    with KV(kv_sandbox.settings.kv_url or "", "not-the-token") as bad, pytest.raises(AuthError) as auth:
        bad.get("a")
    assert "not-the-token" not in str(auth.value)
    response = kv._http.send(ApiRequest("DELETE", "/GET/a"))
    with pytest.raises(MethodNotAllowed):
        decode_reply(WireFormat(base64=False, resp2=False, decode=True),
            response.status_code, response.headers.get("content-type", ""), response.content, ["GET"])


def test_readonly_client(kv_sandbox: Sandbox, kv: KV[str]) -> None:
    kv.set("shared", "v")
    with KV.from_settings(kv_sandbox.settings, readonly=True) as ro:
        assert ro.readonly and not kv.readonly
        assert ro.get("shared") == "v"
        with pytest.raises(CommandError):
            ro.set("shared", "x")
        with pytest.raises(CommandError):
            ro.scan(0)
    assert kv.get("shared") == "v"


def test_rest_token_carries_the_acl_users_rights(kv_sandbox: Sandbox, kv: KV[str]) -> None:
    kv.execute("ACL", "SETUSER", "reader", "on", ">pw/with?odd#chars", "~*", "+get", "+ping")
    kv.set("k", "v")
    token = kv.rest_token("reader", "pw/with?odd#chars")
    assert isinstance(token, str) and token
    with KV(kv_sandbox.settings.kv_url or "", token) as user:
        assert user.get("k") == "v"
        with pytest.raises(CommandError):
            user.set("k", "x")
    with pytest.raises(CommandError) as info:
        kv.rest_token("reader", "wrong")
    assert "wrong" not in str(info.value).replace("WRONGPASS", "")


def test_default_timeout_is_set_and_a_silent_server_times_out() -> None:
    """Peer complaint: no request timeout by default."""
    import socket

    from svckit.errors import RequestTimeout

    assert KV("http://127.0.0.1:1", "t")._http._client.timeout.read == 10.0
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()[0]), daemon=True)
    thread.start()
    try:
        with KV(f"http://127.0.0.1:{server.getsockname()[1]}", "t", timeout=0.3) as slow, \
                pytest.raises(RequestTimeout):
            slow.incr("n")
    finally:
        for conn in accepted:
            conn.close()
        server.close()


def test_retry_repeats_reads_but_not_writes_unless_asked() -> None:
    from svckit._http import RetryPolicy

    seen: list[str] = []
    failures = {"count": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        failures["count"] += 1
        if failures["count"] % 2:
            return httpx.Response(503, json={"error": "busy"})
        return httpx.Response(200, json={"result": 1})

    fast = RetryPolicy(attempts=3, backoff=0.0)
    with KV("http://127.0.0.1:1", "t", retry=fast, transport=httpx.MockTransport(handler)) as kv:
        assert kv.exists("a") == 1 and len(seen) == 2  # read: retried after the 503
        seen.clear()
        failures["count"] = 0
        from svckit.errors import ServerError

        with pytest.raises(ServerError):
            kv.incr("a")  # write: the 503 is final
        assert len(seen) == 1
    seen.clear()
    failures["count"] = 0
    policy = RetryPolicy(attempts=3, backoff=0.0, retry_non_idempotent=True)
    with KV("http://127.0.0.1:1", "t", retry=policy, transport=httpx.MockTransport(handler)) as kv:
        assert kv.incr("a") == 1 and len(seen) == 2


def test_repr_and_errors_never_show_the_token(kv_sandbox: Sandbox, kv: KV[str]) -> None:
    token = kv_sandbox.settings.kv_token or ""
    assert token not in repr(kv) and "***" in repr(kv)


def test_streams_refused_with_a_bad_token_raise_auth_error(kv_sandbox: Sandbox) -> None:
    with KV(kv_sandbox.settings.kv_url or "", "not-the-token") as bad:
        with pytest.raises(AuthError):
            bad.monitor()
        with pytest.raises(AuthError):
            bad.subscribe("ch")


def test_built_from_env_settings_and_connect(kv_sandbox: Sandbox, kv: KV[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import svckit

    for name, value in kv_sandbox.env.items():
        monkeypatch.setenv(name, value)
    with KV.from_env() as from_env, KV.from_env(readonly=True) as ro:
        assert from_env.set("e", "1") and ro.get("e") == "1" and ro.readonly
    with svckit.connect() as clients:
        assert clients.kv.get("e") == "1" and clients.kv_readonly.readonly
    monkeypatch.delenv("SVC_KV_TOKEN")
    from svckit.errors import ConfigError

    with pytest.raises(ConfigError, match="SVC_KV_TOKEN"):
        KV.from_env()
