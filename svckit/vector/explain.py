"""Explained hits for any vector client: why each hit of a text query scored what it scored.

>>> from svckit.vector.explain import explain_hits                     # doctest: +SKIP
>>> ex = explain_hits(client, "read a JSON file", QueryOptions(top_k=5, fusion_algorithm="DBSF"))
>>> frames.explain_frame(ex), frames.explain_terms_frame(ex)          # doctest: +SKIP

The service returns only each hit's final score. So for a client of the service the explanation runs
the query as asked (the hits and the scores to explain, *returned*), the same text in ``queryMode``
DENSE and SPARSE at the fused query's candidate depth (each side's ranks and scores, *returned*),
fetches the hits' sparse vectors (the BM25 document weights, *returned*), and recomputes the fusion
here with the local index's own code (:mod:`svckit.localindex.fusion`), giving ``recomputed`` next to
``score``. The query's terms come from the same tokenizer the index uses; with IDF weighting the
service does not say a term's IDF, so the query weights are NaN there. A :class:`LocalVector` is
explained from the index itself (:func:`svckit.localindex.explain.explain`), IDF included.

Needs the ``local`` extra (the tokenizer and the fusion code are the local index's); they are
imported on first use, never when this module is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from svckit.vector.local_client import LocalVector, VectorQueries
from svckit.vector.models import QueryOptions

if TYPE_CHECKING:
    from svckit.localindex.explain import Explanation

#: what a service-side explanation says about where its numbers come from
FROM_SERVICE = (
    "returned by the service: the hits and final scores, each side's ranks and scores "
    "(DENSE / SPARSE queries), the hits' BM25 document weights (fetch); computed here: "
    "the query's terms and the fusion"
)


def index_kind(client: VectorQueries) -> str:
    """dense, sparse or hybrid, from the index's ``info`` (a local client knows its index)."""
    if isinstance(client, LocalVector):
        return str(client.index.kind)
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

    ``kind`` (dense / sparse / hybrid) saves an ``info`` request when known."""
    from svckit.localindex import explain as core
    from svckit.localindex import fusion

    opts = options or QueryOptions.model_validate({})
    kind = kind or index_kind(client)
    opts = opts.for_kind(kind)
    if isinstance(client, LocalVector):
        return core.explain(
            client.index,
            text,
            top_k=opts.top_k,
            namespace=opts.namespace,
            filter=opts.filter,
            weighting_strategy=opts.weighting_strategy,
            fusion_algorithm=opts.fusion_algorithm,
            query_mode=opts.query_mode,
        )
    mode = "DENSE" if kind == "dense" else "SPARSE" if kind == "sparse" else (opts.query_mode or "HYBRID")
    mode = str(mode)
    plain: dict[str, Any] = {
        "top_k": opts.top_k,
        "filter": opts.filter,
        "namespace": opts.namespace,
        "weighting_strategy": opts.weighting_strategy,
        "fusion_algorithm": opts.fusion_algorithm,
        "query_mode": opts.query_mode,
    }
    final = [(h.id, h.score) for h in _one(client.query_data(text, **plain))]
    fused = kind == "hybrid" and mode == "HYBRID"
    depth = fusion.candidate_depth(opts.top_k) if fused else opts.top_k

    def side(side_mode: str) -> list[tuple[str, float]]:
        hybrid_only: dict[str, Any] = {"query_mode": side_mode} if kind == "hybrid" else {}
        return [
            (h.id, h.score) for h in _one(client.query_data(text, **{**plain, "top_k": depth, **hybrid_only}))
        ]

    dense = side("DENSE") if mode in ("DENSE", "HYBRID") and kind != "sparse" else None
    sparse_hits = side("SPARSE") if mode in ("SPARSE", "HYBRID") and kind != "dense" else None
    weights: dict[str, dict[int, float]] = {}
    if sparse_hits is not None and final:
        for record in client.fetch(
            [hid for hid, _ in final],
            namespace=opts.namespace,
            include_metadata=False,
            include_vectors=True,
            include_data=False,
        ):
            if record is not None and record.sparse_vector is not None:
                weights[record.id] = dict(zip(record.sparse_vector.indices, record.sparse_vector.values))
    weighting = opts.weighting_strategy.value if opts.weighting_strategy else None
    # the service does not return a term's IDF: with IDF weighting the query weights are unknown (NaN)
    qweights: dict[int, float] | None = {} if weighting == "IDF" else None

    def terms(hit_id: str) -> list[Any]:
        return core.matched_terms(text, weights.get(hit_id, {}), qweights)

    from svckit.localindex import sparse

    return core.explain_ranked(
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
        query_terms=list(dict.fromkeys(sparse.tokenize(text))),
    )


def _one(result: Any) -> list[Any]:
    """The hits of one query (query_data answers one list for one text)."""
    return list(result)
