"""Which HTTP parser and event loop serve the sandbox: the C ones (httptools, uvloop) where they import,
h11 and asyncio where they do not, and either way the sandbox serves and says which one runs.

The fallback runs in a subprocess whose ``import uvloop`` / ``import httptools`` fail, as they do on a
machine without them (uvloop has no Windows build).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap

import httpx
import pytest

from tests.conftest import start_sandbox
from tests.sandbox.kv.conftest import kv_of

# Starts a sandbox with the named modules unimportable, runs one write and one read over HTTP, and
# prints what the sandbox reports as JSON on the last line of stdout.
CHILD = textwrap.dedent("""
    import json, sys
    for name in sys.argv[1].split(","):
        if name:
            sys.modules[name] = None  # import fails, as when the package is not installed
    import httpx
    from svckit.sandbox import Sandbox

    with Sandbox(areas=["kv"], backend=sys.argv[2]) as sb:
        url, auth = sb.env["SVC_KV_URL"], {"Authorization": "Bearer " + sb.env["SVC_KV_TOKEN"]}
        wrote = httpx.post(url + "/SET/loop-check/served", headers=auth).json()
        read = httpx.post(url + "/GET/loop-check", headers=auth).json()
        print(json.dumps({"stack": sb.server_stack, "wrote": wrote, "read": read}))
""")


def run_without(modules: str, backend: str) -> tuple[dict, str]:
    proc = subprocess.run([sys.executable, "-c", CHILD, modules, backend], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


@pytest.mark.parametrize(("missing", "http", "loop"), [
    ("uvloop", "httptools", "asyncio"),
    ("httptools", "h11", "uvloop"),
    ("uvloop,httptools", "h11", "asyncio"),
])
def test_sandbox_serves_without_the_c_parser_or_loop_and_says_what_runs(backend, missing, http, loop):
    if loop == "uvloop":
        pytest.importorskip("uvloop")
    if http == "httptools":
        pytest.importorskip("httptools")
    report, log = run_without(missing, backend)
    assert report["wrote"] == {"result": "OK"} and report["read"] == {"result": "served"}
    assert report["stack"] == {"http": http, "loop": loop}
    assert f"{http} parser on the {loop} event loop" in log
    assert "install " in log  # the log names what to install for the C versions


def test_sandbox_runs_httptools_on_uvloop_where_they_import(backend):
    pytest.importorskip("httptools")
    pytest.importorskip("uvloop")
    report, log = run_without("", backend)
    assert report["stack"] == {"http": "httptools", "loop": "uvloop"}
    assert report["read"] == {"result": "served"}
    assert "httptools parser on the uvloop event loop" in log and "install " not in log


def test_concurrent_requests_all_get_their_own_reply(backend):
    """64 requests in flight at once on 64 connections (more than a Redis connection serves at a
    time): every reply is the one for its own key, none is lost or crossed."""
    sandbox = start_sandbox(areas=["kv"], backend=backend)
    kv = kv_of(sandbox)
    try:
        async def main() -> list[dict]:
            async with httpx.AsyncClient(headers=kv.auth(), limits=httpx.Limits(max_connections=64)) as http:
                async def one(i: int) -> dict:
                    await http.post(f"{kv.url}/SET/conc:{i}/value-{i}")
                    return (await http.post(f"{kv.url}/GET/conc:{i}")).json()

                return await asyncio.gather(*(one(i) for i in range(256)))

        replies = asyncio.run(main())
        assert replies == [{"result": f"value-{i}"} for i in range(256)]
    finally:
        kv.http.close()
        sandbox.stop()
