"""Real browser: the packaged notebook vector_evaluation.ipynb in JupyterLab driven by Debian's chromium
(the harness of tests/lab_harness.py). It explains a hybrid hit and evaluates the demo labelled set on
a local index in the kernel; the playground's Explain view shows the hits' table, the chosen hit's
formula and its contributions chart, and its Evaluate tab (opened by a click, as a user would) the
summary table and the grouped bars.
Screenshots: test-output/screenshots/vector_explain.png, vector_evaluate.png.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.lab_harness import Lab, painted, run_notebook, sandbox_lab, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "vector_evaluation.ipynb"
PLAYGROUND = ".svckit-vector-playground"


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    # the notebook works on a local index in its kernel; the sandbox only answers notebook_clients()
    with sandbox_lab(tmp_path_factory, notebooks=[NOTEBOOK], seed=None, areas=["kv"]) as lab:
        yield lab


def _text_in(page, selector: str, text: str, timeout: float = 60_000) -> None:
    page.wait_for_function(
        "([sel, text]) => { const e = document.querySelector(sel);"
        " return e && e.textContent.includes(text); }",
        arg=[f"{PLAYGROUND} {selector}", text],
        timeout=timeout,
    )


def test_explain_view_and_evaluate_tab(browser, lab, screenshots, ui):
    page = run_notebook(browser, lab, NOTEBOOK, height=1600, ui=ui)
    pg = page.locator(PLAYGROUND).first
    pg.wait_for(state="visible", timeout=30_000)
    # the Explain tab is open: every hit with its returned and recomputed score, the first one drawn
    _text_in(page, ".svckit-explain-note", "Reciprocal Rank Fusion")
    note = pg.locator(".svckit-explain-note").first.inner_text()
    assert "local index" in note and "Computed here" in note
    table = pg.locator(".svckit-explain-table").inner_text()
    assert "recomputed" in table and "topic:context-managers:0" in table
    _text_in(page, ".svckit-explain-formula", "1/(60+1) + 1/(60+1)")
    _text_in(page, ".svckit-explain-chart .gtitle", "Why topic:context-managers:0 ranks 1")
    terms = page.evaluate(
        f"() => [...document.querySelectorAll('{PLAYGROUND} .svckit-explain-chart .ytick text, "
        f"{PLAYGROUND} .svckit-explain-chart .y2tick text')]"
        ".map(t => t.textContent)"
    )
    assert {"dense", "sparse", "context", "manager"} <= set(terms)  # the words as typed, not their stems
    # another hit, picked in the dropdown
    pg.locator(".svckit-explain-pick select").select_option(label="topic:with:0")
    _text_in(page, ".svckit-explain-chart .gtitle", "Why topic:with:0 ranks 2")
    _text_in(page, ".svckit-explain-formula", "1/(60+2) + 1/(60+2)")
    pg.locator(".svckit-explain-pick select").select_option(label="topic:context-managers:0")
    _text_in(page, ".svckit-explain-chart .gtitle", "Why topic:context-managers:0 ranks 1")
    painted(page, PLAYGROUND)
    pg.screenshot(path=shot(screenshots, "vector_explain", ui))

    # the Evaluate tab, filled by the notebook's last cell
    pg.locator(".lm-TabBar-tab", has_text="Evaluate").first.click()
    _text_in(page, ".svckit-eval-status", "done: 160 query runs")
    _text_in(page, ".svckit-eval-chart .gtitle", "demo labelled set: hybrid index, k = 10")
    summary = pg.locator(".svckit-eval-table").inner_text()
    for name in ("dense", "sparse", "hybrid RRF", "hybrid DBSF", "recall@10", "MRR", "nDCG@10"):
        assert name in summary
    legend = page.evaluate(
        f"() => [...document.querySelectorAll('{PLAYGROUND} .svckit-eval-chart .legendtext')]"
        ".map(t => t.textContent)"
    )
    assert legend == ["dense", "sparse", "hybrid RRF", "hybrid DBSF"]
    progress = page.evaluate(
        f"() => document.querySelector('{PLAYGROUND} .svckit-eval-progress .progress-bar').style.width"
    )
    assert progress == "100%"
    painted(page, PLAYGROUND)
    pg.screenshot(path=shot(screenshots, "vector_evaluate", ui))
    page.close()
