"""Retrieval evaluation: the figures equal a hand computation on a tiny set (a fake client answering
fixed rankings), and a run over the local index and over the sandbox's hybrid index gives one row
per (configuration, query) and one summary row per configuration."""

from __future__ import annotations

import math
import threading

import pandas as pd
import pytest

from svckit._progress import Progress
from svckit.display import is_marked
from svckit.vector.evaluation import (
    BATCH,
    configurations,
    demo_labelled_queries,
    evaluate,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
    summarize,
)
from svckit.vector.models import IndexInfo, QueryResult
from tests.conftest import VECTOR_CORPUS

# four labelled queries and the ranking the "dense" side returns for each (k = 3)
LABELLED = pd.DataFrame(
    {
        "query": ["q1", "q2", "q3", "q4"],
        "relevant": [["a"], ["a", "b"], "x", ["b", "d", "e"]],  # one id may be given bare
    }
)
DENSE = {"q1": ["a", "b", "c"], "q2": ["c", "a", "d"], "q3": ["a", "b", "c"], "q4": ["d", "c", "b"]}
# by hand, k = 3 (log2(2) = 1, log2(3) = 1.5850, log2(4) = 2):
#   q1: recall 1/1, RR 1/1, DCG 1                 / IDCG 1                   = 1
#   q2: recall 1/2, RR 1/2, DCG 1/1.5850 = 0.6309 / IDCG 1 + 0.6309 = 1.6309 = 0.386853
#   q3: recall 0/1, RR 0,   nDCG 0
#   q4: recall 2/3, RR 1/1, DCG 1 + 1/2 = 1.5     / IDCG 1 + 0.6309 + 0.5 = 2.1309 = 0.703918
HAND = {
    "q1": (1.0, 1.0, 1.0),
    "q2": (0.5, 0.5, 0.386853),
    "q3": (0.0, 0.0, 0.0),
    "q4": (2 / 3, 1.0, 0.703918),
}
HAND_MEAN = {
    "recall@3": (1 + 0.5 + 0 + 2 / 3) / 4,
    "MRR": (1 + 0.5 + 0 + 1) / 4,
    "nDCG@3": (1 + 0.386853 + 0 + 0.703918) / 4,
}


class FixedRankings:
    """A hybrid index that answers each query with a fixed ranking per query mode: DENSE as above,
    SPARSE perfect (the relevant ids first), HYBRID RRF = DENSE reversed, HYBRID DBSF = nothing."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def _ranking(self, text: str, mode, fusion) -> list[str]:
        if mode == "SPARSE":
            rel = LABELLED.set_index("query")["relevant"][text]
            return ([rel] if isinstance(rel, str) else list(rel)) + ["z"]
        if mode == "HYBRID":
            return list(reversed(DENSE[text])) if fusion == "RRF" else []
        return DENSE[text] + ["extra-beyond-k"]

    def query_data(self, data, *, top_k=10, query_mode=None, fusion_algorithm=None, **kw):
        self.calls.append(
            {"data": data, "top_k": top_k, "query_mode": query_mode, "fusion": fusion_algorithm, **kw}
        )
        texts = data if isinstance(data, list) else [data]
        out = [
            [
                QueryResult(id=i, score=1.0 / (n + 1))
                for n, i in enumerate(self._ranking(t, query_mode, fusion_algorithm))
            ]
            for t in texts
        ]
        return out if isinstance(data, list) else out[0]

    def info(self) -> IndexInfo:
        return IndexInfo.model_validate({"vectorCount": 6, "indexType": "HYBRID"})


def test_metrics_are_the_hand_computed_values():
    for q, (recall, rr, ndcg) in HAND.items():
        relevant = LABELLED.set_index("query")["relevant"][q]
        relevant = [relevant] if isinstance(relevant, str) else relevant
        assert recall_at_k(DENSE[q], relevant, 3) == pytest.approx(recall)
        assert reciprocal_rank(DENSE[q], relevant, 3) == pytest.approx(rr)
        assert ndcg_at_k(DENSE[q], relevant, 3) == pytest.approx(ndcg, abs=1e-6)
    assert reciprocal_rank(["x", "y", "a"], ["a"], 2) == 0.0  # beyond k does not count
    assert ndcg_at_k(["a", "b"], ["a", "b", "c", "d"], 2) == 1.0  # the ideal is capped at k
    assert math.isnan(recall_at_k(["a"], [], 3))


def test_evaluate_equals_the_hand_computation_per_query_and_per_configuration():
    client = FixedRankings()
    per_query = evaluate(client, LABELLED, k=3, progress=False)
    # the index kind came from info(): a hybrid index runs every mode and both fusions
    assert per_query.attrs["configurations"] == ["dense", "sparse", "hybrid RRF", "hybrid DBSF"]
    assert len(per_query) == 4 * 4
    dense = per_query[per_query["configuration"] == "dense"].set_index("query")
    for q, (recall, rr, ndcg) in HAND.items():
        assert dense.loc[q, "recall"] == pytest.approx(recall)
        assert dense.loc[q, "reciprocal_rank"] == pytest.approx(rr)
        assert dense.loc[q, "ndcg"] == pytest.approx(ndcg, abs=1e-6)
    assert dense.loc["q4", "retrieved"] == ["d", "c", "b"]  # cut at k
    assert list(dense["found"]) == [1, 1, 0, 2] and list(dense["relevant"]) == [1, 2, 1, 3]
    assert dense["first_relevant_rank"].tolist() == [1, 2, pd.NA, 1]

    summary = summarize(per_query).set_index("configuration")
    assert list(summary.columns) == ["queries", "recall@3", "MRR", "nDCG@3"]
    for metric, value in HAND_MEAN.items():
        assert summary.loc["dense", metric] == pytest.approx(value, abs=1e-6)
    assert summary.loc["sparse"].tolist()[1:] == [1.0, 1.0, 1.0]  # the relevant ids first: perfect
    assert summary.loc["hybrid DBSF"].tolist()[1:] == [0.0, 0.0, 0.0]  # nothing returned
    # reversed rankings: q1 a at 3 -> RR 1/3; q2 a at 2 -> 1/2; q3 0; q4 d at 3, b at 1 -> 1
    assert summary.loc["hybrid RRF", "MRR"] == pytest.approx((1 / 3 + 1 / 2 + 0 + 1) / 4)
    # what was sent: each configuration's options, the texts as one batch, top_k = k (the four
    # requests go side by side, so in any order)
    sent = [(c["query_mode"], c["fusion"], c["data"], c["top_k"]) for c in client.calls]
    assert sorted(sent, key=str) == sorted(
        [
            (m, f, ["q1", "q2", "q3", "q4"], 3)
            for m, f in [("DENSE", None), ("SPARSE", None), ("HYBRID", "RRF"), ("HYBRID", "DBSF")]
        ],
        key=str,
    )


def test_configurations_follow_the_index_kind_and_bad_input_is_refused():
    assert [c.name for c in configurations("dense")] == ["dense"]
    assert [c.name for c in configurations("sparse")] == ["sparse"]
    per_query = evaluate(FixedRankings(), LABELLED, k=3, kind="dense", progress=False)
    assert set(per_query["configuration"]) == {"dense"} and per_query["query_mode"].isna().all()
    assert is_marked(per_query) and is_marked(summarize(per_query))  # displayed readably (svckit.display)
    with pytest.raises(ValueError, match="missing: relevant"):
        evaluate(FixedRankings(), pd.DataFrame({"query": ["q1"]}), progress=False)
    with pytest.raises(ValueError, match="k: 0"):
        evaluate(FixedRankings(), LABELLED, k=0, progress=False)
    empty = LABELLED.assign(relevant=[["a"], [], None, ["b"]])  # unlabelled queries are left out
    assert evaluate(FixedRankings(), empty, k=3, kind="dense", progress=False)["query"].tolist() == [
        "q1",
        "q4",
    ]


def test_cancel_stops_the_batches_not_sent_and_keeps_the_rows_done():
    labelled = pd.DataFrame(
        {
            "query": [f"q{1 + n % 4}" for n in range(BATCH + 5)],
            "relevant": [LABELLED["relevant"][n % 4] for n in range(BATCH + 5)],
        }
    )
    cancel = threading.Event()
    steps = []

    def step(p):
        steps.append((p.phase, p.done, p.total, p.unit))
        cancel.set()  # the user pressed Cancel during the first batch

    # one batch at a time, so the cancel lands before the second is sent: one batch per
    # configuration planned (25 queries, under MAX_BATCH), one done
    per_query = evaluate(
        FixedRankings(), labelled, k=3, kind="hybrid", cancel=cancel, progress=step, in_flight=1
    )
    assert steps == [("evaluate", 1, 4, "batches")]
    assert len(per_query) == BATCH + 5 and per_query.attrs["cancelled"] is True


def test_the_demo_labelled_set_is_built_from_the_demo_corpus():
    from svckit.localindex import load_demo_corpus

    labelled = demo_labelled_queries()
    ids = {item["id"] for item in load_demo_corpus()}
    assert len(labelled) == 40 and labelled.equals(demo_labelled_queries())  # deterministic
    assert all(set(rel) <= ids for rel in labelled["relevant"])
    topics = labelled[labelled["source"] == "topic question"]
    assert len(topics) == 20 and all(len(r) >= 1 for r in topics["relevant"])
    with_statement = topics.set_index("query")["relevant"][
        "how does the with statement use a context manager"
    ]
    assert with_statement and all(
        i.startswith(("topic:with:", "topic:context-managers:")) for i in with_statement
    )
    part = demo_labelled_queries(ids=list(ids)[:0] + ["topic:with:0", "json.dumps"])
    assert list(part["relevant"]) == [["topic:with:0"]]  # queries without a relevant id left are dropped


def test_local_index_run_gives_a_row_per_configuration_and_query():
    from svckit.localindex import LocalIndex
    from svckit.vector import LocalVector

    index = LocalIndex(kind="hybrid")
    index.upsert_data(VECTOR_CORPUS)
    labelled = pd.DataFrame(
        {
            "query": ["purring cat on a mat", "bake bread", "json serialization", "vegetable soup"],
            "relevant": [["cat"], ["bread"], ["json"], ["soup"]],
        }
    )
    per_query = evaluate(LocalVector(index), labelled, k=3, progress=False)
    assert per_query.shape == (16, 12)
    summary = summarize(per_query)
    assert summary["configuration"].tolist() == ["dense", "sparse", "hybrid RRF", "hybrid DBSF"]
    assert (summary["queries"] == 4).all()
    # each query shares a word with its one relevant text, which the sparse side puts first
    assert summary.set_index("configuration").loc["sparse", "MRR"] == 1.0


def test_sandbox_hybrid_index_run(hybrid):
    labelled = pd.DataFrame(
        {
            "query": ["purring cat on a mat", "bake bread", "json serialization", "vegetable soup"],
            "relevant": [["cat"], ["bread"], ["json"], ["soup"]],
        }
    )
    per_query = evaluate(hybrid, labelled, k=10, progress=False)  # kind from the service's info
    assert per_query.shape == (16, 12)
    summary = summarize(per_query)
    assert summary.columns.tolist() == ["configuration", "queries", "recall@10", "MRR", "nDCG@10"]
    assert summary["configuration"].tolist() == ["dense", "sparse", "hybrid RRF", "hybrid DBSF"]
    assert (summary["recall@10"] == 1.0).all()  # 8 texts, k = 10, every relevant text shares a query word
    assert summary.set_index("configuration").loc["sparse", "MRR"] == 1.0


def test_the_demo_evaluation_corpus_holds_every_relevant_text_and_some_distractors():
    from svckit.vector.evaluation import demo_evaluation_corpus

    items = demo_evaluation_corpus(distractors=50)
    ids = [item["id"] for item in items]
    relevant = set().union(*demo_labelled_queries()["relevant"])
    assert relevant <= set(ids) and len(ids) == len(set(ids)) == len(relevant) + 50
    assert demo_labelled_queries(ids).equals(demo_labelled_queries())  # nothing dropped


def test_progress_gets_one_evaluate_step_per_batch():
    seen = []
    evaluate(FixedRankings(), LABELLED, k=3, kind="hybrid", progress=seen.append)
    assert seen == [Progress("evaluate", done, 4, "batches") for done in (1, 2, 3, 4)]  # 4 configurations
