"""Notebooks: where they are, how a notebook gets its clients, and how ``svckit demo`` runs them.

The demo notebooks ship inside the package (``svckit/notebooks/*.ipynb``, package data), so
``svckit demo`` finds them after a plain ``pip install``; the repository's ``notebooks/`` folder is a
link to that folder, so there is one copy.

A notebook's first cell is ``c = notebook_clients()``: with SVC_* variables set (``svckit demo``
passes them to JupyterLab and its kernels) it connects to that service; with none set it starts a
local ``Sandbox(seed="demo")`` for the kernel's lifetime, so every notebook runs top to bottom
anywhere with no edits. Either way its output says which service that is (a notebook is shared and
read later: its numbers must say where they came from), with no credential in it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import warnings
import webbrowser
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from svckit.cli import REDIS_URL_VARIABLE
from svckit.config import ALL_VARIABLES, Settings
from svckit.connect import Clients, connect

NOTEBOOKS_DIR = Path(__file__).resolve().parent / "notebooks"
TOUR = "00_tour.ipynb"

_sandbox_lock = threading.Lock()
_sandbox: Any = None
_sandbox_log: list[str] = []  # what the kernel's sandbox logged while it started


# -- inside a notebook -----------------------------------------------------------------------------
def notebook_clients(seed: str = "demo", env: Mapping[str, str] | None = None, *, verbose: bool = False,
                     local_only: bool = False, **client_options: Any) -> Clients:
    """Clients for a notebook: from the SVC_* variables (or the vendor's names for them), or from a
    local sandbox when none are set.

    It says what the notebook is connected to (:mod:`svckit.connection_status`): each area's address
    (scheme, host and port), the variable it came from, its credentials masked, and for the embedded
    sandbox where its data is; as HTML that a saved notebook keeps, as text in a script.
    The sandbox is started once per kernel (later calls reuse it) and stopped when the kernel exits
    (or by :func:`stop_local_sandbox`); its start-up log is folded inside that output, or shown on
    stderr as it happens with ``verbose``. ``local_only``: the notebook serves something the service
    must call (an app on the kernel's loopback), which a hosted service cannot reach, so the variables
    are used only when they name a loopback service; else the kernel's own sandbox, and it says so.
    In IPython, svckit's DataFrames then display readably (:func:`svckit.display.use_readable_frames`).
    """
    from svckit import connection_status
    from svckit.display import use_readable_frames

    use_readable_frames()
    environ = os.environ if env is None else env
    settings = Settings.from_env(environ)
    if settings.names_a_service and (not local_only or _on_loopback(settings)):
        connection_status.from_variables(settings, environ).show()
        return connect(settings, **client_options)
    sandbox = local_sandbox(seed, verbose=verbose)
    status = connection_status.from_sandbox(sandbox, "\n".join(_sandbox_log))
    if local_only and settings.names_a_service:
        status = connection_status.instead_of_hosted(status)
    status.show()
    return connect(sandbox.settings, **client_options)


def _on_loopback(settings: Settings) -> bool:
    from urllib.parse import urlsplit

    urls = [u for u in (settings.kv_url, settings.vector_url, settings.devapi_url, settings.queue_url) if u]
    return bool(urls) and all(urlsplit(u).hostname in ("127.0.0.1", "localhost", "::1") for u in urls)


def local_sandbox(seed: str = "demo", *, verbose: bool = False) -> Any:
    """The kernel's own sandbox (started on first use, with ``seed`` data)."""
    global _sandbox
    from svckit.sandbox import logs

    if verbose:
        logs.to_stderr()
    with _sandbox_lock:
        if _sandbox is None:
            from svckit.sandbox import Sandbox

            sb = Sandbox(seed=seed)
            with logs.recording() as lines:
                sb.start()
            _sandbox_log[:] = lines
            atexit.register(sb.stop)
            _sandbox = sb
        return _sandbox


def stop_local_sandbox() -> bool:
    """Stop the kernel's own sandbox now (its temporary data goes with it); False if none runs."""
    global _sandbox
    with _sandbox_lock:
        sb, _sandbox = _sandbox, None
    if sb is None:
        return False
    atexit.unregister(sb.stop)
    sb.stop()
    return True


# -- finding notebooks -----------------------------------------------------------------------------
def find_notebooks(folder: str | Path | None = None) -> list[Path]:
    """Every ``*.ipynb`` in ``folder`` (default: the packaged demo notebooks), the tour first."""
    root = Path(folder) if folder is not None else NOTEBOOKS_DIR
    found = [p for p in root.glob("*.ipynb") if not p.name.startswith(".")]
    return sorted(found, key=lambda p: (p.name != TOUR, p.name))


def copy_notebooks(dest: Path, source: str | Path | None = None, overwrite: bool = False) -> list[Path]:
    """Copy the demo notebooks to ``dest`` (existing copies are kept, so a user's edits survive)."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for nb in find_notebooks(source):
        target = dest / nb.name
        if overwrite or not target.exists():
            shutil.copy2(nb, target)
        out.append(target)
    return out


# -- headless execution ----------------------------------------------------------------------------
@dataclass
class NotebookRun:
    notebook: Path
    html: Path | None
    ok: bool
    seconds: float
    error: str | None = None

    def summary(self) -> str:
        status = "ok" if self.ok else "FAILED"
        line = f"{status:6} {self.notebook.name:32} {self.seconds:6.1f} s  -> {self.html}"
        if self.error:
            line += "\n" + "\n".join("       " + x for x in self.error.strip().splitlines()[-12:])
        return line


def execute_notebook(path: Path, out_dir: Path, env: Mapping[str, str], *, timeout: int = 600,
                     kernel_name: str = "python3") -> NotebookRun:
    """Run one notebook in a fresh kernel (with ``env``) and write it into ``out_dir`` twice: as a
    notebook with its outputs and widget state (JupyterLab shows it without a kernel), and as an HTML
    page that shows every widget's static view offline (:class:`svckit.export.OfflineHTMLExporter`).

    A failing cell stops that notebook; it is still written (with the traceback) so the failure can
    be read in the HTML.
    """
    import nbformat
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    from svckit.export import OfflineHTMLExporter

    nb = nbformat.read(path, as_version=4)
    from traitlets import default

    class IpcKernelManager(AsyncKernelManager):
        # IPC sockets, not TCP: the kernel is local either way, and over TCP it warns on every start
        # that its traffic is unencrypted, which a demo user can do nothing about. Async, as nbclient's
        # own default: a sync manager's methods run on jupyter_core's loop thread, and the exit handler
        # nbclient leaves when a kernel fails to start or stop then waits for ever on that thread, gone
        # at exit (a demo --execute that never exited, seen on a loaded machine).
        @default("transport")
        def _ipc(self) -> str:
            return "ipc"

        @default("ip")  # the socket files' path prefix: absolute, since the kernel runs in the notebook's folder
        def _ipc_path(self) -> str:
            from jupyter_core.paths import jupyter_runtime_dir

            Path(jupyter_runtime_dir()).mkdir(parents=True, exist_ok=True)
            return str(Path(jupyter_runtime_dir()) / f"svckit-kernel-{secrets.token_hex(8)}-ipc")

    # coalesce_streams: a cell's printed lines are one output, as JupyterLab shows them, even when the
    # kernel flushed its stdout between two writes of one print (on a loaded machine)
    client = NotebookClient(nb, kernel_manager_class=IpcKernelManager, timeout=timeout, kernel_name=kernel_name,
                            resources={"metadata": {"path": str(path.parent)}}, store_widget_state=True,
                            coalesce_streams=True)
    started = time.monotonic()
    error = None
    try:
        client.execute(env=dict(env))
    except CellExecutionError as exc:
        error = str(exc)
    except Exception as exc:  # noqa: BLE001 - a dead kernel or a timeout fails this notebook, not the run
        error = f"{type(exc).__name__}: {exc}"
    seconds = time.monotonic() - started
    out_dir.mkdir(parents=True, exist_ok=True)
    html_path = out_dir / (path.stem + ".html")
    nbformat.write(nb, out_dir / path.name)
    with warnings.catch_warnings():  # a chart inside a widget's state has no HTML of its own: its static view has
        warnings.filterwarnings("ignore", message="Your element with mimetype", category=UserWarning)
        body, _ = OfflineHTMLExporter().from_notebook_node(nb)
    html_path.write_text(body, encoding="utf-8")
    return NotebookRun(path, html_path, error is None, seconds, error)


def execute_notebooks(paths: Iterable[Path], out_dir: Path, env: Mapping[str, str], **options: Any) -> list[NotebookRun]:
    return [execute_notebook(p, out_dir, env, **options) for p in paths]


def kernel_env(service_env: Mapping[str, str], sandbox_dir: str | Path | None = None) -> dict[str, str]:
    """The environment for kernels and JupyterLab: ours, minus stale SVC_* (and the external Redis's
    URL, SVC_REDIS_URL: its password is the sandbox's, not the notebooks'), plus the service's,
    offline (no model hub, no telemetry). ``sandbox_dir``: the service is the embedded sandbox with
    its data there, which each notebook's first output then says."""
    from svckit.connection_status import DEMO_SANDBOX_VARIABLE

    stale = {*ALL_VARIABLES, REDIS_URL_VARIABLE, DEMO_SANDBOX_VARIABLE}
    env = {k: v for k, v in os.environ.items() if k not in stale}
    env.update(service_env)
    if sandbox_dir is not None:
        env[DEMO_SANDBOX_VARIABLE] = str(sandbox_dir)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    # debugpy's "frozen modules" warning, printed at every kernel start on Python 3.11+
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return env


# -- JupyterLab ------------------------------------------------------------------------------------
#: JupyterLab options that keep a demo quiet: no news feed, no update check, and kernels on IPC
#: sockets (over TCP every kernel warns that its traffic is unencrypted).
QUIET_LAB = ("--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
             "--KernelManager.transport=ipc")
#: default settings (a user's own settings still win): do not ask "would you like news?" on first start
QUIET_SETTINGS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}


def quiet_lab_settings(folder: Path) -> list[str]:
    """Write JupyterLab's default-settings overrides (``QUIET_SETTINGS``, merged over those of the
    installed JupyterLab) into ``folder``; returns the options that make JupyterLab read them."""
    import json

    from jupyterlab.commands import get_app_dir

    folder.mkdir(parents=True, exist_ok=True)
    installed = Path(get_app_dir()) / "settings"
    merged: dict[str, Any] = {}
    if installed.is_dir():
        for item in installed.iterdir():
            if item.name == "overrides.json":
                merged = json.loads(item.read_text(encoding="utf-8"))
            elif item.is_file():
                shutil.copy2(item, folder / item.name)
    for plugin, values in QUIET_SETTINGS.items():
        merged[plugin] = {**merged.get(plugin, {}), **values}
    (folder / "overrides.json").write_text(json.dumps(merged, indent=2), encoding="utf-8")
    return [f"--LabApp.app_settings_dir={folder}"]


def lab_command(open_path: str | None, *, port: int | None = None, no_browser: bool = False,
                extra: Sequence[str] = ()) -> list[str]:
    """JupyterLab's command line. It never holds the token (every local user reads command lines with
    ``ps``, and the token runs code in the user's kernels): :func:`lab_env` passes it."""
    cmd = [sys.executable, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1", *QUIET_LAB]
    if port:
        cmd.append(f"--ServerApp.port={port}")
    if no_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # JupyterLab refuses to run as root without it
    cmd.extend(extra)
    if open_path:
        cmd.append(open_path)
    return cmd


def lab_env(env: Mapping[str, str], token: str) -> dict[str, str]:
    """``env`` with JupyterLab's login token in JUPYTER_TOKEN, which jupyter_server's IdentityProvider
    reads: a process's environment (/proc/PID/environ) is readable by its owner only, where its command
    line is readable by every local user. (The kernels inherit it; they run as the user, who may read
    the server's own files, which hold the token too.)"""
    return {**env, "JUPYTER_TOKEN": token}


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def lab_url(port: int, token: str, path: str = TOUR) -> str:
    """The address that opens ``path`` in JupyterLab, logged in (the token is JupyterLab's own)."""
    return f"http://127.0.0.1:{port}/lab/tree/{path}?token={token}"


def wait_for_lab(port: int, token: str, proc: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    """Return once JupyterLab answers on ``port``; raise if it exits or does not answer in time."""
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/status",
                                     headers={"Authorization": f"token {token}"})
    while True:
        try:
            with urllib.request.urlopen(request, timeout=2):
                return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with code {proc.returncode} before it was ready") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not answer on port {port} within {timeout:.0f} s") from None
            time.sleep(0.2)


def can_open_browser() -> bool:
    """Whether a graphical browser can be opened here: on Linux and the BSDs that needs a display
    (without one, ``webbrowser`` would fall back to a text browser in this terminal)."""
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        settings = Settings.from_env()
        return bool(settings.display or settings.wayland_display)
    return True


def lab_log_path(workdir: Path) -> Path:
    """Where ``svckit demo`` writes JupyterLab's own log (beside the notebooks' folder)."""
    return workdir.parent / "jupyterlab.log"


def _log_tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def run_lab(workdir: Path, env: Mapping[str, str], *, port: int | None = None, no_browser: bool = False,
            out: Any = None, when_ready: Callable[[], None] | None = None) -> int:
    """Run JupyterLab in ``workdir`` with the tour open until it exits (Ctrl-C stops it).

    svckit opens the browser itself (JupyterLab is started with ``--no-browser``): so it can print the
    tour's URL, token included, on a line of its own once the server answers, and say plainly when no
    browser can be opened here. JupyterLab's own log goes to :func:`lab_log_path`, this run's only
    (its tail is shown if it fails to start), so the terminal holds svckit's lines only.
    ``when_ready`` runs once the URL is printed.
    """
    out = out if out is not None else sys.stdout
    port = port or free_port()
    token = secrets.token_hex(24)
    settings = quiet_lab_settings(workdir.parent / "lab-app-settings")
    log_path = lab_log_path(workdir)
    # a session of its own: Ctrl-C reaches svckit only, which then stops JupyterLab cleanly (JupyterLab
    # itself would answer SIGINT with a "Shutdown this Jupyter server (y/[n])?" prompt)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(lab_command(None, port=port, no_browser=True, extra=settings),
                                cwd=workdir, env=lab_env(env, token), start_new_session=True, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        try:
            wait_for_lab(port, token, proc)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}; the end of its log ({log_path}):\n{_log_tail(log_path)}") from None
        url = lab_url(port, token)
        print("[svckit demo] JupyterLab is ready; the tour notebook is at:", file=out)
        print(url, file=out)
        if no_browser:
            pass
        elif not can_open_browser() or not webbrowser.open(url, new=2):
            print("[svckit demo] No browser can be opened here (no display): open the URL above yourself.", file=out)
        print("[svckit demo] Ctrl-C stops JupyterLab and the sandbox.", file=out, flush=True)
        if when_ready is not None:
            when_ready()
        return proc.wait()
    except KeyboardInterrupt:
        # stopped is stopped: a JupyterLab still shutting its kernels down after the grace (a loaded
        # machine) is killed, said, and not a failure; one that ends with an error code of its own is
        code = stop_process(proc)
        if code == -signal.SIGKILL:
            print(f"[svckit demo] JupyterLab had not stopped {STOP_GRACE:.0f} s after SIGTERM: killed "
                  f"(its log: {log_path})", file=sys.stderr, flush=True)
        elif code not in (0, -signal.SIGTERM):
            print(f"[svckit demo] JupyterLab exited with {code} (its log: {log_path})", file=sys.stderr, flush=True)
            return 1
        return 0
    finally:
        stop_process(proc)


@contextlib.contextmanager
def stopped_by_signals() -> Iterator[None]:
    """While ``svckit demo`` runs, SIGINT (Ctrl-C, ``kill -INT``) and SIGTERM raise KeyboardInterrupt,
    whatever this process inherited, so both stop JupyterLab and then the sandbox; the previous
    handlers come back afterwards. A shell without job control (a script's ``svckit demo &``) starts
    it with SIGINT ignored, and Python then leaves it ignored: ``kill -INT`` would do nothing, where
    it stops ``svckit sandbox`` (uvicorn installs its own handlers) and JupyterLab. Main thread only."""

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


#: how long JupyterLab has to stop after SIGTERM (it shuts its kernels down first) before it is killed
STOP_GRACE = 15.0


def stop_process(proc: subprocess.Popen[bytes], grace: float | None = None) -> int:
    """Terminate ``proc`` (no-op when it has exited), killing it after ``grace`` seconds (default
    :data:`STOP_GRACE`)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_GRACE if grace is None else grace)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()
