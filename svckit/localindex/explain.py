"""Why a hit of a :class:`~svckit.localindex.LocalIndex` scored what it scored, from the index's own
state: the candidate lists from its DENSE and SPARSE queries at the fused query's candidate depth,
and each hit's BM25 statistics (term frequency, document length, ``avgdl``, IDF) from its inverted
index. The arithmetic and the result types are :mod:`svckit.core.explain`, shared with
:func:`svckit.vector.explain.explain_hits` for the service's hits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from svckit.core import bm25, fusion
from svckit.core.explain import Explanation, TermWeight, explain_ranked, matched_terms


def _local_terms(
    index: Any, namespace: str, text: str, weighting: str | None
) -> Callable[[str], list[TermWeight]]:
    """A hit's matched terms from the local index's inverted index (tf, |D|, avgdl, IDF)."""

    def terms(hit_id: str) -> list[TermWeight]:
        with index._lock:
            ns = index._namespace(namespace)
            row = None if ns is None else ns.row_of.get(hit_id)
            if row is None or ns.sparse is None:
                return []
            store = ns.sparse
            dims, values = store.query_vector(text, weighting)
            qweights = dict(zip(dims, values))
            if store.is_fixed(row):  # a sparse vector the client gave: its weights as stored
                return matched_terms(text, dict(zip(*store.vector(row))), qweights)
            tf = store.doc_terms.get(row, {})
            length = store.doc_len.get(row, 0)
            avgdl = store.avgdl
            n_docs = len(store)
            out = []
            for term, word in bm25.typed_words(text).items():
                dim = bm25.term_index(term)
                if dim not in tf:
                    continue
                dw = float(bm25.bm25_weight(float(tf[dim]), float(length), avgdl))
                qw = qweights[dim]
                out.append(
                    TermWeight(
                        term,
                        dim,
                        qw,
                        dw,
                        qw * dw,
                        int(tf[dim]),
                        int(length),
                        # the index knows every term's IDF, weighted query or not
                        bm25.idf(n_docs, store.document_frequency(dim)),
                        word,
                    )
                )
            return sorted(out, key=lambda t: (-t.contribution, t.term))

    return terms


def explain(
    index: Any,
    text: str,
    *,
    top_k: int = 10,
    namespace: str = "",
    filter: str = "",
    weighting_strategy: str | None = None,
    fusion_algorithm: str | None = None,
    query_mode: str | None = None,
) -> Explanation:
    """Explain the hits of a text query on a :class:`~svckit.localindex.LocalIndex`.

    Runs the query itself (the hits and the scores to explain), then each side alone at the candidate
    depth the fused query uses, and reads the BM25 statistics of each hit from the index."""
    kind = index.kind
    mode = "DENSE" if kind == "dense" else "SPARSE" if kind == "sparse" else (query_mode or "HYBRID").upper()
    base: dict[str, Any] = {"data": text, "topK": top_k, "filter": filter}
    if kind != "dense" and weighting_strategy:
        base["weightingStrategy"] = weighting_strategy
    if kind == "hybrid":
        base["queryMode"] = mode
        if fusion_algorithm:
            base["fusionAlgorithm"] = fusion_algorithm
    final = [(h["id"], h["score"]) for h in index.query(base, namespace)]
    fused = kind == "hybrid" and mode == "HYBRID"
    depth = fusion.candidate_depth(top_k) if fused else top_k

    def side(side_mode: str) -> list[tuple[str, float]]:
        body = {**base, "topK": depth}
        if kind == "hybrid":
            body["queryMode"] = side_mode
        return [(h["id"], h["score"]) for h in index.query(body, namespace)]

    dense = side("DENSE") if mode in ("DENSE", "HYBRID") and kind != "sparse" else None
    sparse_hits = side("SPARSE") if mode in ("SPARSE", "HYBRID") and kind != "dense" else None
    weighting = weighting_strategy if kind != "dense" else None
    return explain_ranked(
        final,
        dense=dense,
        sparse_hits=sparse_hits,
        algorithm=fusion_algorithm,
        terms=_local_terms(index, namespace, text, weighting),
        query=text,
        kind=kind,
        mode=mode,
        top_k=top_k,
        weighting=weighting,
        query_terms=list(dict.fromkeys(bm25.tokenize(text))),
    )
