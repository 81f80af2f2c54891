"""LocalIndex without HTTP: embeddings against the reference, BM25 and IDF by hand, ANN, persistence."""

from __future__ import annotations

import math
import uuid

import numpy as np
import pytest

from svckit.core import bm25
from svckit.localindex import DenseEmbedder, LocalIndex, load_demo_corpus, packaged_model_path
from svckit.localindex.ann import DenseStore
from tests.conftest import VECTOR_CORPUS as CORPUS

LONG_TEXT = " ".join(
    "The quick brown fox jumps over the lazy dog while the tokenizer counts every word piece." for _ in range(12)
)


# -- embeddings ----------------------------------------------------------------------------------


def test_embeddings_match_sentence_transformers_reference(embedder):
    """The packaged tokenizer.json pads and truncates at a fixed 128 tokens; the reference output of
    the model (SentenceTransformer.encode) truncates at 256 and ignores padding. Ours must match it,
    for short texts and for a text longer than 128 tokens."""
    from sentence_transformers import SentenceTransformer

    reference_model = SentenceTransformer(str(packaged_model_path()), device="cpu")
    n_tokens = len(reference_model.tokenizer(LONG_TEXT)["input_ids"])
    assert 128 < n_tokens, "the long text must be longer than the tokenizer.json truncation"
    texts = ["hello world", "Serialize Python objects to JSON strings.", LONG_TEXT]
    reference = reference_model.encode(texts, convert_to_numpy=True)
    ours = LocalIndex(kind="dense", model=embedder).embed(texts)
    assert ours.shape == (3, 384)
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    # and the 128-token cut would have given a different vector for the long text
    cut = reference_model.tokenizer.decode(reference_model.tokenizer(LONG_TEXT)["input_ids"][1:127])
    assert float(np.dot(reference_model.encode([cut])[0], ours[2])) < 0.9999


def test_identical_text_is_embedded_once(embedder):
    text = f"a sentence that only this run of this test embeds, {uuid.uuid4()}"
    before = embedder.encoded_texts
    first = embedder.embed([text, text])
    again = embedder.embed([text])
    assert embedder.encoded_texts == before + 1
    np.testing.assert_array_equal(first[0], again[0])


def test_embeddings_are_kept_on_disk_across_processes(tmp_path, embedder):
    """A second embedder over the same cache (as in a restarted sandbox) encodes nothing it has seen."""
    texts = [f"kept across restarts {uuid.uuid4()}", "the quick brown fox"]
    first = DenseEmbedder(cache_dir=tmp_path)
    vectors = first.embed(texts)
    assert first.encoded_texts == 2
    second = DenseEmbedder(cache_dir=tmp_path)
    np.testing.assert_array_equal(second.embed(texts), vectors)
    assert second.encoded_texts == 0 and not second.loaded  # the model was not even loaded
    second.embed(texts + ["a text the cache has not seen"])
    assert second.encoded_texts == 1


# -- sparse BM25 -----------------------------------------------------------------------------------


def test_tokenizer_drops_stop_words_and_stems():
    assert bm25.tokenize("The dogs were running to the parks") == ["dog", "run", "park"]
    assert bm25.tokenize("json.dumps serialises_objects") == ["json", "dump", "serialis", "object"]


def test_bm25_document_weights_and_scores_by_hand():
    idx = LocalIndex(kind="sparse")
    docs = {"a": "apple apple banana", "b": "banana cherry cherry cherry date", "c": "apple"}
    idx.upsert_data([{"id": k, "data": v} for k, v in docs.items()])
    lengths = {"a": 3, "b": 5, "c": 1}
    avgdl = sum(lengths.values()) / 3

    def w(f, dl):
        return f * (1.2 + 1) / (f + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))

    (rec_a,) = idx.fetch(["a"], include_vectors=True)
    by_dim = dict(zip(rec_a["sparseVector"]["indices"], rec_a["sparseVector"]["values"]))
    assert by_dim[bm25.term_index("appl")] == pytest.approx(w(2, 3))
    assert by_dim[bm25.term_index("banana")] == pytest.approx(w(1, 3))
    assert rec_a["sparseVector"]["indices"] == sorted(rec_a["sparseVector"]["indices"])

    hits = idx.query({"data": "apple banana", "topK": 5})
    scores = {h["id"]: h["score"] for h in hits}
    assert scores["a"] == pytest.approx(w(2, 3) + w(1, 3))
    assert scores["b"] == pytest.approx(w(1, 5))
    assert scores["c"] == pytest.approx(w(1, 1))
    assert [h["id"] for h in hits] == sorted(scores, key=lambda k: -scores[k])

    # IDF: each query dimension times ln((N - n + 0.5)/(n + 0.5) + 1)
    def idf(n):
        return math.log((3 - n + 0.5) / (n + 0.5) + 1)

    weighted = {h["id"]: h["score"] for h in idx.query({"data": "apple banana", "weightingStrategy": "IDF"})}
    assert weighted["a"] == pytest.approx(idf(2) * w(2, 3) + idf(2) * w(1, 3))
    assert weighted["b"] == pytest.approx(idf(2) * w(1, 5))
    # a document sharing no dimension with the query is not a hit
    assert [h["id"] for h in idx.query({"data": "cherry"})] == ["b"]


# -- dense metrics through the index ---------------------------------------------------------------


@pytest.mark.parametrize("metric", ["COSINE", "EUCLIDEAN", "DOT_PRODUCT"])
def test_dense_scores_are_normalised_per_metric(metric, embedder):
    idx = LocalIndex(kind="dense", metric=metric, model=embedder)
    idx.upsert_data(CORPUS)
    q = idx.embed(["a pet animal"])[0]
    hits = idx.query({"data": "a pet animal", "topK": 8, "includeVectors": True})
    assert len(hits) == 8
    for h in hits:
        v = np.array(h["vector"])
        if metric == "EUCLIDEAN":
            expected = 1 / (1 + float(((v - q) ** 2).sum()))
        elif metric == "COSINE":
            expected = (1 + float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q)))) / 2
        else:
            expected = (1 + float(v @ q)) / 2
        assert h["score"] == pytest.approx(expected, abs=1e-5)
        assert 0 <= h["score"] <= 1
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


# -- ANN --------------------------------------------------------------------------------------------


def test_ann_path_agrees_with_exact_search_and_respects_deletes_and_filters():
    rng = np.random.default_rng(7)
    data = rng.normal(size=(3000, 32)).astype(np.float32)
    store = DenseStore(32, "COSINE", ann_threshold=0)
    store.append(data)
    queries = rng.normal(size=(20, 32)).astype(np.float32)
    recall = []
    for q in queries:
        exact_rows, _exact_scores = store.search(q, 10, exact=True)
        ann_rows, ann_scores = store.search(q, 10, exact=False)
        recall.append(len(set(exact_rows.tolist()) & set(ann_rows.tolist())) / 10)
        assert list(ann_scores) == sorted(ann_scores, reverse=True)
    assert np.mean(recall) >= 0.9
    q = queries[0]
    best = store.search(q, 5, exact=True)[0]
    store.retire(best[:2])
    assert not set(best[:2].tolist()) & set(store.search(q, 10, exact=False)[0].tolist())
    allowed = np.arange(100, 3000, 2)
    rows, _ = store.search(q, 10, allowed, exact=False)
    assert set(rows.tolist()) <= set(allowed.tolist()) and len(rows) == 10


def test_compaction_drops_dead_rows_and_keeps_live_vectors():
    rng = np.random.default_rng(3)
    data = rng.normal(size=(50, 8)).astype(np.float32)
    store = DenseStore(8, "EUCLIDEAN")
    store.append(data)
    store.retire(np.arange(0, 50, 2))
    mapping = store.compact()
    assert store.size == len(store) == 25
    assert mapping[0] == -1 and mapping[1] == 0
    np.testing.assert_array_equal(store.vector(int(mapping[49])), data[49])


def test_deleted_ids_stay_deleted_in_sparse_results():
    idx = LocalIndex(kind="sparse")
    idx.upsert_data([{"id": str(i), "data": f"word{i} common"} for i in range(40)])
    assert idx.delete([str(i) for i in range(0, 40, 2)] + ["nope"]) == 20
    assert len(idx) == 20
    assert [h["id"] for h in idx.query({"data": "word3"})] == ["3"]
    assert idx.query({"data": "word4"}) == []


# -- persistence, namespaces, corpus -----------------------------------------------------------------


def test_persistence_keeps_every_vector(tmp_path, embedder):
    idx = LocalIndex(kind="hybrid", model=embedder, path=tmp_path / "h")
    idx.upsert_data(CORPUS)
    idx.upsert_data({"id": "x", "data": "only in a namespace", "metadata": {"n": 1}}, namespace="ns")
    idx.delete("soup")
    before = idx.query({"data": "baking bread", "topK": 3, "includeVectors": True})
    idx.close()
    again = LocalIndex(kind="hybrid", model=embedder, path=tmp_path / "h")
    assert len(again) == len(CORPUS)  # 8 - soup + x
    assert again.fetch(["soup"]) == [None]
    assert again.fetch(["x"], namespace="ns")[0]["metadata"] == {"n": 1}
    after = again.query({"data": "baking bread", "topK": 3, "includeVectors": True})
    assert [h["id"] for h in after] == [h["id"] for h in before]
    np.testing.assert_allclose(after[0]["vector"], before[0]["vector"], atol=1e-6)
    with pytest.raises(ValueError, match="kind"):
        LocalIndex(kind="dense", model=embedder, path=tmp_path / "h")


def test_demo_corpus_is_real_python_documentation():
    corpus = load_demo_corpus()
    assert len(corpus) > 1000
    ids = [c["id"] for c in corpus]
    assert len(ids) == len(set(ids))
    by_id = {c["id"]: c for c in corpus}
    assert "json" in by_id["json.dumps"]["data"].lower()
    assert any(c["metadata"]["source"] == "pydoc_topics" for c in corpus)
    assert load_demo_corpus(limit=5) == corpus[:5]


def test_dense_matrix_for_projections(embedder):
    idx = LocalIndex(kind="dense", model=embedder)
    idx.upsert_data(CORPUS[:3])
    ids, matrix = idx.dense_matrix()
    assert ids == ["cat", "dog", "eagle"] and matrix.shape == (3, 384)
    assert idx.dense_matrix("nowhere")[1].shape == (0, 384)
