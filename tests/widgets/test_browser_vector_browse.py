"""Real browser: the vector playground's Browse tab on an index filled only through the upstash-vector
SDK (no demo corpus), in JupyterLab driven by Debian's chromium (the harness of tests/lab_harness.py).

The sandbox serves only the vector area, without demo data; ``upstash_vector.Index`` fills the dense
index with explicit vectors in two namespaces. The notebook opens the playground on it: the Browse
tab lists both namespaces, pages through one, maps it and fetches a record typed by id.
Screenshot: test-output/screenshots/vector_playground_browse.png.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat
import numpy as np
import pytest
from upstash_vector import Index

from tests.lab_harness import Lab, painted, run_notebook, sandbox_lab, shot, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "browse_sdk_index.ipynb"
TOPICS = ("astronomy", "cooking", "finance", "music")
ARTICLES = 160


def fill_with_the_sdk(env: dict[str, str]) -> None:
    """Four topic clusters of 384-d vectors in namespace ``articles``, five loose notes in the default one."""
    index = Index(env["SVC_VECTOR_URL"], env["SVC_VECTOR_TOKEN"], retries=0)
    rng = np.random.default_rng(11)
    centres = rng.normal(size=(len(TOPICS), 384))
    articles = []
    for k in range(ARTICLES):
        topic = k % len(TOPICS)
        vector = centres[topic] + 0.35 * rng.normal(size=384)
        articles.append((f"art-{k:03d}", vector, {"topic": TOPICS[topic], "words": int(200 + 7 * k)},
                         f"Article {k} about {TOPICS[topic]}"))
    for start in range(0, ARTICLES, 50):
        index.upsert(articles[start:start + 50], namespace="articles")
    index.upsert([(f"note-{k}", rng.normal(size=384), {"pinned": k % 2 == 0}, f"note {k}") for k in range(5)])


def prepare(sandbox, root: Path) -> None:
    """Fill the index through the SDK only, and write the notebook that browses it."""
    fill_with_the_sdk(sandbox.env)
    write_notebook(root / NOTEBOOK, nbformat.v4.new_markdown_cell("# Browse an index filled through the SDK"), (
        "from svckit.config import Settings\n"
        "from svckit.widgets import VectorPlayground\n\n"
        "pg = VectorPlayground.from_settings(Settings.from_env(), index_kind='dense', autorun=False)\n"
        "pg.tabs.selected_index = 4  # Browse\n"
        "pg.browse('articles')\n"
        "pg"))


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    with sandbox_lab(tmp_path_factory, notebooks=[], prepare=prepare, seed=None, areas=["vector"]) as lab:
        yield lab


def _rows(pg) -> int:
    return pg.locator(".svckit-browse-table table.svc-table tbody tr").count()


def test_browse_tab_shows_an_sdk_filled_index(browser, lab, screenshots, ui):
    page = run_notebook(browser, lab, NOTEBOOK, height=1400, ui=ui)
    pg = page.locator(".svckit-vector-playground").first
    pg.wait_for(state="visible", timeout=30_000)
    # the namespaces and their counts, read from the service
    info = pg.locator(".svckit-browse-info")
    info.wait_for(timeout=30_000)
    assert f"{ARTICLES + 5:,} vectors in 2 namespace(s)" in info.inner_text()
    assert "articles" in info.inner_text() and "(default)" in info.inner_text()
    options = pg.locator(".svckit-browse-namespace select option").all_inner_texts()
    assert options == ["(default)", "articles"]
    # the first page of the namespace, in id order, and its map
    page.wait_for_function("() => { const t = document.querySelector('.svckit-vector-playground .svckit-browse-map"
                           " .gtitle-subtitle'); return t && t.textContent.includes('PCA of 160 vectors'); }", timeout=60_000)
    legend = page.evaluate("() => [...document.querySelectorAll('.svckit-vector-playground .svckit-browse-map"
                           " .legend .legendtext')].map(t => t.textContent)")
    assert sorted(legend) == sorted(TOPICS)  # coloured by the first metadata field
    assert _rows(pg) == 25 and "art-000" in pg.locator(".svckit-browse-table").inner_text()
    # the next page
    pg.locator(".svckit-browse-next").click()
    page.wait_for_function("() => document.querySelector('.svckit-vector-playground .svckit-browse-table')"
                           ".textContent.includes('vectors 26–50')", timeout=30_000)
    assert "art-025" in pg.locator(".svckit-browse-table").inner_text()
    # the other namespace
    pg.locator(".svckit-browse-namespace select").select_option(label="(default)")
    page.wait_for_function("() => document.querySelector('.svckit-vector-playground .svckit-browse-table')"
                           ".textContent.includes('note-4')", timeout=30_000)
    assert _rows(pg) == 5
    pg.locator(".svckit-browse-namespace select").select_option(label="articles")
    page.wait_for_function("() => document.querySelector('.svckit-vector-playground .svckit-browse-table')"
                           ".textContent.includes('art-000')", timeout=30_000)
    # one record in full, typed by id
    box = pg.locator(".svckit-record-id input")
    box.fill("art-042")
    box.press("Enter")
    record = pg.locator(".svckit-record")
    page.wait_for_function("() => document.querySelector('.svckit-vector-playground .svckit-record')"
                           ".textContent.includes('Article 42 about finance')", timeout=30_000)
    assert "384 dims" in record.inner_text() and '"topic": "finance"' in record.inner_text()
    painted(page, ".svckit-vector-playground")  # the map drawn (WebGL) before the screenshot
    pg.screenshot(path=shot(screenshots, "vector_playground_browse", ui))
    page.close()
