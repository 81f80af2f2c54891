"""The remote bench's vector jobs: 10,000 records (random 384-dimension vectors with metadata and a
line of text) in the index created without a model, and the demo's evaluation slice (333 texts, its
40 labelled queries) in a namespace of the hybrid index.

The peer is upstash-vector's ``Index``, used as its README shows: ``range`` in a cursor loop of 100
records a page, ``fetch`` of the ids in one call, text queries one ``query`` at a time. Where it has
no such job (the evaluation, the explanation, the Browse tab) it makes the same reads that way: its
round trips are what a user writing it by hand would pay.
"""

from __future__ import annotations

import random
from typing import Any

import pandas as pd
from _remote import Ctx, Job

from svckit.core import fusion
from svckit.vector import QueryOptions, Vector
from svckit.vector.evaluation import configurations, demo_evaluation_corpus, demo_labelled_queries, evaluate
from svckit.vector.explain import explain_hits
from svckit.vector.projection import MAP_CAP, SCAN_CAP
from svckit.widgets import VectorPlayground

RECORDS = 10_000
DIMENSION = 384
EVAL_NAMESPACE = "bench-eval"
QUESTION = "read a JSON file and parse it"
PAGE = 100  # the peer README's range page
BROWSE_PAGE = 25  # the Browse tab's table page


def _vector(ctx: Ctx, kind: str, *, direct: bool = False) -> Vector:
    """svckit's client of one index kind, made once per context (the job runs on warm connections)."""
    clients = ctx.connect_direct() if direct else ctx.connect()
    return ctx.peer(f"svckit {kind}{' direct' if direct else ''}",
                    lambda: Vector.from_settings(clients.settings, kind=kind))


def _index(ctx: Ctx, kind: str) -> Any:
    from upstash_vector import Index

    url = ctx.env["SVC_VECTOR_NOMODEL_URL" if kind == "nomodel" else "SVC_VECTOR_HYBRID_URL"]
    return ctx.peer(f"upstash-vector {kind}", lambda: Index(url=url, token=ctx.env["SVC_VECTOR_TOKEN"]))


def seed(ctx: Ctx) -> None:
    raw = _vector(ctx, "nomodel", direct=True)
    raw.reset(all=True)
    rng = random.Random(0)
    ids = [f"rec-{i:05d}" for i in range(RECORDS)]
    for start in range(0, RECORDS, 1000):
        raw.upsert([{"id": rid, "vector": [rng.uniform(-1, 1) for _ in range(DIMENSION)],
                     "metadata": {"group": f"g{i % 7}", "n": i}, "data": f"record {i}"}
                    for i, rid in enumerate(ids[start:start + 1000], start=start)])
    hybrid = _vector(ctx, "hybrid", direct=True)
    corpus = demo_evaluation_corpus()
    for start in range(0, len(corpus), 64):
        hybrid.upsert_data(corpus[start:start + 64], namespace=EVAL_NAMESPACE)
    ctx.data["vector"] = {"ids": ids, "labelled": demo_labelled_queries([item["id"] for item in corpus])}


# -- the jobs ---------------------------------------------------------------------------------


def range_ours(ctx: Ctx) -> None:
    records = list(_vector(ctx, "nomodel").iter_range(include_metadata=True, include_data=True))
    assert len(records) == RECORDS


def range_peer(ctx: Ctx) -> None:
    index, n = _index(ctx, "nomodel"), 0
    res = index.range(cursor="", limit=PAGE, include_vectors=False, include_metadata=True, include_data=True)
    n += len(res.vectors)
    while res.next_cursor != "":
        res = index.range(cursor=res.next_cursor, limit=PAGE, include_vectors=False, include_metadata=True,
                          include_data=True)
        n += len(res.vectors)
    assert n == RECORDS


def fetch_ours(ctx: Ctx) -> None:
    ids = ctx.data["vector"]["ids"]
    assert [r.id for r in _vector(ctx, "nomodel").fetch(ids) if r is not None] == ids


def fetch_peer(ctx: Ctx) -> None:
    ids = ctx.data["vector"]["ids"]
    res = _index(ctx, "nomodel").fetch(ids=ids, include_vectors=False, include_metadata=True,
                                       include_data=True)
    assert [r.id for r in res if r] == ids


def evaluate_ours(ctx: Ctx) -> None:
    labelled = ctx.data["vector"]["labelled"]
    per_query = evaluate(_vector(ctx, "hybrid"), labelled, k=10, kind="hybrid", namespace=EVAL_NAMESPACE,
                         progress=False)
    assert len(per_query) == 4 * len(labelled)


def evaluate_peer(ctx: Ctx) -> None:
    """Each labelled query in each configuration, one ``query`` a request, then the same scoring."""
    from upstash_vector.types import FusionAlgorithm, QueryMode

    index, labelled = _index(ctx, "hybrid"), ctx.data["vector"]["labelled"]
    hits = []
    for config in configurations("hybrid"):
        options: dict[str, Any] = {}
        if config.query_mode:
            options["query_mode"] = QueryMode[config.query_mode.value]
        if config.fusion_algorithm:
            options["fusion_algorithm"] = FusionAlgorithm[config.fusion_algorithm.value]
        for text in labelled["query"]:
            hits.append([h.id for h in index.query(data=text, top_k=10, namespace=EVAL_NAMESPACE, **options)])
    assert len(pd.DataFrame({"retrieved": hits})) == 4 * len(labelled)


def explain_ours(ctx: Ctx) -> None:
    ex = explain_hits(_vector(ctx, "hybrid"), QUESTION, QueryOptions(top_k=10, namespace=EVAL_NAMESPACE),
                      kind="hybrid")
    assert len(ex.hits) == 10


def explain_peer(ctx: Ctx) -> None:
    """The reads an explanation needs: the query, each side alone at the fused query's candidate
    depth, the hits' sparse vectors."""
    from upstash_vector.types import QueryMode

    index, depth = _index(ctx, "hybrid"), fusion.candidate_depth(10)
    hits = index.query(data=QUESTION, top_k=10, namespace=EVAL_NAMESPACE)
    for mode in (QueryMode.DENSE, QueryMode.SPARSE):
        index.query(data=QUESTION, top_k=depth, namespace=EVAL_NAMESPACE, query_mode=mode)
    fetched = index.fetch(ids=[h.id for h in hits], include_vectors=True, namespace=EVAL_NAMESPACE)
    assert len(fetched) == 10


def browse_ours(ctx: Ctx) -> None:
    pg = VectorPlayground({"dense": _vector(ctx, "nomodel")}, index_kind="dense", autorun=False)
    assert len(pg.browse()) == BROWSE_PAGE and pg.map_count == MAP_CAP


def browse_peer(ctx: Ctx) -> None:
    """What the tab shows, read the README's way: the namespaces with their counts, the first page,
    the ids the map samples (pages of 100), then the sample's vectors."""
    index = _index(ctx, "nomodel")
    assert index.info().namespaces[""].vector_count == RECORDS
    page = index.range(cursor="", limit=BROWSE_PAGE, include_metadata=True, include_data=True)
    ids: list[str] = []
    cursor = ""
    while len(ids) < SCAN_CAP:
        res = index.range(cursor=cursor, limit=PAGE)
        ids += [v.id for v in res.vectors]
        cursor = res.next_cursor
        if cursor == "":
            break
    sample = sorted(random.Random(0).sample(ids, MAP_CAP))
    assert len(page.vectors) == BROWSE_PAGE and len(index.fetch(ids=sample, include_vectors=True)) == MAP_CAP


def _one(ctx: Ctx) -> int:
    return 1


JOBS = [
    Job("vector", "iter_range of 10k records", range_ours, _one, range_peer,
        peer_note="README: pages of 100"),
    Job("vector", "fetch of 10k records by id", fetch_ours, _one, fetch_peer),
    Job("vector", "evaluation: 40 queries x 4 modes", evaluate_ours, _one, evaluate_peer,
        peer_note="README: a query a request"),
    Job("vector", "explain a hybrid query's hits", explain_ours, _one, explain_peer),
    # the map samples ids it must list first: two round trips
    Job("vector", "playground Browse: first page + map", browse_ours, lambda ctx: 2, browse_peer,
        peer_note="README: pages of 100"),
]
