"""Real browser: what only a browser shows of the vector playground's layout (issue 43.4), in JupyterLab
and Notebook 7 driven by Debian's chromium (the harness of tests/lab_harness.py), on a local index of
its own in the kernel (ids as long as the demo corpus's, ``module:json.loads``).

- Enter in the filter box searches; until then the hits shown are dimmed under a notice that says
  which filter they answer.
- plotly's toolbar, shown when the pointer is over a chart, does not cover the chart's title (the
  score chart, and the Browse tab's narrow map).
- The rank-shift chart names each id in full, inside the figure; the three mode tables show every id
  and score whole.
Screenshot: test-output/screenshots/vector_playground_layout.png.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lab_harness import Lab, painted, run_notebook, sandbox_lab, shot, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "vector_layout.ipynb"
PLAYGROUND = ".svckit-vector-playground"
DOCS = [
    ("module:json.loads", "deserialize a JSON document to a Python object", "json"),
    ("module:json.dumps", "serialize an object to a JSON formatted string", "json"),
    ("module:json.JSONDecodeError", "subclass of ValueError raised when a JSON document is invalid", "json"),
    ("module:csv.reader", "read rows of comma separated values from a file", "csv"),
    ("module:csv.writer", "write rows of comma separated values to a file", "csv"),
    ("module:zipfile.ZipFile", "read and write zip archive files", "zipfile"),
    ("module:gzip.compress", "compress bytes with the gzip format", "gzip"),
    ("module:argparse.ArgumentParser", "parse command line arguments and options", "argparse"),
]


def prepare(_sandbox, root: Path) -> None:
    items = [{"id": i, "data": text, "metadata": {"package": package}} for i, text, package in DOCS]
    write_notebook(root / NOTEBOOK, (
        "from svckit.vector.routing import LocalCorpus\n"
        "from svckit.widgets import VectorPlayground\n\n"
        f"items = {items!r}\n"
        "local = {kind: 'this notebook works on a local index' for kind in ('dense', 'sparse', 'hybrid')}\n"
        "pg = VectorPlayground(corpus=LocalCorpus(items), not_configured=local, query='read a JSON file')\n"
        "pg"))


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    # the playground works on a local index in its kernel; the sandbox only starts the lab's kernels
    with sandbox_lab(tmp_path_factory, notebooks=[], prepare=prepare, seed=None, areas=["kv"]) as lab:
        yield lab


def _wait(page, js: str, arg=None, timeout: float = 60_000) -> None:
    page.wait_for_function(js, arg=arg, timeout=timeout)


def _text_in(page, selector: str, text: str, timeout: float = 60_000) -> None:
    _wait(page, "([sel, text]) => { const e = document.querySelector(sel);"
                " return e && e.textContent.includes(text); }", [f"{PLAYGROUND} {selector}", text], timeout)


def _hits(page) -> list[str]:
    return page.evaluate(f"() => [...document.querySelectorAll('{PLAYGROUND} .svckit-hits-table tbody tr')]"
                         ".map(tr => tr.children[1].textContent)")


#: the title's box and the toolbar's box (shown by hovering), in page pixels
BOXES_JS = """(sel) => {
  const chart = document.querySelector(sel);
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const bar = chart.querySelector('.modebar');
  return {title: box(chart.querySelector('.gtitle')), modebar: bar ? box(bar) : null,
          subtitle: chart.querySelector('.gtitle-subtitle') ? box(chart.querySelector('.gtitle-subtitle')) : null};
}"""


def _apart(a, b) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


def _title_clear_of_the_toolbar(page, selector: str) -> None:
    chart = page.locator(f"{PLAYGROUND} {selector}").first
    chart.locator(".plot-container").first.hover()
    _wait(page, "(sel) => { const b = document.querySelector(sel + ' .modebar');"
                " return b && getComputedStyle(b.parentElement).opacity !== '0'"
                " && b.getBoundingClientRect().width > 0; }", f"{PLAYGROUND} {selector}", timeout=10_000)
    boxes = page.evaluate(BOXES_JS, f"{PLAYGROUND} {selector}")
    assert boxes["modebar"] is not None
    assert _apart(boxes["title"], boxes["modebar"]), boxes
    if boxes["subtitle"]:
        assert _apart(boxes["subtitle"], boxes["modebar"]), boxes


def _opacity_becomes(page, opacity: str) -> None:
    """Wait until the hits table is painted at ``opacity`` (dimmed "0.4", or "1")."""
    _wait(page, "([sel, want]) => getComputedStyle(document.querySelector(sel)).opacity === want",
          [f"{PLAYGROUND} .svckit-hits-table", opacity], timeout=10_000)


def test_layout_and_enter_in_the_filter_box(browser, lab, screenshots, ui):
    page = run_notebook(browser, lab, NOTEBOOK, height=1500, ui=ui)
    pg = page.locator(PLAYGROUND).first
    pg.wait_for(state="visible", timeout=30_000)
    _text_in(page, ".svckit-hits-table", "module:json.loads")
    assert len(_hits(page)) == len(DOCS)
    painted(page, PLAYGROUND)
    _title_clear_of_the_toolbar(page, ".svckit-score-chart")

    # a filter typed: the hits are stale, and say so, until Enter applies it
    box = pg.locator(".svckit-filter input")
    box.fill("package = 'csv'")
    _text_in(page, ".svckit-stale-note", "These hits are for no filter")
    # the note and the dimming are separate widget updates: the browser may paint one before the other
    _opacity_becomes(page, "0.4")
    assert len(_hits(page)) == len(DOCS)
    box.press("Enter")
    _wait(page, "(sel) => document.querySelectorAll(sel).length === 2",
          f"{PLAYGROUND} .svckit-hits-table tbody tr")
    assert sorted(_hits(page)) == ["module:csv.reader", "module:csv.writer"]
    _wait(page, "(sel) => !document.querySelector(sel).textContent.trim()", f"{PLAYGROUND} .svckit-stale-note")
    _opacity_becomes(page, "1")
    box.fill("")
    box.press("Enter")
    _wait(page, "([sel, n]) => document.querySelectorAll(sel).length === n",
          [f"{PLAYGROUND} .svckit-hits-table tbody tr", len(DOCS)])

    # the rank shifts: every id named in full, inside the figure
    pg.locator(".lm-TabBar-tab, .p-TabBar-tab", has_text="Compare modes").first.click()
    painted(page, PLAYGROUND)
    labels = page.evaluate(
        """(sel) => { const chart = document.querySelector(sel + ' .svckit-rank-chart');
          const svg = chart.querySelector('svg.main-svg').getBoundingClientRect();
          return [...chart.querySelectorAll('.textpoint text')].filter(t => t.textContent)
            .map(t => { const r = t.getBoundingClientRect();
                        return [t.textContent, r.left >= svg.left - 1 && r.right <= svg.right + 1]; }); }""",
        PLAYGROUND)
    assert labels and {text for text, _ in labels} <= {i for i, _, _ in DOCS}
    assert all(inside for _, inside in labels), labels
    assert {i for i, _, _ in DOCS} <= {text for text, _ in labels} | set(_hits(page))  # each line named
    # the three mode tables: no cell cut, every table inside the widget
    cut = page.evaluate(
        """(sel) => { const root = document.querySelector(sel).getBoundingClientRect();
          return [...document.querySelectorAll(sel + ' .svckit-ranks td')]
            .filter(td => td.scrollWidth > td.clientWidth + 1 || td.getBoundingClientRect().right > root.right + 1)
            .map(td => td.textContent); }""", PLAYGROUND)
    assert cut == []
    scores = page.evaluate(f"() => [...document.querySelectorAll('{PLAYGROUND} .svckit-ranks')]"
                           ".map(t => t.querySelectorAll('tbody tr').length)")
    assert len(scores) == 3 and all(n > 0 for n in scores)
    pg.screenshot(path=shot(screenshots, "vector_playground_layout", ui))

    # the Browse tab's map is narrow (beside its table): its title too stays clear of the toolbar
    pg.locator(".lm-TabBar-tab, .p-TabBar-tab", has_text="Browse").first.click()
    _text_in(page, ".svckit-browse-map .gtitle-subtitle", "of the variance", timeout=180_000)
    painted(page, PLAYGROUND)
    _title_clear_of_the_toolbar(page, ".svckit-browse-map")
    page.close()
