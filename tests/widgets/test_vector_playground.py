"""The vector playground driven through its controls: against the local index (fallback) and a
recording fake of the Vector client (what is sent to the service, and the 422 fallback)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from svckit.config import Settings
from svckit.errors import EmbeddingModelRequired
from svckit.vector import LocalVector, VectorQueries
from svckit.widgets.vector_playground import VectorPlayground
from tests.widgets.fakes import RecordingVector


@pytest.fixture
def playground(local_corpus):
    return VectorPlayground(corpus=local_corpus, autorun=False)


def test_without_settings_every_kind_falls_back_to_local_and_the_banner_says_why(local_corpus):
    w = VectorPlayground.from_settings(Settings(), corpus=local_corpus, autorun=False)
    assert w.backend == "local"
    assert "Local fallback" in w.w_banner.value and "SVC_VECTOR_HYBRID_URL" in w.w_banner.value
    w.controls.w_kind.value = "dense"
    assert "SVC_VECTOR_URL" in w.w_banner.value


def test_typed_query_fills_table_and_score_chart(playground):
    playground.controls.w_query.value = "baking bread at home"
    assert playground.result_count > 0
    assert playground.hits.iloc[0]["id"] == "doc-7"
    assert "doc-7" in playground.results.w_table.value and "sourdough" in playground.results.w_table.value
    bars = playground.results.score_fig.data[0]
    assert bars.y[0] == "1. doc-7"
    assert np.all(np.diff(np.asarray(bars.x, dtype=float)) <= 0)  # best first
    assert "local index" in playground.w_status.value


def test_filter_error_is_shown_inline_with_caret_and_blocks_the_query(local_corpus):
    remote = RecordingVector()
    w = VectorPlayground({"hybrid": remote}, corpus=local_corpus, autorun=False)
    w.controls.w_filter.value = "genre = 'food' AND"
    assert w.filter_error_position == 18
    assert "position 18" in w.controls.w_filter_error.value
    caret_line = w.controls.w_filter_error.value.split("\n")[1]
    assert caret_line.index("^") == 18
    w.controls.w_query.value = "soup"
    assert remote.calls == [] and "fix the filter" in w.w_status.value
    w.controls.w_filter.value = "genre = 'food'"
    assert w.controls.w_filter_error.value == "" and w.filter_error_position == -1
    w.controls.w_search.click()
    assert remote.calls[0]["filter"] == "genre = 'food'"


def test_filter_restricts_local_results(playground):
    playground.controls.w_filter.value = "genre = 'finance' AND year >= 2010"
    playground.query("money and interest")
    assert set(playground.hits["id"]) == {"doc-4", "doc-5"}
    assert set(playground.hits["metadata.genre"]) == {"finance"}


def test_controls_become_the_request_and_options_follow_the_index_kind(local_corpus):
    remote = {k: RecordingVector() for k in ("dense", "sparse", "hybrid")}
    w = VectorPlayground(remote, corpus=local_corpus, autorun=False)
    assert w.backend == "remote" and "service" in w.w_banner.value
    w.controls.w_topk.value = 3
    w.controls.w_namespace.value = "news"
    w.controls.w_inc_vec.value = True
    w.controls.w_mode.value = "SPARSE"
    w.controls.w_fusion.value = "DBSF"
    w.controls.w_weight.value = "IDF"
    w.query("rates")
    sent = remote["hybrid"].calls[0]
    assert sent == {"data": "rates", "top_k": 3, "include_metadata": True, "include_vectors": True,
                    "include_data": True, "filter": "", "weighting_strategy": "IDF",
                    "fusion_algorithm": "DBSF", "query_mode": "SPARSE", "namespace": "news"}
    w.controls.w_kind.value = "dense"  # re-runs the query on the dense index: no hybrid-only options
    dense = remote["dense"].calls[-1]
    assert dense["query_mode"] is dense["fusion_algorithm"] is dense["weighting_strategy"] is None
    assert w.controls.w_mode.disabled and w.controls.w_weight.disabled
    w.controls.w_kind.value = "sparse"
    sparse = remote["sparse"].calls[-1]
    assert sparse["weighting_strategy"] == "IDF" and sparse["query_mode"] is None
    assert list(w.hits["id"]) == ["doc-7", "doc-6"]


def test_a_422_index_falls_back_to_local_visibly(local_corpus):
    remote = RecordingVector(fail_with=EmbeddingModelRequired("no model", status=422))
    w = VectorPlayground({"hybrid": remote}, corpus=local_corpus, autorun=False)
    assert w.backend == "remote"
    w.query("tomato soup")
    assert len(remote.calls) == 1  # tried once, then remembered
    assert w.backend == "local" and "422" in w.fallback_reason
    assert "Local fallback" in w.w_banner.value and "422" in w.w_banner.value
    assert w.hits.iloc[0]["id"] == "doc-6"


def test_side_by_side_modes_and_rank_shift(playground):
    playground.query("sourdough bread")
    assert set(playground.by_mode) == {"DENSE", "SPARSE", "HYBRID"}
    assert list(playground.by_mode["SPARSE"]["id"]) == ["doc-7"]  # only the text with those words
    assert len(playground.by_mode["DENSE"]) == len(local_corpus_ids(playground))
    lines = {t.name: list(t.y) for t in playground.rank_fig.data}
    assert lines["doc-7"] == [1, 1, 1]
    assert None in lines[playground.by_mode["DENSE"]["id"].iloc[1]]  # absent from SPARSE: a gap
    assert len(playground.comparison.compare_tables.children) == 3


def local_corpus_ids(w):
    return w.corpus.items


def test_projection_is_drawn_when_its_tab_opens_fitted_once_and_marks_query_and_hits(playground):
    playground.query("cats and dogs")
    assert len(playground.projection_fig.data) == 0  # not fitted until asked for
    playground.tabs.selected_index = 2
    pm = playground.projection_map()
    playground.query("stock market")
    assert playground.projection_map() is pm  # cached per index
    traces = {t.name: t for t in playground.projection_fig.data}
    assert set(traces) == {"similarity", "hits", "query"}
    hits = traces["hits"]
    first = playground.hits.iloc[0]["id"]
    assert [hits.x[0], hits.y[0]] == list(pm.coords[pm.position[first]])
    # coloured by similarity to the query: the top hit is the most similar point
    sim = np.asarray(traces["similarity"].marker.color)
    assert pm.ids[int(np.argmax(sim))] == first


def test_projection_colour_by_metadata_field(playground):
    playground.query("soup")
    playground.tabs.selected_index = 2
    assert "genre" in playground.projection.w_color.options
    playground.projection.w_color.value = "genre"
    names = {t.name for t in playground.projection_fig.data}
    assert {"pets", "finance", "food"} <= names


def test_batch_mode_draws_one_chart_per_query(playground):
    playground.batcher.w_batch.value = "cats\n\nbond yields\nbeef stew"
    playground.batcher.w_batch_run.click()
    assert len(playground.batcher.batch_box.children) == 3
    titles = [fw.layout.title.text for fw in playground.batcher.batch_box.children]
    assert titles == ["“cats”", "“bond yields”", "“beef stew”"]
    assert [df.iloc[0]["id"] for df in playground.batcher.batch_hits] == ["doc-0", "doc-5", "doc-8"]


# -- browsing an index ---------------------------------------------------------------------------


def test_browse_tab_lists_namespaces_pages_maps_and_fetches_a_record(playground, local_corpus):
    playground.tabs.selected_index = 4  # opening the tab browses the selected (local) index
    assert playground.namespace_names == [""]
    n = len(local_corpus.items)
    assert playground.browse_count == min(n, 25) and playground.map_count == n
    assert f"{n:,} vectors in 1 namespace" in playground.browse_tab.w_browse_info.value
    assert list(playground.browse_tab.browse_records["id"]) == sorted(str(i["id"]) for i in local_corpus.items)[:25]
    title = playground.browse_tab.browse_fig.layout.title
    assert title.text == "hybrid index · namespace (default)" and f"PCA of {n} vectors" in title.subtitle.text
    assert {t.name for t in playground.browse_tab.browse_fig.data} >= {"pets", "finance", "food"}  # coloured by genre
    playground.browse_tab.w_record_id.value = "doc-7"
    assert playground.browse_tab.record.id == "doc-7" and "sourdough" in playground.browse_tab.w_record.value
    assert "384 dims" in playground.browse_tab.w_record.value and "sparse vector" in playground.browse_tab.w_record.value
    playground.browse_tab.w_record_id.value = "no-such-id"
    assert playground.browse_tab.record is None and "no such id" in playground.browse_tab.w_record.value


def test_a_hit_of_the_results_tab_opens_in_full(playground):
    playground.query("sourdough bread")
    assert playground.results.w_hit_pick.options[0] == "doc-7"
    playground.results.w_hit_pick.value = "doc-7"
    playground.results.w_hit_fetch.click()
    assert "sourdough" in playground.results.w_hit_record.value and playground.browse_tab.record.id == "doc-7"


def test_a_remote_index_filled_only_through_the_sdk_is_browsed_and_mapped(demo_sandbox, monkeypatch):
    from upstash_vector import Index

    from svckit.vector import projection as vp

    ix = Index(demo_sandbox.env["SVC_VECTOR_URL"], demo_sandbox.env["SVC_VECTOR_TOKEN"], retries=0)
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(3, 384))
    ix.upsert([(f"sdk-{k:03d}", centres[k % 3] + 0.1 * rng.normal(size=384), {"cluster": f"c{k % 3}"})
               for k in range(60)], namespace="sdk-only")
    monkeypatch.setattr(vp, "MAP_CAP", 20)  # a "large" namespace: the map is a sample of it
    w = VectorPlayground.from_settings(demo_sandbox.settings, index_kind="dense", autorun=False)
    page = w.browse("sdk-only")
    assert "sdk-only" in w.namespace_names and "" in w.namespace_names
    assert list(page["id"]) == [f"sdk-{k:03d}" for k in range(25)] and w.browse_cursor == "sdk-025"
    assert "60" in w.browse_tab.w_browse_info.value and "sdk-only" in w.browse_tab.w_browse_info.value
    w.browse_tab.w_browse_next.click()  # 26-50
    w.next_page()  # 51-60
    assert w.browse_count == 60 and w.browse_cursor == "" and w.browse_tab.w_browse_next.disabled
    assert w.map_count == 20 and "service, 20 sampled of 60" in w.browse_tab.browse_fig.layout.title.subtitle.text
    assert {t.name for t in w.browse_tab.browse_fig.data} == {"c0", "c1", "c2"}
    record = w.inspect("sdk-042", "sdk-only")
    assert record.metadata == {"cluster": "c0"} and len(record.vector) == 384
    assert w.browse("nope").empty  # an unknown namespace is reported in the widget, not raised
    assert "no namespace" in w.browse_tab.w_browse_info.value and "nope" in w.browse_tab.w_browse_info.value


def test_the_widget_holds_one_client_per_kind_typed_by_the_protocol_real_and_fake(local_corpus, demo_sandbox):
    from svckit.vector import Vector

    fake = RecordingVector()
    w = VectorPlayground({"hybrid": fake}, corpus=local_corpus, autorun=False)
    clients = {kind: w._client(kind) for kind in ("dense", "sparse", "hybrid")}
    assert clients["hybrid"] is fake and isinstance(clients["dense"], LocalVector)
    with Vector.from_settings(demo_sandbox.settings, kind="dense") as real:
        assert all(isinstance(c, VectorQueries) for c in (fake, real, *clients.values()))
    w.index_kind = "dense"
    assert w.browse().id.tolist()[0] == "doc-0" and "local index" in w.browse_tab.w_browse_info.value
    w.index_kind = "hybrid"
    assert list(w.browse()["id"]) == ["doc-6", "doc-7"] and "service" in w.browse_tab.w_browse_info.value
    assert w.map_count == 0 and "browse failed" not in w.browse_tab.w_browse_info.value  # no dense vectors: an empty map


# -- explained hits and retrieval evaluation --------------------------------------------------------


def test_explain_tab_explains_every_hit_and_draws_the_chosen_one(playground):
    playground.query("bake sourdough bread at home")
    playground.tabs.selected_index = 5  # opening the Explain tab explains the current query
    table = playground.explainer.explained
    assert table["id"].tolist() == playground.hits["id"].tolist()
    assert (table["recomputed"] == table["score"]).all()
    assert playground.explain_hit == "doc-7"  # the first hit is drawn
    assert "local index" in playground.explainer.w_explain_note.value and "Reciprocal Rank Fusion" in playground.explainer.w_explain_note.value
    assert "1/(60+1) + 1/(60+1)" in playground.explainer.w_explain_formula.value
    assert "bread" in playground.explainer.w_explain_terms.value and "sourdough" in playground.explainer.w_explain_terms.value
    bars = {t.y[0] if t.orientation == "h" and len(t.y) == 1 else "terms": t for t in playground.explainer.explain_fig.data}
    assert bars["dense"].x[0] == pytest.approx(1 / 61) and bars["sparse"].x[0] == pytest.approx(1 / 61)
    assert set(bars["terms"].y) == {"bake", "bread", "home", "sourdough"}
    playground.explainer.w_explain_pick.value = "doc-0"  # a hit only the dense side found
    assert "0 (not among the" in playground.explainer.w_explain_formula.value
    assert "no query term occurs" in playground.explainer.w_explain_terms.value
    playground.controls.w_fusion.value = "DBSF"  # the query re-runs and, on this tab, is explained again
    assert "Distribution-Based Score Fusion" in playground.explainer.w_explain_note.value
    assert "DBSF normalisation bounds" in playground.explainer.w_explain_stats.value
    assert (playground.explainer.explained["recomputed"] == playground.explainer.explained["score"]).all()


def test_explain_over_a_service_client_says_what_was_returned_and_what_was_computed(local_corpus, hybrid):
    w = VectorPlayground({"hybrid": hybrid}, corpus=local_corpus, autorun=False)
    w.query("bake bread")
    table = w.explain()
    assert "service" in w.explainer.w_explain_note.value and "Returned by the service" in w.explainer.w_explain_note.value
    assert table.iloc[0]["id"] == "bread" and table.iloc[0]["recomputed"] == pytest.approx(table.iloc[0]["score"])


def test_evaluate_tab_runs_the_labelled_set_and_shows_a_frame_and_a_plot(playground):
    labelled = pd.DataFrame({"query": ["a cat on a mat", "baking bread", "interest rates at the central bank"],
                             "relevant": [["doc-0"], ["doc-7"], ["doc-4"]]})
    summary = playground.evaluate(labelled, k=3)
    assert summary["configuration"].tolist() == ["dense", "sparse", "hybrid RRF", "hybrid DBSF"]
    assert summary.columns.tolist() == ["configuration", "queries", "recall@3", "MRR", "nDCG@3"]
    assert playground.labelled_name == "given labelled set" and "given labelled set" in playground.evaluator.w_labelled.options
    assert playground.eval_done == playground.eval_total == 4 and playground.evaluator.w_eval_progress.value == 4
    assert not playground.eval_running and not playground.evaluator.w_eval_run.disabled and playground.evaluator.w_eval_cancel.disabled
    assert "done: 12 query runs" in playground.evaluator.w_eval_status.value
    assert "hybrid DBSF" in playground.evaluator.w_eval_table.value
    assert [t.name for t in playground.evaluator.eval_fig.data] == ["dense", "sparse", "hybrid RRF", "hybrid DBSF"]
    assert list(playground.evaluator.eval_fig.data[1].x) == ["recall@3", "MRR", "nDCG@3"]
    assert len(playground.evaluator.eval_per_query) == 12


def test_the_demo_labelled_set_on_a_local_corpus_without_its_ids_says_so(playground):
    assert playground.labelled_name == "demo labelled set"
    assert playground.evaluate().empty  # the tests' corpus holds none of the demo corpus's ids
    assert "no query whose relevant ids are in this index" in playground.evaluator.w_eval_status.value


def test_cancel_stops_a_running_evaluation_in_its_thread(local_corpus):
    import threading

    from svckit._inflight import DEFAULT_IN_FLIGHT

    inside, all_in, release = [], threading.Event(), threading.Event()

    class Slow(RecordingVector):
        def query_data(self, data, **kw):
            inside.append(data)
            if len(inside) == DEFAULT_IN_FLIGHT:
                all_in.set()
            release.wait(30)
            return super().query_data(data, **kw)

        def info(self):
            return super().info().model_copy(update={"index_type": "DENSE"})

    w = VectorPlayground({"dense": Slow()}, corpus=local_corpus, index_kind="dense", autorun=False)
    w.add_labelled_set("a thousand", pd.DataFrame({"query": [f"q{n}" for n in range(1000)],
                                                   "relevant": [["doc-7"]] * 1000}))
    thread = w.start_evaluation()  # ten batches of 100: eight in flight, two waiting
    assert all_in.wait(30) and w.eval_running and not w.evaluator.w_eval_cancel.disabled
    w.evaluator.w_eval_cancel.click()
    release.set()
    thread.join(30)
    assert not w.eval_running and "cancelled after 800 query runs" in w.evaluator.w_eval_status.value
    assert w.eval_done == 8 and w.eval_total == 10 and len(w.evaluator.eval_per_query) == 800


def test_a_query_that_finds_nothing_while_the_index_fills_says_to_search_again(demo_sandbox):
    """A fresh sandbox embeds its demo corpus in the background: a query that finds nothing then
    says why (the index's pendingVectorCount), and says nothing more once nothing is pending."""
    area = demo_sandbox.area("vector")
    w = VectorPlayground.from_settings(demo_sandbox.settings, index_kind="dense", autorun=False)
    w.namespace = "nothing-here"
    area.pending["dense"] = 40
    try:
        w.query("bread")
    finally:
        area.pending["dense"] = 0
    assert w.result_count == 0 and "40 vectors are still being indexed: search again in a moment" in w.status
    w.query("bread")
    assert w.result_count == 0 and "still being indexed" not in w.status
