"""A browser test that fails says why, at once: the harness stops at the first cell that raises (with
its traceback) and at a widget that cannot render (with the browser's own words), long before its
timeouts, and a failing browser test's report carries the notebook's errors and the console."""

from __future__ import annotations

from collections.abc import Iterator

import nbformat
import pytest

from tests.lab_harness import (
    NEXT_PAINT_JS,
    Lab,
    diagnose,
    open_page,
    require_chromium,
    run_notebook,
    serve_lab,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BROKEN_WIDGET = '''import ipywidgets as W
from traitlets import Unicode

class NoFrontEnd(W.DOMWidget):
    """A widget whose JavaScript was never installed (what a missing front-end package looks like)."""
    _model_module = Unicode("svckit-missing-frontend").tag(sync=True)
    _model_module_version = Unicode("^1.0.0").tag(sync=True)
    _model_name = Unicode("MissingModel").tag(sync=True)
    _view_module = Unicode("svckit-missing-frontend").tag(sync=True)
    _view_module_version = Unicode("^1.0.0").tag(sync=True)
    _view_name = Unicode("MissingView").tag(sync=True)

NoFrontEnd()'''


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    require_chromium()
    root = tmp_path_factory.mktemp("failing-lab")
    cells = nbformat.v4.new_code_cell
    python3 = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    nbformat.write(nbformat.v4.new_notebook(metadata=python3, cells=[
        cells("print('first cell ran')"),
        cells("raise RuntimeError('the cause: no such index (svckit test)')"),
        cells("import time; time.sleep(600)  # never reached: a waiting harness would hang here"),
    ]), root / "raises.ipynb")
    nbformat.write(nbformat.v4.new_notebook(metadata=python3, cells=[cells(BROKEN_WIDGET)]),
                   root / "broken_widget.ipynb")
    with serve_lab(root, {}) as lab:
        yield lab


def test_a_raising_cell_fails_the_run_with_its_traceback(browser, lab):
    with pytest.raises(AssertionError) as failure:
        run_notebook(browser, lab, "raises.ipynb")
    message = str(failure.value)
    assert "a cell raised" in message
    assert "RuntimeError: the cause: no such index (svckit test)" in message
    assert "not within" not in message  # it did not wait for a timeout


def test_a_widget_that_cannot_render_fails_with_the_browser_s_reason(browser, lab):
    with pytest.raises(AssertionError) as failure:
        run_notebook(browser, lab, "broken_widget.ipynb")
    message = str(failure.value)
    assert "a widget did not render" in message
    assert "svckit-missing-frontend" in message  # the module the browser could not load
    assert "not within" not in message


def test_diagnose_reads_the_console(browser, lab):
    page = open_page(browser)
    page.goto(f"{lab.url}/api/status?token={lab.token}")
    page.evaluate("() => console.error('svckit: something broke in the page')")
    assert "console.error: svckit: something broke in the page" in diagnose(page)
    page.close()


def test_waiting_for_a_paint_ends_on_a_page_that_draws_no_frame(browser):
    # headless chromium on a loaded machine now and then produces no frame for a while: the wait for
    # the next paint gives up after its second instead of holding the test until pytest's timeout
    page = open_page(browser)
    page.set_content("<p>a page whose animation frames never come</p>")
    page.evaluate("() => { window.requestAnimationFrame = () => 0; }")
    page.evaluate(NEXT_PAINT_JS)
    page.close()
