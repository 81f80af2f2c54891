"""Events: the monitor stream and pub/sub, in exactly the format of the spec's Events section."""

from __future__ import annotations

import re
import threading

import httpx

from tests.conftest import eventually

MONITOR_LINE = re.compile(r'^\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] "SET" "(?P<key>[^"]+)" "v a\\"l"$')


def _data_lines(response: httpx.Response):
    for line in response.iter_lines():
        if line.startswith("data: "):
            yield line[len("data: "):]


def test_monitor_streams_ok_then_one_line_per_command(kv):
    key = kv.key()
    with httpx.Client(timeout=10) as client, client.stream(
            "POST", kv.url + "/monitor", headers={**kv.auth(), "Accept": "text/event-stream"}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = _data_lines(r)
        assert next(events) == '"OK"'
        kv.post("/", json=["SET", key, 'v a"l'])
        for line in events:
            match = MONITOR_LINE.match(line)
            if match and match["key"] == key:
                break


def test_monitor_shows_pipeline_commands_and_escapes_binary(kv):
    key = kv.key()
    with httpx.Client(timeout=10) as client, client.stream(
            "POST", kv.url + "/monitor", headers={**kv.auth(), "Accept": "text/event-stream"}) as r:
        events = _data_lines(r)
        assert next(events) == '"OK"'
        kv.post("/pipeline", json=[["GET", key], ["ECHO", "a\nb"]])
        seen = []
        for line in events:
            seen.append(line.split("] ", 1)[1])
            if len(seen) == 2:
                break
        assert seen == [f'"GET" "{key}"', '"ECHO" "a\\nb"']


def test_monitor_redacts_passwords_like_redis_does(kv):
    user, password = kv.key("user"), "s3cret-" + kv.key("pw")
    with httpx.Client(timeout=10) as client, client.stream(
            "POST", kv.url + "/monitor", headers={**kv.auth(), "Accept": "text/event-stream"}) as r:
        events = _data_lines(r)
        assert next(events) == '"OK"'
        for command in (["ACL", "SETUSER", user, "on", f">{password}", "~*", "+get"],
                        ["ACL", "RESTTOKEN", user, password], ["ACL", "DELUSER", user], ["ECHO", user]):
            assert kv.post("/", json=command).status_code == 200
        seen = []
        for line in events:
            seen.append(line.split("] ", 1)[1])
            if seen[-1] == f'"ECHO" "{user}"':
                break
    assert password not in "".join(seen)
    assert seen[0] == f'"ACL" "SETUSER" "{user}" "on" "(redacted)" "~*" "+get"'


def test_redaction_covers_every_command_that_carries_a_secret():
    from svckit.sandbox.kv.events import redact

    def r(*args: str) -> list[str]:
        return [a.decode() for a in redact([a.encode() for a in args])]

    assert r("AUTH", "pw") == ["AUTH", "(redacted)"]
    assert r("auth", "user", "pw") == ["auth", "(redacted)", "(redacted)"]
    assert r("HELLO", "3", "AUTH", "u", "pw", "SETNAME", "x") == ["HELLO", "3", "AUTH", "(redacted)", "(redacted)",
                                                                   "SETNAME", "x"]
    assert r("MIGRATE", "h", "1", "", "0", "5", "AUTH2", "u", "pw", "KEYS", "a")[6:9] == [
        "AUTH2", "(redacted)", "(redacted)"]
    assert r("MIGRATE", "h", "1", "k", "0", "5", "AUTH", "pw")[-1] == "(redacted)"
    assert r("CONFIG", "SET", "maxmemory", "1mb", "requirepass", "pw") == [
        "CONFIG", "SET", "maxmemory", "1mb", "requirepass", "(redacted)"]
    assert r("ACL", "SETUSER", "u", "on", "#abcdef", "<old") == ["ACL", "SETUSER", "u", "on", "(redacted)",
                                                                  "(redacted)"]
    assert r("SET", "AUTH", "pw") == ["SET", "AUTH", "pw"]


def test_monitor_is_refused_to_the_readonly_token(kv):
    r = kv.http.post(kv.url + "/monitor", headers=kv.auth(kv.readonly_token))
    assert r.status_code == 400 and "error" in r.json()


def test_subscribe_then_publish_delivers_the_message(kv):
    channel = kv.key("chan")
    published = []
    with httpx.Client(timeout=10) as client, client.stream(
            "POST", kv.url + f"/subscribe/{channel}", headers={**kv.auth(), "Accept": "text/event-stream"}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = _data_lines(r)
        assert next(events) == f"subscribe,{channel},1"
        # publish from another thread once subscribed, as a second client would
        thread = threading.Thread(target=lambda: published.append(kv.post(f"/publish/{channel}/hello world")))
        thread.start()
        assert next(events) == f"message,{channel},hello world"
        thread.join()
    assert published[0].json() == {"result": 1}


def test_publish_without_subscribers_returns_zero(kv):
    assert kv.post(f"/publish/{kv.key('nobody')}/m").json() == {"result": 0}


def test_subscription_ends_when_the_client_disconnects(kv):
    channel = kv.key("chan")
    with httpx.Client(timeout=10) as client:
        with client.stream("POST", kv.url + f"/subscribe/{channel}", headers=kv.auth()) as r:
            assert next(_data_lines(r)) == f"subscribe,{channel},1"
        # the gateway notices the disconnect and drops its Redis subscription
        eventually(lambda: kv.post("/", json=["PUBSUB", "NUMSUB", channel]).json()["result"][1] == 0,
                   "the gateway dropped the Redis subscription", 10)
