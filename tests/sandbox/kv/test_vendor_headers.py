"""Vendor header aliases (svckit/sandbox/headers.py): ``Upstash-*`` request headers act as their
``Service-*`` names on every area, the neutral one wins when both are sent, and the one table names
every vendor header the installed SDKs send."""

from __future__ import annotations

import base64
import importlib.util
import re
import time
from pathlib import Path

import httpx
import pytest

from svckit.sandbox import Sandbox, openapi
from svckit.sandbox.headers import HEADER_ALIASES, NEUTRAL_PREFIX, VENDOR_PREFIX, neutral_headers

SDKS = ("upstash_redis", "upstash_ratelimit", "upstash_vector", "qstash")


# -- the pure rewrite ------------------------------------------------------------------------------
def test_vendor_names_become_neutral_and_other_headers_keep_their_order():
    headers = [(b"authorization", b"Bearer x"), (b"upstash-encoding", b"base64"), (b"accept", b"*/*"),
               (b"upstash-forward-x-trace", b"1")]
    assert neutral_headers(headers) == [(b"authorization", b"Bearer x"), (b"service-encoding", b"base64"),
                                        (b"accept", b"*/*"), (b"service-forward-x-trace", b"1")]


def test_the_neutral_header_wins_when_both_spellings_are_sent():
    headers = [(b"upstash-response-format", b"resp2"), (b"service-response-format", b"json")]
    assert neutral_headers(headers) == [(b"service-response-format", b"json")]


# -- over HTTP: area A -----------------------------------------------------------------------------
def test_upstash_encoding_gives_base64_replies(kv):
    key = kv.key()
    kv.post("/", json=["SET", key, "héllo"])
    reply = kv.post("/", json=["GET", key], headers={"Upstash-Encoding": "base64"})
    assert reply.json() == {"result": base64.b64encode("héllo".encode()).decode()}
    assert kv.post("/", json=["SET", key, "v"], headers={"Upstash-Encoding": "base64"}).json() == {"result": "OK"}


def test_upstash_response_format_gives_resp2_and_its_bad_values_are_refused(kv):
    key = kv.key()
    kv.post("/", json=["SET", key, "v"])
    reply = kv.post("/", json=["GET", key], headers={"Upstash-Response-Format": "resp2"})
    assert reply.headers["content-type"] == "application/octet-stream"
    assert reply.content == b"$1\r\nv\r\n"
    bad = kv.post("/", json=["GET", key], headers={"Upstash-Response-Format": "xml"})
    assert bad.status_code == 400 and "json or resp2" in bad.json()["error"]
    both = kv.post("/", json=["GET", key], headers={"Upstash-Response-Format": "resp2", "Upstash-Encoding": "base64"})
    assert both.status_code == 400


def test_over_http_the_neutral_spelling_wins(kv):
    key = kv.key()
    kv.post("/", json=["SET", key, "v"])
    reply = kv.post("/", json=["GET", key],
                    headers={"Service-Response-Format": "json", "Upstash-Response-Format": "resp2"})
    assert reply.json() == {"result": "v"}


# -- over HTTP: area D -----------------------------------------------------------------------------
WORKFLOW = "https://app.example.com/api/workflows/aliases"


@pytest.fixture(scope="module")
def queue_sandbox(tmp_path_factory):
    with Sandbox(tmp_path_factory.mktemp("aliases"), areas=["account", "queue"], queue_retry_delay=0) as sb:
        sb.area("queue").runner.register(WORKFLOW, lambda context: context.run("only", lambda: "done"))
        yield sb


def _runs(sb: Sandbox, **params) -> list[dict]:
    auth = {"Authorization": f"Bearer {sb.env['SVC_QUEUE_TOKEN']}"}
    deadline = time.monotonic() + 30
    while True:
        runs = httpx.get(f"{sb.env['SVC_QUEUE_URL']}/v2/workflows/logs", params=params, headers=auth).json()["runs"]
        if all(r["workflowState"] != "RUN_STARTED" for r in runs) or time.monotonic() > deadline:
            return runs
        time.sleep(0.05)


def test_queue_run_options_arrive_under_their_vendor_names(queue_sandbox):
    sb = queue_sandbox
    auth = {"Authorization": f"Bearer {sb.env['SVC_QUEUE_TOKEN']}"}
    reply = httpx.post(f"{sb.env['SVC_QUEUE_URL']}/v2/trigger/{WORKFLOW}", json={"n": 1}, headers={
        **auth, "Upstash-Workflow-RunId": "wfr_vendor", "Upstash-Label": "vendor-label",
        "Upstash-Retries": "0", "Upstash-Flow-Control-Key": "fck", "Upstash-Flow-Control-Value": "rate=1"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["workflowRunId"] == "wfr_vendor"
    [run] = _runs(sb, label="vendor-label")
    assert run["workflowRunId"] == "wfr_vendor" and run["workflowState"] == "RUN_SUCCESS"
    bad = httpx.post(f"{sb.env['SVC_QUEUE_URL']}/v2/trigger/{WORKFLOW}", headers={**auth, "Upstash-Retries": "many"})
    assert bad.status_code == 400 and "Service-Retries" in bad.text


def test_queue_prefers_the_neutral_label(queue_sandbox):
    sb = queue_sandbox
    auth = {"Authorization": f"Bearer {sb.env['SVC_QUEUE_TOKEN']}"}
    reply = httpx.post(f"{sb.env['SVC_QUEUE_URL']}/v2/trigger/{WORKFLOW}", headers={
        **auth, "Service-Label": "neutral-wins", "Upstash-Label": "vendor-loses"})
    assert reply.status_code == 200, reply.text
    assert [r["workflowRunId"] for r in _runs(sb, label="neutral-wins")] == [reply.json()["workflowRunId"]]
    assert _runs(sb, label="vendor-loses") == []


# -- the table -------------------------------------------------------------------------------------
def _sent_vendor_headers() -> set[str]:
    """Every ``"Upstash-..."`` string literal in the installed SDKs' sources (a trailing ``-`` is a
    family, as in ``f"Upstash-Forward-{name}"``)."""
    found: set[str] = set()
    for sdk in SDKS:
        spec = importlib.util.find_spec(sdk)
        assert spec is not None and spec.origin, f"{sdk} is not installed"
        for path in Path(spec.origin).parent.rglob("*.py"):
            found.update(re.findall(r"""["'](Upstash-[A-Za-z-]+)""", path.read_text(encoding="utf-8")))
    return found


def test_the_table_names_every_vendor_header_the_installed_sdks_send():
    sent = _sent_vendor_headers()
    assert "Upstash-Encoding" in sent and "Upstash-Flow-Control-Key" in sent  # the scan sees the SDKs
    documented = {alias.vendor.rstrip("*") for alias in HEADER_ALIASES}
    assert sorted(sent - documented) == []


def test_every_spec_header_in_the_openapi_document_names_its_vendor_alias():
    headers = {p["name"]: p["description"] for item in openapi.document()["paths"].values()
               for op in item.values() for p in op.get("parameters", [])
               if p["in"] == "header" and p["name"].startswith(NEUTRAL_PREFIX)}
    assert {"Service-Encoding", "Service-Response-Format", "Service-Retries", "Service-Workflow-RunId",
            "Service-Label", "Service-Flow-Control-Key", "Service-Flow-Control-Value"} <= set(headers)
    for name, description in headers.items():
        assert f"also accepted as {VENDOR_PREFIX}{name[len(NEUTRAL_PREFIX):]}" in description, name
