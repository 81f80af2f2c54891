"""Real browser: JupyterLab on loopback, Debian's chromium driven by playwright, every demo notebook
run with "Run All Cells"; the widgets must render and react. Screenshots go to
test-output/screenshots/.

Never ``playwright install``: the browser is /usr/bin/chromium.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from svckit import demo
from svckit.sandbox import Sandbox

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


def require_chromium() -> None:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing, but CI must install it")
        pytest.skip(f"{CHROMIUM} not installed")


@contextlib.contextmanager
def serve_lab(root: Path, sandbox_env: dict[str, str]) -> Iterator[Lab]:
    """JupyterLab on loopback over the notebooks in ``root``, its kernels pointed at the sandbox."""
    token = secrets.token_hex(16)
    port = free_port()
    env = demo.kernel_env(sandbox_env)
    env["JUPYTER_CONFIG_DIR"] = str(root / ".jupyter-config")  # no user settings leak in
    settings = root / ".lab-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    # every cell in the DOM (no windowing), so locators and screenshots see the whole notebook
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    notices = root / ".lab-settings" / "@jupyterlab" / "apputils-extension"
    notices.mkdir(parents=True)  # no "news?" toast over the screenshots
    (notices / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env["JUPYTERLAB_SETTINGS_DIR"] = str(root / ".lab-settings")
    cmd = demo.lab_command(None, port=port, no_browser=True, token=token, extra=[
        f"--ServerApp.root_dir={root}", f"--LabApp.workspaces_dir={root / '.workspaces'}",
        "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=True",
        "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ])
    log = (root / "lab.log").open("w")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    lab = Lab(f"http://127.0.0.1:{port}", token, root)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                lab.api("GET", "/api/status")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not start:\n" + (root / "lab.log").read_text()[-3000:])
                time.sleep(0.2)
        yield lab
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    require_chromium()
    root = tmp_path_factory.mktemp("lab")
    demo.copy_notebooks(root)
    with Sandbox(tmp_path_factory.mktemp("sandbox"), seed="demo") as sb, serve_lab(root, sb.env) as lab:
        yield lab


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def screenshots(output_dir: Path) -> Path:
    folder = output_dir / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


CELLS_JS = ("window.jupyterapp.shell.currentWidget.content.widgets"
            ".filter(c => c.model.type === 'code')")


def run_notebook(browser, lab: Lab, name: str, height: int = 1100):
    """Open ``name`` in JupyterLab, run all cells, wait until every code cell has run; returns the page."""
    lab.delete_sessions()
    page = browser.new_page(viewport={"width": 1500, "height": height})
    # a workspace of its own, reset: only this notebook is open (no tabs restored from earlier tests)
    workspace = name.replace(".", "-")
    page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{name}?reset&token={lab.token}")
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_function("(name) => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.context"
                           " && window.jupyterapp.shell.currentWidget.context.path === name"
                           " && window.jupyterapp.shell.currentWidget.sessionContext"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.connectionStatus === 'connected'",
                           arg=name, timeout=60_000)
    for attempt in range(2):  # a cold first load may ignore the first "Run All Cells"
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        try:
            page.wait_for_function(f"() => {CELLS_JS}.some(c => c.model.executionCount !== null"
                                   " || c.model.executionState === 'running')", timeout=15_000)
            break
        except Exception:
            if attempt:
                raise
    # done: every code cell has an execution count and the kernel is idle (read from the notebook
    # model, not the DOM: JupyterLab only renders the cells in view)
    page.wait_for_function(
        f"() => {CELLS_JS}.every(c => c.model.executionCount !== null)"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
        timeout=120_000)
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    tracebacks = [errors.nth(i).inner_text() for i in range(errors.count())
                  if "Traceback" in errors.nth(i).inner_text() or "Error" in errors.nth(i).inner_text()]
    assert not tracebacks, tracebacks
    return page


def test_kv_explorer_notebook(browser, lab, screenshots):
    page = run_notebook(browser, lab, "kv_explorer.ipynb")
    explorer = page.locator(".svc-kv-explorer").first
    explorer.wait_for(state="visible", timeout=30_000)
    options = explorer.locator(".svc-key-list select option")
    options.first.wait_for(timeout=30_000)
    assert "demo:" in options.first.inner_text()
    # type a pattern: the key list changes
    box = explorer.locator(".svc-pattern input")
    box.fill("demo:user:*")
    box.press("Enter")
    page.wait_for_function(
        "() => { const o = [...document.querySelector('.svc-kv-explorer .svc-key-list select').options];"
        " return o.length > 0 && o.every(x => x.textContent.startsWith('demo:user:')); }", timeout=20_000)
    # click a key: its value shows
    label = options.nth(2).inner_text()
    key = label.split()[0]
    explorer.locator(".svc-key-list select").select_option(label=label)
    page.wait_for_function(
        "(key) => { const h = document.querySelector('.svc-kv-explorer .svc-detail-header');"
        " return h && h.textContent.includes(key); }", arg=key, timeout=20_000)
    page.wait_for_function(
        "() => { const v = document.querySelector('.svc-kv-explorer .svc-value table');"
        " return v && v.textContent.includes('plan') && v.textContent.includes('visits'); }", timeout=20_000)
    assert "matching" in explorer.locator(".svc-scan-status").inner_text()
    explorer.scroll_into_view_if_needed()
    explorer.screenshot(path=str(screenshots / "kv_explorer.png"))
    page.close()


def test_account_dashboard_notebook(browser, lab, screenshots):
    page = run_notebook(browser, lab, "account_dashboard.ipynb", height=1900)  # the whole widget in view
    dash = page.locator(".svc-account-dashboard").first
    dash.wait_for(state="visible", timeout=30_000)
    dash.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / "account_dashboard_page.png"), full_page=True)
    assert "Queue account" in dash.locator(".svc-account-header").inner_text()
    # the plotly chart rendered (bars drawn)
    page.wait_for_function("() => document.querySelectorAll("
                           "'.svc-account-dashboard .js-plotly-plot .barlayer .point').length >= 20", timeout=30_000)
    assert dash.locator(".svc-card").count() == 6
    token_text = dash.locator(".svc-token").inner_text()
    assert token_text.startswith("***") and len(token_text) <= 7
    # refresh reacts
    msg = dash.locator(".svc-message")
    before = msg.inner_text()
    dash.get_by_role("button", name="Refresh").click()
    page.wait_for_function(
        "(before) => { const m = document.querySelector('.svc-account-dashboard .svc-message');"
        " return m && m.textContent.includes('Loaded') && m.textContent !== before; }", arg=before, timeout=20_000)
    dash.scroll_into_view_if_needed()
    dash.screenshot(path=str(screenshots / "account_dashboard.png"))
    page.close()


def test_tour_notebook(browser, lab, screenshots):
    page = run_notebook(browser, lab, "00_tour.ipynb")
    page.locator(".svc-kv-explorer").first.wait_for(state="visible", timeout=30_000)
    page.locator(".svc-account-dashboard .js-plotly-plot").first.wait_for(timeout=30_000)
    page.locator(".svc-kv-explorer").first.screenshot(path=str(screenshots / "tour_kv_explorer.png"))
    page.close()


def test_copied_notebooks_are_the_packaged_ones(lab):
    assert sorted(p.name for p in lab.root.glob("*.ipynb")) == sorted(p.name for p in demo.find_notebooks())
