"""The account dashboard's cards as HTML: on its first page a card per resource of the account (what
it is, where, its token masked, each measure a bar against its limit); on the queue account's page
the usage (each measure a bar against its limit) and the limits grouped, beside another plan's. Pure functions of the frames (:mod:`svckit.frames`), so the
live widget and its static view show the same text, and a test reads it without a kernel.

A limit's unit is written once, in its shown value ("100 requests/s", "1.0 MiB", "7 d"), never
beside its label; the wire value and the spec's unit (``max_delay = 604800 s``) are in the row's
tooltip, for whoever compares with the API.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from svckit import frames
from svckit.account.plans import plan_title
from svckit.display import url_html
from svckit.widgets._common import meter_html, muted_html

#: the resources' kinds, in the order the first page shows them (:data:`svckit.frames.RESOURCE_KINDS`,
#: as :func:`svckit.frames.resources_frame` names them), and each kind's heading
KINDS = dict(zip(frames.RESOURCE_KINDS, ("Key-value databases", "Vector indexes", "Search indexes",
                                          "Queue accounts"), strict=True))


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


def _text(value: Any) -> str:
    """A frame's cell as text: "" where it is missing (NA)."""
    return "" if value is None or pd.isna(value) else str(value)


def _detail(label: str, value: str) -> str:
    return f"<tr><td>{html.escape(label)}</td><td colspan='2'>{value}</td></tr>"


def resource_card(resource: pd.Series, usage: pd.DataFrame, error: str = "") -> str:
    """A row of :func:`svckit.frames.resources_frame` and its rows of
    :func:`svckit.frames.resource_usage_frame` as a card: kind and name, plan, region, the endpoint
    (short, the whole URL in its tooltip), the token (already masked by the frame), then a bar per
    measure against its limit with the frame's ``display`` (``12 of 10,000``, ``1.3 MiB``: the unit
    in the value, once; "no limit" where there is none). ``error``: why its usage is missing."""
    endpoint, token = _text(resource.get("endpoint")), _text(resource.get("token"))
    plan = plan_title(_text(resource.get("plan")))
    details = [_detail("plan", html.escape(plan)),
               _detail("region", html.escape(_text(resource.get("region")) or "—")),
               _detail("endpoint", url_html(endpoint) if endpoint else muted_html("none")),
               _detail("token", f"<code class='svc-token'>{html.escape(token)}</code>" if token
                       else muted_html("none"))]
    summary = _text(resource.get("summary"))
    if summary and summary != plan:  # a queue account's summary is its plan's name
        details.append(_detail("details", html.escape(summary)))
    bars = [f"<tr><td>{html.escape(str(r['measure']))}</td><td>{meter_html(_percent(r['share']))}</td>"
            f"<td><b>{html.escape(_text(r['display']) + ('' if _text(r['limit']) else ' (no limit)'))}</b></td></tr>"
            for _, r in usage.iterrows()]
    if error:
        bars.append(f"<tr><td colspan='3'>{muted_html(f'usage not read: {error}')}</td></tr>")
    name = html.escape(_text(resource.get("name")) or _text(resource.get("id")))
    return (f"<div class='svc-card svc-resource' data-id='{html.escape(_text(resource.get('id')))}'>"
            f"<h4>{name} <span class='svc-muted'>{html.escape(str(resource['kind']))}</span></h4>"
            f"<table class='svc-table'>{''.join(details)}{''.join(bars)}</table></div>")


def _percent(share: Any) -> float | None:
    """A frame's share (of 1) as the percent :func:`meter_html` draws; None where there is no limit."""
    return None if share is None or pd.isna(share) else float(share) * 100
