"""The backing Redis answers only the gateway, and no token reaches past it (issue 26).

Against a real ``redis-server`` child over real HTTP (and fakeredis where the gateway's own rules are
what is tested): the child refuses clients without the gateway's credentials; commands that reach the
host or the network are refused, directly, inside scripts and to users a token creates; INFO and
CONFIG GET show nothing that points at the server; event streams are bounded and never starve the
commands; the child's files are private.
"""

from __future__ import annotations

import contextlib
import socket
import stat
import uuid
from pathlib import Path

import httpx
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from svckit.sandbox import Sandbox
from svckit.sandbox.kv import backends, resp
from tests.conftest import require_binary, start_sandbox
from tests.sandbox.kv.conftest import KV, acl_user, kv_of, rest_token


def _area(kv: KV):
    return kv.sandbox.area("kv")


def _raw(kv: KV, **credentials) -> redis.Redis:
    """redis-py straight to the child, on its socket (or its port), with ``credentials`` or none."""
    backend = _area(kv).backend
    once = Retry(NoBackoff(), 0)  # a refused AUTH is the answer: no retries
    if backend.socket is not None:
        return redis.Redis(unix_socket_path=str(backend.socket), retry=once, **credentials)
    return redis.Redis(host="127.0.0.1", port=backend.port, retry=once, **credentials)


# -- 1. the backing Redis answers only the gateway ------------------------------------------------------
def _assert_refuses_anonymous_clients(kv: KV) -> None:
    with pytest.raises(redis.AuthenticationError):
        _raw(kv).ping()
    for password in ("", "wrong", "nopass"):
        with pytest.raises(redis.AuthenticationError):
            _raw(kv, username="default", password=password).ping()
    assert redis.Redis.from_url(_area(kv).redis_url).ping()  # the URL for the bench carries credentials


def test_the_child_refuses_clients_without_the_gateways_credentials(child):
    _assert_refuses_anonymous_clients(child)
    direct = redis.Redis.from_url(_area(child).redis_url, decode_responses=True)
    assert direct.config_get("port") == {"port": "0"}, "the child must keep no TCP port when it has a socket"
    assert _area(child).redis_url not in _area(child).backend.describe()


def test_a_child_on_loopback_tcp_refuses_clients_without_credentials_too(tmp_path):
    require_binary("redis-server")
    deep = tmp_path / ("d" * 60) / ("e" * 60)  # too long a path for a Unix socket: the child listens on TCP
    with Sandbox(deep, areas=["kv"], backend="redis") as sb:
        kv = kv_of(sb)
        assert _area(kv).backend.socket is None and _area(kv).backend.port > 0
        assert kv.get("/PING").json() == {"result": "PONG"}
        _assert_refuses_anonymous_clients(kv)
        kv.http.close()


def test_an_older_data_directory_is_closed_when_the_sandbox_starts(tmp_path):
    """A data directory from before: ``default`` without a password, a user with every right, 0644 files."""
    require_binary("redis-server")
    (tmp_path / "redis").mkdir(mode=0o755)
    acl = tmp_path / "redis" / "users.acl"
    acl.write_text("user default on nopass ~* &* +@all\nuser old on >oldpw ~* &* +@all\n")
    acl.chmod(0o644)
    with Sandbox(tmp_path, areas=["kv"], backend="redis") as sb:
        kv = kv_of(sb)
        _assert_refuses_anonymous_clients(kv)
        old = _raw(kv, username="old", password="oldpw")
        assert old.get("missing") is None  # the user kept its data rights ...
        with pytest.raises(redis.exceptions.NoPermissionError):
            old.config_set("protected-mode", "no")  # ... and lost what reaches past the data
        kv.http.close()
    assert stat.S_IMODE(acl.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "redis").stat().st_mode) == 0o700


# -- 2. commands that reach the host or the network ----------------------------------------------------
@pytest.fixture
def listener():
    """A loopback TCP port that records whether anything connected to it."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        server.settimeout(0.5)

        def connected() -> bool:
            try:
                server.accept()[0].close()
            except TimeoutError:
                return False
            return True

        yield server.getsockname()[1], connected


def _migrate_script(port: int) -> list[str]:
    return ["EVAL", f"return redis.call('MIGRATE', '127.0.0.1', '{port}', KEYS[1], '0', '200')", "1"]


def test_a_script_cannot_migrate_keys_to_another_address(child, listener):
    port, connected = listener
    key = child.key()
    child.get(f"/SET/{key}/secret")
    r = child.post("/", json=[*_migrate_script(port), key])
    assert r.status_code == 400
    error = r.json()["error"]
    assert "can't run this command" in error and "reach the host or the network" in error and "MIGRATE" in error
    assert not connected(), "MIGRATE inside EVAL reached the network"
    assert child.get(f"/GET/{key}").json() == {"result": "secret"}


@pytest.mark.parametrize("name", ["MIGRATE", "REPLICAOF", "SLAVEOF", "MODULE", "DEBUG", "SHUTDOWN", "FAILOVER"])
def test_commands_that_reach_the_host_or_the_network_are_refused_and_say_why(kv, name):
    r = kv.post("/", json=[name, "127.0.0.1", "6379"])
    assert r.status_code == 400
    assert "reaches the host or the network and the sandbox refuses it" in r.json()["error"], r.text
    assert kv.get("/PING").json() == {"result": "PONG"}  # and the server is still there


@pytest.mark.parametrize("param,value", [("protected-mode", "no"), ("bind", "0.0.0.0"), ("port", "6390"),
                                         ("dir", "/tmp"), ("dbfilename", "x.rdb"), ("replicaof", "127.0.0.1 1"),
                                         ("unixsocketperm", "777"), ("requirepass", "x"), ("appendonly", "no")])
def test_config_set_of_network_and_file_settings_is_refused(kv, param, value):
    r = kv.post("/", json=["CONFIG", "SET", param, value])
    assert r.status_code == 400 and r.json()["error"].startswith("NOPERM"), r.text
    assert f"CONFIG SET {param}" in r.json()["error"]
    # also when it hides behind a harmless parameter in the same command
    r = kv.post("/", json=["CONFIG", "SET", "slowlog-max-len", "128", param, value])
    assert r.status_code == 400 and param in r.json()["error"]


def test_config_set_of_a_harmless_parameter_runs_and_config_rewrite_is_refused(kv):
    assert kv.post("/", json=["CONFIG", "SET", "slowlog-max-len", "128"]).json() == {"result": "OK"}
    r = kv.post("/", json=["CONFIG", "REWRITE"])
    assert r.status_code == 400 and "reaches the host or the network" in r.json()["error"]


def test_the_child_itself_kept_its_exposure(child):
    child.post("/", json=["CONFIG", "SET", "protected-mode", "no"])
    direct = redis.Redis.from_url(_area(child).redis_url, decode_responses=True)
    assert direct.config_get("protected-mode") == {"protected-mode": "yes"}
    with pytest.raises(redis.exceptions.NoPermissionError):
        direct.config_set("protected-mode", "no")  # not even the gateway's own user may, past the gateway
    with pytest.raises(redis.exceptions.NoPermissionError):
        direct.acl_setuser("sneaky", enabled=True, passwords=["+pw"], commands=["+@all"])


def test_a_user_created_through_the_gateway_cannot_reach_past_its_data(child, listener):
    port, connected = listener
    name, password = acl_user(child, "~*", "&*", "+@all")
    token = rest_token(child, name, password)
    as_user = child.auth(token)
    key = child.key()
    assert child.http.get(child.url + f"/SET/{key}/v", headers=as_user).json() == {"result": "OK"}
    r = child.http.post(child.url + "/", headers=as_user, json=[*_migrate_script(port), key])
    assert r.status_code == 400 and "can't run this command" in r.json()["error"]
    for argv in (["CONFIG", "SET", "slowlog-max-len", "128"], ["ACL", "SETUSER", "more", "on", "+@all"]):
        r = child.http.post(child.url + "/", headers=as_user, json=argv)
        assert r.status_code == 400 and r.json()["error"].startswith("NOPERM"), (argv, r.text)
    # straight to Redis with that user's password, past the gateway: Redis itself refuses
    direct = _raw(child, username=name, password=password)
    assert direct.get(key) == b"v"
    for attempt in (lambda: direct.config_set("protected-mode", "no"),
                    lambda: direct.execute_command("MIGRATE", "127.0.0.1", port, key, 0, 200),
                    lambda: direct.acl_setuser("more", enabled=True, commands=["+@all"]),
                    lambda: direct.execute_command("MODULE", "LIST")):
        with pytest.raises(redis.exceptions.NoPermissionError):
            attempt()
    assert not connected()


@pytest.mark.parametrize("argv", [
    ["ACL", "SETUSER", "svckit-gateway", "on", "nopass"], ["ACL", "SETUSER", "default", "on", "nopass", "+@all"],
    ["ACL", "DELUSER", "someone", "svckit-admin"], ["ACL", "GETUSER", "svckit-gateway"],
    ["ACL", "RESTTOKEN", "svckit-admin", "guess"], ["ACL", "SETUSER", "x", "on", "nopass", "+get"],
    ["ACL", "SETUSER", "x", "on", ">", "+get"],
    ["ACL", "SETUSER", "x", "on", ">pw", "(+@all ~*)"],
])
def test_acl_commands_may_not_touch_the_sandboxs_own_users_or_make_open_ones(kv, argv):
    r = kv.post("/", json=argv)
    assert r.status_code == 400 and r.json()["error"].startswith("NOPERM"), r.text


def test_acl_changes_cannot_hide_in_a_transaction(kv):
    r = kv.post("/multi-exec", json=[["PING"], ["ACL", "SETUSER", "tx", "on", ">pw"]])
    assert r.status_code == 400 and "cannot run inside a transaction" in r.json()["error"]


def test_commands_the_gateway_runs_itself_keep_their_place_in_a_pipeline(child):
    """CONFIG SET and ACL changes run on the gateway's admin connection, the rest on the caller's: in
    a pipeline each still runs after the commands before it."""
    name = f"p{uuid.uuid4().hex[:8]}"
    replies = child.post("/pipeline", json=[
        ["CONFIG", "SET", "slowlog-max-len", "100"], ["CONFIG", "GET", "slowlog-max-len"],
        ["CONFIG", "SET", "slowlog-max-len", "128"], ["CONFIG", "GET", "slowlog-max-len"],
        ["ACL", "SETUSER", name, "on", ">pw", "+ping"], ["ACL", "RESTTOKEN", name, "pw"], ["ACL", "DELUSER", name],
    ]).json()
    assert [r.get("result") for r in replies[:4]] == ["OK", ["slowlog-max-len", "100"], "OK",
                                                      ["slowlog-max-len", "128"]]
    assert replies[4] == {"result": "OK"} and isinstance(replies[5]["result"], str) and replies[6] == {"result": 1}


# -- INFO and CONFIG GET --------------------------------------------------------------------------------
def _assert_points_nowhere(kv: KV, text: str) -> None:
    backend = _area(kv).backend
    for needle in ("tcp_port", "executable", "config_file", "process_id", str(backend.dir), "redis.sock"):
        assert needle not in text, needle
    if backend.port:
        assert str(backend.port) not in text


def test_info_shows_no_port_or_path_and_stays_valid_info(child):
    for token in (child.token, child.readonly_token):
        for argv in (["INFO"], ["INFO", "everything"], ["INFO", "server"]):
            text = child.http.post(child.url + "/", headers=child.auth(token), json=argv).json()["result"]
            _assert_points_nowhere(child, text)
            assert "redis_version:" in text
            lines = [line for line in text.split("\r\n") if line]
            assert all(line.startswith("# ") or ":" in line for line in lines), lines
    [piped] = child.post("/pipeline", json=[["INFO", "server"]]).json()
    [in_tx] = child.post("/multi-exec", json=[["INFO", "server"]]).json()
    for reply in (piped, in_tx):
        assert "redis_version:" in reply["result"]
        _assert_points_nowhere(child, reply["result"])


def test_config_get_shows_no_port_or_path(child):
    pairs = child.post("/", json=["CONFIG", "GET", "*"]).json()["result"]
    names = pairs[0::2]
    assert "maxmemory" in names and not {"dir", "port", "unixsocket", "logfile", "aclfile", "bind"} & set(names)
    _assert_points_nowhere(child, " ".join(pairs))


def test_slowlog_acl_log_and_acl_list_show_no_path_and_none_of_the_sandboxs_own_users(child):
    assert child.post("/", json=["CONFIG", "SET", "slowlog-log-slower-than", "0"]).json() == {"result": "OK"}
    try:
        child.get(f"/SET/{child.key()}/v")
        slowlog = child.post("/", json=["SLOWLOG", "GET", "5"]).json()["result"]
    finally:
        child.post("/", json=["CONFIG", "SET", "slowlog-log-slower-than", "10000"])
    name, password = acl_user(child, "-@all", "+ping")
    token = rest_token(child, name, password)
    assert child.http.get(child.url + "/GET/x", headers=child.auth(token)).status_code == 400  # logged
    acl_log = child.post("/", json=["ACL", "LOG", "5"]).json()["result"]
    assert slowlog and acl_log and "addr=(hidden)" in str(acl_log)
    _assert_points_nowhere(child, str(slowlog) + str(acl_log))
    users = child.post("/", json=["ACL", "LIST"]).json()["result"]
    assert any(f"user {name} " in line for line in users)
    assert not [line for line in users if line.split()[1] in ("default", "svckit-gateway", "svckit-admin")]


# -- 3. event streams: bounded, and apart from the commands ---------------------------------------------
def _open(client: httpx.Client, stack: contextlib.ExitStack, kv: KV, path: str, token: str) -> httpx.Response:
    """Open a stream; when it is accepted, wait for its first event (it is then subscribed)."""
    r = stack.enter_context(client.stream("POST", kv.url + path, headers=kv.auth(token)))
    if r.status_code == 200:
        r.lines = r.iter_lines()  # kept: a dropped iterator closes the response, and so the stream
        next(line for line in r.lines if line.startswith("data: "))
    else:
        r.read()
    return r


@pytest.mark.timeout(120)
def test_streams_are_capped_per_token_and_in_all_and_never_starve_the_commands(backend, monkeypatch):
    # the pool that serves commands is made as small as the stream limit, so streams taken from it would fill it
    for module in (resp, backends):
        monkeypatch.setattr(module, "MAX_CONNECTIONS", 4)
        monkeypatch.setattr(module, "POOL_WAIT", 2.0)
    sandbox = start_sandbox(areas=["kv"], backend=backend, kv_max_streams=4, kv_max_streams_per_token=3)
    kv = kv_of(sandbox)
    try:
        with httpx.Client(timeout=20, limits=httpx.Limits(max_connections=20)) as client, \
                contextlib.ExitStack() as stack:
            opened = [_open(client, stack, kv, f"/subscribe/c{i}", kv.token) for i in range(3)]
            assert [r.status_code for r in opened] == [200, 200, 200]
            over = _open(client, stack, kv, "/subscribe/c4", kv.token)
            assert over.status_code == 429 and "for this token" in over.json()["error"]
            assert _open(client, stack, kv, "/monitor", kv.token).status_code == 429  # the monitor counts too
            assert _open(client, stack, kv, "/subscribe/r1", kv.readonly_token).status_code == 200
            over = _open(client, stack, kv, "/subscribe/r2", kv.readonly_token)
            assert over.status_code == 429 and "in the sandbox" in over.json()["error"]
            assert set(over.json()) == {"error"} and kv.token not in over.text
            # four subscribed connections, a command pool of four: commands still get theirs
            for i in range(3):
                r = kv.get(f"/SET/cmd{i}/v")
                assert (r.status_code, r.json()) == (200, {"result": "OK"}), r.text
            assert kv.post("/publish/c0/hello").json() == {"result": 1}
            opened[0].close()
        # every stream closed: the limits count them back
        with httpx.Client(timeout=20) as client, contextlib.ExitStack() as stack:
            assert [_open(client, stack, kv, f"/subscribe/again{i}", kv.token).status_code
                    for i in range(3)] == [200, 200, 200]
    finally:
        kv.http.close()
        sandbox.stop()


# -- 4. files of the child --------------------------------------------------------------------------------
def test_every_file_of_the_child_is_private_after_acl_save_and_save(tmp_path):
    require_binary("redis-server")
    with Sandbox(tmp_path, areas=["kv"], backend="redis") as sb:
        kv = kv_of(sb)
        assert kv.get("/SET/k/v").json() == {"result": "OK"}
        name, password = acl_user(kv, "~*", "+get")
        assert kv.post("/", json=["ACL", "SAVE"]).json() == {"result": "OK"}
        assert kv.post("/", json=["SAVE"]).json() == {"result": "OK"}
        assert "result" in kv.post("/", json=["ACL", "RESTTOKEN", name, password]).json()
        kv.http.close()
    redis_dir = tmp_path / "redis"
    modes = {str(p.relative_to(tmp_path)): stat.S_IMODE(p.stat().st_mode)
             for p in [redis_dir, *redis_dir.rglob("*")] if not p.is_socket()}
    assert {"redis/users.acl", "redis/dump.rdb", "redis/redis.log", "redis/appendonlydir"} <= set(modes)
    wrong = {p: oct(m) for p, m in modes.items()
             if m != (0o700 if (tmp_path / p).is_dir() else 0o600)}
    assert not wrong, wrong
    for secret in ("kv_rest_tokens.json", "kv_redis_users.json"):
        assert stat.S_IMODE((tmp_path / secret).stat().st_mode) == 0o600, secret
    assert not any(Path(tmp_path).glob("*.tmp"))
