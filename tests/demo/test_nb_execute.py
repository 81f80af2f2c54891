"""``svckit demo --execute``: every packaged notebook runs top to bottom against a fresh sandbox and is
written as HTML; a failing cell makes the command exit non-zero."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from svckit import demo
from svckit.account.plans import plan_title
from svckit.cli import main
from tests.conftest import Haystack

pytestmark = pytest.mark.slow


def test_the_tour_comes_first_and_every_notebook_is_found():
    names = [p.name for p in demo.find_notebooks()]
    assert names[0] == "00_tour.ipynb"
    assert {"kv_explorer.ipynb", "account_dashboard.ipynb"} <= set(names)
    # the repository's notebooks/ folder is the packaged one (one copy of each notebook)
    repo_notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    assert {p.name for p in repo_notebooks.glob("*.ipynb")} == set(names)


def test_notebooks_connect_in_one_line():
    for path in demo.find_notebooks():
        nb = nbformat.read(path, as_version=4)
        first_code = next(c for c in nb.cells if c.cell_type == "code")
        assert re.search(r"^c = notebook_clients\((local_only=True)?\)", first_code.source, re.MULTILINE), path.name
        assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{path.name} has stale outputs"


#: what a notebook of the demo may weigh: the HTML page, plotly.js (4.8 MB) included once, and the
#: notebook with its widget state (what JupyterLab saves)
HTML_LIMIT, NOTEBOOK_LIMIT = 6_000_000, 2_000_000


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", [p.name for p in demo.find_notebooks()])
def test_every_notebook_runs_top_to_bottom_and_stays_light(name, executed):
    """Each packaged notebook (the tour first, as the runner orders them) runs with no edits, and what
    it writes is light: an HTML page of at most 6 MB, a saved notebook of at most 2 MB."""
    folder, run = executed.folder, executed.runs[name]
    assert run.ok, run.error
    html = run.html.read_text()
    notebook = nbformat.read(folder / name, as_version=4)
    assert not [o for c in notebook.cells for o in c.get("outputs", ()) if o.output_type == "error"]
    first = next(c for c in notebook.cells if c.cell_type == "code")
    said = [o.data["text/plain"] for o in first.outputs if "svc-connection" in o.get("data", {}).get("text/html", "")]
    assert said and said[0].startswith("Connected to the service named by the SVC_* variables."), said  # at its top
    for snippet in EXPECTED_OUTPUTS.get(name, ()):
        assert snippet in html, f"{name}: {snippet!r} not in the executed notebook"
    assert run.html.stat().st_size <= HTML_LIMIT, f"{name}: {run.html.stat().st_size:,} bytes of HTML"
    saved = folder / name
    assert notebook.metadata.get("widgets"), "the widget state is saved"
    assert saved.stat().st_size <= NOTEBOOK_LIMIT, f"{name}: {saved.stat().st_size:,} bytes of notebook"


def test_no_secret_in_an_executed_notebook_or_its_html(executed):
    """No token, key or password of the sandbox the notebooks ran against (the queue token a rotation
    minted included) in any executed notebook, its widget state, or its HTML page."""
    assert set(executed.runs) == {p.name for p in demo.find_notebooks()}
    hay = Haystack()
    for name, run in executed.runs.items():
        saved = (executed.folder / name).read_text()
        cells = nbformat.reads(saved, as_version=4).cells
        assert any(c.get("outputs") for c in cells), f"{name}: no outputs, the search would be vacuous"
        hay.add(f"{name} as saved", saved)
        hay.add(f"{name} as HTML", run.html.read_text())
    assert hay.leaks(executed.secrets) == []


#: outputs (not source) that show a notebook did its job
EXPECTED_OUTPUTS = {
    "00_tour.ipynb": ["WRONGTYPE Operation against a key"],
    "kv_explorer.ipynb": ["subscribed to demo-news", "This explorer uses a Read Only token"],
    # the upgrade, shown on the notebook's own account (the shared one stays as it was)
    "account_dashboard.ipynb": [f"Plan changed to {plan_title('paid')} (OK).", "50.0 MiB", "Requests today (UTC)",
                                "the shared account's plan: free"],
    # the Deliveries view's static view: the flaky message's answers and the summary's DLQ count
    "queue_deliveries.ipynb": ["503 503 200", "1 in the DLQ", "svc-deliveries-chart"],
    # the vendor's serve() app: the broken step told to the failure function, the resume keeping "pack"
    "workflows_with_the_sdk.ipynb": ["serve() logged: RuntimeError: carrier API down", "CALLBACK_SUCCESS",
                                     "for order 2, pack ran 1 time(s) and ship 2 time(s)"],
}


def test_a_failing_cell_fails_the_run_and_is_shown(tmp_path, capsys):
    folder = tmp_path / "nbs"
    folder.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\nprint(os.environ['SVC_KV_URL'])"),
                                         nbformat.v4.new_code_cell("1 / 0")])
    nbformat.write(nb, folder / "broken.ipynb")
    out = tmp_path / "html"
    rc = main(["demo", "--execute", "--notebooks", str(folder), "--out", str(out), "--backend", "fakeredis",
               "--data-dir", str(tmp_path / "data")])
    printed = capsys.readouterr().out
    assert rc == 1
    assert "FAILED" in printed and "ZeroDivisionError" in printed
    html = (out / "broken.html").read_text()
    assert "ZeroDivisionError" in html
    assert "127.0.0.1" in html  # the kernel got the sandbox's SVC_* variables


def test_notebook_clients_prefers_the_environment():
    c = demo.notebook_clients(env={"SVC_KV_URL": "http://127.0.0.1:9/kv", "SVC_KV_TOKEN": "t" * 20})
    assert c.settings.kv_url == "http://127.0.0.1:9/kv"
    assert demo._sandbox is None  # no sandbox was started
