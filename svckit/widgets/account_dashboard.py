"""Account dashboard: the queue account's usage against its limits (today's messages, the DLQ, the
deliveries of the last day by state), its limits grouped, with units; plan and state badges; a chart
comparing them with another plan's presets; rotate-token and upgrade-plan behind a confirmation.

A refresh asks for the record and the usage side by side (one round trip). A service that does not
report usage still shows the record, with a line saying so.

The contract gives no plan's limit values, so the presets to compare with are the caller's:
``AccountDashboard(account, presets=...)``, e.g. the sandbox's ``svckit.sandbox.plans.PLAN_PRESETS``
(what the notebooks pass) or a service's published quotas. Without presets the limits are shown
alone, with no comparison column, chart or compare menu: nothing invented is put beside a real account.

Limits differ by orders of magnitude (3 retries next to 100,000,000 requests a day), so the chart
normalises per limit: each bar is the value as a share of the larger of the two plans' values for
that limit, and the bar's label carries the real value with its unit. A log axis would also work,
but zeros (and booleans) have no place on it and ratios read more directly.

Public methods (``refresh()``, ``compare(plan)``, ``rotate_token()``, ``upgrade(plan)``, and the
``request_*`` variants that go through the confirmation bar) are separate from the handlers, and
state is in traits (``account``, ``usage``, ``compare_plan``, ``token_masked``, ``message``).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit._inflight import InFlight
from svckit.account.client import QueueAccountAdmin
from svckit.account.plans import UPGRADE_PLAN_NAMES
from svckit.errors import SvcError, mask
from svckit.widgets._chart import Chart
from svckit.widgets._common import (
    BADGE_COLORS,
    ConfirmBar,
    MessageBar,
    badge,
    meter_html,
    muted_html,
    style_widget,
)
from svckit.widgets._plots import limits_figure
from svckit.widgets._static import StaticView


def _plain(value: Any) -> str:
    return str(getattr(value, "value", value) or "")


class AccountDashboard(StaticView, W.VBox):
    """``AccountDashboard(account, presets=PLAN_PRESETS)`` with an ``svckit.account.Account`` client
    and, to compare with, plan name -> limit values (``compare_plan`` picks the one shown)."""

    account = T.Any(None, allow_none=True)
    usage = T.Any(None, allow_none=True, help="the account's QueueStats of the last refresh")
    period = T.Unicode("1d", help="the span the deliveries by state are counted over")
    compare_plan = T.Unicode("paid")
    upgrade_plan = T.Unicode("paid")
    token_masked = T.Unicode("")
    message = T.Unicode("")
    message_kind = T.Unicode("info")
    refreshed = T.Int(0, help="how many times the record was loaded")

    def __init__(self, client: QueueAccountAdmin, *, compare_plan: str = "paid",
                 presets: Mapping[str, Mapping[str, Any]] | None = None, autorefresh: bool = True,
                 **traits: Any) -> None:
        self.client = client
        self.presets = dict(presets or {})
        self.limits = pd.DataFrame()
        self.usage_frame = pd.DataFrame()
        self._build()
        super().__init__(self._children(), **traits)
        self.add_class("svc-account-dashboard")
        self.set_trait("compare_plan", compare_plan if compare_plan in self.presets else next(iter(self.presets), ""))
        self.compare_box.value = self.compare_plan or None
        T.link((self, "message"), (self.msg, "message"))
        T.link((self, "message_kind"), (self.msg, "message_kind"))
        self.observe(lambda _c: self._render(), names=["account", "compare_plan"])
        if autorefresh:
            self.refresh()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        self.header = W.HTML()
        self.header.add_class("svc-account-header")
        self.refresh_button = W.Button(description="Refresh", icon="refresh", layout=W.Layout(width="100px"))
        self.compare_box = W.Dropdown(options=list(self.presets), description="Compare with",
                                      style={"description_width": "95px"}, layout=W.Layout(width="320px"))
        self.rotate_button = W.Button(description="Rotate token", icon="key", button_style="warning",
                                      layout=W.Layout(width="130px"))
        if not self.presets:
            self.compare_box.layout.display = "none"
        self.upgrade_box = W.Dropdown(options=list(UPGRADE_PLAN_NAMES), description="Plan", layout=W.Layout(width="260px"),
                                      style={"description_width": "40px"})
        self.upgrade_button = W.Button(description="Upgrade", icon="arrow-up", button_style="primary",
                                       layout=W.Layout(width="110px"))
        self.confirm_bar = ConfirmBar()
        self.msg = MessageBar()
        self.usage_box = W.HTML()
        self.usage_box.add_class("svc-account-usage")
        self.groups_box = W.GridBox(layout=W.Layout(grid_template_columns="repeat(auto-fill, minmax(360px, 1fr))",
                                                    grid_gap="8px", width="100%"))
        self.figure = Chart().add_class("svc-limits-chart")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.compare_box.observe(lambda ch: setattr(self, "compare_plan", ch["new"] or ""), names="value")
        self.upgrade_box.observe(lambda ch: setattr(self, "upgrade_plan", ch["new"] or ""), names="value")
        self.rotate_button.on_click(lambda _b: self.request_rotate())
        self.upgrade_button.on_click(lambda _b: self.request_upgrade(self.upgrade_box.value))

    def _children(self) -> list[W.Widget]:
        toolbar = W.HBox([self.refresh_button, self.compare_box, self.rotate_button, self.upgrade_box,
                          self.upgrade_button],
                         layout=W.Layout(flex_flow="row wrap", align_items="center"))
        # no tabs: a plotly figure drawn inside a hidden tab gets a zero width in the browser
        chart = [self.figure] if self.presets else []
        return [style_widget(), self.header, toolbar, self.confirm_bar, self.msg, self.usage_box, self.groups_box,
                *chart]

    # ------------------------------------------------------------------ actions
    def _say(self, text: str, kind: str = "info") -> None:
        self.msg.say(text, kind)

    def _load_usage(self) -> Any:
        try:
            return self.client.queue_stats(self.period)
        except SvcError as exc:
            return exc

    def refresh(self) -> Any:
        """Load the account record and its usage again (side by side: one round trip)."""
        try:
            with InFlight(limit=2) as flight:
                usage = flight.submit(self._load_usage)
                record = flight.submit(self.client.queue_account)
        except SvcError as exc:
            self._say(f"Loading the queue account failed: {exc}", "error")
            return None
        self.refreshed += 1
        stats = usage.result()
        self.usage = None if isinstance(stats, SvcError) else stats
        if self.account == record.result():
            self._render()  # the record is the same (no change event): the usage may not be
        self.account = record.result()
        note = f" Usage not shown: {stats}" if isinstance(stats, SvcError) else ""
        self._say(f"Loaded at {pd.Timestamp.now(tz='UTC'):%H:%M:%S} UTC (refresh #{self.refreshed}).{note}")
        return self.account

    def compare(self, plan: str) -> pd.DataFrame:
        if plan not in self.presets:
            raise ValueError(f"compare: unknown plan {plan!r}; choose from {', '.join(self.presets)}")
        self.compare_plan = plan
        if self.compare_box.value != plan:
            self.compare_box.value = plan
        return self.limits

    def rotate_token(self) -> str | None:
        """Rotate the queue token now; returns the new token masked (the full value is never shown)."""
        try:
            record = self.client.rotate_queue_token()
        except SvcError as exc:
            self._say(f"Rotating the token failed: {exc}", "error")
            return None
        self.account = record
        self.token_masked = mask(record.token)
        self._say(f"New token {self.token_masked}: the old token and password no longer work; "
                  "give the new ones to your queue clients.", "ok")
        return self.token_masked

    def upgrade(self, plan: str) -> str | None:
        """Move the account to ``plan`` now, then reload the record."""
        customer = getattr(self.account, "customer_id", None)
        if not customer:
            self._say("Load the account first (Refresh).", "error")
            return None
        try:
            reply = self.client.upgrade_queue_plan(customer, plan)
        except (SvcError, ValueError) as exc:
            self._say(f"Upgrading to {plan} failed: {exc}", "error")
            return None
        self.refresh()
        self._say(f"Plan changed to {plan} ({reply}).", "ok")
        return reply

    def request_rotate(self) -> None:
        self.confirm_bar.ask("Rotate the queue token? The current token and password stop working at once.",
                             self.rotate_token, "Rotate")

    def request_upgrade(self, plan: str) -> None:
        self.confirm_bar.ask(f"Change the queue plan to {plan}?", lambda: self.upgrade(plan), "Upgrade")

    # ------------------------------------------------------------------ drawing
    def _render(self) -> None:
        acc = self.account
        if acc is None:
            return
        other = self.presets.get(self.compare_plan) if self.compare_plan else None
        self.limits = frames.account_limits_frame(acc, compare=other)
        self._render_header(acc)
        self._render_usage(acc)
        self._render_groups()
        self._render_chart()

    def _render_header(self, acc: Any) -> None:
        plan = _plain(getattr(acc, "plan", None) or getattr(acc, "reserved_type", "") or getattr(acc, "type", ""))
        state = _plain(getattr(acc, "state", ""))
        if not self.token_masked:
            self.token_masked = mask(getattr(acc, "token", None))
        created = frames.format_limit(getattr(acc, "creation_time", None), "unix s")
        badges = [badge(f"plan: {plan or '?'}", BADGE_COLORS.get(plan, "#4b5563"), title="plan"),
                  badge(f"state: {state or '?'}", BADGE_COLORS.get(state, "#4b5563"), title="account state")]
        if not getattr(acc, "active", True):
            badges.append(badge("inactive", "#dc2626", title="the account is not active"))
        if getattr(acc, "prod_pack_enabled", False):
            badges.append(badge("prod pack", "#0f766e"))
        self.header.value = (
            "<div style='display:flex;align-items:center;gap:12px;flex-wrap:wrap'>"
            "<b style='font:600 16px var(--jp-ui-font-family,sans-serif)'>Queue account</b>"
            f"{''.join(badges)}</div>"
            f"<div class='svc-muted'>customer <b>{html.escape(str(getattr(acc, 'customer_id', '')))}</b> · "
            f"id {html.escape(str(getattr(acc, 'id', '')))} · created {html.escape(created)} · "
            f"token <code class='svc-token'>{html.escape(self.token_masked)}</code></div>"
        )

    def _render_usage(self, acc: Any) -> None:
        if self.usage is None:
            self.usage_frame = pd.DataFrame()
            self.usage_box.value = ""
            return
        self.usage_frame = frames.account_usage_frame(acc, self.usage)
        lines = []
        for _, r in self.usage_frame.iterrows():
            label = r["label"] if pd.notna(r["limit"]) else f"{r['label']} (last {self.period})"
            tip = html.escape(f"limit: {r['limit_field']}") if r["limit_field"] else ""
            lines.append(f"<tr title='{tip}'><td>{html.escape(label)}</td><td>{meter_html(r['share'])}</td>"
                         f"<td><b>{html.escape(r['display'])}</b></td></tr>")
        if len(lines) == 2:
            lines.append(f"<tr><td colspan='3'>{muted_html(f'no messages in the last {self.period}')}</td></tr>")
        self.usage_box.value = (f"<div class='svc-card'><h4>Usage</h4><table class='svc-table'>"
                                f"<tr><th>measure</th><th>of the limit</th><th>used</th></tr>{''.join(lines)}"
                                "</table></div>")

    def _render_groups(self) -> None:
        cards = []
        other = self.compare_plan
        for group, rows in self.limits.groupby("group", observed=True, sort=True):
            lines = []
            for _, r in rows.iterrows():
                cmp_cell = ""
                if "compare_display" in rows:
                    diff = r.get("compare") is not None and r["compare"] != r["value"]
                    style = " style='color:#b45309'" if diff else " class='svc-muted'"
                    cmp_cell = f"<td{style}>{html.escape(str(r['compare_display']))}</td>"
                # the unit is part of the shown value ("500 requests/s", "1.0 MiB", "7 d"); the raw
                # value and its unit are in the tooltip
                tip = html.escape(f"{r['limit']} = {r['value']} {r['unit']}".strip())
                lines.append(f"<tr title='{tip}'><td>{html.escape(r['label'])}</td>"
                             f"<td><b>{html.escape(r['display'])}</b></td>{cmp_cell}</tr>")
            head = "<tr><th>limit</th><th>current</th>" + (
                f"<th>{html.escape(other)}</th>" if other else "") + "</tr>"
            card = (f"<div class='svc-card'><h4>{html.escape(frames.GROUP_TITLES.get(group, group))}</h4>"
                    f"<table class='svc-table'>{head}{''.join(lines)}</table></div>")
            cards.append(W.HTML(card))
        self.groups_box.children = cards

    def _render_chart(self) -> None:
        if "compare" not in self.limits:
            return
        current = _plain(getattr(self.account, "plan", "current"))
        self.figure.show(limits_figure(frames.comparison_frame(self.limits), current=current, other=self.compare_plan))
