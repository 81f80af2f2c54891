"""The KeyspaceReport widget against the demo key-value sandbox over real HTTP: a sampled run in its
thread fills the summary, the tables and both figures; the complete toggle; Cancel."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from svckit.kv import KV
from svckit.widgets import KeyspaceReport


@pytest.fixture(scope="module")
def clients(clients_on_each):
    """Every test here on one Redis and on a Redis Cluster (tests/widgets/conftest.py)."""
    return clients_on_each


@pytest.fixture
def many(kv: KV[str]) -> KV[str]:
    """600 more keys under three prefixes (the demo data holds a handful), some with a TTL."""
    pipe = kv.pipeline()
    for i in range(600):
        key = f"{('orders', 'users', 'cache')[i % 3]}:{i % 7}:{i}"
        pipe.set(key, "x" * (i % 50 + 1), ex=600 if i % 3 == 2 else None)
    pipe.exec()
    return kv


def test_a_sampled_run_fills_summary_tables_and_figures(many: KV[str]) -> None:
    kv = many
    total = kv.dbsize()
    assert total > 600
    w = KeyspaceReport(kv, sample=100)
    assert not w.has_report and w.cancel_button.disabled
    w.run()
    assert w.wait(60) and w.has_report and w.message == ""
    report = w.report
    assert report is not None and not report.complete and report.sample_size == 100
    summary = w.summary_view.value
    assert f"100 of {total:,} keys" in summary and "95% interval" in summary
    assert w.progress.value == w.progress.max == 100
    assert w.run_button.disabled is False and w.cancel_button.disabled
    # tables: one row per prefix with its ± column; the TTL buckets
    prefixes = w.table_views["by prefix"].value
    assert "memory ±" in prefixes and report.by_prefix["prefix"].iloc[0] in prefixes
    assert "no expiry" in w.table_views["TTL"].value
    # figures: the treemap has a tile per prefix drawn, the histogram one bar per TTL bucket
    treemap = w.treemap.data[0]
    assert treemap.type == "treemap" and set(report.by_prefix.loc[report.by_prefix["level"] == 1, "prefix"]) <= set(
        treemap.ids)
    bars = w.histogram.data[0]
    assert list(bars.x) == report.ttl["ttl"].astype(str).tolist()
    assert sum(bars.y) == pytest.approx(report.ttl["keys"].sum())


def test_the_complete_toggle_describes_every_key(many: KV[str]) -> None:
    kv = many
    w = KeyspaceReport(kv)
    w.complete_box.value = True  # what a click does
    assert w.complete and w.sample_box.disabled
    w.run(background=False)
    assert w.report is not None and w.report.complete and w.report.sample_size == kv.dbsize()
    assert "Complete pass" in w.summary_view.value and "exact" in w.summary_view.value
    assert "memory ±" not in w.table_views["by prefix"].value  # no error columns on exact figures


class HeldKV:
    """The real client, but DBSIZE waits until the test lets it go: a run that is still going."""

    def __init__(self, kv: KV[str]) -> None:
        self.kv = kv
        self.release = threading.Event()

    def dbsize(self) -> int:
        self.release.wait(30)
        return self.kv.dbsize()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kv, name)


def test_cancel_stops_a_running_pass_and_keeps_the_last_report(kv: KV[str]) -> None:
    held = HeldKV(kv)
    held.release.set()
    w = KeyspaceReport(held, sample=50)
    w.run(background=False)
    first = w.report
    held.release.clear()
    w.run()
    assert w.running and w.cancel_button.disabled is False
    w.cancel_button.click()
    held.release.set()
    assert w.wait(30)
    assert w.report is first and "Cancelled" in w.message_view.value
    assert w.run_button.disabled is False


@pytest.mark.slow
def test_the_report_passes_after_a_test_that_wrote_a_binary_key_on_a_cluster(tmp_path) -> None:
    # The order that once failed: a key-value test wrote b"\xff\r" to the cluster the report's
    # sandbox shared, and the report counted it vanished. Run in that order, in one process.
    root = Path(__file__).resolve().parents[2]
    order = ["tests/kv/test_async_client.py::test_binary_and_resp2_clients[cluster]",
             "tests/widgets/test_keyspace_report.py::test_a_sampled_run_fills_summary_tables_and_figures[redis-cluster]",
             "tests/widgets/test_keyspace_report.py::test_the_complete_toggle_describes_every_key[redis-cluster]"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "-n", "0", f"--basetemp={tmp_path / 'run'}", *order],
                          cwd=root, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0 and "3 passed" in proc.stdout, proc.stdout[-3000:]
