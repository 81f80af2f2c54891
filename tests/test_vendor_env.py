"""The vendor's variable names and ``.env`` files: credentials kept the way the hosted service's own SDKs
read them (``UPSTASH_REDIS_REST_URL``, ``QSTASH_TOKEN``, ...) reach every svckit client, and
``svckit sandbox --env vendor`` prints them so those SDKs run against the sandbox unchanged.

1. Only vendor names set: :func:`svckit.connect` builds every client, each makes a real request.
2. Precedence: an SVC_* name wins over the vendor's; among the vendor's the first listed wins.
3. ``dotenv=``: a ``.env`` file (found or named) is read without touching os.environ, the process
   environment wins over it, a named file that is not there is a ConfigError; secrets stay masked.
4. ``svckit sandbox --env vendor`` prints the vendor names; upstash-redis, upstash-vector and qstash
   run on exactly that environment.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import svckit
from svckit.cli import env_lines
from svckit.config import VARIABLES, VENDOR_VARIABLES, Settings, vendor_env
from svckit.errors import AuthError, ConfigError, InvalidArgument
from svckit.kv import KV
from svckit.sandbox import Sandbox
from svckit.vector import Vector
from tests.conftest import cli_sandbox

#: every vendor name svckit reads
VENDOR_NAMES = [name for names in VENDOR_VARIABLES.values() for name in names]
#: the settings the vendor has a name for (the others keep their SVC name under --env vendor)
VENDOR_ATTRS = [VARIABLES[name] for name in VENDOR_VARIABLES]
SECRET_ATTRS = ("kv_token", "kv_readonly_token", "vector_token", "devapi_key", "queue_token",
                "queue_current_signing_key", "queue_next_signing_key")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A process environment without any SVC_* or vendor variable (whatever the caller's shell has)."""
    for name in [*VARIABLES, *VENDOR_NAMES]:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def only_vendor_names(env: dict[str, str]) -> dict[str, str]:
    """``vendor_env(env)`` without the settings that have no vendor name (they keep their SVC_* name)."""
    return {name: value for name, value in vendor_env(env).items() if name not in VARIABLES}


def assert_no_secret(text: str, settings: Settings) -> None:
    for attr in SECRET_ATTRS:
        secret = getattr(settings, attr)
        leaked = bool(secret) and secret in text
        assert not leaked, f"{attr} appears in the text"  # the message names it, never shows it


def assert_same_secret(a: object, b: object, what: str) -> None:
    """``a == b`` for values that may be secrets: a failure names ``what``, never the values."""
    same = a == b
    assert same, f"{what} differs"


# -- 1. only the vendor's names ---------------------------------------------------------------------
def test_connect_with_only_the_vendor_names_reaches_every_area(blank_sandbox: Sandbox, clean_env) -> None:
    vendor = only_vendor_names(blank_sandbox.env)
    assert not [name for name in vendor if name.startswith("SVC_")]
    for name, value in vendor.items():
        clean_env.setenv(name, value)
    # The developer API has no vendor variable (the vendor's tools use its one fixed address), so a
    # sandbox's account area is reached through SVC_DEVAPI_URL; its credentials come from the vendor's
    # UPSTASH_EMAIL / UPSTASH_API_KEY.
    clean_env.setenv("SVC_DEVAPI_URL", blank_sandbox.env["SVC_DEVAPI_URL"])

    with svckit.connect() as c:
        expected = blank_sandbox.settings
        for attr in VENDOR_ATTRS + ["devapi_url"]:
            assert_same_secret(getattr(c.settings, attr), getattr(expected, attr), attr)
        assert c.kv.ping() == "PONG"
        assert c.kv.set("vendor-env:greeting", "hello") is True
        assert c.kv.get("vendor-env:greeting") == "hello"
        assert c.kv_readonly.get("vendor-env:greeting") == "hello"
        assert c.vector.info().dimension > 0
        assert_same_secret(c.account.queue_account().token.get_secret_value(),
                           blank_sandbox.env["SVC_QUEUE_TOKEN"], "the queue account's token")
        assert c.queue.dlq().messages == []
        assert_no_secret(repr(c), c.settings)


def test_a_notebook_with_only_the_vendor_names_connects_instead_of_starting_a_sandbox(
        blank_sandbox: Sandbox, monkeypatch) -> None:
    from svckit import demo

    started = []
    monkeypatch.setattr(demo, "local_sandbox", lambda *a, **k: started.append(a) or blank_sandbox)
    env = only_vendor_names(blank_sandbox.env)
    with demo.notebook_clients(env=env) as c:
        assert c.kv.ping() == "PONG"
    assert started == [], "a local sandbox was started although the vendor's variables are set"


# -- 2. precedence ----------------------------------------------------------------------------------
def test_an_svc_name_wins_over_the_vendor_names() -> None:
    env = {"SVC_KV_URL": "http://svc.example", "UPSTASH_REDIS_REST_URL": "http://upstash.example",
           "KV_REST_API_URL": "http://vercel.example",
           "SVC_QUEUE_TOKEN": "svc-queue-token-0001", "QSTASH_TOKEN": "vendor-queue-token-0002"}
    settings = Settings.from_env(env)
    assert settings.kv_url == "http://svc.example"
    assert settings.queue_token == "svc-queue-token-0001"


def test_among_the_vendor_names_the_first_listed_wins() -> None:
    both = {"UPSTASH_REDIS_REST_URL": "http://upstash.example", "KV_REST_API_URL": "http://vercel.example",
            "UPSTASH_REDIS_REST_TOKEN": "upstash-token-0001", "KV_REST_API_TOKEN": "vercel-token-0002"}
    settings = Settings.from_env(both)
    assert (settings.kv_url, settings.kv_token) == ("http://upstash.example", "upstash-token-0001")
    # a Vercel-made database has only the KV_REST_API_* names: the second name is read
    vercel = {"KV_REST_API_URL": "http://vercel.example", "KV_REST_API_TOKEN": "vercel-token-0002",
              "KV_REST_API_READ_ONLY_TOKEN": "vercel-readonly-0003"}
    settings = Settings.from_env(vercel)
    assert (settings.kv_url, settings.kv_token, settings.kv_readonly_token) == (
        "http://vercel.example", "vercel-token-0002", "vercel-readonly-0003")


def test_an_empty_svc_name_does_not_hide_the_vendor_name() -> None:
    settings = Settings.from_env({"SVC_VECTOR_URL": "", "UPSTASH_VECTOR_REST_URL": "http://vector.example"})
    assert settings.vector_url == "http://vector.example"


def test_the_process_environment_is_read_with_the_same_rule(clean_env) -> None:
    clean_env.setenv("KV_REST_API_URL", "http://vercel.example")
    assert Settings.from_env().kv_url == "http://vercel.example"
    clean_env.setenv("UPSTASH_REDIS_REST_URL", "http://upstash.example")
    assert Settings.from_env().kv_url == "http://upstash.example"
    clean_env.setenv("SVC_KV_URL", "http://svc.example")
    assert Settings.from_env().kv_url == "http://svc.example"


def test_a_missing_setting_names_the_vendor_alternatives() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"QSTASH_TOKEN": "a-secret-queue-token-9999"}).require("kv_url", "queue_token")
    message = str(caught.value)
    assert "missing SVC_KV_URL (or UPSTASH_REDIS_REST_URL or KV_REST_API_URL):" in message
    with pytest.raises(ConfigError, match=r"missing SVC_QUEUE_URL \(or QSTASH_URL\)"):
        Settings.from_env({}).require("queue_url")
    with pytest.raises(ConfigError, match=r"missing SVC_DEVAPI_URL:"):  # no vendor name: none offered
        Settings.from_env({}).require("devapi_url")
    assert "a-secret-queue-token-9999" not in message


def test_from_lines_reads_the_vendor_names() -> None:
    lines = ["UPSTASH_REDIS_REST_URL=http://upstash.example\n", "QSTASH_URL=http://queue.example\n",
             "SVC_VECTOR_SPARSE_URL=http://sparse.example\n", "UNRELATED=1\n"]
    settings = Settings.from_lines(lines)
    assert (settings.kv_url, settings.queue_url, settings.vector_sparse_url) == (
        "http://upstash.example", "http://queue.example", "http://sparse.example")


# -- 3. .env files --------------------------------------------------------------------------------
def write_env(path: Path, env: dict[str, str]) -> Path:
    path.write_text("# credentials, as the vendor's console shows them\n"
                    + "".join(f'{name}="{value}"\n' for name, value in env.items()))
    return path


def test_dotenv_true_finds_the_env_file_of_the_working_directory(tmp_path: Path, clean_env) -> None:
    write_env(tmp_path / ".env", {"UPSTASH_REDIS_REST_URL": "http://from-file.example",
                                  "UPSTASH_REDIS_REST_TOKEN": "file-token-abcdef123456"})
    (tmp_path / "notebooks").mkdir()
    clean_env.chdir(tmp_path / "notebooks")  # found from a folder below too, as python-dotenv does
    before = dict(os.environ)
    settings = Settings.from_env(dotenv=True)
    assert (settings.kv_url, settings.kv_token) == ("http://from-file.example", "file-token-abcdef123456")
    assert dict(os.environ) == before  # read, never loaded into the process
    assert Settings.from_env().kv_url is None  # without dotenv=, no file is read
    assert_no_secret(repr(settings), settings)
    assert "***3456" in repr(settings)


def test_dotenv_true_without_a_file_reads_the_environment_alone(tmp_path: Path, clean_env) -> None:
    from dotenv import find_dotenv

    clean_env.chdir(tmp_path)
    if find_dotenv(usecwd=True):
        pytest.skip("a .env file above the temporary folder")
    clean_env.setenv("QSTASH_URL", "http://queue.example")
    assert Settings.from_env(dotenv=True) == Settings.from_env({"QSTASH_URL": "http://queue.example"})


def test_a_named_dotenv_file_and_the_process_environment_wins(tmp_path: Path, clean_env) -> None:
    path = write_env(tmp_path / "prod.env", {"UPSTASH_REDIS_REST_URL": "http://from-file.example",
                                             "QSTASH_URL": "http://queue-from-file.example",
                                             "QSTASH_TOKEN": "file-queue-token-abcdef"})
    clean_env.setenv("UPSTASH_REDIS_REST_URL", "http://from-process.example")
    for named in (path, str(path)):
        settings = Settings.from_env(dotenv=named)
        assert settings.kv_url == "http://from-process.example"  # the usual dotenv rule
        assert (settings.queue_url, settings.queue_token) == (
            "http://queue-from-file.example", "file-queue-token-abcdef")
    # an explicit mapping takes the place of the process environment, over the file all the same
    settings = Settings.from_env({"QSTASH_URL": "http://queue-given.example"}, dotenv=path)
    assert (settings.queue_url, settings.kv_url) == ("http://queue-given.example", "http://from-file.example")
    assert "UPSTASH_REDIS_REST_URL" in os.environ and "QSTASH_URL" not in os.environ


def test_an_svc_name_in_the_file_wins_over_a_vendor_name(tmp_path: Path, clean_env) -> None:
    path = write_env(tmp_path / ".env", {"SVC_QUEUE_URL": "http://svc-from-file.example"})
    clean_env.setenv("QSTASH_URL", "http://vendor-from-process.example")
    # as if load_dotenv() had run: the merged variables, then SVC_* before the vendor's names
    assert Settings.from_env(dotenv=path).queue_url == "http://svc-from-file.example"


def test_a_named_dotenv_file_that_is_not_there_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / ".env"
    with pytest.raises(ConfigError, match="dotenv: no such file") as caught:
        Settings.from_env({}, dotenv=missing)
    assert str(missing) in str(caught.value)
    with pytest.raises(ConfigError, match="no such file"):
        svckit.connect(dotenv=str(missing))
    with pytest.raises(ConfigError, match="no such file"):
        KV.from_env(dotenv=missing)
    with pytest.raises(ConfigError, match="no such file"):  # a folder is not a .env file
        Settings.from_env({}, dotenv=tmp_path)


def test_dotenv_does_not_go_with_a_settings(blank_sandbox: Sandbox) -> None:
    with pytest.raises(InvalidArgument, match="^dotenv: "):
        svckit.connect(blank_sandbox.settings, dotenv=True)


def test_connect_and_from_env_read_a_dotenv_file_against_the_sandbox(
        blank_sandbox: Sandbox, tmp_path: Path, clean_env) -> None:
    env = vendor_env(blank_sandbox.env)
    path = write_env(tmp_path / ".env", env)
    clean_env.chdir(tmp_path)
    with svckit.connect(dotenv=path) as c:
        assert c.kv.set("vendor-env:dotenv", "from a file") is True
        assert c.kv_readonly.get("vendor-env:dotenv") == "from a file"
        assert_same_secret(c.account.queue_account().token.get_secret_value(),
                           blank_sandbox.env["SVC_QUEUE_TOKEN"], "the queue account's token")
        assert c.queue.dlq().messages == []
        assert_no_secret(repr(c) + repr(c.kv) + repr(c.account) + repr(c.queue), c.settings)
    with KV.from_env(dotenv=True) as kv:
        assert kv.get("vendor-env:dotenv") == "from a file"
        assert_no_secret(repr(kv), blank_sandbox.settings)
    with Vector.from_env(dotenv=True) as vector:
        assert vector.info().dimension > 0


def test_a_wrong_token_from_a_dotenv_file_stays_masked(blank_sandbox: Sandbox, tmp_path: Path, clean_env) -> None:
    wrong = "wrong-token-from-a-file-0123456789"
    path = write_env(tmp_path / ".env", {"UPSTASH_REDIS_REST_URL": blank_sandbox.env["SVC_KV_URL"],
                                         "UPSTASH_REDIS_REST_TOKEN": wrong})
    with KV.from_env(dotenv=path) as kv, pytest.raises(AuthError) as caught:
        kv.ping()
    assert wrong not in str(caught.value) and wrong not in repr(caught.value)


# -- 4. svckit sandbox --env vendor ----------------------------------------------------------------
def test_env_lines_keep_the_svc_names_by_default_and_add_node_extra_ca_certs() -> None:
    env = {"SVC_CA_FILE": "/data/ca.pem", "SVC_KV_URL": "https://127.0.0.1:1/kv", "SVC_KV_TOKEN": "t",
           "SVC_DEVAPI_URL": "https://127.0.0.1:1/devapi/v2", "SVC_QUEUE_URL": "https://127.0.0.1:1/queue"}
    assert env_lines(env) == list(env.items())
    assert env_lines(env, "vendor") == [
        ("SVC_CA_FILE", "/data/ca.pem"), ("NODE_EXTRA_CA_CERTS", "/data/ca.pem"),
        ("UPSTASH_REDIS_REST_URL", "https://127.0.0.1:1/kv"), ("UPSTASH_REDIS_REST_TOKEN", "t"),
        ("SVC_DEVAPI_URL", "https://127.0.0.1:1/devapi/v2"), ("QSTASH_URL", "https://127.0.0.1:1/queue")]


#: the vendor's Python SDKs, unchanged, on the environment they are started with: no URL or token in
#: the code, exactly as an existing app has it (prints what it saw as JSON, never a token)
SDK_SCRIPT = r"""
import json, os
from qstash import QStash
from upstash_redis import Redis
from upstash_vector import Index

redis = Redis.from_env()
redis.set("vendor-env:sdk", "from the vendor's SDK")
info = Index.from_env().info()
qstash = QStash(os.environ["QSTASH_TOKEN"])
dlq = qstash.dlq.list()
keys = qstash.signing_key.get()  # the keys an app's Receiver is given verify the sandbox's deliveries
print(json.dumps({"get": redis.get("vendor-env:sdk"), "dimension": info.dimension,
                  "dlq": len(dlq.messages), "keys": [keys.current, keys.next] == [
                      os.environ["QSTASH_CURRENT_SIGNING_KEY"], os.environ["QSTASH_NEXT_SIGNING_KEY"]]}))
"""


def printed_lines(proc: subprocess.Popen[str], until: str, timeout: float = 60.0) -> list[str]:
    """The child's stdout lines up to and with the first that starts with ``until``, or, when no such
    line comes within ``timeout`` seconds (a sandbox printing other names), what it printed by then:
    the test's assertions then fail at once instead of waiting for the test's own timeout."""
    assert proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()

    def read(stream: Any) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, args=(proc.stdout,), daemon=True).start()
    out: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return out
        if line is None:
            return out
        out.append(line)
        if line.startswith(until):
            return out


def parse_lines(lines: list[str]) -> dict[str, str]:
    return dict(line.rstrip("\n").split("=", 1) for line in lines)


def test_svckit_sandbox_env_vendor_runs_the_vendors_sdks_unchanged(tmp_path: Path) -> None:
    proc = cli_sandbox("--env", "vendor", "--data-dir", str(tmp_path / "data"), "--areas", "kv,vector,queue",
                       "--backend", "fakeredis")
    try:
        printed = parse_lines(printed_lines(proc, "QSTASH_NEXT_SIGNING_KEY="))
        assert list(printed) == [
            "UPSTASH_REDIS_REST_URL", "UPSTASH_REDIS_REST_TOKEN", "KV_REST_API_READ_ONLY_TOKEN",
            "UPSTASH_VECTOR_REST_URL", "SVC_VECTOR_SPARSE_URL", "SVC_VECTOR_HYBRID_URL", "SVC_VECTOR_NOMODEL_URL",
            "UPSTASH_VECTOR_REST_TOKEN", "QSTASH_URL", "QSTASH_TOKEN", "QSTASH_CURRENT_SIGNING_KEY",
            "QSTASH_NEXT_SIGNING_KEY"]
        # the environment an existing app runs in: none of the names of another service, only these
        base = {k: v for k, v in os.environ.items() if k not in VARIABLES and k not in VENDOR_NAMES}
        done = subprocess.run([sys.executable, "-c", SDK_SCRIPT], env={**base, **printed},
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout) == {"get": "from the vendor's SDK", "dimension": 384, "dlq": 0, "keys": True}
        # and svckit reads the same lines
        settings = Settings.from_lines(f"{k}={v}" for k, v in printed.items())
        assert settings.kv_url == printed["UPSTASH_REDIS_REST_URL"]
        assert_same_secret(settings.queue_token, printed["QSTASH_TOKEN"], "queue_token")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)


def test_svckit_sandbox_env_vendor_tls_names_the_ca_for_node_too(tmp_path: Path) -> None:
    data = tmp_path / "data"
    proc = cli_sandbox("--env", "vendor", "--tls", "--data-dir", str(data), "--areas", "kv",
                       "--backend", "fakeredis")
    try:
        lines = printed_lines(proc, "KV_REST_API_READ_ONLY_TOKEN=")
        ca = str(data.resolve() / "ca.pem")
        assert lines[:2] == [f"SVC_CA_FILE={ca}\n", f"NODE_EXTRA_CA_CERTS={ca}\n"]
        assert [line.split("=", 1)[0] for line in lines[2:]] == [
            "UPSTASH_REDIS_REST_URL", "UPSTASH_REDIS_REST_TOKEN", "KV_REST_API_READ_ONLY_TOKEN"]
        with svckit.connect(Settings.from_lines(lines)) as c:  # SVC_CA_FILE -> verify=
            assert c.kv.ping() == "PONG"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
