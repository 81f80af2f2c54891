"""The demo notebooks leave the shared demo state as they found it, and each says at its top which
service it is connected to. Run headless (nbclient, as ``svckit demo --execute`` runs them) against one
sandbox, one after another, as a reader runs them under ``svckit demo``: the account dashboard and then
the tour, or the workflow timeline twice."""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pytest

from svckit import demo
from svckit.account.plans import plan_title
from svckit.config import SECRET_VARIABLES, vendor_env
from svckit.sandbox import Sandbox
from tests.conftest import Haystack

pytestmark = pytest.mark.slow

#: the label of workflow_timeline.ipynb's own runs
OWN_LABEL = "timeline-notebook"


def execute(name: str, env: dict[str, str], out: Path) -> nbformat.NotebookNode:
    run = demo.execute_notebook(demo.NOTEBOOKS_DIR / name, out, env, timeout=300)
    assert run.ok, run.error
    return nbformat.read(out / name, as_version=4)


def code_cell(nb: nbformat.NotebookNode, containing: str) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.cell_type == "code" and containing in c.source)


def texts(cell: nbformat.NotebookNode) -> str:
    """Every text a cell's outputs show (stream text and each output's text/plain)."""
    return "\n".join(o.get("text") or o.get("data", {}).get("text/plain", "") for o in cell.outputs)


@pytest.mark.timeout(900)
def test_the_account_dashboard_leaves_the_tour_comparing_free_with_paid(tmp_path):
    """The dashboard notebook upgrades and rotates on an account of its own, so the tour run after it
    (on the same sandbox) still shows the shared account on the free plan, compared with paid."""
    with Sandbox(tmp_path / "data", seed="demo", demo_limit=40) as sb:
        env = demo.kernel_env(sb.env, sb.data_dir)
        token = sb.env["SVC_QUEUE_TOKEN"]
        dashboard_nb = execute("account_dashboard.ipynb", env, tmp_path / "out")
        tour = execute("00_tour.ipynb", env, tmp_path / "out")
        record = sb.connect().account.queue_account()
    chart = next(o.data["application/vnd.plotly.v1+json"] for o in code_cell(tour, "AccountDashboard(").outputs
                 if "application/vnd.plotly.v1+json" in o.get("data", {}))
    names = [trace["name"] for trace in chart["data"]]
    assert names == [f"{plan_title('free')} (current plan)", plan_title("paid")], names
    assert record.plan == "free"  # not upgraded
    not_rotated = record.token.get_secret_value() == token  # compared apart: a failure must not print it
    assert not_rotated, "the shared account's queue token was rotated"
    # the upgrade was shown all the same, on the notebook's own account
    assert f"Plan changed to {plan_title('paid')} (OK)." in texts(code_cell(dashboard_nb, "trial.message"))


def seeded_state(sb: Sandbox) -> tuple[list[tuple[str, int, str]], list[str]]:
    """The runs (id, created, state) not of workflow_timeline.ipynb's own label, and every DLQ entry."""
    queue = sb.connect().queue
    runs = sorted((r.workflow_run_id, r.workflow_run_created_at, str(r.workflow_state))
                  for r in queue.iter_runs() if not (r.label or "").startswith(OWN_LABEL))
    return runs, sorted(m.dlq_id for m in queue.iter_dlq())


@pytest.mark.timeout(900)
def test_workflow_timeline_run_all_twice_leaves_the_seeded_runs_and_the_dlq_as_they_were(tmp_path):
    """Each Run All resumes a failed run it started itself and deletes its own DLQ entry at the end:
    the seeded runs keep their states, no run of theirs is added, the DLQ holds what it held."""
    with Sandbox(tmp_path / "data", seed="demo", areas=["queue"]) as sb:
        env = demo.kernel_env(sb.env, sb.data_dir)
        before = seeded_state(sb)
        resumed = []
        for i in range(2):
            nb = execute("workflow_timeline.ipynb", env, tmp_path / f"run{i}")
            said = texts(code_cell(nb, "resume_selected("))
            resumed += re.findall(r"resumed as (\S+)", said)
        after = seeded_state(sb)
        own = {r.workflow_run_id for r in sb.connect().queue.iter_runs(label=OWN_LABEL)}
    assert after == before
    assert len(resumed) == 2 and set(resumed) <= own, (resumed, own)  # each resumed a run of its own
    assert len(before[1]) == 2  # the seeded DLQ entries were there to be taken


@pytest.mark.timeout(600)
@pytest.mark.parametrize("how", ["svckit demo", "vendor variables"])
def test_the_tours_first_cell_says_which_service_and_shows_no_secret(tmp_path, how):
    """The tour's first cell, run in a kernel given the variables as ``svckit demo`` gives them (or
    under the vendor's names): its output names each area's address and where it came from, says
    when it is the embedded sandbox and where its data is, and holds no token or key."""
    tour = nbformat.read(demo.NOTEBOOKS_DIR / demo.TOUR, as_version=4)
    first = next(c for c in tour.cells if c.cell_type == "code")
    path = tmp_path / "first.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(first.source)]), path)
    with Sandbox(tmp_path / "data", seed="demo", areas=["kv", "account", "queue"]) as sb:
        if how == "svckit demo":
            env = demo.kernel_env(sb.env, sb.data_dir)
        else:
            env = demo.kernel_env(vendor_env(sb.env))
        run = demo.execute_notebook(path, tmp_path / "out", env, timeout=300)
        assert run.ok, run.error
        nb = nbformat.read(tmp_path / "out" / path.name, as_version=4)
        secrets = {name: value for name, value in sb.env.items() if name in SECRET_VARIABLES}
        url, data_dir = sb.url, str(sb.data_dir)
    outputs = nb.cells[0].outputs
    assert len(outputs) == 1, f"the first cell shows what it is connected to, in one output: {outputs}"
    [output] = outputs
    shown, text = output.data["text/html"], output.data["text/plain"]
    plain = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", shown)))
    assert f"Key-value {url} " in plain and f"Queue {url} " in plain, plain
    assert "Vector not set" in plain  # an area not configured says so
    if how == "svckit demo":
        assert "Connected to the embedded sandbox" in plain and data_dir in plain
        assert "SVC_KV_URL" in plain and "SVC_QUEUE_URL" in plain
    else:
        # the developer API's URL has no vendor name (the vendor's tools use one fixed address)
        assert "named by the SVC_* and the vendor's variables" in plain and data_dir not in plain
        assert "UPSTASH_REDIS_REST_URL" in plain and "QSTASH_URL" in plain
    assert f"token ***{secrets['SVC_KV_TOKEN'][-4:]}" in plain  # the last four characters at most
    hay = Haystack()
    hay.add("the first cell's HTML", shown)
    hay.add("the first cell's text", text)
    hay.add("the saved notebook", (tmp_path / "out" / path.name).read_text())
    assert hay.leaks(secrets) == []


@pytest.mark.timeout(900)
def test_queue_deliveries_run_all_twice_shows_its_own_messages_and_leaves_the_queue_as_it_was(tmp_path):
    """Each Run All labels its messages with a label of its own (its views show its four messages, not
    the earlier run's), cancels the message still waiting and deletes its DLQ entry at the end."""
    with Sandbox(tmp_path / "data", seed="demo", areas=["queue"]) as sb:
        env = demo.kernel_env(sb.env, sb.data_dir)
        queue = sb.connect().queue
        dlq_before = sorted(m.dlq_id for m in queue.iter_dlq())
        labels, shown = [], []
        for i in range(2):
            nb = execute("queue_deliveries.ipynb", env, tmp_path / f"run{i}")
            labels += re.findall(r"\| label: (\S+) \|", texts(code_cell(nb, "ThreadingHTTPServer")))
            shown.append(texts(code_cell(nb, "view.stop()")))
        dlq_after = sorted(m.dlq_id for m in queue.iter_dlq())
        last_states = {}
        for label in labels:
            for event in reversed(list(queue.iter_events(label=label))):  # oldest first: the last state wins
                last_states[event.message_id] = str(event.state)
    assert dlq_after == dlq_before
    assert len(set(labels)) == 2, labels
    waiting = {m: s for m, s in last_states.items() if s.rsplit(".", 1)[-1] in ("CREATED", "ACTIVE", "RETRY", "ERROR")}
    assert len(last_states) == 8 and waiting == {}, last_states
    assert all(text.count("127.0.0.1") == 4 for text in shown), shown  # each run's view: its four messages
