"""What a reader of the vector playground sees (issue 43.4): titles clear of plotly's toolbar, labels and
score columns whole, a filter applied by Enter with stale hits marked until then, no record left from
another view, a map legend of a few distinct colours that says what the map leaves out, ranks counted
from 1 everywhere, explained terms as typed with their IDF, one precision for every number."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from svckit import frames
from svckit.vector.explain import explain_hits
from svckit.vector.models import QueryOptions
from svckit.widgets._plots.vector import (
    LABEL_PX,
    MODEBAR_PX,
    TOP_CATEGORIES,
    projection_figure,
    rank_shift_figure,
)
from svckit.widgets.vector_playground import VectorPlayground

MODES = ("DENSE", "SPARSE", "HYBRID")


@pytest.fixture
def pg(local_corpus):
    return VectorPlayground(corpus=local_corpus, autorun=False)


def submit(text_widget) -> None:
    """What the browser sends when Enter is pressed in a text box (a custom message, beside its value)."""
    text_widget._handle_custom_msg({"event": "submit"}, [])


def assert_title_below_the_toolbar(fig) -> None:
    """The title hangs from the top of the figure, below the modebar's row, inside the top margin."""
    title = fig.layout.title
    assert title.yref == "container" and title.y == 1 and title.yanchor == "top", title
    assert title.pad.t >= MODEBAR_PX, title
    lines = 1 + (title.subtitle.text.count("<br>") + 1 if title.subtitle.text else 0)
    assert fig.layout.margin.t >= title.pad.t + 18 * lines, (fig.layout.margin, title.text)


def test_every_playground_chart_keeps_its_title_clear_of_the_toolbar(pg):
    pg.query("bake sourdough bread at home")
    pg.tabs.selected_index = 4  # Browse: its map is the narrow one beside the table
    pg.tabs.selected_index = 5  # Explain
    pg.evaluate(pd.DataFrame({"query": ["baking bread"], "relevant": [["doc-7"]]}), k=3, timeout=60)
    figures = {"score": pg.results.score_fig, "rank shift": pg.rank_fig, "browse map": pg.browse_tab.browse_fig,
               "explain": pg.explainer.explain_fig, "evaluation": pg.evaluator.eval_fig}
    for name, chart in figures.items():
        assert chart.data, name
        assert_title_below_the_toolbar(chart)
    pg.tabs.selected_index = 2
    assert_title_below_the_toolbar(pg.projection_fig)


def test_the_rank_shift_chart_names_each_id_in_full_beside_the_plot():
    ids = ["module:json.loads", "module:json.dumps", "topic:context-managers"]
    by_mode = {m: pd.DataFrame({"id": ids if m != "SPARSE" else ids[::-1], "rank": [1, 2, 3],
                                "score": [0.9, 0.8, 0.7]}) for m in MODES}
    by_mode["HYBRID"] = by_mode["HYBRID"].iloc[:2]  # the third id ends in the SPARSE column
    fig = rank_shift_figure(by_mode)
    named = {t.name: [x for x, text in zip(t.x, t.text) if text] for t in fig.data}
    assert named == {"module:json.loads": ["HYBRID"], "module:json.dumps": ["HYBRID"],
                     "topic:context-managers": ["SPARSE"]}
    for trace in fig.data:
        assert [t for t in trace.text if t] == [trace.name]  # the whole id, not "modul"
        assert trace.cliponaxis is False  # drawn past the plot's edge, where the margin holds it
    assert fig.layout.margin.r >= LABEL_PX * len("topic:context-managers")


def test_the_mode_tables_wrap_instead_of_cutting_their_score_column(pg):
    pg.query("sourdough bread")
    box = pg.comparison.compare_tables
    assert box.layout.flex_flow == "row wrap"
    for column, mode in zip(box.children, MODES):
        assert column.layout.flex == "0 0 auto"  # as wide as its table; the next one goes below
        table = column.children[1].value
        assert "width:max-content" in table
        df = pg.by_mode[mode]
        assert all(i in table for i in df["id"]) and "<th>score</th>" in table


def test_enter_in_the_filter_box_searches_and_the_hits_are_marked_stale_until_then(pg):
    pg.query("interest rates")
    assert "finance" in set(pg.hits["metadata.genre"]) and pg.stale == ""
    pg.controls.w_filter.value = "genre = 'food'"  # typed, not applied yet
    assert "These hits are for no filter" in pg.stale and "Enter" in pg.stale
    assert "These hits are for no filter" in pg.w_stale.value
    assert "svckit-stale" in pg.results.w_table._dom_classes and "svckit-stale" in pg.rank_fig._dom_classes
    assert "Enter" in pg.status
    submit(pg.controls.w_filter)  # Enter in the filter box
    assert set(pg.hits["metadata.genre"]) == {"food"}
    assert pg.stale == "" and pg.w_stale.value == ""
    assert "svckit-stale" not in pg.results.w_table._dom_classes
    pg.controls.w_filter.value = "genre = 'food"  # a syntax error: still the old hits, still said
    assert "filter \"genre = 'food'\"" in pg.stale
    pg.controls.w_filter.value = "genre = 'food'"  # back to the applied filter: the hits answer it again
    assert pg.stale == ""


def test_a_record_fetched_elsewhere_does_not_stay_under_new_results(pg):
    pg.top_k = 3
    pg.query("sourdough bread")
    assert "doc-4" not in set(pg.hits["id"])
    pg.tabs.selected_index = 4  # Browse
    pg.inspect("doc-4", "")  # a record of the Browse tab, not a hit
    assert "doc-4" in pg.browse_tab.w_record.value and pg.results.w_hit_record.value == ""
    pg.inspect("doc-7")  # a hit: shown under the hits too
    assert "sourdough" in pg.results.w_hit_record.value
    pg.query("interest rates")  # new hits: the record of the old ones goes
    assert pg.results.w_hit_record.value == ""


def test_a_map_coloured_by_many_values_names_a_few_in_distinct_colours_and_says_what_it_explains():
    rng = np.random.default_rng(3)
    values = pd.Series([f"module{k % 50}" for k in range(500)])
    fig = projection_figure(rng.normal(size=(500, 2)), color=values, color_label="module",
                            title="map", explained=[0.062, 0.041])
    entries = [t for t in fig.data if t.showlegend is not False]
    assert len(entries) == TOP_CATEGORIES + 1 and entries[-1].name == f"other: {50 - TOP_CATEGORIES} values"
    colours = [t.marker.color for t in entries]
    assert len(set(colours)) == len(colours)  # no colour stands for two values
    assert sum(len(t.x) for t in entries) == 500
    assert "10.3 % of the variance" in fig.layout.title.subtitle.text
    assert fig.layout.xaxis.title.text == "PC 1: 6.2 % of the variance"
    assert fig.layout.yaxis.title.text == "PC 2: 4.1 % of the variance"


def test_the_projection_tab_says_how_much_of_the_variance_its_map_shows(pg):
    pg.query("cats and dogs")
    pg.tabs.selected_index = 2
    share = sum(pg.projection_map().explained)
    assert 0 < share <= 1
    assert f"{100 * share:.1f} % of the variance" in pg.projection_fig.layout.title.subtitle.text


def test_ranks_count_from_one_in_frames_as_in_the_widget(pg, local_corpus):
    hits = local_corpus.client("hybrid").query_data("sourdough bread", top_k=3)
    assert frames.query_frame(hits)["rank"].tolist() == [1, 2, 3]
    pg.query("sourdough bread")
    assert pg.hits["rank"].tolist()[:3] == [1, 2, 3]
    assert pg.results.w_table.value.count("<td>1</td>") >= 1 and "<td>0</td>" not in pg.results.w_table.value


def test_explained_terms_read_as_typed_with_their_stem_and_idf(pg, local_corpus):
    ex = explain_hits(local_corpus.client("hybrid"), "Baking sourdough loaves", QueryOptions(top_k=3))
    terms = frames.explain_terms_frame(ex)
    bread = terms[terms["id"] == "doc-7"]
    assert dict(zip(bread["word"], bread["term"])) == {"Baking": "bake", "sourdough": "sourdough"}
    assert terms["idf"].notna().all()  # the local index knows each term's IDF
    assert frames.explain_frame(ex).set_index("id").loc["doc-7", "terms"] in ("Baking, sourdough",
                                                                              "sourdough, Baking")
    pg.query("Baking sourdough loaves")
    pg.tabs.selected_index = 5
    pg.explain_hit = "doc-7"
    table = pg.explainer.w_explain_terms.value
    assert "<th>word</th><th>stem</th>" in table and "<td>Baking</td><td>bake</td>" in table
    assert "<th>idf</th>" in table


def test_one_precision_for_a_score_in_every_table_and_formula(pg):
    pg.query("sourdough bread")  # doc-7 leads both sides: RRF gives it 1/61 + 1/61
    assert pg.hits["score"].iloc[0] == pytest.approx(2 / 61)
    shown = "0.032787"
    assert f"<td>{shown}</td>" in pg.results.w_table.value
    assert f"<td>{shown}</td>" in pg.comparison.compare_tables.children[2].children[1].value
    pg.tabs.selected_index = 5
    formula, table = pg.explainer.w_explain_formula.value, pg.explainer.w_explain_table.value
    assert f"score {shown} (returned), {shown} (recomputed)" in formula and f"= {shown}" in formula
    assert f"<td>{shown}</td>" in table
    for other in ("0.0327869", "0.03279", "0.0328<"):
        assert all(other not in html for html in (pg.results.w_table.value, formula, table))
