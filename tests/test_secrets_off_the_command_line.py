"""No secret on a command line, where every local user reads it (``ps``, /proc/PID/cmdline): an
external Redis's URL comes from SVC_REDIS_URL or --redis-url-file (svckit/cli.py), a --redis-url with
a password is warned about without showing it, and neither ``svckit sandbox`` nor the processes it
starts carry a token or password in their arguments. (``svckit demo``'s JupyterLab:
tests/demo/test_demo_secrets.py.)"""

from __future__ import annotations

import json
import logging
import os
import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import redis

from svckit import demo
from svckit.cli import REDIS_URL_VARIABLE, build_parser, redis_url_of
from svckit.config import SECRET_VARIABLES, Settings
from tests.cluster import free_ports
from tests.conftest import Haystack, cli_sandbox, eventually, lines_until, require_binary, stop_or_dump


def command_lines(pid: int) -> list[str]:
    """The command lines of process ``pid`` and of every live process below it (from /proc: what any
    local user reads). Found by parent, not by environment: redis-server writes its title over it."""
    parents: dict[int, int] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    family, grew = {pid}, True
    while grew:
        more = {child for child, parent in parents.items() if parent in family} - family
        family |= more
        grew = bool(more)
    lines = []
    for member in sorted(family):
        try:
            lines.append(Path(f"/proc/{member}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return lines


def args(*argv: str):
    return build_parser().parse_args(["sandbox", *argv])


def test_the_redis_url_comes_from_the_option_the_file_or_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(REDIS_URL_VARIABLE, raising=False)
    assert redis_url_of(args()) is None
    monkeypatch.setenv(REDIS_URL_VARIABLE, "redis://svckit:from-env@127.0.0.1:6390")
    assert redis_url_of(args()) == "redis://svckit:from-env@127.0.0.1:6390"
    url_file = tmp_path / "redis-url"
    url_file.write_text("redis://svckit:from-file@127.0.0.1:6391\n")
    assert redis_url_of(args("--redis-url-file", str(url_file))) == "redis://svckit:from-file@127.0.0.1:6391"
    assert redis_url_of(args("--redis-url", "redis://127.0.0.1:6392")) == "redis://127.0.0.1:6392"
    with pytest.raises(SystemExit):  # one or the other
        args("--redis-url", "redis://127.0.0.1:6392", "--redis-url-file", str(url_file))
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(SystemExit, match="first line should be the Redis URL"):
        redis_url_of(args("--redis-url-file", str(empty)))


def test_the_notebooks_kernels_do_not_get_the_external_redis_url(monkeypatch):
    """The URL's password is the sandbox's: svckit demo's kernels get the service's settings, not it."""
    monkeypatch.setenv(REDIS_URL_VARIABLE, "redis://svckit:kernel-must-not-see@127.0.0.1:6390")
    monkeypatch.setenv("SVCKIT_TEST_KEPT", "1")
    env = demo.kernel_env({"SVC_KV_URL": "http://127.0.0.1:1/kv"})
    assert REDIS_URL_VARIABLE not in env and "kernel-must-not-see" not in json.dumps(env)
    assert env["SVCKIT_TEST_KEPT"] == "1" and env["SVC_KV_URL"] == "http://127.0.0.1:1/kv"


def test_a_password_in_redis_url_is_warned_about_without_showing_it(caplog):
    password = secrets.token_hex(8)
    with caplog.at_level(logging.WARNING, logger="svckit.sandbox"):
        redis_url_of(args("--redis-url", f"redis://svckit:{password}@127.0.0.1:6390"))
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "--redis-url holds a password" in warning and "process list" in warning
    assert REDIS_URL_VARIABLE in warning and "--redis-url-file" in warning
    assert password not in caplog.text
    caplog.clear()
    redis_url_of(args("--redis-url", "redis://127.0.0.1:6390"))  # no password: nothing to warn about
    assert caplog.records == []


@pytest.mark.parametrize("command", ["sandbox", "demo"])
def test_help_says_where_the_redis_url_may_come_from(command, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for said in ("--redis-url-file FILE", REDIS_URL_VARIABLE, "process list"):
        assert said in text, said


@contextmanager
def redis_with_a_password(directory: Path) -> Iterator[str]:
    """A redis-server of the test's own that requires a password (kept in its config file), and its URL."""
    [port], password = free_ports(1), secrets.token_hex(16)
    config = directory / "redis.conf"
    config.write_text(f"port {port}\nbind 127.0.0.1\nrequirepass {password}\nsave \"\"\nappendonly no\n"
                      f"dir {directory}\n")
    config.chmod(0o600)
    server = subprocess.Popen([require_binary("redis-server"), str(config)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"redis://:{password}@127.0.0.1:{port}/0"
    try:
        eventually(lambda: _pings(url), "the password-protected redis-server answers", 20)
        yield url
    finally:
        server.kill()
        server.wait()


def _pings(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url).ping())
    except redis.exceptions.ConnectionError:
        return False


@pytest.mark.timeout(300)
@pytest.mark.parametrize("given", ["environment", "file", "option"])
def test_svckit_sandbox_serves_an_external_redis_whose_password_is_on_no_command_line(tmp_path, given):
    with redis_with_a_password(tmp_path) as url:
        password = url.split("@")[0].rsplit(":", 1)[1]
        options = ["--data-dir", str(tmp_path / "data"), "--areas", "kv", "--backend", "external"]
        env = {}
        if given == "environment":
            env[REDIS_URL_VARIABLE] = url
        elif given == "file":
            (tmp_path / "redis-url").write_text(url + "\n")
            options += ["--redis-url-file", str(tmp_path / "redis-url")]
        else:
            options += ["--redis-url", url]
        proc = cli_sandbox(*options, stderr=subprocess.PIPE, **env)
        try:
            settings = Settings.from_lines(lines_until(proc, "SVC_KV_READONLY_TOKEN="))
            found = command_lines(proc.pid)
            r = httpx.get(f"{settings.kv_url}/SET/through-the-gateway/yes", timeout=30,
                          headers={"Authorization": f"Bearer {settings.kv_token}"})
            assert r.json() == {"result": "OK"}, r.text
            assert redis.Redis.from_url(url).get("through-the-gateway") == b"yes"  # that Redis, with that password
        finally:
            _, stderr = stop_or_dump(proc, group=False, timeout=60, what="svckit sandbox")
    assert found, "the sandbox's process was found"
    assert password not in stderr  # never shown
    warned = "--redis-url holds a password" in stderr
    if given == "option":
        assert warned and any(password in line for line in found)  # what the warning is about
    else:
        assert not warned, stderr
        assert [line for line in found if password in line] == []


@pytest.mark.timeout(300)
def test_no_token_or_password_is_on_the_command_line_of_the_sandbox_or_its_redis_child(tmp_path):
    require_binary("redis-server")
    data = tmp_path / "data"
    proc = cli_sandbox("--data-dir", str(data), "--areas", "kv,account,queue", "--backend", "redis")
    try:
        printed = dict(line.strip().partition("=")[::2] for line in lines_until(proc, "SVC_QUEUE_TOKEN="))
        lines = command_lines(proc.pid)
        found = {name: value for name, value in printed.items() if name in SECRET_VARIABLES}
        found.update(json.loads((data / "kv_redis_users.json").read_text()))  # the Redis users' passwords
        found.update(json.loads((data / "credentials.json").read_text()))
    finally:
        stop_or_dump(proc, group=False, timeout=60, what="svckit sandbox")
    assert any("redis-server" in line for line in lines), lines  # the child is among them
    assert {"SVC_KV_TOKEN", "SVC_QUEUE_TOKEN", "svckit-gateway", "devapi_key"} <= set(found)
    hay = Haystack()
    for line in lines:
        hay.add(f"the command line of {line.partition(' ')[0]}", line)
    assert hay.leaks({name: value for name, value in found.items() if len(value) >= 16}) == []
