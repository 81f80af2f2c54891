"""The sandbox freezes its start-up heap when it owns its process (svckit/sandbox/server.py,
``freeze_heap``), and only then: a notebook's kernel is left alone."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import textwrap

import pytest

from svckit.sandbox import Sandbox
from svckit.sandbox import server as server_module
from tests.conftest import running

SERVE_FOREVER = textwrap.dedent("""
    import gc, os, signal, sys
    from svckit.sandbox import Sandbox

    def ready(sandbox):
        print("frozen", gc.get_freeze_count(), flush=True)
        os.kill(os.getpid(), signal.SIGINT)

    try:
        Sandbox(sys.argv[1], areas=["kv"], backend="fakeredis").serve_forever(on_ready=ready)
    except KeyboardInterrupt:  # uvicorn raises the signal again once it has shut down, as svckit sandbox does
        pass
""")


def test_a_sandbox_that_owns_its_process_freezes_its_heap_before_it_says_it_is_ready(tmp_path):
    done = subprocess.run([sys.executable, "-c", SERVE_FOREVER, str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    frozen = int(done.stdout.split("frozen", 1)[1].split()[0])
    assert frozen > 10_000  # the modules and the app; nothing a collection would ever free


def test_a_sandbox_in_a_thread_leaves_the_collector_alone(kv_sandbox: Sandbox):
    assert gc.get_freeze_count() == 0


class Area:
    def __init__(self, settled: asyncio.Event | None = None, fails: bool = False) -> None:
        self.event, self.fails = settled, fails
        self.asked = asyncio.Event()  # set once the freezer waits for this area

    async def settled(self) -> None:
        self.asked.set()
        if self.event is not None:
            await self.event.wait()
        if self.fails:
            raise RuntimeError("the model did not load")


async def test_the_second_freeze_waits_until_every_area_has_settled(monkeypatch: pytest.MonkeyPatch):
    frozen: list[int] = []
    monkeypatch.setattr(server_module, "freeze_heap", lambda: frozen.append(1))
    model, corpus = asyncio.Event(), asyncio.Event()
    areas = [Area(model), Area(fails=True), Area(corpus)]
    task = asyncio.create_task(server_module._freeze_when_settled(areas))
    await asyncio.wait_for(areas[0].asked.wait(), 5)
    assert frozen == []  # waiting for the model
    model.set()
    await asyncio.wait_for(areas[2].asked.wait(), 5)
    assert frozen == []  # past the model and the area that failed, waiting for the corpus
    corpus.set()
    await asyncio.wait_for(task, 5)
    assert frozen == [1]


def test_the_vector_area_has_settled_once_its_demo_corpus_is_in(tmp_path):
    with running(tmp_path, areas=["vector"], seed="demo", demo_limit=12) as sandbox:
        area = sandbox.area("vector")
        asyncio.run_coroutine_threadsafe(area.settled(), sandbox._loop).result(timeout=240)
        assert area.pending == {"dense": 0, "sparse": 0, "hybrid": 0}
        assert area.seeding.done()
