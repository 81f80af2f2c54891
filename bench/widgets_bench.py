"""What the widgets cost: the time to build their figures, side by side with plain plotly express, and
the bytes they move to the browser, side by side with the FigureWidget way (an older checkout).

    python bench/widgets_bench.py [--runs 10000] [--vectors 100000] [--repeat 5] [--markdown]
    git worktree add /tmp/widgets-before f7ec550    # the last commit whose charts were FigureWidgets
    python bench/widgets_bench.py --bytes --before /tmp/widgets-before [--markdown]

Figures (the default):

* Timeline: a runs frame of ``--runs`` runs (the shape of ``svckit.frames.runs_frame``: four states,
  a few percent still running) -> ``_plots.runs_gantt_figure`` (one WebGL line trace per state)
  vs ``px.timeline`` (one bar per run, grouped by state).
* Projection: ``--vectors`` 384-dim unit vectors in 20 clusters -> PCA fitted once (timed apart:
  the playground caches it per index) -> ``_plots.projection_figure`` (coloured by similarity to a
  query, hits and query marked) vs ``px.scatter`` of the same frame coloured by the same score.

Each figure is timed twice: built (a ``go.Figure``), and built + serialised to the JSON that goes to
the browser (``fig.to_json()``), since both sides defer work to serialisation differently. Medians of
``--repeat`` runs after one warm-up; the whole run is bounded (about a minute on 2 cores).

Bytes (``--bytes``, in ``bench/widget_bytes.py``): each widget against a demo sandbox, built by this
checkout and by ``--before`` in child processes of the same run: its state at display (every model it
depends on, defaults included, as ``ipywidgets.embed.dependency_state`` gives it), the bytes its comm
sends for one update, and the size of every page ``svckit demo --execute`` writes.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import plotly
import plotly.express as px

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from svckit.vector.projection import fit_projection
from svckit.widgets import _plots

STATES = np.array(["RUN_SUCCESS", "RUN_FAILED", "RUN_STARTED", "RUN_CANCELED"])


def runs_frame(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t0 = 1_795_000_000_000
    created = t0 + np.sort(rng.integers(0, 7 * 86_400_000, n))
    state = STATES[rng.choice(4, n, p=[0.8, 0.1, 0.05, 0.05])]
    completed = created + rng.integers(200, 600_000, n)
    completed = np.where(state == "RUN_STARTED", np.nan, completed.astype(float))
    return pd.DataFrame({
        "workflow_run_id": pd.array([f"wfr_{i:08x}" for i in range(n)], dtype="string"),
        "state": pd.Categorical(state, categories=list(STATES)),
        "created_at": pd.to_datetime(created, unit="ms", utc=True),
        "completed_at": pd.to_datetime(completed, unit="ms", utc=True),
    })


def vectors(n: int, dim: int = 384, clusters: int = 20, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim)).astype(np.float32)
    x = centres[rng.integers(0, clusters, n)] + 0.6 * rng.normal(size=(n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    fn()  # warm-up (imports, validators)
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--vectors", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--markdown", action="store_true", help="print the RESULTS.md section")
    ap.add_argument("--bytes", action="store_true", help="bytes to the browser instead of figure build times")
    ap.add_argument("--before", help="a checkout whose widgets use FigureWidget (with --bytes)")
    args = ap.parse_args(argv)
    if args.bytes:
        from widget_bytes import compare

        if not args.before:
            ap.error("--bytes compares with the FigureWidget way: give --before TREE (see the module)")
        return compare(args.before, markdown=args.markdown)
    rows = []
    now = datetime.now(timezone.utc)

    runs = runs_frame(args.runs)
    px_runs = runs.assign(completed_at=runs["completed_at"].fillna(pd.Timestamp(now)))

    def ours_gantt():
        return _plots.runs_gantt_figure(runs, now=now)

    def px_gantt():
        return px.timeline(px_runs, x_start="created_at", x_end="completed_at", y="workflow_run_id", color="state")

    t_ours, fig_ours = timed(ours_gantt, args.repeat)
    t_px, fig_px = timed(px_gantt, args.repeat)
    tj_ours, js_ours = timed(lambda: ours_gantt().to_json(), args.repeat)
    tj_px, js_px = timed(lambda: px_gantt().to_json(), args.repeat)
    rows.append((f"timeline, {args.runs:,} runs", t_ours, t_px, tj_ours, tj_px, len(js_ours), len(js_px),
                 len(fig_ours.data), len(fig_px.data)))

    vecs = vectors(args.vectors)
    ids = np.array([f"v{i}" for i in range(args.vectors)], dtype=object)
    start = time.perf_counter()
    pm = fit_projection(ids, vecs)
    pca_seconds = time.perf_counter() - start
    query = vecs[0]
    score = pm.matrix @ query
    top = np.argsort(-score)[:10]
    hits = pd.DataFrame({"rank": np.arange(1, 11), "id": ids[top], "score": score[top]})
    frame = pd.DataFrame({"id": ids, "x": pm.coords[:, 0], "y": pm.coords[:, 1], "score": score})

    def ours_proj():
        return _plots.projection_figure(pm.coords, ids=ids, color=score, color_label="similarity", hits=hits,
                                        hit_coords=pm.coords[top], query_coords=pm.transform(query))

    def px_proj():
        return px.scatter(frame, x="x", y="y", color="score", hover_name="id")

    t_ours, fig_ours = timed(ours_proj, args.repeat)
    t_px, fig_px = timed(px_proj, args.repeat)
    tj_ours, js_ours = timed(lambda: ours_proj().to_json(), args.repeat)
    tj_px, js_px = timed(lambda: px_proj().to_json(), args.repeat)
    rows.append((f"projection, {args.vectors:,} vectors", t_ours, t_px, tj_ours, tj_px, len(js_ours), len(js_px),
                 len(fig_ours.data), len(fig_px.data)))

    header = ("| figure | svckit build | px build | ratio | svckit build+JSON | px build+JSON | ratio "
              "| JSON svckit / px | traces svckit / px |")
    lines = [header, "|" + "---|" * 9]
    for what, a, b, c, d, ja, jb, na, nb in rows:
        lines.append(f"| {what} | {a * 1000:.1f} ms | {b * 1000:.1f} ms | {b / a:.1f}x | {c * 1000:.1f} ms "
                     f"| {d * 1000:.1f} ms | {d / c:.1f}x | {ja / 1e6:.2f} MB / {jb / 1e6:.2f} MB | {na} / {nb} |")
    machine = f"{platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}, " \
              f"plotly {plotly.__version__}, pandas {pd.__version__}"
    note = (f"PCA fit of {args.vectors:,} x 384 (randomized SVD, once per index, cached): {pca_seconds:.2f} s. "
            f"Medians of {args.repeat} runs after a warm-up; ratio = plotly express time / svckit time.")
    if args.markdown:
        print(f"`python bench/widgets_bench.py --runs {args.runs} --vectors {args.vectors} --repeat {args.repeat}`, "
              f"{datetime.now(timezone.utc):%Y-%m-%d}, {machine}\n")
    print("\n".join(lines))
    print("\n" + note)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
