"""The account dashboard's cards as HTML: the usage (each measure a bar against its limit) and the
limits grouped, beside another plan's. Pure functions of the frames (:mod:`svckit.frames`), so the
live widget and its static view show the same text, and a test reads it without a kernel.

A limit's unit is written once, in its shown value ("100 requests/s", "1.0 MiB", "7 d"), never
beside its label; the wire value and the spec's unit (``max_delay = 604800 s``) are in the row's
tooltip, for whoever compares with the API.
"""

from __future__ import annotations

import html

import pandas as pd

from svckit import frames
from svckit.account.plans import plan_title
from svckit.widgets._common import meter_html, muted_html


def usage_card(usage: pd.DataFrame, period: str, note: str = "") -> str:
    """:func:`svckit.frames.account_usage_frame` as a card: a row per measure, its bar (a share of
    the limit) and "used of limit"; measures with no limit (messages by state) count over ``period``.
    ``note`` (muted) says what is not measured."""
    lines = []
    for _, r in usage.iterrows():
        label = r["label"] if pd.notna(r["limit"]) else f"{r['label']} (last {period})"
        tip = html.escape(f"limit: {r['limit_field']}") if r["limit_field"] else ""
        lines.append(f"<tr title='{tip}'><td>{html.escape(label)}</td><td>{meter_html(r['share'])}</td>"
                     f"<td><b>{html.escape(r['display'])}</b></td></tr>")
    if not usage["measure"].str.startswith("events_").any():
        lines.append(f"<tr><td colspan='3'>{muted_html(f'no messages in the last {period}')}</td></tr>")
    if note:
        lines.append(f"<tr><td colspan='3'>{muted_html(note)}</td></tr>")
    return (f"<div class='svc-card'><h4>Usage</h4><table class='svc-table'>"
            f"<tr><th>measure</th><th>of the limit</th><th>used</th></tr>{''.join(lines)}</table></div>")


def limit_cards(limits: pd.DataFrame, current: str, other: str) -> list[str]:
    """:func:`svckit.frames.account_limits_frame` as one card per group: the limit, its value on the
    account (column ``current``, the current plan's name) and, when the frame has them, plan
    ``other``'s values under that plan's display name (amber where they differ)."""
    cards = []
    for group, rows in limits.groupby("group", observed=True, sort=True):
        compared = "compare_display" in rows and bool(other)
        lines = []
        for _, r in rows.iterrows():
            cmp_cell = ""
            if compared:
                diff = r.get("compare") is not None and r["compare"] != r["value"]
                style = " style='color:#b45309'" if diff else " class='svc-muted'"
                cmp_cell = f"<td{style}>{html.escape(str(r['compare_display']))}</td>"
            tip = html.escape(f"{r['limit']} = {r['value']} {r['unit']}".strip())
            lines.append(f"<tr title='{tip}'><td>{html.escape(r['label'])}</td>"
                         f"<td><b>{html.escape(r['display'])}</b></td>{cmp_cell}</tr>")
        head = (f"<tr><th>limit</th><th>{html.escape(current)}</th>"
                + (f"<th title='plan id: {html.escape(other)}'>{html.escape(plan_title(other))}</th>"
                   if compared else "") + "</tr>")
        cards.append(f"<div class='svc-card'><h4>{html.escape(frames.GROUP_TITLES.get(group, group))}</h4>"
                     f"<table class='svc-table'>{head}{''.join(lines)}</table></div>")
    return cards
