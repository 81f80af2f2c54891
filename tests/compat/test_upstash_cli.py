"""The vendor's command-line tool, ``@upstash/cli`` at the version tests/compat/js/package-lock.json
pins, unchanged, against a live sandbox's developer API: what a person sees when looking at an account.

Its API address is built in, so it runs as ``node --import upstash_cli_shim.mjs .../cli.js ARGS``: the
shim (tests/compat/js/upstash_cli_shim.mjs) sends its requests for https://api.upstash.com/v2/... to
``SVC_DEVAPI_URL`` and refuses any request that would leave this machine. The environment is what
``svckit sandbox --env vendor`` prints (UPSTASH_EMAIL, UPSTASH_API_KEY, SVC_DEVAPI_URL, ...), with the
CLI's config folders and HOME in a folder of the test's own, so no saved login is read; it runs in
that folder too (the CLI loads a ``.env`` file from where it runs). Each command prints JSON, which the
tests compare with what the sandbox holds.

The read-only commands share the module's ``blank_sandbox`` (every area); a command that changes the
account (search rename, qstash set-plan, rotate-token) or needs a known queue history (stats) runs
on a ``queue_sandbox`` of its own (areas C and D, fresh per test).
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from svckit.cli import env_lines
from svckit.sandbox import Sandbox
from svckit.sandbox.plans import PLAN_PRESETS
from tests.compat.conftest import JS_DIR
from tests.compat.workflows import seed_queue
from tests.conftest import IN_CI, eventually

CLI_JS = JS_DIR / "node_modules" / "@upstash" / "cli" / "dist" / "cli.js"
SHIM = JS_DIR / "upstash_cli_shim.mjs"
#: one CLI command may take this long (node starts, one or two requests on loopback)
CLI_TIMEOUT = 60.0
#: the CLI's set-plan names (its QSTASH_PLANS) -> the plan the queue account record then names
SET_PLANS = {"paid": "paid", "qstash_fixed_1m": "queue_enterprise_1m",
             "qstash_fixed_10m": "queue_enterprise_10m", "qstash_fixed_100m": "queue_enterprise_100m"}
#: sandbox variable of each vector index's REST URL
VECTOR_URLS = {"dense": "SVC_VECTOR_URL", "sparse": "SVC_VECTOR_SPARSE_URL",
               "hybrid": "SVC_VECTOR_HYBRID_URL", "nomodel": "SVC_VECTOR_NOMODEL_URL"}
VECTOR_TYPES = {"dense": "DENSE", "sparse": "SPARSE", "hybrid": "HYBRID", "nomodel": "DENSE"}


@dataclass
class Upstash:
    """The CLI as a user runs it: ``upstash ARGS`` through the shim, in ``home``, with ``env``."""

    node: str
    env: dict[str, str]
    home: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [self.node, "--import", str(SHIM), str(CLI_JS), *args]
        try:
            return subprocess.run(command, cwd=self.home, env=self.env, capture_output=True, text=True,
                                  check=False, timeout=CLI_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"upstash {' '.join(args[:2])}: no answer within {CLI_TIMEOUT:.0f} s\n{exc.stderr}")

    def __call__(self, *args: str) -> Any:
        """What the command printed, parsed; the test fails with the CLI's error where it failed."""
        done = self.run(*args)
        # a bool, not ``done``, in the assert: pytest would show ``done``'s stdout, tokens and all
        succeeded = done.returncode == 0 and done.stderr == ""
        assert succeeded, f"upstash {' '.join(args[:2])} exited with {done.returncode}: {done.stderr}"
        return json.loads(done.stdout)

    def error(self, *args: str) -> str:
        """The message of the error JSON a failing command prints (exit status 1, nothing on stdout)."""
        done = self.run(*args)
        failed = done.returncode == 1 and done.stdout == ""  # stdout may hold a token: its length only
        assert failed, (f"upstash {' '.join(args[:2])} exited with {done.returncode}, "
                        f"{len(done.stdout)} characters on stdout")
        return json.loads(done.stderr)["error"]


@pytest.fixture(scope="module")
def cli_node(node: str) -> str:
    """Node, once the CLI is installed (a node_modules from before it was added to package.json lacks it)."""
    if not CLI_JS.is_file():
        message = "run: npm ci --prefix tests/compat/js"  # @upstash/cli is not installed
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return node


@pytest.fixture
def upstash(cli_node: str, tmp_path: Path) -> Callable[[Sandbox], Upstash]:
    """``upstash(sandbox)``: the CLI set up for ``sandbox`` in a folder of the test's own."""

    def make(sandbox: Sandbox) -> Upstash:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        env = {**dict(env_lines(sandbox.env, "vendor")), "PATH": os.environ.get("PATH", ""),
               "HOME": str(home), "UPSTASH_CONFIG_HOME": str(home / "config"),
               "UPSTASH_LEGACY_CONFIG_HOME": str(home)}
        return Upstash(cli_node, env, home)

    return make


def queue_id(sandbox: Sandbox) -> str:
    return sandbox.area("account").store.queue_account()["id"]


def devapi_error(sandbox: Sandbox, method: str, path: str, body: Any = None, key: str | None = None) -> str:
    """The message of the error the sandbox answers ``method path`` with (asked directly, with the
    devapi key or ``key``)."""
    env = sandbox.env
    answer = httpx.request(method, env["SVC_DEVAPI_URL"] + path, json=body,
                           auth=(env["SVC_DEVAPI_EMAIL"], key or env["SVC_DEVAPI_KEY"]))
    assert answer.status_code in (400, 401, 404), f"{method} {path}: {answer.status_code} {answer.text}"
    return answer.json()["error"]


# -- what the account holds -------------------------------------------------------------------------
def test_redis_list_shows_the_database_with_its_url_and_tokens(upstash, blank_sandbox):
    cli, env = upstash(blank_sandbox), blank_sandbox.env
    [db] = cli("redis", "list")
    assert db["endpoint"] == env["SVC_KV_URL"]
    assert db["rest_token"] == env["SVC_KV_TOKEN"]
    assert db["read_only_rest_token"] == env["SVC_KV_READONLY_TOKEN"]
    assert (db["state"], db["region"], db["type"]) == ("active", "local", "free")
    assert db["customer_id"] == env["SVC_DEVAPI_EMAIL"]
    # what it printed is enough to use the database: the CLI's own `redis exec` on that URL and token
    key, value = f"cli:{uuid.uuid4().hex[:8]}", "from-the-cli"
    auth = ("--db-url", db["endpoint"], "--db-token", db["rest_token"])
    assert cli("redis", "exec", *auth, "SET", key, value) == {"result": "OK"}
    assert cli("redis", "exec", *auth, "GET", key) == {"result": value}


def test_vector_list_shows_the_four_indexes(upstash, blank_sandbox):
    cli, env = upstash(blank_sandbox), blank_sandbox.env
    indexes = {index["name"]: index for index in cli("vector", "list")}
    assert sorted(indexes) == sorted(VECTOR_URLS)
    for name, index in indexes.items():
        info = httpx.get(f"{env[VECTOR_URLS[name]]}/info",
                         headers={"Authorization": f"Bearer {env['SVC_VECTOR_TOKEN']}"}).json()["result"]
        assert index["endpoint"] == env[VECTOR_URLS[name]], name
        assert index["token"] == env["SVC_VECTOR_TOKEN"], name
        assert index["index_type"] == VECTOR_TYPES[name], name
        assert index["dimension_count"] == info["dimension"], name
        assert index["similarity_function"] == info["similarityFunction"], name
    assert "embedding_model" in indexes["dense"] and "embedding_model" not in indexes["nomodel"]


def test_search_list_shows_the_indexes_and_a_rename(upstash, queue_sandbox):
    cli, store = upstash(queue_sandbox), queue_sandbox.area("account").store
    listed = {index["id"]: index["name"] for index in cli("search", "list")}
    assert listed == store.search_indexes() and listed
    index_id = min(listed)
    assert cli("search", "rename", "--index-id", index_id, "--name", "renamed-by-cli") == "OK"
    after = {index["id"]: index["name"] for index in cli("search", "list")}
    assert after == {**listed, index_id: "renamed-by-cli"} == store.search_indexes()


def test_get_and_stats_of_each_resource(upstash, blank_sandbox):
    cli, env = upstash(blank_sandbox), blank_sandbox.env
    [db] = cli("redis", "list")
    assert cli("redis", "get", "--db-id", db["database_id"]) == db
    hidden = {k: v for k, v in db.items() if k not in ("rest_token", "read_only_rest_token")}
    assert cli("redis", "get", "--db-id", db["database_id"], "--hide-credentials") == hidden
    auth = ("--db-url", db["endpoint"], "--db-token", db["rest_token"])
    cli("redis", "exec", *auth, "SET", f"cli:{uuid.uuid4().hex[:8]}", "1")
    keys = cli("redis", "exec", *auth, "DBSIZE")["result"]
    stats = cli("redis", "stats", "--db-id", db["database_id"])
    assert stats["keyspace"][-1]["y"] == keys >= 1
    assert stats["daily_net_commands"] == stats["dailyrequests"][-1]["y"] >= 2

    # one vector of the test's own, in a namespace of its own, in the index without a model
    nomodel, headers = env["SVC_VECTOR_NOMODEL_URL"], {"Authorization": f"Bearer {env['SVC_VECTOR_TOKEN']}"}

    def info(url: str) -> dict[str, Any]:
        return httpx.get(f"{url}/info", headers=headers).json()["result"]

    dimension = info(nomodel)["dimension"]
    upserted = httpx.post(f"{nomodel}/upsert/cli-{uuid.uuid4().hex[:8]}", headers=headers,
                          json=[{"id": "v1", "vector": [1.0] + [0.0] * (dimension - 1)}])
    assert upserted.status_code == 200, upserted.text
    eventually(lambda: info(nomodel)["pendingVectorCount"] == 0, "the upserted vector to be indexed")
    counts, index_stats = {}, {}
    for index in cli("vector", "list"):
        assert cli("vector", "get", "--index-id", index["id"]) == index
        index_stats[index["name"]] = cli("vector", "index-stats", "--index-id", index["id"])
        counts[index["name"]] = info(index["endpoint"])["vectorCount"]
        assert index_stats[index["name"]]["current_vector_count"] == counts[index["name"]], index["name"]
    assert counts["nomodel"] >= 1 and index_stats["nomodel"]["daily_update_count"] >= 1
    assert cli("vector", "stats")["record_count"] == sum(counts.values())

    for index in cli("search", "list"):
        assert cli("search", "get", "--index-id", index["id"]) == index


def test_qstash_list_and_get_show_the_queue_account(upstash, blank_sandbox):
    cli, env = upstash(blank_sandbox), blank_sandbox.env
    [listed] = cli("qstash", "list")
    assert listed["id"] == queue_id(blank_sandbox)
    assert listed["token"] == env["SVC_QUEUE_TOKEN"]
    assert listed["customer_id"] == env["SVC_DEVAPI_EMAIL"]
    got = cli("qstash", "get", "--qstash-id", listed["id"])
    assert got == listed
    assert {name: got[name] for name in PLAN_PRESETS["free"]} == dict(PLAN_PRESETS["free"])


def test_qstash_stats_counts_the_runs_and_the_dlq(upstash, queue_sandbox):
    seed_queue(queue_sandbox, "cli", failing=2, succeeding=1)  # 3 workflow runs, 2 of them in the DLQ
    cli = upstash(queue_sandbox)
    for period in ("1h", "7d"):
        stats = cli("qstash", "stats", "--qstash-id", queue_id(queue_sandbox), "--period", period)
        assert stats["dlq_message_count"] == 2, period
        assert sum(day["workflow_run"] for day in stats["daily_requests"]) == 3, period
        assert len(stats["daily_requests"]) == len(stats["days"]), period


# -- what changes the account -----------------------------------------------------------------------
@pytest.mark.parametrize("plan", SET_PLANS)
def test_qstash_set_plan_applies_the_plan_limits(upstash, queue_sandbox, plan):
    cli, qstash_id = upstash(queue_sandbox), queue_id(queue_sandbox)
    assert cli("qstash", "set-plan", "--qstash-id", qstash_id, "--plan", plan) == "OK"
    after = cli("qstash", "get", "--qstash-id", qstash_id)
    preset = PLAN_PRESETS[SET_PLANS[plan]]
    assert {name: after[name] for name in preset} == dict(preset)
    assert after["token"] == queue_sandbox.env["SVC_QUEUE_TOKEN"]  # the plan changes, the token stays


def test_qstash_rotate_token_refuses_the_old_token_at_once(upstash, queue_sandbox):
    cli, env, qstash_id = upstash(queue_sandbox), queue_sandbox.env, queue_id(queue_sandbox)
    old = env["SVC_QUEUE_TOKEN"]

    def queues(token: str) -> int:  # the queue area's API, asked with ``token``
        answer = httpx.get(f"{env['SVC_QUEUE_URL']}/v2/queues", headers={"Authorization": f"Bearer {token}"})
        return answer.status_code

    assert queues(old) == 200
    rotated = cli("qstash", "rotate-token", "--qstash-id", qstash_id)
    assert rotated["id"] == qstash_id and rotated["token"] != old
    assert queues(old) == 401
    assert queues(rotated["token"]) == 200
    assert rotated["token"] == queue_sandbox.env["SVC_QUEUE_TOKEN"]
    assert cli("qstash", "get", "--qstash-id", qstash_id)["token"] == rotated["token"]


# -- errors ------------------------------------------------------------------------------------------
def test_an_unknown_qstash_id_prints_the_sandbox_error(upstash, blank_sandbox):
    cli, unknown = upstash(blank_sandbox), "no-such-qstash-id"
    for args, (method, path, body) in {
        ("get",): ("GET", f"/qstash/user/{unknown}", None),
        ("stats",): ("GET", f"/qstash/stats/{unknown}?period=1h", None),
        ("rotate-token",): ("POST", f"/qstash/rotate-token/{unknown}", None),
        ("set-plan", "--plan", "paid"): ("POST", f"/qstash/set-plan/{unknown}", {"plan_name": "paid"}),
    }.items():
        message = cli.error("qstash", *args, "--qstash-id", unknown)
        assert message == devapi_error(blank_sandbox, method, path, body) and unknown in message, args
    before = queue_id(blank_sandbox), blank_sandbox.env["SVC_QUEUE_TOKEN"]
    path = f"/qstash/set-plan/{before[0]}"
    message = cli.error("qstash", "set-plan", "--qstash-id", before[0], "--plan", "platinum")
    assert message == devapi_error(blank_sandbox, "POST", path, {"plan_name": "platinum"})
    assert (queue_id(blank_sandbox), blank_sandbox.env["SVC_QUEUE_TOKEN"]) == before  # nothing changed


def test_wrong_credentials_print_the_sandbox_error(upstash, blank_sandbox):
    cli = upstash(blank_sandbox)
    cli.env["UPSTASH_API_KEY"] = "not-the-key"
    expected = devapi_error(blank_sandbox, "GET", "/redis/databases", key="not-the-key")
    assert cli.error("redis", "list") == expected


# -- the shim ----------------------------------------------------------------------------------------
def test_the_shim_refuses_every_request_off_this_machine(upstash, blank_sandbox):
    cli = upstash(blank_sandbox)
    # a devapi base elsewhere: refused before any request is made
    refused = "upstash_cli_shim: refused a request off this machine: "
    cli.env["SVC_DEVAPI_URL"] = "https://203.0.113.7/devapi/v2"
    assert cli.error("redis", "list") == refused + "https://203.0.113.7"
    # the CLI's own calls to other hosts, and any other code in the process, likewise
    message = cli.error("redis", "exec", "--db-url", "https://db.example.com", "--db-token", "t", "PING")
    assert message == refused + "https://db.example.com"
    done = subprocess.run([cli.node, "--import", str(SHIM), "--input-type=module", "-e",
                           "await fetch('http://localhost.example.com/')"], cwd=cli.home, env=cli.env,
                          capture_output=True, text=True, check=False, timeout=CLI_TIMEOUT)
    assert done.returncode != 0 and refused + "http://localhost.example.com" in done.stderr
