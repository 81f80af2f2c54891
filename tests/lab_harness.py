"""One JupyterLab harness for every browser test: JupyterLab on loopback, Debian's chromium driven by
playwright (never ``playwright install``: the browser is /usr/bin/chromium). The same server serves
Notebook 7 (the ``notebook`` package's pages): ``run_notebook(..., ui="notebook")`` opens a notebook
there instead of in JupyterLab; both expose the application to the page, so the checks are the same.

A browser test that fails must say why, at once: ``run_notebook`` stops on the first cell that
raises (with its traceback) instead of waiting for the rest, and on a widget that does not render
(with the browser console); any other failure of a browser test gets the notebook's error outputs
and the console attached to its report (``pytest_runtest_makereport`` in tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from svckit import demo

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

SCREENSHOTS = Path(__file__).resolve().parents[1] / "test-output" / "screenshots"
#: the user interfaces the browser tests run notebooks in: JupyterLab 4 and Notebook 7
UIS = ("lab", "notebook")
#: every page opened by ``open_page`` during the running test (read by the failure report hook)
PAGES: list[Any] = []
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Lab:
    def __init__(self, url: str, token: str, root: Path) -> None:
        self.url, self.token, self.root = url, token, root

    def api(self, method: str, path: str) -> object:
        req = urllib.request.Request(f"{self.url}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def delete_sessions(self) -> None:
        """A closed page leaves its kernel running; delete every session so each notebook starts cold."""
        for session in self.api("GET", "/api/sessions") or []:  # type: ignore[union-attr]
            self.api("DELETE", f"/api/sessions/{session['id']}")


def write_notebook(path: Path, *cells: str | dict[str, Any]) -> None:
    """A notebook of ``cells`` for a browser test to open: a string is a code cell, an nbformat cell
    (``nbformat.v4.new_markdown_cell``) is kept as it is; the kernel is python3, as in notebooks/."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) if isinstance(c, str) else c for c in cells]
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nbformat.write(nb, path)


def require_chromium() -> None:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing, but CI must install it")
        pytest.skip(f"{CHROMIUM} not installed")


@contextlib.contextmanager
def serve_lab(root: Path, sandbox_env: dict[str, str], *, plain: bool = False) -> Iterator[Lab]:
    """JupyterLab on loopback over the notebooks in ``root``, its kernels pointed at the sandbox.
    ``plain``: the kernels get this process's environment minus every SVC_* setting and nothing
    else, as in a user's own ``jupyter lab`` (not ``svckit demo``'s kernel environment)."""
    token = secrets.token_hex(16)
    port = demo.free_port()
    env = ({k: v for k, v in os.environ.items() if not k.startswith("SVC_") or k == "SVC_EMBEDDING_CACHE"}
           if plain else demo.kernel_env(sandbox_env))
    env["JUPYTER_CONFIG_DIR"] = str(root / ".jupyter-config")  # no user settings leak in
    settings = root / ".lab-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    # every cell in the DOM (no windowing), so locators and screenshots see the whole notebook
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    env["JUPYTERLAB_SETTINGS_DIR"] = str(root / ".lab-settings")
    cmd = demo.lab_command(None, port=port, no_browser=True, extra=[
        f"--ServerApp.root_dir={root}", f"--LabApp.workspaces_dir={root / '.workspaces'}",
        "--LabApp.expose_app_in_browser=True", "--JupyterNotebookApp.expose_app_in_browser=True",
        "--ServerApp.disable_check_xsrf=True",
        *demo.quiet_lab_settings(root / ".lab-app-settings"),
    ])
    log = (root / "lab.log").open("w")
    proc = subprocess.Popen(cmd, cwd=root, env=demo.lab_env(env, token), stdout=log, stderr=subprocess.STDOUT)
    try:
        try:
            demo.wait_for_lab(port, token, proc, timeout=60)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}:\n" + (root / "lab.log").read_text()[-3000:]) from None
        yield Lab(f"http://127.0.0.1:{port}", token, root)
    finally:
        demo.stop_process(proc, grace=20)
        log.close()


@contextlib.contextmanager
def sandbox_lab(tmp_path_factory: pytest.TempPathFactory, *, notebooks: Sequence[str] | None = None,
                prepare: Callable[[Any, Path], None] | None = None, **sandbox_options: Any) -> Iterator[Lab]:
    """What every browser test module starts from: JupyterLab over copies of the demo notebooks
    (``notebooks``: only these; default every one), its kernels pointed at a sandbox started the way
    every test starts one (``tests.conftest.running(**sandbox_options)``). ``prepare(sandbox, root)``
    runs before the lab opens: fill data, wait for seeding, write a notebook of the test's own."""
    from tests.conftest import running

    require_chromium()
    root = tmp_path_factory.mktemp("lab")
    if notebooks is None:
        demo.copy_notebooks(root)
    for name in notebooks or ():
        shutil.copy(demo.NOTEBOOKS_DIR / name, root / name)
    with running(tmp_path_factory.mktemp("sandbox"), **sandbox_options) as sandbox:
        if prepare is not None:
            prepare(sandbox, root)
        with serve_lab(root, sandbox.env) as lab:
            yield lab


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where browser tests put what a new user would be shown (test-output/screenshots/)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(params=UIS)
def ui(request: pytest.FixtureRequest) -> str:
    """Each browser test that takes it runs twice: in JupyterLab and in Notebook 7."""
    return str(request.param)


def shot(screenshots: Path, name: str, ui: str) -> str:
    """A screenshot's path: ``name.png`` in JupyterLab, ``name_notebook.png`` in Notebook 7."""
    return str(screenshots / (f"{name}.png" if ui == "lab" else f"{name}_{ui}.png"))


def full_page_screenshot(page: Any, path: str) -> None:
    """Keep a whole page as a picture for a person to look at. It is a record, not a check: headless
    chromium's capture beyond the viewport now and then never gets its frame on a loaded machine
    (microsoft/playwright#28995), so after 30 s the page is kept as far as the window shows, and when
    even that hangs the test says so in a warning rather than failing what it checked."""
    import warnings

    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.screenshot(path=path, full_page=True, timeout=30_000)
        return
    except PlaywrightTimeout:
        pass
    try:
        page.screenshot(path=path, timeout=15_000)
        warnings.warn(f"{path}: only the window is kept (the full-page capture timed out)", stacklevel=2)
    except PlaywrightTimeout:
        warnings.warn(f"{path}: no screenshot (chromium's capture timed out)", stacklevel=2)


#: every chart in view that holds a figure has drawn it (svckit's ``Chart`` is a ``.svc-chart``;
#: plotly draws a chart in a hidden tab when the tab is shown)
CHARTS_DRAWN_JS = ("() => [...document.querySelectorAll('.svc-chart')]"
                   ".filter(c => c.checkVisibility() && c.querySelector('.jp-OutputArea-output'))"
                   ".every(c => { const s = c.querySelector('.js-plotly-plot .main-svg');"
                   " return s && s.getBoundingClientRect().height > 0; })")
#: the open notebook scrolled to its top; the bottom of its last cell, in page pixels
TO_TOP_JS = ("() => { const n = window.jupyterapp.shell.currentWidget.content.node;"
             " for (const e of [n, ...n.querySelectorAll('.jp-WindowedPanel-outer')]) e.scrollTop = 0;"
             " const cells = n.querySelectorAll('.jp-Cell');"
             " return cells.length ? cells[cells.length - 1].getBoundingClientRect().bottom : 0; }")
#: how tall a page is opened for a picture of a whole notebook (``run_notebook(height=...)``): the
#: window is not resized afterwards, since Notebook 7 redraws (and for a while loses) plotly charts on
#: a resize
TALL = 7000


def notebook_screenshot(page: Any, path: str) -> None:
    """The open notebook from its top, as far as its last cell or the window goes, once every chart
    has drawn. Open the page ``TALL`` for the whole of a long notebook."""
    page.wait_for_function(CHARTS_DRAWN_JS, timeout=30_000)
    bottom = page.evaluate(TO_TOP_JS)
    size = page.viewport_size
    height = min(max(int(bottom) + 40, 200), size["height"])
    page.screenshot(path=path, clip={"x": 0, "y": 0, "width": size["width"], "height": height}, timeout=30_000)


def saved_outputs(lab: Lab, page: Any, name: str, holds: str, timeout: float = 30.0) -> list[Any]:
    """Save the open notebook until its file holds ``holds`` (the static views are rewritten a moment
    after a widget changes); the outputs of its code cells, as saved."""
    deadline = time.monotonic() + timeout
    while True:
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        text = (lab.root / name).read_text(encoding="utf-8")
        if holds in text or time.monotonic() > deadline:
            assert holds in text, f"{name} was saved without {holds!r} in it"
            return [o for c in json.loads(text)["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
        time.sleep(0.5)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


# -- pages that explain their failures ---------------------------------------------------------
def open_page(browser: Any, **options: Any) -> Any:
    """A new page that records its console errors and uncaught exceptions (``page.svc_console``)."""
    page = browser.new_page(**options)
    console: list[str] = []
    page.on("console", lambda m: console.append(f"console.{m.type}: {m.text}") if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda e: console.append(f"page error: {e}"))
    page.svc_console = console
    PAGES.append(page)
    return page


def reopen(browser: Any, lab: Lab, name: str, ui: str) -> Any:
    """``name`` opened again, after its kernel is gone, as a reader opens a saved notebook: in
    Notebook 7 (``ui="notebook"``) or JupyterLab (a workspace of its own, so no earlier layout)."""
    lab.delete_sessions()
    page = open_page(browser, viewport={"width": 1500, "height": TALL})
    if ui == "notebook":
        page.goto(f"{lab.url}/notebooks/{name}?token={lab.token}")
    else:
        page.goto(f"{lab.url}/lab/workspaces/saved-{name.replace('.', '-')}/tree/{name}?reset&token={lab.token}")
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell", timeout=60_000)
    return page


CELLS_JS = ("window.jupyterapp.shell.currentWidget.content.widgets"
            ".filter(c => c.model.type === 'code')")
#: the error outputs of the open notebook's cells, read from the notebook model
CELL_ERRORS_JS = (f"() => {{ const cells = (window.jupyterapp && window.jupyterapp.shell.currentWidget"
                  f" && window.jupyterapp.shell.currentWidget.content && window.jupyterapp.shell.currentWidget"
                  f".content.widgets) ? {CELLS_JS} : []; const out = [];"
                  " for (const c of cells) { const o = c.model.outputs; for (let i = 0; i < o.length; i++) {"
                  " const x = o.get(i).toJSON(); if (x.output_type === 'error') out.push(x.ename + ': ' + x.evalue"
                  " + '\\n' + (x.traceback || []).join('\\n')); } } return out; }")
#: widget views that failed to render: ipywidgets draws an error placeholder (its reason is in the
#: browser console) or, for a model it cannot find, says so in the output area
WIDGET_ERRORS_JS = ("() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                    ".filter(e => e.querySelector('.jupyter-widgets-error-widget')"
                    " || e.innerText.includes('Error displaying widget')"
                    " || e.innerText.includes('Failed to load model class'))"
                    ".map(e => e.innerText.trim() || 'an error placeholder instead of the widget')")


#: true once every plotly chart under the elements ``selector`` names has drawn: no transition
#: running and no animation frame queued
_CHARTS_AT_REST_JS = """(selector) => [...document.querySelectorAll(selector)]
    .flatMap(root => [...root.querySelectorAll('.js-plotly-plot')])
    .every(gd => !gd._transitioning && !(gd._transitionData && (gd._transitionData._frameQueue || []).length))"""

#: resolves after two animation frames: what was drawn before it (WebGL included) is on the screen;
#: or after a second at most: headless chromium now and then produces no frame for a while on a
#: loaded machine, and an evaluate that waits on one would wait for ever (pytest's 300 s timeout)
NEXT_PAINT_JS = ("() => new Promise(done => { requestAnimationFrame(() => requestAnimationFrame(done));"
                 " setTimeout(done, 1000); })")


def painted(page: Any, selector: str, timeout: float = 30.0) -> None:
    """Wait until the plotly charts under ``selector`` are at rest, then for the browser to paint
    them: what a screenshot taken next shows is what was drawn, not a frame in between."""
    page.wait_for_function(_CHARTS_AT_REST_JS, arg=selector, timeout=timeout * 1000)
    page.evaluate(NEXT_PAINT_JS)


def cell_errors(page: Any) -> list[str]:
    try:
        return [_ANSI.sub("", e) for e in page.evaluate(CELL_ERRORS_JS)]
    except Exception:  # noqa: BLE001 - a closed or crashed page has nothing more to tell
        return []


def diagnose(page: Any) -> str:
    """What a person would look at first: the cells' error outputs, widgets that failed to render,
    and the browser console."""
    parts = []
    errors = cell_errors(page)
    if errors:
        parts.append("error output of the notebook:\n" + "\n---\n".join(errors))
    with contextlib.suppress(Exception):
        broken = page.evaluate(WIDGET_ERRORS_JS)
        if broken:
            parts.append("widgets that did not render:\n" + "\n".join(broken))
    console = getattr(page, "svc_console", [])
    if console:
        parts.append("browser console:\n" + "\n".join(console[-30:]))
    return "\n\n".join(parts) or "no error output in the notebook and nothing in the browser console"


def wait_until(page: Any, condition_js: str, what: str, timeout: float, arg: Any = None) -> None:
    """Wait for ``condition_js`` to hold, failing at once (with the cause) when a cell raises or a
    widget fails to render, and with ``diagnose`` when ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        satisfied = page.evaluate(condition_js, arg)
        errors = cell_errors(page)
        if errors:
            raise AssertionError(f"{what}: a cell raised\n" + "\n---\n".join(errors))
        broken = page.evaluate(WIDGET_ERRORS_JS)
        if broken:
            raise AssertionError(f"{what}: a widget did not render\n" + "\n".join(broken)
                                 + "\n\n" + diagnose(page))
        if satisfied:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s\n\n{diagnose(page)}")
        time.sleep(0.25)


def run_notebook(browser: Any, lab: Lab, name: str, height: int = 1100, ui: str = "lab") -> Any:
    """Open ``name`` in JupyterLab (``ui="lab"``) or Notebook 7 (``ui="notebook"``), run all cells,
    wait until every code cell has run and every widget has rendered; returns the page. Fails at the
    first cell that raises, with its traceback."""
    lab.delete_sessions()
    page = open_page(browser, viewport={"width": 1500, "height": height})
    if ui == "notebook":
        page.goto(f"{lab.url}/notebooks/{name}?token={lab.token}")
    else:  # a workspace of its own, reset: only this notebook is open (no tabs restored from earlier tests)
        workspace = name.replace(".", "-")
        page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{name}?reset&token={lab.token}")
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell", timeout=60_000)
    wait_until(page, "(name) => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                     " && window.jupyterapp.shell.currentWidget.context"
                     " && window.jupyterapp.shell.currentWidget.context.path === name"
                     " && window.jupyterapp.shell.currentWidget.sessionContext"
                     " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                     " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
                     " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.connectionStatus"
                     " === 'connected'"
                     " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
               f"{name}: kernel connected and idle", 60, arg=name)
    started = f"() => {CELLS_JS}.some(c => c.model.executionCount !== null || c.model.executionState === 'running')"
    # a cold first load may ignore the first "Run All Cells"; it is sent again only after a minute
    # with no cell started: sent again while the first is merely slow (a loaded machine), it would
    # clear the outputs of the cells that ran and queue them a second time
    for attempt in range(2):
        # not awaited: the command's promise ends when the last cell does, and a cell the kernel did
        # not abort after an error (its request came in late, on a loaded machine) may run for
        # minutes; the waits below see errors at once and have deadlines of their own
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        try:
            wait_until(page, started, f"{name}: run all cells", 60)
            break
        except AssertionError:
            if attempt:
                raise
    # done: every code cell has an execution count and the kernel is idle (read from the notebook
    # model, not the DOM: JupyterLab only renders the cells in view)
    wait_until(page, f"() => {CELLS_JS}.every(c => c.model.executionCount !== null)"
                     " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
               f"{name}: every cell has run", 180)
    # every widget view the cells displayed has been drawn (or has said why not)
    wait_until(page, "() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                     ".filter(e => e.getAttribute('data-mime-type') === 'application/vnd.jupyter.widget-view+json')"
                     ".every(e => e.querySelector('.jupyter-widgets, .widget-box, .lm-Widget'))",
               f"{name}: every widget rendered", 60)
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    tracebacks = [errors.nth(i).inner_text() for i in range(errors.count())
                  if "Traceback" in errors.nth(i).inner_text() or "Error" in errors.nth(i).inner_text()]
    assert not tracebacks, tracebacks
    return page
