"""Traits with a domain refuse a value outside it at once (``TraitError`` naming the trait and what it
takes), instead of a widget that silently shows nothing or sends a request the service refuses."""

from __future__ import annotations

from typing import Any

import pytest
import traitlets as T

from svckit.widgets._common import MessageBar
from svckit.widgets.deliveries import Deliveries
from svckit.widgets.keyspace_report import KeyspaceReport
from svckit.widgets.kv_explorer.browser import ScanState
from svckit.widgets.kv_explorer.bulk_panel import BulkState
from svckit.widgets.kv_explorer.value_view import ValueState
from svckit.widgets.monitor_profiler import MonitorProfiler
from svckit.widgets.vector_playground.controls import QueryControls, QueryState
from svckit.widgets.vector_playground.evaluate import EvaluateState


def refused(obj: Any, name: str, value: Any) -> str:
    with pytest.raises(T.TraitError) as caught:
        setattr(obj, name, value)
    return str(caught.value)


def test_a_message_is_info_ok_or_error():
    bar = MessageBar()
    bar.say("saved", "ok")
    assert "svc-msg ok" in bar.value
    assert refused(bar, "message_kind", "warning") == \
        "message_kind must be one of 'info', 'ok', 'error', not 'warning'"
    with pytest.raises(T.TraitError):
        bar.say("careful", "warn")


@pytest.mark.parametrize("name", ["count", "scan_all_count", "page_size", "max_steps", "scan_cap"])
def test_the_key_browser_scans_with_counts_above_zero(name):
    state = ScanState()
    assert refused(state, name, 0) == f"{name} must be above 0, not 0"
    setattr(state, name, 5)
    assert getattr(state, name) == 5


def test_the_key_browser_filters_by_a_type_it_knows():
    state = ScanState()
    state.type_filter = "zset"
    assert "must be one of '', 'string', 'hash'" in refused(state, "type_filter", "sorted set")


def test_the_value_view_pages_and_formats_within_its_domain():
    state = ValueState()
    assert refused(state, "value_limit", -1) == "value_limit must be above 0, not -1"
    state.value_format = "json"
    assert "value_format must be one of 'raw'" in refused(state, "value_format", "yaml")


def test_a_bulk_run_takes_a_ttl_and_a_batch_above_zero():
    state = BulkState()
    assert refused(state, "bulk_ttl", 0) == "bulk_ttl must be above 0, not 0"
    assert refused(state, "bulk_batch", 0) == "bulk_batch must be above 0, not 0"


def test_the_playground_asks_for_one_to_a_hundred_hits_and_a_known_weighting():
    state = QueryState()
    assert refused(state, "top_k", 0) == "top_k must be from 1 to 100, not 0"
    assert refused(state, "top_k", 101) == "top_k must be from 1 to 100, not 101"
    assert refused(state, "weighting", "BM25") == "weighting must be one of '', 'IDF', not 'BM25'"
    controls = QueryControls()
    controls.top_k = 100
    assert controls.w_topk.value == 100  # the slider reaches the end of the domain
    assert refused(EvaluateState(), "eval_k", 0) == "eval_k must be above 0, not 0"


class _NoKV:
    """A client the widgets below are built with and never call."""


def test_the_live_widgets_refuse_a_zero_interval_or_count():
    profiler = MonitorProfiler(_NoKV())
    assert refused(profiler, "interval", 0) == "interval must be above 0, not 0.0"
    assert refused(profiler, "top", 0) == "top must be above 0, not 0"
    deliveries = Deliveries(_NoKV(), autorefresh=False)
    assert refused(deliveries, "interval", -1.0) == "interval must be above 0, not -1.0"
    assert refused(deliveries, "count", 0) == "count must be above 0, not 0"
    report = KeyspaceReport(_NoKV())
    assert refused(report, "sample", 0) == "sample must be above 0, not 0"
