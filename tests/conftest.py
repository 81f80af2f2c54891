"""Shared test helpers and the one sandbox fixture family.

Test folders mirror the package (``tests/kv`` for ``svckit/kv``, ``tests/sandbox/kv`` for
``svckit/sandbox/kv``, ...). Every sandbox a test uses is started here, by :func:`start_sandbox`
(or :func:`running`, its context manager), and the fixtures below are the shapes the suites need:

====================  =========  ==============================================================
fixture               scope      what it is
====================  =========  ==============================================================
``kv_sandbox``        session    area A only, once per backend (``redis-server``, fakeredis, a cluster)
``redis_cluster``     session    three masters of a Redis Cluster on loopback, ``kv_sandbox``'s only
``vector_sandbox``    session    area B only, its three indexes holding :data:`VECTOR_CORPUS`
``dense`` ...          session    ``Vector`` clients of those indexes (``sparse_index``, ``hybrid``)
``queue_sandbox``     function   areas C and D, fresh per test, retries without delay
``demo_kv_sandbox``   module     areas A and C with the demo data, fresh per test module
``demo_sandbox``      session    every area with the demo data (a small corpus, seeded)
``blank_sandbox``     module     every area, no demo data, on a real ``redis-server``
====================  =========  ==============================================================

Folder conftests only add clients over these.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import hypothesis
import pytest

from svckit.sandbox import ALL_AREAS, Sandbox
from tests.scripted import Scripted

T = TypeVar("T")

IN_CI = bool(os.environ.get("CI"))
#: the embedding model ships in a pip package: never ask the hub
os.environ["HF_HUB_OFFLINE"] = "1"
#: hypothesis profiles: ``fast`` by default (CI, a plain ``python -m pytest``), ``thorough`` on demand
#: (``HYPOTHESIS_PROFILE=thorough`` or ``--hypothesis-profile=thorough``): ten times the examples
hypothesis.settings.register_profile("fast", max_examples=100, deadline=None)
hypothesis.settings.register_profile("thorough", max_examples=1000, deadline=None)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


def examples(thorough: int) -> int:
    """``max_examples`` of a property test that runs ``thorough`` examples in the thorough profile:
    in the fast one a tenth of them. Read when the test module is imported, after the profile loads."""
    return max(10, thorough * hypothesis.settings.default.max_examples // 1000)


#: the JupyterLab harness's fixtures (``browser``, ``screenshots``) for every browser test
#: and a line when no test has finished for a minute (tests/heartbeat.py)
pytest_plugins = ("tests.lab_harness", "tests.heartbeat")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Before any test: is everything installed? A missing dependency stops the run here, in
    seconds and by name, instead of failing dozens of tests (or a browser test after its timeout).
    Checked once, by the process that reports (an xdist worker is the same install)."""
    if hasattr(session.config, "workerinput"):
        return
    from svckit import doctor

    problems = doctor.check(doctor.TEST_EXTRAS)
    if problems:
        pytest.exit(doctor.report(problems), returncode=3)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than this process may use cores, at most four. Most tests spend
    their time waiting on a server, a kernel or a browser, so one worker per core leaves the CPU idle
    (on CI's two cores: 826 s with two workers, 595 s with three, bench/RESULTS.md)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(4, cores + 1)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """After pytest-randomly's shuffle: the browser tests first, then the slow ones, then the rest,
    each group in its random order. The workers then start on the longest files (minutes each) and
    end on short ones, instead of one browser file running alone at the end."""
    items.sort(key=lambda item: 0 if "browser" in item.keywords else 1 if "slow" in item.keywords else 2)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The order's seed at the end too (pytest-randomly prints it in the header), where a person
    reading a failed run looks first: the same seed replays the same order."""
    seed = getattr(config.option, "randomly_seed", None)
    if isinstance(seed, int):
        terminalreporter.write_line(f"tests ran in random order, seed {seed}; "
                                    f"replay that order with: python -m pytest --randomly-seed={seed}")


def require_binary(name: str) -> str:
    """Path of a binary the test needs. Skips locally when it is missing; in CI a missing one fails
    (CI installs it, so its absence is a broken CI, not a reason to skip)."""
    path = shutil.which(name)
    if path is None:
        if IN_CI:
            pytest.fail(f"{name} is not installed, but CI must install it (.ci/run)")
        pytest.skip(f"{name} not installed")
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A failed browser test carries what a person would look at first: the notebook's error
    outputs and the browser console of every page it opened. Its pages close with it: an open page
    of a notebook with live widgets keeps its renderer busy, slowing every test after it."""
    outcome = yield
    report = outcome.get_result()
    if "browser" not in item.keywords or report.when not in ("call", "teardown"):
        return
    from tests import lab_harness

    if report.failed:
        for i, page in enumerate(lab_harness.PAGES):
            report.sections.append((f"browser page {i + 1}: what went wrong", lab_harness.diagnose(page)))
    if report.when == "teardown":
        for page in lab_harness.PAGES:
            with contextlib.suppress(Exception):  # its browser may have closed already (module end)
                page.close()
        lab_harness.PAGES.clear()


def basic(email: str, key: str) -> str:
    """An HTTP Basic ``Authorization`` value (area C's credentials)."""
    return "Basic " + base64.b64encode(f"{email}:{key}".encode()).decode()


# -- the sandbox fixture family -------------------------------------------------------------------

KV_BACKENDS = ("redis", "fakeredis")
#: the key-value conformance suite's sandboxes: each backend, and a gateway in front of a Redis Cluster
KV_SANDBOXES = (*KV_BACKENDS, "cluster")
#: a small corpus whose metadata exercises the filter language (loaded into ``vector_sandbox``)
VECTOR_CORPUS = [
    {"id": "cat", "data": "The cat sat on the warm mat and purred quietly.",
     "metadata": {"animal": "cat", "legs": 4, "pet": True, "tags": ["fur", "indoor"], "home": {"city": "Oslo"}}},
    {"id": "dog", "data": "A loyal dog fetched the ball across the park.",
     "metadata": {"animal": "dog", "legs": 4, "pet": True, "tags": ["fur", "outdoor"], "home": {"city": "Bergen"}}},
    {"id": "eagle", "data": "An eagle soared high above the mountain valley.",
     "metadata": {"animal": "eagle", "legs": 2, "pet": False, "tags": ["feathers"], "home": {"city": "Tromso"}}},
    {"id": "json", "data": "Serialize Python objects to JSON strings with json.dumps.",
     "metadata": {"topic": "python", "module": "json", "year": 2008}},
    {"id": "csv", "data": "Read and write comma separated value files with the csv module.",
     "metadata": {"topic": "python", "module": "csv", "year": 2001}},
    {"id": "sqlite", "data": "Store rows in an embedded SQL database file using sqlite3.",
     "metadata": {"topic": "python", "module": "sqlite3", "year": 2006}},
    {"id": "bread", "data": "Knead the dough, let it rise, then bake the bread for forty minutes.",
     "metadata": {"topic": "cooking", "minutes": 40}},
    {"id": "soup", "data": "Simmer onions and carrots in stock to make a vegetable soup.",
     "metadata": {"topic": "cooking", "minutes": 30}},
]
#: the demo corpus size of ``demo_sandbox``: small, so the sandbox's own embedding stays short
DEMO_CORPUS = 40
VECTOR_KINDS = ("dense", "sparse", "hybrid")


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """What ``build(folder)`` returns, built once per test run however many xdist workers ask: the
    first builds it in ``folder`` (a folder of the run's own, shared by its workers), the others wait
    for it and read it (pickled). For a session fixture too costly to build on every worker. A build
    that raises leaves nothing: the next worker to ask builds again (and so fails the same way)."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # each worker's basetemp is a folder of the run's own: share that
    folder, done = base / name, base / f"{name}.pickle"
    with FileLock(base / f"{name}.lock"):
        if done.exists():
            return pickle.loads(done.read_bytes())
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        value = build(folder)
        done.write_bytes(pickle.dumps(value))
        return value


class Haystack:
    """Everything a secret could leak into, labelled so a failure says where it leaked."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def add(self, where: str, value: Any) -> None:
        self.items.append((where, value if isinstance(value, str) else _as_text(value)))

    def leaks(self, secrets: dict[str, str]) -> list[str]:
        return [f"{name} found in {where}" for where, text in self.items
                for name, secret in secrets.items() if secret and secret in text]


def _as_text(value: Any) -> str:
    try:
        return json.dumps(value, default=repr, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def process_gone(pid: int) -> bool:
    """Whether process ``pid`` has exited, every thread of it: a zombie whose threads are gone too (only
    its parent's wait is missing). A killed process's main thread may be a zombie while its other threads
    still exit (redis-server has several): its files, sockets among them, are not closed yet, and its
    parent's ``poll()`` still sees it running."""
    try:
        state = Path(f"/proc/{pid}/status").read_text()
        threads = os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):  # gone, or reaped between the open and the read (ESRCH)
        return True
    return "State:\tZ" in state and threads == [str(pid)]


class _Polling:
    """What :func:`eventually` and :func:`aeventually` share: the deadline and the failure message."""

    def __init__(self, what: str | Callable[[], str], timeout: float) -> None:
        self.what, self.timeout = what, timeout
        self.deadline = time.monotonic() + timeout

    def over(self, result: object) -> bool:
        """Whether the polling ends: ``result`` is true; a false one past the deadline fails the test."""
        if result:
            return True
        assert time.monotonic() < self.deadline, \
            f"{self.what() if callable(self.what) else self.what} within {self.timeout:.0f} s"
        return False


def eventually(check: Callable[[], T], what: str | Callable[[], str], timeout: float = 30.0) -> T:
    """``check()``'s first true value, polled until ``timeout``; fails saying ``what`` did not happen
    (a callable: its answer then, e.g. with the last value seen)."""
    polling = _Polling(what, timeout)
    while not polling.over(result := check()):
        time.sleep(0.02)
    return result


async def aeventually(check: Callable[[], T], what: str | Callable[[], str], timeout: float = 30.0) -> T:
    """:func:`eventually` inside an event loop: polls without blocking the loop."""
    polling = _Polling(what, timeout)
    while not polling.over(result := check()):
        await asyncio.sleep(0.01)
    return result


def frame_of(thread: threading.Thread) -> Any:
    """``thread``'s innermost Python frame (None when it has ended). CPython 3.11 may collect garbage
    inside ``sys._current_frames()`` while it holds the lock of the thread list: a finalizer there that
    lets go of the GIL (a urllib3 pool closing its sockets) then waits for it while a thread that is
    starting or ending holds the GIL and waits for that lock, and the process hangs for good, beyond
    pytest-timeout's reach (python/cpython#106883). No collection runs during the call."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return sys._current_frames().get(thread.ident or 0)
    finally:
        if collecting:
            gc.enable()


def wait_until_reading(thread: threading.Thread, timeout: float = 5.0) -> None:
    """Poll until ``thread`` is blocked reading a socket (its innermost Python frame is the read of
    httpcore's network stream), so that a test acts on a read that is really waiting, not on one
    that may not have started yet; fails after ``timeout``, or at once when the thread has ended."""
    def reading() -> bool:
        frame = frame_of(thread)
        if frame is not None and frame.f_code.co_name == "read" and "httpcore" in frame.f_code.co_filename:
            return True
        assert thread.is_alive(), "the reader ended before it blocked on a read"
        return False

    eventually(reading, "the reader blocked on a read", timeout)


def stop_or_dump(proc: subprocess.Popen[str], group: bool, timeout: float = 120,
                 what: str = "svckit demo") -> tuple[str, str]:
    """Ctrl-C (SIGINT to ``proc``, or to its whole process group as a terminal sends it), then its
    output once it has exited. If it has not within ``timeout`` seconds: SIGABRT, so Python dumps its
    threads' stacks, and fail with them (``what``: the process, as the failure names it)."""
    signal_it(proc, signal.SIGINT, group)
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        signals = thread_signals(proc.pid)
        proc.send_signal(signal.SIGABRT)
        try:
            _, stderr = proc.communicate(timeout=30)
        finally:
            with contextlib.suppress(ProcessLookupError):
                signal_it(proc, signal.SIGKILL, group)
        pytest.fail(f"{what} did not stop within {timeout:.0f} s of Ctrl-C; its threads' signal masks "
                    f"(SIGINT is bit 1):\n{signals}\nand their stacks:\n{stderr[-12000:]}")


def signal_it(proc: subprocess.Popen[str], sig: int, group: bool) -> None:
    """Send ``sig`` to ``proc``, or to its whole process group."""
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)


def thread_signals(pid: int) -> str:
    """Each thread's pending, blocked and ignored signals (as masks), from /proc."""
    lines = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        with contextlib.suppress(OSError):
            status = dict(line.split(":\t", 1) for line in (task / "status").read_text().splitlines() if ":\t" in line)
            lines.append(f"{task.name} {status.get('Name')} " + " ".join(
                f"{k}={status.get(k)}" for k in ("SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt")))
    return "\n".join(lines)


@pytest.fixture
def srv() -> Iterator[Scripted]:
    """A scripted HTTP server of the test's own (tests/scripted.py), stopped after it."""
    server = Scripted()
    yield server
    server.stop()


def cli_sandbox(*args: str, stderr: int = subprocess.DEVNULL, **env: str) -> subprocess.Popen[str]:
    """``svckit sandbox --port 0 ARGS`` in a child process, its stdout unbuffered text (``env``: more
    environment variables); read its NAME=value lines with :func:`lines_until`."""
    return subprocess.Popen([sys.executable, "-m", "svckit.cli", "sandbox", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=stderr, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", **env})


def lines_until(proc: subprocess.Popen[str], prefix: str) -> list[str]:
    """The child's stdout lines, up to and with the first that starts with ``prefix``."""
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith(prefix):
            break
    return lines


def start_sandbox(data_dir: Any = None, **options: Any) -> Sandbox:
    """Start a sandbox the way every test does: a real server on loopback; ``backend="redis"`` needs
    ``redis-server`` (skipped locally without it, a failure in CI). The caller stops it."""
    if options.get("backend") == "redis":
        require_binary("redis-server")
    return Sandbox(data_dir, **options).start()


@contextmanager
def running(data_dir: Any = None, **options: Any) -> Iterator[Sandbox]:
    """:func:`start_sandbox` as a context manager: stopped on exit, whatever the test did."""
    sandbox = start_sandbox(data_dir, **options)
    try:
        yield sandbox
    finally:
        sandbox.stop()


def wait_vector_seeded(sandbox: Sandbox, at_least: int, timeout: float = 240.0) -> None:
    """Wait until the background demo seeding has put ``at_least`` vectors in every index."""
    env = sandbox.env
    headers = {"Authorization": f"Bearer {env['SVC_VECTOR_TOKEN']}"}
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=10) as http:
        while True:
            counts = [http.get(f"{sandbox.url}/vector/{name}/info", headers=headers).json()["result"]
                      for name in VECTOR_KINDS]
            if all(c["pendingVectorCount"] == 0 and c["vectorCount"] >= at_least for c in counts):
                return
            if time.monotonic() > deadline:
                pytest.fail(f"the sandbox's demo vectors were not seeded within {timeout:.0f} s: {counts}")
            time.sleep(0.2)


@pytest.fixture(scope="session", params=KV_SANDBOXES)
def kv_sandbox(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[Sandbox]:
    options: dict[str, Any] = {"backend": request.param}
    if request.param == "cluster":  # an external Redis Cluster: the gateway finds out it is one
        options = {"backend": "external", "redis_url": request.getfixturevalue("redis_cluster").url}
    with running(tmp_path_factory.mktemp(f"kv-{request.param}"), areas=["kv"], **options) as sandbox:
        yield sandbox


@pytest.fixture(scope="session")
def vector_sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    from svckit.vector import Vector

    with running(tmp_path_factory.mktemp("vector"), areas=["vector"]) as sandbox:
        for kind in VECTOR_KINDS:
            with Vector.from_settings(sandbox.settings, kind=kind, timeout=60.0) as client:
                client.upsert_data(VECTOR_CORPUS)
        yield sandbox


def _vector_client(sandbox: Sandbox, kind: str):
    from svckit.vector import Vector

    return Vector.from_settings(sandbox.settings, kind=kind, timeout=60.0)


@pytest.fixture(scope="session")
def dense(vector_sandbox: Sandbox):
    with _vector_client(vector_sandbox, "dense") as client:
        yield client


@pytest.fixture(scope="session")
def sparse_index(vector_sandbox: Sandbox):
    with _vector_client(vector_sandbox, "sparse") as client:
        yield client


@pytest.fixture(scope="session")
def hybrid(vector_sandbox: Sandbox):
    with _vector_client(vector_sandbox, "hybrid") as client:
        yield client


@pytest.fixture(scope="session")
def embedder():
    """The packaged embedding model, loaded once (the local index's and the endpoints' tests)."""
    from svckit.localindex import get_embedder

    return get_embedder()


@pytest.fixture
def queue_sandbox(tmp_path) -> Iterator[Sandbox]:
    # queue_retry_delay=0: retries happen at once, so tests never sleep.
    # queue_backoff_scale: a failed message is retried after 12 ms, not 12 s.
    with running(tmp_path / "data", areas=["account", "queue"], queue_retry_delay=0, queue_backoff_scale=0.001) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def demo_kv_sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("demo-kv"), areas=["kv", "account"], seed="demo") as sandbox:
        yield sandbox


@pytest.fixture(scope="session")
def demo_sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("demo"), seed="demo", backend="fakeredis",
                 demo_limit=DEMO_CORPUS) as sandbox:
        wait_vector_seeded(sandbox, DEMO_CORPUS)
        yield sandbox


@pytest.fixture(scope="module")
def blank_sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    # queue_backoff_scale: a failed message is retried after 12 ms, not 12 s (the SDKs' delivery tests)
    with running(tmp_path_factory.mktemp("blank"), seed=None, areas=ALL_AREAS, backend="redis",
                 queue_backoff_scale=0.001) as sandbox:
        yield sandbox


def redis_server(port: int, directory: Path) -> subprocess.Popen[bytes]:
    """A redis-server of the test's own on a loopback port, once it accepts connections."""
    server = subprocess.Popen([require_binary("redis-server"), "--port", str(port), "--bind", "127.0.0.1",
                               "--dir", str(directory), "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def accepts() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    eventually(accepts, f"the redis-server on port {port} to accept", 10)
    return server


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory) -> Iterator[Any]:
    """Three masters of a Redis Cluster on loopback ports (tests/cluster.py), no replicas: the one
    behind ``kv_sandbox["cluster"]``, and no other sandbox."""
    from tests.cluster import local_cluster

    with local_cluster(tmp_path_factory.mktemp("redis-cluster")) as cluster:
        yield cluster
