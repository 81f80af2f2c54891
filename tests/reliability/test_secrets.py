"""Secrets never leak: every secret of a ``Sandbox(seed="demo")`` (kv Standard and Read Only tokens, the
vector token, the devapi key, the queue token and password, an ACL REST token, and the queue token
minted by a rotation) is searched, as its full value, in:

- repr and str of every client, Settings, Clients, Sandbox, QueueAccount and the sandbox's own objects;
- the messages, reprs, tracebacks and attributes of errors raised by bad calls (wrong tokens, refused
  commands, unknown resources, a server that never answers);
- everything logged (caplog, DEBUG on every logger, httpx and httpcore included) and written to
  stdout/stderr (capfd) during the test, and the stderr and non-SVC_* stdout of ``svckit sandbox``;
- every trait value, rendered HTML/Output and static view of every widget in svckit/widgets, built
  against the sandbox;
- (the executed notebooks of notebooks/, as JSON and as HTML: tests/demo/test_nb_execute.py, on the
  one run of them the demo tests share.)

``svckit sandbox`` prints ``SVC_*=value`` lines with tokens on stdout by design (docs/architecture.md):
exactly those lines are excluded, nothing else.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import signal
import socket
import subprocess
import traceback
import uuid
from typing import Any

import httpx
import pytest

from svckit._http import RetryPolicy
from svckit.account import Account, AsyncAccount
from svckit.config import Settings
from svckit.connect import connect
from svckit.errors import SvcError
from svckit.kv import KV, AsyncKV
from svckit.queue import AsyncQueue, Queue
from svckit.sandbox import Sandbox
from svckit.sandbox.plans import PLAN_PRESETS
from svckit.vector import AsyncVector, Vector
from tests.conftest import Haystack, cli_sandbox, lines_until, start_sandbox, wait_vector_seeded
from tests.reliability.conftest import DEMO_LIMIT, kv_backend

SVC_LINE = re.compile(r"^SVC_[A-Z_]+=\S*$")


def _exception_texts(exc: BaseException) -> list[str]:
    texts = [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:  # the whole chain, and every attribute on it
        seen.add(id(exc))
        texts += [repr(v) for v in vars(exc).values()] + [str(a) for a in exc.args]
        texts += list(getattr(exc, "__notes__", []))
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return texts


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``Sandbox(seed="demo")`` with every area, plus an ACL user with its REST token."""
    sandbox = start_sandbox(tmp_path_factory.mktemp("secrets"), seed="demo", backend=kv_backend(),
                            demo_limit=DEMO_LIMIT, queue_retry_delay=0)
    try:
        wait_vector_seeded(sandbox, DEMO_LIMIT)
        env = sandbox.env
        kv = {"Authorization": f"Bearer {env['SVC_KV_TOKEN']}"}
        user, password = f"reader{uuid.uuid4().hex[:6]}", "acl-" + uuid.uuid4().hex
        with httpx.Client(timeout=10) as http:
            assert http.post(env["SVC_KV_URL"] + "/", headers=kv, json=[
                "ACL", "SETUSER", user, "on", f">{password}", "~*", "+@read"]).json() == {"result": "OK"}
            rest = http.post(env["SVC_KV_URL"] + "/", headers=kv, json=["ACL", "RESTTOKEN", user, password]).json()
        account = sandbox.area("account").store.queue_account()  # type: ignore[attr-defined]
        secrets = {name: env[name] for name in ("SVC_KV_TOKEN", "SVC_KV_READONLY_TOKEN", "SVC_VECTOR_TOKEN",
                                                "SVC_DEVAPI_KEY")}
        secrets.update({"queue token": account["token"], "queue password": account["password"],
                        "ACL REST token": rest["result"], "ACL password": password})
        yield sandbox, secrets
    finally:
        sandbox.stop()


def _silent_server() -> socket.socket:
    """A port that accepts connections and never answers: every request to it times out."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock


def _clients(settings: Settings) -> list[Any]:
    out: list[Any] = [KV.from_settings(settings), KV.from_settings(settings, readonly=True),
                      AsyncKV.from_settings(settings), Account.from_settings(settings),
                      AsyncAccount.from_settings(settings), Queue.from_settings(settings),
                      AsyncQueue.from_settings(settings)]
    for kind in ("dense", "sparse", "hybrid", "nomodel"):
        out += [Vector.from_settings(settings, kind=kind), AsyncVector.from_settings(settings, kind=kind)]
    return out


def _bad_calls(sandbox: Sandbox, secrets: dict[str, str]) -> list[BaseException]:
    """Errors from calls that fail in every way a user meets: each must name what failed, not the secret."""
    env = sandbox.env
    settings = sandbox.settings
    errors: list[BaseException] = []

    def expect(call: Any) -> None:
        try:
            result = call()
            if asyncio.iscoroutine(result):
                asyncio.run(result)
        except SvcError as exc:
            errors.append(exc)
        else:
            raise AssertionError(f"{call} did not fail")

    kv, kv_ro = KV.from_settings(settings), KV.from_settings(settings, readonly=True)
    expect(lambda: kv.execute("NOSUCHCOMMAND", "x"))
    expect(lambda: kv.incr("greeting"))
    expect(lambda: kv_ro.set("greeting", "changed"))
    expect(lambda: kv_ro.execute("KEYS", "*"))
    expect(lambda: kv.execute("ACL", "RESTTOKEN", "nobody", secrets["ACL password"]))
    expect(lambda: KV(env["SVC_KV_URL"], secrets["SVC_VECTOR_TOKEN"]).get("greeting"))  # another area's token
    expect(lambda: KV(env["SVC_KV_URL"], "wrong").get("greeting"))
    expect(lambda: Vector(env["SVC_VECTOR_NOMODEL_URL"], env["SVC_VECTOR_TOKEN"]).query_data("text"))
    expect(lambda: Vector(env["SVC_VECTOR_URL"], secrets["SVC_KV_TOKEN"]).query_data("text"))
    expect(lambda: Account(env["SVC_DEVAPI_URL"], env["SVC_DEVAPI_EMAIL"], env["SVC_DEVAPI_KEY"])
           .rename_search_index("no-such-index", "x"))
    expect(lambda: Account(env["SVC_DEVAPI_URL"], env["SVC_DEVAPI_EMAIL"], secrets["SVC_KV_TOKEN"]).queue_account())
    expect(lambda: Queue(env["SVC_QUEUE_URL"], env["SVC_QUEUE_TOKEN"]).resume("no-such-dlq-entry"))
    expect(lambda: Queue(env["SVC_QUEUE_URL"], secrets["SVC_DEVAPI_KEY"]).workflow_logs())
    expect(lambda: AsyncKV(env["SVC_KV_URL"], "wrong").get("greeting"))
    expect(lambda: AsyncQueue(env["SVC_QUEUE_URL"], secrets["SVC_KV_TOKEN"]).workflow_logs())
    # a server that never answers, and a port where nothing listens, with the valid secrets
    silent = _silent_server()
    dead = f"http://127.0.0.1:{silent.getsockname()[1]}"
    fast = {"timeout": 0.3, "retry": RetryPolicy(attempts=2, backoff=0.01)}
    try:
        expect(lambda: KV(dead + "/kv", secrets["SVC_KV_TOKEN"], **fast).get("greeting"))
        expect(lambda: Vector(dead + "/vector/dense", secrets["SVC_VECTOR_TOKEN"], **fast).query_data("x"))
        expect(lambda: Account(dead + "/devapi/v2", env["SVC_DEVAPI_EMAIL"], secrets["SVC_DEVAPI_KEY"], **fast)
               .queue_account())
        expect(lambda: Queue(dead + "/queue", secrets["queue token"], **fast).workflow_logs())
        expect(lambda: AsyncKV(dead + "/kv", secrets["SVC_KV_TOKEN"], **fast).get("greeting"))
    finally:
        silent.close()
    with socket.socket() as probe:  # a port that is certainly closed
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    expect(lambda: KV(closed + "/kv", secrets["SVC_KV_TOKEN"], **fast).get("greeting"))
    expect(lambda: Queue(closed + "/queue", secrets["queue token"], **fast).workflow_logs())
    return errors


def _widget_states(sandbox: Sandbox) -> list[tuple[str, Any]]:
    """Build every widget against the sandbox, use it, and return the state of every widget that exists
    then (children included): all trait values, HTML values, Output contents."""
    import ipywidgets

    from svckit import widgets

    clients = connect(sandbox.settings)
    built = []
    explorer = widgets.KVExplorer(clients.kv, autorefresh=False)
    explorer.refresh()
    explorer.select("greeting")
    explorer.run_command("GET greeting")
    explorer.run_command("ACL WHOAMI")
    built.append(explorer)
    dashboard = widgets.AccountDashboard(clients.account, presets=PLAN_PRESETS)
    dashboard.refresh()
    dashboard.compare("paid")
    built.append(dashboard)
    from svckit.vector.routing import LocalCorpus

    small = LocalCorpus([{"id": f"doc-{i}", "data": text} for i, text in enumerate(
        ["parse json text", "read a file from disk", "open a network socket"])])  # the local side stays small
    playground = widgets.VectorPlayground.from_settings(sandbox.settings, corpus=small, query="how to parse json",
                                                        index_kind="dense")
    for kind in ("sparse", "hybrid"):
        playground.index_kind = kind
        playground.query("read a file")
    built.append(playground)
    timeline = widgets.WorkflowTimeline(clients.queue)
    timeline.refresh()
    built.append(timeline)
    states = []
    for widget in list(ipywidgets.widgets.widget._instances.values()):
        states.append((f"{type(widget).__name__} state", widget.get_state()))
        states.append((f"{type(widget).__name__} repr", repr(widget)))
    for widget in built:
        states.append((f"{type(widget).__name__} traits", {n: getattr(widget, n) for n in widget.trait_names()}))
        states.append((f"{type(widget).__name__} static view", widget.static_html()))
        if hasattr(widget, "close"):
            widget.close()
    clients.close()
    return states


def test_no_secret_in_reprs_errors_logs_output_or_widgets(demo, capfd, caplog):
    sandbox, secrets = demo
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "svckit", "uvicorn", "asyncio"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    hay = Haystack()

    settings = sandbox.settings
    clients = connect(settings)
    for obj in [settings, clients, sandbox, sandbox.context.credentials, *sandbox.areas, *_clients(settings)]:
        hay.add(f"repr({type(obj).__name__})", repr(obj))
        hay.add(f"str({type(obj).__name__})", str(obj))
    for attr in ("kv", "kv_readonly", "vector", "account", "queue"):  # the lazily built clients too
        client = getattr(clients, attr)
        hay.add(f"repr(clients.{attr})", repr(client))
    record = clients.account.queue_account()
    hay.add("repr(QueueAccount)", repr(record))
    hay.add("str(QueueAccount)", str(record))
    hay.add("QueueAccount.model_dump()", {k: v for k, v in record.model_dump().items() if k not in ("token", "password")})
    kv_principals = sandbox.area("kv")._principals  # type: ignore[attr-defined]
    hay.add("repr(Principal)", [repr(p) for p in kv_principals.values()])
    clients.close()

    for exc in _bad_calls(sandbox, secrets):
        for text in _exception_texts(exc):
            hay.add(f"{type(exc).__name__}", text)

    for where, state in _widget_states(sandbox):
        hay.add(where, state)

    # rotate through the dashboard: the new queue token is a secret too, and must not show either
    from svckit import widgets

    with connect(sandbox.settings) as fresh:
        dashboard = widgets.AccountDashboard(fresh.account)
        masked = dashboard.rotate_token()
        hay.add("AccountDashboard after rotation", dashboard.get_state())
        hay.add("AccountDashboard static view after rotation", dashboard.static_html())
        hay.add("AccountDashboard message", dashboard.message)
    rotated = sandbox.area("account").store.queue_account()  # type: ignore[attr-defined]
    assert masked and rotated["token"] != secrets["queue token"]
    secrets = {**secrets, "rotated queue token": rotated["token"], "rotated queue password": rotated["password"]}

    captured = capfd.readouterr()
    hay.add("stdout", captured.out)
    hay.add("stderr", captured.err)
    hay.add("logging", caplog.text)
    assert caplog.records, "nothing was logged: the log check would be vacuous"
    assert not hay.leaks(secrets), hay.leaks(secrets)
    assert len(hay.items) > 50


def test_no_secret_in_the_cli_stderr_or_non_svc_stdout(tmp_path):
    """``svckit sandbox``: only its SVC_* stdout lines may carry secrets."""
    proc = cli_sandbox("--data-dir", str(tmp_path), "--seed", "demo", "--backend", kv_backend(),
                       stderr=subprocess.PIPE, HF_HUB_OFFLINE="1")
    lines: list[str] = []
    try:
        lines = [line.rstrip("\n") for line in lines_until(proc, "SVC_QUEUE_TOKEN=")]
        values = dict(line.split("=", 1) for line in lines if SVC_LINE.match(line))
        assert "SVC_KV_TOKEN" in values, lines
        # use it a little, including failures, so the server has something to log
        with httpx.Client(timeout=10) as http:
            http.get(values["SVC_KV_URL"] + "/GET/greeting", headers={"Authorization": f"Bearer {values['SVC_KV_TOKEN']}"})
            http.get(values["SVC_KV_URL"] + "/GET/greeting", params={"_token": "wrong"})
            http.get(values["SVC_QUEUE_URL"] + "/v2/workflows/logs", headers={"Authorization": "Bearer wrong"})
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    secrets = {k: v for k, v in values.items() if k in ("SVC_KV_TOKEN", "SVC_KV_READONLY_TOKEN", "SVC_VECTOR_TOKEN",
                                                          "SVC_DEVAPI_KEY", "SVC_QUEUE_TOKEN")}
    assert len(secrets) == 5
    credentials = json.loads((tmp_path / "credentials.json").read_text())
    assert credentials["kv_token"] == secrets["SVC_KV_TOKEN"]  # the secrets we look for are the real ones
    other_stdout = [line for line in lines + out.splitlines() if not SVC_LINE.match(line)]
    hay = Haystack()
    hay.add("svckit sandbox stderr", err)
    hay.add("svckit sandbox stdout (non SVC_* lines)", "\n".join(other_stdout))
    assert "serving" in err, err[-2000:]
    assert not hay.leaks(secrets), hay.leaks(secrets)
