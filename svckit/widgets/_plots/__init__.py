"""Figure builders for the widgets: pure functions from DataFrames (and numpy arrays) to
``plotly.graph_objects.Figure``: no widgets, no clients, no I/O. That keeps them unit-testable and lets
``bench/widgets_bench.py`` time them against plain plotly express over the same frames.

Why not plotly express here: express re-groups the frame per colour and validates every column, which
is fine for a few hundred rows but is the dominant cost at 10,000 runs or 100,000 points. These
builders hand plotly numpy arrays directly (plotly ships them as typed arrays), draw one WebGL trace
per colour, and encode bar gaps as NaN in a single line trace instead of one shape per bar.

Every figure uses the ``svckit`` template (:mod:`._base`): plotly_white's look in about 1 KB, where
plotly_white itself adds 7 KB of per-trace-type defaults to every figure a notebook keeps.

* :mod:`.vector`: scores, rank shifts, the projection map, explained hits, retrieval evaluation;
* :mod:`.runs`: the workflow runs' Gantt and a run's steps;
* :mod:`.keyspace`: memory by prefix, TTLs, the live profile;
* :mod:`.account`: the account's limits beside another plan's;
* :mod:`.deliveries`: messages and the states of their deliveries.
"""

from svckit.widgets._plots._base import (
    CONFIG_COLORS,
    MODE_COLORS,
    STATE_COLORS,
    STEP_COLORS,
    TEMPLATE,
    WEBGL_THRESHOLD,
    empty_figure,
)
from svckit.widgets._plots.account import limits_figure
from svckit.widgets._plots.deliveries import deliveries_figure
from svckit.widgets._plots.keyspace import memory_treemap_figure, profile_figure, ttl_histogram_figure
from svckit.widgets._plots.runs import runs_gantt_figure, steps_figure
from svckit.widgets._plots.vector import (
    evaluation_figure,
    explain_figure,
    projection_figure,
    rank_shift_figure,
    score_figure,
)

__all__ = [
    "CONFIG_COLORS",
    "MODE_COLORS",
    "STATE_COLORS",
    "STEP_COLORS",
    "TEMPLATE",
    "WEBGL_THRESHOLD",
    "deliveries_figure",
    "empty_figure",
    "evaluation_figure",
    "explain_figure",
    "limits_figure",
    "memory_treemap_figure",
    "profile_figure",
    "projection_figure",
    "rank_shift_figure",
    "runs_gantt_figure",
    "score_figure",
    "steps_figure",
    "ttl_histogram_figure",
]
