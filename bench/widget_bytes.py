"""The bytes svckit's widgets move to the browser, this checkout side by side with another one (the
FigureWidget way). Run by ``python bench/widgets_bench.py --bytes --before TREE``; see its docstring.

Each side runs in a child process that imports svckit from its own tree (``_child.code_env``), starts
a demo sandbox, builds each widget through its public API, and reports (as one JSON line):
- ``display``: the state sent when the widget is displayed, ``dependency_state(drop_defaults=False)``;
- ``update``: every byte the widget's comms send during one public action that redraws it (counted
  by wrapping ``ipywidgets.Widget._send``, which every model, a FigureWidget's too, sends through);
- ``static``: the static view displayed beside the widget (svckit only: the FigureWidget way had none).
Then each side runs ``svckit demo --execute`` and the sizes of the pages (and notebooks) are listed.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _child import code_env

#: widget -> (how it is built, the update measured)
ACTIONS = {
    "KVExplorer": ("KVExplorer(c.kv)", "w.select('greeting')"),
    "AccountDashboard": ("AccountDashboard(c.account, presets=PLAN_PRESETS, page='queue')", "w.compare('queue_enterprise_10m')"),
    "WorkflowTimeline": ("WorkflowTimeline(c.queue)", "w.select_run(w.frame['key'].iloc[0])"),
    "KeyspaceReport": ("KeyspaceReport(c.kv, sample=100)", "w.run(background=False)"),
    "MonitorProfiler": ("MonitorProfiler(c.kv)", "[w.profile.feed(e) for e in TRAFFIC]; w.refresh()"),
    "VectorPlayground": ("VectorPlayground.from_settings(c.settings, query='parse command line options')",
                         "w.query('read a zip file')"),
}


CORPUS = 200  # documents of the demo corpus in the sandbox's vector indexes


def _seeded(sb: Any, timeout: float = 300.0) -> None:
    """Wait for the demo seeding to fill every vector index, so both sides query the same data."""
    import time

    import httpx

    headers = {"Authorization": f"Bearer {sb.env['SVC_VECTOR_TOKEN']}"}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        infos = [httpx.get(f"{sb.url}/vector/{kind}/info", headers=headers).json()["result"]
                 for kind in ("dense", "sparse", "hybrid")]
        if all(i["vectorCount"] >= CORPUS and not i["pendingVectorCount"] for i in infos):
            return
        time.sleep(0.2)
    raise TimeoutError("the demo vectors were not seeded in time")


def measure() -> dict[str, dict[str, int]]:
    """In the child: build each widget, measure it (see the module)."""
    from datetime import datetime, timezone

    import ipywidgets
    from ipywidgets.embed import dependency_state

    from svckit.kv.protocol import MonitorEvent
    from svckit.sandbox import Sandbox
    from svckit.sandbox.plans import PLAN_PRESETS
    import svckit.widgets

    now = datetime.now(timezone.utc)
    traffic = [MonitorEvent(now, 0, "127.0.0.1:1", cmd, [f"shop:{kind}:{i % 7}"]) for i in range(200)
               for cmd, kind in (("GET", "user"), ("INCR", "visits"))]
    sent = [0]
    original = ipywidgets.Widget._send

    def counting(self: Any, msg: Any, buffers: Any = None) -> None:
        sent[0] += len(json.dumps(msg, default=str)) + sum(len(memoryview(b)) for b in buffers or ())
        original(self, msg, buffers)

    ipywidgets.Widget._send = counting  # type: ignore[method-assign]
    out = {}
    with Sandbox(seed="demo", demo_limit=CORPUS) as sb, sb.connect() as c:
        _seeded(sb)
        widgets = {name: getattr(svckit.widgets, name) for name in ACTIONS}  # what the expressions build
        scope = {**widgets, "PLAN_PRESETS": PLAN_PRESETS, "c": c, "TRAFFIC": traffic}
        for name, (build, update) in ACTIONS.items():
            w = eval(build, scope)  # noqa: S307 - the bench's own expressions
            display = len(json.dumps(dependency_state(w, drop_defaults=False), default=str))
            static = len(w.static_html()) if hasattr(w, "static_html") else None
            sent[0] = 0
            exec(update, {**scope, "w": w})  # noqa: S102
            out[name] = {"display": display, "static": static, "update": sent[0]}
            w.close()
    return out


def _side(tree: str | None) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    bench = Path(__file__).resolve().parent
    with code_env(tree) as env, tempfile.TemporaryDirectory(prefix="svckit-pages-") as pages:
        child = subprocess.run([sys.executable, "-c", f"import sys, json; sys.path.insert(0, {str(bench)!r}); "
                                "from widget_bytes import measure; print(json.dumps(measure()))"],
                               env=env, capture_output=True, text=True, check=True)
        widgets = json.loads(child.stdout.strip().splitlines()[-1])
        subprocess.run([sys.executable, "-m", "svckit.cli", "demo", "--execute", "--out", pages], env=env,
                       capture_output=True, check=True)
        sizes = {p.name: p.stat().st_size for p in sorted(Path(pages).iterdir()) if p.suffix in (".html", ".ipynb")}
    return widgets, sizes


def _mb(n: int | None) -> str:
    return "–" if n is None else (f"{n / 1e6:.2f} MB" if n >= 100_000 else f"{n / 1e3:.1f} KB")


def compare(before: str, markdown: bool = False) -> int:
    theirs, their_pages = _side(before)
    ours, our_pages = _side(None)
    lines = ["| widget | display, FigureWidget way | display, svckit (+ static view) | ratio "
             "| update, FigureWidget way | update, svckit | ratio |", "|---|---|---|---|---|---|---|"]
    for name in ACTIONS:
        a, b = theirs[name], ours[name]
        shown = f"{_mb(b['display'])} (+ {_mb(b['static'])})"
        lines.append(f"| {name} | {_mb(a['display'])} | {shown} | {a['display'] / b['display']:.0f}x "
                     f"| {_mb(a['update'])} | {_mb(b['update'])} | {a['update'] / max(b['update'], 1):.1f}x |")
    lines += ["", "| page of `svckit demo --execute` | FigureWidget way | svckit | ratio |", "|---|---|---|---|"]
    for page in sorted(set(their_pages) | set(our_pages)):
        a, b = their_pages.get(page), our_pages.get(page)
        ratio = f"{a / b:.1f}x" if a and b else "–"
        lines.append(f"| {page} | {_mb(a)} | {_mb(b)} | {ratio} |")
    if markdown:
        print(f"`python bench/widgets_bench.py --bytes --before {before}`, {platform.machine()}, "
              f"Python {platform.python_version()}\n")
    print("\n".join(lines))
    print("\nratio = the FigureWidget way / svckit. Update: one public action that redraws the widget "
          "(see bench/widget_bytes.py); a page: HTML, or a notebook saved with its widget state.")
    return 0
