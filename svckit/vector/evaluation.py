"""Retrieval evaluation: recall@k, MRR and nDCG@k of each query mode and fusion, side by side.

>>> from svckit.vector.evaluation import demo_labelled_queries, evaluate, summarize   # doctest: +SKIP
>>> per_query = evaluate(client, demo_labelled_queries(), k=10)                       # doctest: +SKIP
>>> summarize(per_query)            # one row per configuration: recall@k, MRR, nDCG@k  # doctest: +SKIP

``labelled`` is a DataFrame with a ``query`` column (text) and a ``relevant`` column (the ids that
answer it: a list, or one id). Relevance is binary. For a query with relevant set ``R`` and the ids
``r_1 … r_k`` the configuration returned (best first, at most ``k``):

- recall@k    = |{r_i} ∩ R| / |R|
- RR@k        = 1 / (the rank of the first relevant hit), 0 if none is in the top k; MRR is its mean
- nDCG@k      = DCG / IDCG, with DCG = Σ_{i ≤ k, r_i ∈ R} 1 / log2(i + 1) and IDCG the DCG of the
  ideal ranking, Σ_{i=1}^{min(|R|, k)} 1 / log2(i + 1) (Järvelin & Kekäläinen, binary gains)

A query with no relevant id is left out (its metrics are undefined). The configurations are what the
index kind allows: a dense index runs dense, a sparse one sparse, a hybrid one DENSE, SPARSE and HYBRID
with RRF and with DBSF. Every (configuration, batch of texts) request is independent of the others, so
they go side by side, up to ``in_flight`` at once, and the batches are sized to put the whole run in
flight together (:func:`svckit.vector.protocol.wave_size`), between :data:`BATCH` and
:data:`MAX_BATCH` texts each: the 40 demo queries in 4 configurations are one round trip.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from svckit._inflight import DEFAULT_IN_FLIGHT, InFlight
from svckit._progress import Cancel, ProgressArg, Reporter, is_cancelled
from svckit._units import mark
from svckit.vector.models import FusionAlgorithm, QueryMode
from svckit.vector.protocol import wave_size
from svckit.vector.queries import VectorQueries

#: texts per request: at least BATCH (fewer are not worth a request of their own), at most MAX_BATCH
#: (a request's texts run one after another on the service, so progress and Cancel come at least
#: every few hundred milliseconds of its work)
BATCH = 20
MAX_BATCH = 100


# -- metrics (pure) ----------------------------------------------------------------------------------


def recall_at_k(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int) -> float:
    """Share of the relevant ids found in the first ``k`` results."""
    rel = set(relevant)
    if not rel:
        return math.nan
    return len(rel.intersection(ranked[:k])) / len(rel)


def reciprocal_rank(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int) -> float:
    """``1 / rank`` of the first relevant id within the first ``k`` results (0 if there is none)."""
    rel = set(relevant)
    for rank, item in enumerate(ranked[:k], start=1):
        if item in rel:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int) -> float:
    """Binary-relevance nDCG of the first ``k`` results (see the module docstring)."""
    rel = set(relevant)
    if not rel:
        return math.nan
    dcg = sum(1.0 / math.log2(i + 1) for i, item in enumerate(ranked[:k], start=1) if item in rel)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(rel), k) + 1))
    return dcg / ideal


# -- configurations ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Configuration:
    """One way of running the queries: a name for the tables and the query options it sets."""

    name: str  # dense, sparse, hybrid RRF, hybrid DBSF (on a hybrid index: DENSE / SPARSE modes too)
    query_mode: QueryMode | None = None
    fusion_algorithm: FusionAlgorithm | None = None

    def options(self) -> dict[str, Any]:
        return {"query_mode": self.query_mode, "fusion_algorithm": self.fusion_algorithm}


def configurations(kind: str) -> list[Configuration]:
    """The configurations an index kind allows (dense / sparse: one; hybrid: each mode and fusion)."""
    if kind == "dense":
        return [Configuration("dense")]
    if kind == "sparse":
        return [Configuration("sparse")]
    if kind != "hybrid":
        raise ValueError(f"kind: {kind!r} is not one of dense, sparse, hybrid")
    return [
        Configuration("dense", QueryMode.DENSE),
        Configuration("sparse", QueryMode.SPARSE),
        Configuration("hybrid RRF", QueryMode.HYBRID, FusionAlgorithm.RRF),
        Configuration("hybrid DBSF", QueryMode.HYBRID, FusionAlgorithm.DBSF),
    ]


def _relevant(value: Any) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def check_labelled(labelled: pd.DataFrame) -> pd.DataFrame:
    """The labelled set with ``relevant`` as a list of ids per query; queries with none are dropped."""
    missing = {"query", "relevant"} - set(labelled.columns)
    if missing:
        raise ValueError(
            f"labelled: the DataFrame needs the columns query and relevant (missing: "
            f"{', '.join(sorted(missing))})"
        )
    out = pd.DataFrame(
        {
            "query": labelled["query"].astype(str).tolist(),
            "relevant": [_relevant(v) for v in labelled["relevant"]],
        }
    )
    return out[out["relevant"].map(len) > 0].reset_index(drop=True)


PER_QUERY_COLUMNS = (
    "configuration",
    "query_mode",
    "fusion",
    "query_index",
    "query",
    "relevant",
    "retrieved",
    "found",
    "first_relevant_rank",
    "recall",
    "reciprocal_rank",
    "ndcg",
)


def evaluate(
    client: VectorQueries,
    labelled: pd.DataFrame,
    *,
    k: int = 10,
    kind: str | None = None,
    configs: Sequence[Configuration] | None = None,
    namespace: str = "",
    filter: str = "",
    weighting_strategy: str | None = None,
    progress: ProgressArg = True,
    cancel: Cancel = None,
    in_flight: int = DEFAULT_IN_FLIGHT,
) -> pd.DataFrame:
    """Run every labelled query in every configuration the index allows and score the top ``k``.

    Returns one row per (configuration, query): ``configuration, query_mode, fusion, query_index,
    query, relevant`` (how many ids are relevant), ``retrieved`` (the ids returned), ``found``
    (relevant ids in the top k), ``first_relevant_rank`` (NA if none), ``recall, reciprocal_rank,
    ndcg``; :func:`summarize` averages them. ``kind`` saves an ``info`` request when known. The
    batches go ``in_flight`` at a time (see the module). ``cancel`` (an Event, or a callable
    returning True) stops the batches not sent yet, returning the rows of those answered
    (``frame.attrs["cancelled"]`` is then True). ``progress`` (:mod:`svckit._progress`: a tqdm bar,
    nothing, or a hook called with a ``Progress``) reports phase ``"evaluate"``, ``done`` of
    ``total`` batches, unit ``"batches"``."""
    if k < 1:
        raise ValueError(f"k: {k} must be at least 1")
    from svckit.vector.explain import index_kind

    labels = check_labelled(labelled)
    configs = list(configs) if configs is not None else configurations(kind or index_kind(client))
    texts = labels["query"].tolist()
    size = wave_size(len(texts), max(1, in_flight // max(len(configs), 1)), BATCH, MAX_BATCH)
    batches = [(c, start) for c in configs for start in range(0, len(texts), size)]
    rows: list[dict[str, Any]] = []
    done = 0

    def ask(config: Configuration, start: int) -> list[Any] | None:
        if is_cancelled(cancel):
            return None  # cancelled before this batch was sent
        chunk = texts[start : start + size]
        answer = client.query_data(chunk if len(chunk) > 1 else chunk[0], top_k=k, namespace=namespace,
                                   filter=filter, weighting_strategy=weighting_strategy, **config.options())
        return list(answer) if len(chunk) > 1 else [answer]

    with Reporter(progress) as report, InFlight(in_flight) as flight:
        def take(config: Configuration, start: int, results: list[Any] | None) -> None:
            nonlocal done
            if results is not None:
                rows.extend(_scored(config, start, results, labels, k))
                done += 1
                report("evaluate", done, len(batches), unit="batches")

        for config, start in batches:
            if is_cancelled(cancel):
                break
            flight.submit(ask, config, start, then=functools.partial(take, config, start))
    frame = pd.DataFrame(rows, columns=list(PER_QUERY_COLUMNS))
    frame = frame.astype(
        {
            "configuration": "string",
            "query_mode": "string",
            "fusion": "string",
            "query_index": "int64",
            "query": "string",
            "relevant": "int64",
            "found": "int64",
            "first_relevant_rank": "Int64",
            "recall": "float64",
            "reciprocal_rank": "float64",
            "ndcg": "float64",
        }
    )
    frame.attrs.update(k=k, cancelled=done < len(batches), configurations=[c.name for c in configs])
    # displayed readably (svckit.display), the metrics as the playground writes scores;
    # summarize() copies the mark with the attrs
    return mark(frame, relevant="count", found="count", recall="score", reciprocal_rank="score", ndcg="score")


def _scored(config: Configuration, start: int, results: list[Any], labels: pd.DataFrame,
            k: int) -> list[dict[str, Any]]:
    """The per-query rows of one batch: the queries from ``start`` on and the hits of each."""
    rows = []
    for offset, hits in enumerate(results):
        qi = start + offset
        ranked = [h.id for h in hits]
        rel = set(labels["relevant"][qi])
        first = next((r for r, hid in enumerate(ranked[:k], start=1) if hid in rel), None)
        rows.append(
            {
                "configuration": config.name,
                "query_mode": None if config.query_mode is None else config.query_mode.value,
                "fusion": None if config.fusion_algorithm is None else config.fusion_algorithm.value,
                "query_index": qi,
                "query": labels["query"][qi],
                "relevant": len(rel),
                "retrieved": ranked[:k],
                "found": len(rel.intersection(ranked[:k])),
                "first_relevant_rank": first,
                "recall": recall_at_k(ranked, rel, k),
                "reciprocal_rank": reciprocal_rank(ranked, rel, k),
                "ndcg": ndcg_at_k(ranked, rel, k),
            }
        )
    return rows


def summarize(per_query: pd.DataFrame) -> pd.DataFrame:
    """The mean of each metric per configuration, in the order they ran: ``configuration, queries,
    recall@k, MRR, nDCG@k`` (``k`` from the per-query frame)."""
    k = per_query.attrs.get("k", "k")
    order = list(dict.fromkeys(per_query["configuration"].tolist()))
    grouped = per_query.groupby("configuration", sort=False)
    out = pd.DataFrame(
        {
            "configuration": pd.array(order, dtype="string"),
            "queries": pd.array([int(grouped.size()[c]) for c in order], dtype="int64"),
            f"recall@{k}": [float(grouped["recall"].mean()[c]) for c in order],
            "MRR": [float(grouped["reciprocal_rank"].mean()[c]) for c in order],
            f"nDCG@{k}": [float(grouped["ndcg"].mean()[c]) for c in order],
        }
    )
    out.attrs.update(per_query.attrs)
    return mark(out, queries="count", **{f"recall@{k}": "score", "MRR": "score", f"nDCG@{k}": "score"})


# -- the demo labelled set ---------------------------------------------------------------------------

#: hand-written questions about the language reference, each answered by every passage of the named
#: pydoc topics (none of the questions is copied from the passages)
TOPIC_QUESTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("how does the with statement use a context manager", ("with", "context-managers")),
    ("catching an exception and running cleanup code", ("try", "exceptions")),
    ("format specification mini-language for f-strings", ("formatstrings",)),
    ("split, join and strip methods of text strings", ("string-methods",)),
    ("importing a module from a package", ("import",)),
    ("define a function with default parameter values", ("function",)),
    ("class definition and base classes", ("class",)),
    ("loop over the items of a sequence", ("for",)),
    ("chained comparison operators such as a < b < c", ("comparisons",)),
    ("dictionary mapping type and its methods", ("typesmapping", "dict")),
    ("generator functions that yield values", ("yield",)),
    ("coroutines declared with async def and awaited", ("async", "await")),
    ("unpacking a tuple in an assignment statement", ("assignment", "augassign")),
    ("commands of the interactive debugger", ("debugger",)),
    ("anonymous functions written inline", ("lambda",)),
    ("declare that a name refers to an enclosing or module scope", ("global", "nonlocal")),
    ("raise an exception with a cause", ("raise",)),
    ("which objects count as false in an if test", ("truth", "booleans")),
    ("append, insert and remove on a mutable sequence", ("typesseq-mutable",)),
    ("special methods that emulate numeric types", ("numeric-types",)),
)

DOCSTRING_STRIDE = 25  # every 25th docstring summary becomes a query


def demo_labelled_queries(ids: Iterable[str] | None = None) -> pd.DataFrame:
    """The demo's labelled set, built deterministically from the demo corpus
    (:func:`svckit.core.corpus.load_demo_corpus`): ``query, relevant, source``.

    Two kinds of query: the :data:`TOPIC_QUESTIONS`, whose relevant ids are every passage of their
    language-reference topics, and every :data:`DOCSTRING_STRIDE`-th docstring summary line
    (:func:`svckit.core.corpus.docstring_pairs`), whose one relevant id is that docstring. ``ids``
    (the ids an index holds) keeps only relevant ids among them, dropping queries left with none,
    for an index holding part of the corpus."""
    from svckit.core.corpus import docstring_pairs, load_demo_corpus

    corpus = load_demo_corpus()
    keep = None if ids is None else set(ids)
    by_topic: dict[str, list[str]] = {}
    for item in corpus:
        topic = item["metadata"].get("topic")
        if topic is not None:
            by_topic.setdefault(topic, []).append(item["id"])
    rows = []
    for question, topics in TOPIC_QUESTIONS:
        rows.append((question, [i for t in topics for i in by_topic.get(t, [])], "topic question"))
    rows += [
        (summary, [pid], "docstring summary") for pid, summary, _ in docstring_pairs()[::DOCSTRING_STRIDE]
    ]
    if keep is not None:
        rows = [(q, [i for i in rel if i in keep], src) for q, rel, src in rows]
    rows = [r for r in rows if r[1]]
    return mark(pd.DataFrame(  # displayed readably: the relevant ids as JSON, not a Python list
        {
            "query": pd.array([r[0] for r in rows], dtype="string"),
            "relevant": [r[1] for r in rows],
            "source": pd.array([r[2] for r in rows], dtype="string"),
        }
    ))


def demo_evaluation_corpus(distractors: int = 150) -> list[dict[str, Any]]:
    """A small slice of the demo corpus for a quick evaluation: every text relevant to a query of
    :func:`demo_labelled_queries` plus ``distractors`` others spread evenly over the rest (so a
    notebook embeds a few hundred texts, not all of them)."""
    from svckit.core.corpus import load_demo_corpus

    corpus = load_demo_corpus()
    relevant = set().union(*demo_labelled_queries()["relevant"])
    others = [item for item in corpus if item["id"] not in relevant]
    step = max(1, len(others) // max(distractors, 1))
    keep = {item["id"] for item in others[::step][:distractors]} | relevant
    return [item for item in corpus if item["id"] in keep]
