"""Explained hits for any vector client: why each hit of a text query scored what it scored.

>>> from svckit.vector.explain import explain_hits                     # doctest: +SKIP
>>> ex = explain_hits(client, "read a JSON file", QueryOptions(top_k=5, fusion_algorithm="DBSF"))
>>> frames.explain_frame(ex), frames.explain_terms_frame(ex)          # doctest: +SKIP

The service returns only each hit's final score. So for a client of the service the explanation runs
the query as asked, with the hits' vectors (the hits and the scores to explain, and the hits' sparse
vectors, their BM25 document weights: *returned*), the same text in ``queryMode`` DENSE and SPARSE at
the fused query's candidate depth (each side's ranks and scores, *returned*), all three in one batch
request, one round trip, and recomputes the fusion here with the code the local index fuses with
(:mod:`svckit.core.fusion`), giving ``recomputed`` next to ``score``. The query's terms come from the
same tokenizer the index uses (:mod:`svckit.core.bm25`); with IDF weighting the service does not say
a term's IDF, so the query weights are NaN there. A client that explains its own hits (a
:class:`~svckit.vector.LocalVector`: ``explain_query``, from the index's state, IDF included) is
asked to.

The tokenizer needs the ``local`` extra (snowballstemmer); it is imported on first use, never when
this module is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svckit.core import fusion
from svckit.core.explain import explain_ranked, matched_terms
from svckit.vector.models import QueryOptions
from svckit.vector.queries import VectorQueries

if TYPE_CHECKING:
    from svckit.core.explain import Explanation

#: what a service-side explanation says about where its numbers come from
FROM_SERVICE = (
    "returned by the service: the hits and final scores, each side's ranks and scores "
    "(DENSE / SPARSE queries), the hits' BM25 document weights (their sparse vectors); computed here: "
    "the query's terms and the fusion"
)


def index_kind(client: VectorQueries) -> str:
    """dense, sparse or hybrid, from the index's ``info`` (a local client knows its index's ``kind``)."""
    known = getattr(client, "kind", None)
    if isinstance(known, str):
        return known
    info = client.info()
    if info.index_type:
        return info.index_type.lower()
    if info.dense_index is not None and info.sparse_index is not None:
        return "hybrid"
    return "sparse" if info.sparse_index is not None else "dense"


def explain_hits(
    client: VectorQueries, text: str, options: QueryOptions | None = None, *, kind: str | None = None
) -> Explanation:
    """Explain each hit of ``client.query_data(text, **options)``: dense rank and score, sparse rank
    and score, the matched BM25 terms with their weights, and the fusion's arithmetic.

    ``kind`` (dense / sparse / hybrid) saves an ``info`` request when known: the explanation of a
    service's hits is then one request."""
    opts = options or QueryOptions.model_validate({})
    kind = kind or index_kind(client)
    opts = opts.for_kind(kind)
    explain_own = getattr(client, "explain_query", None)
    if explain_own is not None:  # a LocalVector: from its index's state
        return explain_own(text, opts)
    mode = "DENSE" if kind == "dense" else "SPARSE" if kind == "sparse" else (opts.query_mode or "HYBRID")
    mode = str(mode)
    fused = kind == "hybrid" and mode == "HYBRID"
    dense_side = mode in ("DENSE", "HYBRID") and kind != "sparse"
    sparse_side = mode in ("SPARSE", "HYBRID") and kind != "dense"
    # One request: the query as asked, with the hits' vectors when their BM25 weights are wanted, and,
    # when it fuses two sides, each side alone at the fused query's candidate depth. Unfused, the one
    # side is the query itself.
    asked: dict[str, Any] = {"data": text, "top_k": opts.top_k, "include_vectors": sparse_side}
    if opts.query_mode is not None:
        asked["query_mode"] = opts.query_mode
    depth = fusion.candidate_depth(opts.top_k)
    sides = [{"data": text, "top_k": depth, "query_mode": m} for m in ("DENSE", "SPARSE") if fused]
    answers = _answers(client.query_data(
        [asked, *sides], namespace=opts.namespace, filter=opts.filter,
        weighting_strategy=opts.weighting_strategy, fusion_algorithm=opts.fusion_algorithm), 1 + len(sides))
    hits = answers[0]
    final = [(h.id, h.score) for h in hits]
    side_hits = [[(h.id, h.score) for h in answer] for answer in answers[1:]] if fused else [final, final]
    dense = side_hits[0] if dense_side else None
    sparse_hits = side_hits[1] if sparse_side else None
    weights = {h.id: dict(zip(h.sparse_vector.indices, h.sparse_vector.values))
               for h in hits if h.sparse_vector is not None}
    weighting = opts.weighting_strategy.value if opts.weighting_strategy else None
    # the service does not return a term's IDF: with IDF weighting the query weights are unknown (NaN)
    qweights: dict[int, float] | None = {} if weighting == "IDF" else None

    def terms(hit_id: str) -> list[Any]:
        return matched_terms(text, weights.get(hit_id, {}), qweights)

    from svckit.core.bm25 import tokenize

    return explain_ranked(
        final,
        dense=dense,
        sparse_hits=sparse_hits,
        algorithm=opts.fusion_algorithm.value if opts.fusion_algorithm else None,
        terms=terms,
        query=text,
        kind=kind,
        mode=mode,
        top_k=opts.top_k,
        weighting=weighting,
        source=FROM_SERVICE,
        query_terms=list(dict.fromkeys(tokenize(text))),
    )


def _answers(result: Any, queries: int) -> list[list[Any]]:
    """One list of hits per query sent (query_data answers a single query with one flat list)."""
    return [list(r) for r in result] if queries > 1 else [list(result)]
