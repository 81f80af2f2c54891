"""What every widget draws with (svckit/widgets/_common.py): tables in the shared units."""

from __future__ import annotations

import pandas as pd

from svckit.widgets._common import frame_html

URL = "http://127.0.0.1:39135/queue/v2/demo/app/api/workflows/nightly"


def test_tables_write_durations_times_and_urls_in_the_shared_units():
    frame = pd.DataFrame({"url": [URL, "http://h/x"],
                          "created_at": pd.to_datetime(["2026-11-26 03:11:04.123", None]).tz_localize("Europe/Berlin"),
                          "duration": [pd.Timedelta(milliseconds=49), pd.NaT],
                          "expires": [pd.Timedelta(seconds=3725), pd.Timedelta(days=7)]})
    html = frame_html(frame)
    assert "<th>created_at (UTC)</th>" in html and "<th>duration</th>" in html
    assert "<td>2026-11-26 02:11:04</td>" in html  # in UTC, to the second
    assert "<td>49 ms</td>" in html and "<td>1 h 02 min</td>" in html and "<td>7 d</td>" in html
    assert f'<td><span title="{URL}">127.0.0.1:39135/…/demo/app/api/workflows/nightly</span></td>' in html
    assert '<td><span title="http://h/x">h/x</span></td>' in html  # a short URL without its scheme
    assert html.count('<span class="svc-muted">—</span>') == 2
