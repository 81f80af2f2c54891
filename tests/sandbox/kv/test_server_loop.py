"""Which event loop serves the sandbox: uvloop where it imports, asyncio where it does not, and either
way the sandbox serves (always on httptools, a core dependency) and says which loop runs.

The fallback runs in a subprocess whose ``import uvloop`` fails, as it does on a machine without it
(uvloop has no Windows build).
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
    from svckit.sandbox.logs import to_stderr

    to_stderr()  # the start-up log, as `svckit sandbox` shows it
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


def test_sandbox_serves_without_uvloop_and_says_what_runs(backend):
    report, log = run_without("uvloop", backend)
    assert report["wrote"] == {"result": "OK"} and report["read"] == {"result": "served"}
    assert report["stack"] == {"http": "httptools", "loop": "asyncio"}
    assert "httptools parser on the asyncio event loop (install uvloop for the C event loop)" in log


def test_svckit_async_clients_work_without_uvloop(backend):
    """The async clients' HTTP/1.1 pool runs on plain asyncio too: a child without uvloop writes and
    reads through AsyncKV against its own sandbox."""
    child = textwrap.dedent("""
        import asyncio, sys
        sys.modules["uvloop"] = None
        from svckit.kv import AsyncKV
        from svckit.sandbox import Sandbox

        async def main(env):
            async with AsyncKV(env["SVC_KV_URL"], env["SVC_KV_TOKEN"]) as kv:
                await asyncio.gather(*(kv.set(f"k{i}", str(i)) for i in range(20)))
                print(await asyncio.gather(*(kv.get(f"k{i}") for i in range(20))))

        with Sandbox(areas=["kv"], backend=sys.argv[1]) as sb:
            asyncio.run(main(sb.env))
    """)
    proc = subprocess.run([sys.executable, "-c", child, backend], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == repr([str(i) for i in range(20)])


def test_sandbox_runs_httptools_on_uvloop_where_it_imports(backend):
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
