"""Fixtures of the widget tests.

Unit tests use the in-memory fakes of ``fakes.py`` (fast, no sockets) and a small LocalIndex corpus
(the packaged embedding model loads once per session). Tests that must see the real clients at work
use the sandbox family of tests/conftest.py: ``demo_sandbox`` (every area, demo data) and
``demo_kv_sandbox`` (key-value and account areas with the demo data, fresh per module, whose
``clients`` and ``kv`` are below). The KV explorer's and the keyspace report's modules run on one
Redis and on a Redis Cluster (``clients_on_each``). The workflow timeline's tests run on ``timeline_sandbox`` (account
and queue areas, fresh per module) with the workflows of ``timeline_runs.py`` registered (``flows``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from svckit.queue import Queue
from svckit.sandbox import Sandbox
from svckit.widgets.workflow_timeline import WorkflowTimeline
from tests.cluster import local_cluster
from tests.conftest import running
from tests.widgets.timeline_runs import Workflows

CORPUS = [
    ("a cat sat on the warm mat", "pets", 2001),
    ("dogs love to run in the park", "pets", 2003),
    ("the parrot learned to say hello", "pets", 2010),
    ("stock markets fell sharply on friday", "finance", 2008),
    ("the central bank raised interest rates", "finance", 2022),
    ("bond yields climbed after the report", "finance", 2019),
    ("a recipe for tomato soup with basil", "food", 2015),
    ("how to bake sourdough bread at home", "food", 2020),
    ("slow cooked beef stew for winter", "food", 2012),
]


@pytest.fixture(scope="session")
def corpus_items() -> list[dict]:
    return [{"id": f"doc-{i}", "data": text, "metadata": {"genre": genre, "year": year}}
            for i, (text, genre, year) in enumerate(CORPUS)]


@pytest.fixture(scope="session")
def local_corpus(corpus_items):
    """One LocalCorpus for the session: the model and the three small indexes are built once."""
    from svckit.vector.routing import LocalCorpus

    corpus = LocalCorpus(corpus_items)
    for kind in ("dense", "sparse", "hybrid"):
        corpus.index(kind)
    return corpus


@pytest.fixture(scope="module")
def clients(demo_kv_sandbox: Sandbox):
    with demo_kv_sandbox.connect() as c:
        yield c


@pytest.fixture
def kv(clients):
    return clients.kv


@pytest.fixture(scope="session")
def demo_cluster_sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    """Areas A and C with the demo data, area A in front of a Redis Cluster of its own."""
    with local_cluster(tmp_path_factory.mktemp("demo-cluster-nodes")) as cluster, \
            running(tmp_path_factory.mktemp("demo-cluster"), areas=["kv", "account"], seed="demo",
                    redis_url=cluster.url) as sandbox:
        yield sandbox


@pytest.fixture(scope="module", params=["redis-server", "redis-cluster"])
def clients_on_each(request):
    """``clients`` of ``demo_kv_sandbox`` and of ``demo_cluster_sandbox``: a module whose ``clients``
    is this runs once on one Redis and once on a Redis Cluster."""
    name = "demo_kv_sandbox" if request.param == "redis-server" else "demo_cluster_sandbox"
    with request.getfixturevalue(name).connect() as c:
        yield c


@pytest.fixture(scope="module")
def timeline_sandbox(tmp_path_factory) -> Iterator[Sandbox]:
    with running(tmp_path_factory.mktemp("timeline"), areas=["account", "queue"], queue_retry_delay=0) as sb:
        yield sb


@pytest.fixture(scope="module")
def flows(timeline_sandbox: Sandbox) -> Workflows:
    return Workflows(timeline_sandbox.area("queue").runner)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def queue(timeline_sandbox: Sandbox) -> Iterator[Queue]:
    with Queue.from_settings(timeline_sandbox.settings) as q:
        yield q


def timeline(queue, *, run_id: str | None = None, url: str | None = None, label: str | None = None,
             **kw) -> WorkflowTimeline:
    """A timeline whose filters were set the way a user does (typed in, then Load runs)."""
    w = WorkflowTimeline(queue, autoload=False, **kw)
    w.w_run_id.value = run_id or ""
    w.w_url.value = url or ""
    w.w_label.value = label or ""
    w.w_load.click()
    return w
