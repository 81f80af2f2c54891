"""No stored text changes the structure of a static view (a saved notebook's, an exported page's): key
names, run ids, labels, URLs and hit ids such as ``<!--<script>``, ``</script>`` or ``]]>`` are escaped
wherever a static view puts them, in its HTML and in the JSON of its charts (``<``, ``>``, ``&`` as
``\\u003c``-style escapes inside ``<script>``), for every static-view builder: each widget of
svckit/widgets whose static view can hold such text, built on hostile data, a chart, and the offline
export of a plain plotly figure; each widget's static view as the export shows it, its charts put
back in place from the chart outputs that follow it. (Deliveries' stored text cannot hold ``<``: destinations are
percent-encoded, labels are letters, digits, ``.``, ``_`` and ``-``.) The same seen by a real
browser: tests/widgets/test_browser_static_escaping.py."""

from __future__ import annotations

import html
import json
import re
import uuid
from datetime import UTC, datetime

import nbformat
import plotly.graph_objects as go
import pytest

from svckit.export import DRAW_SCRIPT, chart_html, offline_notebook
from svckit.kv.protocol import MonitorEvent
from svckit.queue.models import DlqMessage
from svckit.widgets import (
    KeyspaceReport,
    KVExplorer,
    MonitorProfiler,
    VectorPlayground,
    WorkflowTimeline,
)
from svckit.widgets._chart import PLOTLY_MIME
from svckit.widgets._static import script_json
from tests.widgets.fakes import FakeQueue, RecordingVector, make_run

#: stored text that ends or opens an element, a comment or a CDATA section if it reaches a page as is
HOSTILE = ("<!--<script>x", "</script><b>y", "]]><!--z", "a\u2028b&amp;<p>")
#: svckit's own script elements: the charts' JSON and the script that draws them
OWN_SCRIPT = re.compile(r"<script(?: type='application/json')?>")


def assert_structure_intact(page: str, *, expect_in_json: tuple[str, ...] = ()) -> None:
    """Every ``<script`` in ``page`` is one svckit wrote; each JSON script holds no ``<`` at all (so no
    ``<!--``, ``<script`` or ``</script`` a browser would act on) and parses; no comment is opened; no
    hostile text appears unescaped. ``expect_in_json``: texts the charts' JSON must still carry."""
    starts = [m.start() for m in re.finditer(r"<script", page, re.IGNORECASE)]
    for start in starts:
        assert OWN_SCRIPT.match(page, start), page[start:start + 80]
    carried = []
    for m in re.finditer(r"<script type='application/json'>(.*?)</script>", page, re.DOTALL):
        assert "<" not in m.group(1) and ">" not in m.group(1) and "&" not in m.group(1)
        carried.append(json.dumps(json.loads(m.group(1)), ensure_ascii=False))
    assert page.count(DRAW_SCRIPT) + len(carried) == len(starts)  # each script closes where svckit closes it
    assert "<!--" not in page and "]]>" not in page
    for text in HOSTILE:
        assert text not in page
    for text in expect_in_json:
        assert any(text in c for c in carried), f"{text!r} is not in the charts' JSON"


def exported(widget) -> str:
    """The widget's static view as the offline export shows it: its charts drawn in place, from the
    chart outputs that follow the view in a notebook."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("w", outputs=[
        nbformat.from_dict(o) for o in widget.static_outputs()])])
    (view,) = offline_notebook(nb).cells[0].outputs
    return view.data["text/html"]


def test_script_json_escapes_what_could_end_or_open_an_element():
    payload = script_json({"k": list(HOSTILE)})
    assert not set("<>&'") & set(payload) and "\u2028" not in payload
    assert json.loads(payload) == {"k": list(HOSTILE)}  # the same text once parsed


def test_a_chart_and_an_exported_plotly_figure_keep_hostile_text_inside_their_json():
    fig = go.Figure(go.Bar(x=[1, 2], y=list(HOSTILE[:2]), orientation="h", hovertext=list(HOSTILE[2:])))
    fig.update_layout(title=HOSTILE[0])
    figure = json.loads(fig.to_json())
    assert_structure_intact(chart_html(figure, HOSTILE[1], HOSTILE[2]) + DRAW_SCRIPT, expect_in_json=HOSTILE)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("fig", outputs=[
        nbformat.v4.new_output("display_data", data={PLOTLY_MIME: figure})])])
    (out,) = offline_notebook(nb).cells[0].outputs
    assert_structure_intact(out.data["text/html"], expect_in_json=HOSTILE)


@pytest.fixture
def hostile_keys(kv):
    prefix = f"esc{uuid.uuid4().hex[:6]}"
    keys = [f"{text}:{prefix}:{i}" for i, text in enumerate(HOSTILE)]
    for key in keys:
        kv.hset(key, mapping={HOSTILE[0]: HOSTILE[1]})
    yield keys
    kv.delete(*keys)


def test_the_kv_explorer_and_keyspace_report_escape_key_names(kv, hostile_keys):
    own = f"*:{hostile_keys[0].split(':')[-2]}:*"  # the keys are TEXT:PREFIX:I: this test's PREFIX only
    explorer = KVExplorer(kv, pattern=own)
    explorer.scan_all()
    assert set(hostile_keys) <= set(explorer.matches)
    explorer.select(hostile_keys[0])  # its field and value are hostile too
    explorer.run_command(f"HGETALL '{hostile_keys[1]}'")
    assert_structure_intact(exported(explorer))
    report = KeyspaceReport(kv, pattern=own, complete=True)
    report.run(background=False)
    assert_structure_intact(exported(report), expect_in_json=HOSTILE[:1])


def test_the_monitor_profiler_escapes_key_names():
    profiler = MonitorProfiler(None)
    for i, text in enumerate(HOSTILE):
        profiler.profile.feed(MonitorEvent(time=datetime.fromtimestamp(1_700_000_000 + i, UTC), db=0, client="127.0.0.1:1", command="SET",
                                           args=[f"{text}:k", "v"], raw=""))
    profiler.refresh()
    assert profiler.events == len(HOSTILE)
    assert_structure_intact(exported(profiler), expect_in_json=HOSTILE[:1])


def test_the_workflow_timeline_escapes_run_ids_labels_and_urls():
    runs = [make_run(i, state, run_id=f"wfr_{text}", label=text, url=f"http://127.0.0.1:9/{text}")
            for i, (text, state) in enumerate(zip(HOSTILE, ("RUN_SUCCESS", "RUN_FAILED", "RUN_STARTED",
                                                            "RUN_SUCCESS")))]
    failed = runs[1]
    dlq = [DlqMessage(dlq_id="dlq-1", workflow_run_id=failed.workflow_run_id, workflow_url=failed.workflow_url,
                      url=failed.workflow_url, label=failed.label, created_at=failed.workflow_run_created_at,
                      response_status=500, response_body=HOSTILE[0])]
    timeline = WorkflowTimeline(FakeQueue(runs, dlq=dlq))
    timeline.select_run(f"wfr_{HOSTILE[0]}")
    page = exported(timeline)
    assert html.escape(HOSTILE[0]) in page[page.index("svckit-dlq-table"):]  # the DLQ's response body, as text
    assert_structure_intact(page, expect_in_json=(f"wfr_{HOSTILE[0]}",))


class HostileHits(RecordingVector):
    HITS = tuple({"id": text, "score": 0.9 - i / 10, "data": text, "metadata": {text: text}}
                 for i, text in enumerate(HOSTILE))


def test_the_vector_playground_escapes_hit_ids_data_and_metadata():
    playground = VectorPlayground({kind: HostileHits() for kind in ("dense", "sparse", "hybrid")}, autorun=False)
    hits = playground.query(HOSTILE[0])
    assert hits["id"].tolist() == list(HOSTILE)
    assert_structure_intact(exported(playground), expect_in_json=HOSTILE[:1])
