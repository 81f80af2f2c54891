"""Notebooks: where they are, how a notebook gets its clients, and how ``svckit demo`` runs them.

The demo notebooks ship inside the package (``svckit/notebooks/*.ipynb``, package data), so
``svckit demo`` finds them after a plain ``pip install``; the repository's ``notebooks/`` folder is a
link to that folder, so there is one copy.

A notebook's first cell is ``c = notebook_clients()``: with SVC_* variables set (``svckit demo``
passes them to JupyterLab and its kernels) it connects to that service; with none set it starts a
local ``Sandbox(seed="demo")`` for the kernel's lifetime, so every notebook runs top to bottom
anywhere with no edits.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from svckit.config import VARIABLES, Settings
from svckit.connect import Clients, connect

NOTEBOOKS_DIR = Path(__file__).resolve().parent / "notebooks"
TOUR = "00_tour.ipynb"

_sandbox_lock = threading.Lock()
_sandbox: Any = None


# -- inside a notebook -----------------------------------------------------------------------------
def notebook_clients(seed: str = "demo", env: Mapping[str, str] | None = None, **client_options: Any) -> Clients:
    """Clients for a notebook: from the SVC_* variables, or from a local sandbox when none are set.

    The sandbox is started once per kernel (later calls reuse it) and stopped when the kernel exits.
    """
    environ = os.environ if env is None else env
    if any(environ.get(name) for name in VARIABLES):
        return connect(Settings.from_env(environ), **client_options)
    return connect(local_sandbox(seed).settings, **client_options)


def local_sandbox(seed: str = "demo") -> Any:
    """The kernel's own sandbox (started on first use, with ``seed`` data)."""
    global _sandbox
    with _sandbox_lock:
        if _sandbox is None:
            from svckit.sandbox import Sandbox

            sb = Sandbox(seed=seed)
            sb.start()
            atexit.register(sb.stop)
            print(f"No SVC_* variables set: started a local sandbox at {sb.url} with {seed} data.")
            _sandbox = sb
        return _sandbox


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
    """Run one notebook in a fresh kernel (with ``env``) and write it as HTML into ``out_dir``.

    A failing cell stops that notebook; it is still written (with the traceback) so the failure can
    be read in the HTML.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from nbconvert import HTMLExporter

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel_name, resources={"metadata": {"path": str(path.parent)}},
                            store_widget_state=True)
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
    body, _ = HTMLExporter().from_notebook_node(nb)
    html_path.write_text(body, encoding="utf-8")
    return NotebookRun(path, html_path, error is None, seconds, error)


def execute_notebooks(paths: Iterable[Path], out_dir: Path, env: Mapping[str, str], **options: Any) -> list[NotebookRun]:
    return [execute_notebook(p, out_dir, env, **options) for p in paths]


def kernel_env(service_env: Mapping[str, str]) -> dict[str, str]:
    """The environment for kernels and JupyterLab: ours, minus stale SVC_*, plus the service's,
    offline (no model hub, no telemetry)."""
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    env.update(service_env)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


# -- JupyterLab ------------------------------------------------------------------------------------
def lab_command(open_path: str | None, *, port: int | None = None, no_browser: bool = False,
                token: str | None = None, extra: Sequence[str] = ()) -> list[str]:
    cmd = [sys.executable, "-m", "jupyterlab", "--ServerApp.ip=127.0.0.1"]
    if port:
        cmd.append(f"--ServerApp.port={port}")
    if no_browser:
        cmd.append("--no-browser")
    if token is not None:
        cmd.append(f"--IdentityProvider.token={token}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # JupyterLab refuses to run as root without it
    cmd.extend(extra)
    if open_path:
        cmd.append(open_path)
    return cmd


def run_lab(workdir: Path, env: Mapping[str, str], **options: Any) -> int:
    """Run JupyterLab in ``workdir`` on the tour until it exits (Ctrl-C stops it)."""
    proc = subprocess.Popen(lab_command(TOUR, **options), cwd=workdir, env=dict(env))

    def stop_on_sigterm(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # same path as Ctrl-C: stop JupyterLab, then the sandbox

    previous = signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            return proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)
