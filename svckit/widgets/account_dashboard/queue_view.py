"""The account dashboard's queue account view (what the dashboard was before it listed every
resource): the queue account's usage against its limits first (today's requests, the DLQ,
and, given the queue client, its schedules, queues and URL groups; the deliveries of the last day by
state), as the vendor's console shows it; then its limits grouped, each with its unit written once, in
the value ("7 d", "100 requests/s"); plan and state badges; a chart comparing them with another plan's
presets; rotate-token and a plan change behind a confirmation.

Plans are shown by the names a person reads (``PLAN_TITLES``: "Fixed 1M", not ``queue_enterprise_1m``);
the ids stay the values of the dropdowns and of the API. The plan the account is on is never offered
as a change ("Current plan: Free" says where it is), and a button says "Upgrade" only for a higher tier.

A refresh asks for the record, the usage and the counts side by side (one round trip). The vendor's
usage reply counts requests and the DLQ but not schedules, queues or URL groups: those are the queue
service's own lists (``AccountDashboard(account, queue=...)``). A service that does not report usage
still shows the record, with a line saying so.

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
from typing import Any, Protocol, runtime_checkable

import ipywidgets as W
import pandas as pd
import traitlets as T

from svckit import frames
from svckit._inflight import InFlight
from svckit.account.client import QueueAccountAdmin
from svckit.account.plans import PLAN_NAMES, UPGRADE_PLAN_NAMES, plan_title
from svckit.errors import SvcError, mask
from svckit.widgets._account_cards import limit_cards, usage_card
from svckit.widgets._chart import Chart
from svckit.widgets._common import (
    BADGE_COLORS,
    ConfirmBar,
    MessageBar,
    Quiet,
    badge,
    one_of,
)
from svckit.widgets._jobs import BackgroundJob
from svckit.widgets._plots import limits_figure


def _plain(value: Any) -> str:
    return str(getattr(value, "value", value) or "")


@runtime_checkable
class QueueResources(Protocol):
    """What the usage needs of a queue client to count what the account holds (:class:`svckit.queue.Queue`)."""

    def schedules(self) -> list[Any]: ...
    def queues(self) -> list[Any]: ...
    def url_groups(self) -> list[Any]: ...


def _rank(plan: str) -> int:
    return PLAN_NAMES.index(plan) if plan in PLAN_NAMES else -1


class QueueAccountView(W.VBox):
    """The queue account page of :class:`~svckit.widgets.account_dashboard.AccountDashboard`
    (``AccountDashboard(account, queue=queue, presets=PLAN_PRESETS)`` passes its arguments here), with an ``svckit.account.Account``
    client, optionally the ``svckit.queue.Queue`` client (to count schedules, queues and URL groups
    against their limits) and, to compare with, plan name -> limit values (``compare_plan`` picks the
    one shown; by default the next tier above the account's plan, following the account's plan until
    a plan is picked, so the account is never compared with its own plan unasked)."""

    account = T.Any(None, allow_none=True)
    usage = T.Any(None, allow_none=True, help="the account's QueueStats of the last refresh")
    period = T.Unicode("1d", help="the span the deliveries by state are counted over")
    compare_plan = T.Unicode("paid")
    upgrade_plan = T.Unicode("paid")
    token_masked = T.Unicode("")
    message = T.Unicode("")
    message_kind = T.Unicode("info")
    refreshed = T.Int(0, help="how many times the record was loaded")

    @T.validate("compare_plan")
    def _known_preset(self, proposal: Any) -> str:
        return one_of(proposal, ("", *getattr(self, "presets", ())))

    @T.validate("upgrade_plan")
    def _known_plan(self, proposal: Any) -> str:
        return one_of(proposal, ("", *UPGRADE_PLAN_NAMES))

    def __init__(self, client: QueueAccountAdmin, *, queue: QueueResources | None = None, compare_plan: str | None = None,
                 presets: Mapping[str, Mapping[str, Any]] | None = None, autorefresh: bool = True,
                 **traits: Any) -> None:
        self.client = client
        self.queue = queue
        self.presets = dict(presets or {})
        self.limits = pd.DataFrame()
        self.usage_frame = pd.DataFrame()
        #: schedules, queues, URL groups counted at the last refresh (an error where counting failed)
        self.counts: dict[str, int] | SvcError | None = None
        self._setting_compare = Quiet()  # the dashboard, not a person, sets the compared plan
        self.job = BackgroundJob(name="svckit-queue-account")  # a click's load: off the kernel's thread
        self._build()
        super().__init__(self._children(), **traits)
        self.add_class("svc-queue-account")
        self._compare_auto = compare_plan not in self.presets  # until a plan is picked
        self.set_trait("compare_plan", compare_plan if compare_plan in self.presets else next(iter(self.presets), ""))
        self._show_compare(self.compare_plan)
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
        self.compare_box = W.Dropdown(options=[(plan_title(p), p) for p in self.presets], description="Compare with",
                                      style={"description_width": "95px"}, layout=W.Layout(width="320px"))
        self.rotate_button = W.Button(description="Rotate token", icon="key", button_style="warning",
                                      layout=W.Layout(width="130px"))
        if not self.presets:
            self.compare_box.layout.display = "none"
        self.current_plan_label = W.HTML()
        self.upgrade_box = W.Dropdown(options=[(plan_title(p), p) for p in UPGRADE_PLAN_NAMES], description="Move to",
                                      layout=W.Layout(width="230px"), style={"description_width": "60px"})
        self.upgrade_button = W.Button(description="Upgrade", icon="arrow-up", button_style="primary",
                                       layout=W.Layout(width="120px"))
        self.confirm_bar = ConfirmBar()
        self.msg = MessageBar()
        self.usage_box = W.HTML()
        self.usage_box.add_class("svc-account-usage")
        self.groups_box = W.GridBox(layout=W.Layout(grid_template_columns="repeat(auto-fill, minmax(360px, 1fr))",
                                                    grid_gap="8px", width="100%"))
        self.figure = Chart().add_class("svc-limits-chart")
        self.refresh_button.on_click(lambda _b: self.refresh(background=True))
        self.compare_box.observe(self._compare_picked, names="value")
        self.upgrade_box.observe(lambda ch: setattr(self, "upgrade_plan", ch["new"] or ""), names="value")
        self.upgrade_box.observe(lambda _ch: self._label_upgrade(), names="value")
        self.rotate_button.on_click(lambda _b: self.request_rotate())
        self.upgrade_button.on_click(lambda _b: self.request_upgrade(self.upgrade_box.value))

    def _children(self) -> list[W.Widget]:
        toolbar = W.HBox([self.refresh_button, self.compare_box, self.rotate_button, self.current_plan_label,
                          self.upgrade_box, self.upgrade_button],
                         layout=W.Layout(flex_flow="row wrap", align_items="center"))
        # no tabs: a plotly figure drawn inside a hidden tab gets a zero width in the browser
        chart = [self.figure] if self.presets else []
        return [self.header, toolbar, self.confirm_bar, self.msg, self.usage_box, self.groups_box,
                *chart]

    # ------------------------------------------------------------------ actions
    def _load_usage(self) -> Any:
        try:
            return self.client.queue_stats(self.period)
        except SvcError as exc:
            return exc

    @staticmethod
    def _count(listing: Any) -> int | SvcError:
        try:
            return len(listing())
        except SvcError as exc:
            return exc

    def refresh(self, background: bool = False) -> Any:
        """Load the account record, its usage and what it holds again (side by side: one round trip);
        in a background job with ``background`` (what the Refresh button does). Returns the record
        (None when the load failed, runs in the background, or one is already under way)."""
        if self.job.running:
            return None
        shown: list[Any] = []
        self.job.start(lambda _progress, _cancel: self._read(), on_done=lambda read: shown.append(self._took(read)),
                       background=background)
        return shown[0] if shown else None

    def wait(self, timeout: float | None = 60) -> bool:
        """Wait for a load under way to be shown; True once none is running."""
        return self.job.wait(timeout)

    def _read(self) -> tuple[Any, Any, dict[str, int | SvcError]] | SvcError:
        """The record, the usage and the counts (in the job's thread), or why the record was not read."""
        lists = {} if self.queue is None else {
            "schedules": self.queue.schedules, "queues": self.queue.queues, "url_groups": self.queue.url_groups}
        try:
            with InFlight(limit=2 + len(lists)) as flight:
                usage = flight.submit(self._load_usage)
                counted = {name: flight.submit(self._count, listing) for name, listing in lists.items()}
                record = flight.submit(self.client.queue_account)
            return record.result(), usage.result(), {name: future.result() for name, future in counted.items()}
        except SvcError as exc:
            return exc

    def _took(self, read: tuple[Any, Any, dict[str, int | SvcError]] | SvcError) -> Any:
        """Show what :meth:`_read` read (on the kernel's thread)."""
        if isinstance(read, SvcError):
            self.msg.say(f"Loading the queue account failed: {read}", "error")
            return None
        record, stats, counts = read
        self.refreshed += 1
        failed = next((n for n in counts.values() if isinstance(n, SvcError)), None)
        self.counts = failed or (counts if counts else None)
        self._follow_plan(record)
        self.usage = None if isinstance(stats, SvcError) else stats
        if self.account == record:
            self._render()  # the record is the same (no change event): the usage may not be
        self.account = record
        note = f" Usage not shown: {stats}" if isinstance(stats, SvcError) else ""
        self.msg.say(f"Loaded at {pd.Timestamp.now(tz='UTC'):%H:%M:%S} UTC (refresh #{self.refreshed}).{note}")
        return self.account

    def compare(self, plan: str) -> pd.DataFrame:
        if plan not in self.presets:
            raise ValueError(f"compare: unknown plan {plan!r}; choose from {', '.join(self.presets)}")
        self._compare_auto = False
        self.compare_plan = plan
        if self.compare_box.value != plan:
            self.compare_box.value = plan
        return self.limits

    def rotate_token(self) -> str | None:
        """Rotate the queue token now; returns the new token masked (the full value is never shown)."""
        try:
            record = self.client.rotate_queue_token()
        except SvcError as exc:
            self.msg.say(f"Rotating the token failed: {exc}", "error")
            return None
        self.account = record
        self.token_masked = mask(record.token)
        self.msg.say(f"New token {self.token_masked}: the old token and password no longer work; "
                  "give the new ones to your queue clients.", "ok")
        return self.token_masked

    def upgrade(self, plan: str) -> str | None:
        """Move the account to ``plan`` now, then reload the record. Moving to the plan the account is
        on sends nothing and says so."""
        customer = getattr(self.account, "customer_id", None)
        if not customer:
            self.msg.say("Load the account first (Refresh).", "error")
            return None
        if plan == self._current_plan():
            self.msg.say(f"The account is already on the {plan_title(plan)} plan.")
            return None
        try:
            reply = self.client.upgrade_queue_plan(customer, plan)
        except (SvcError, ValueError) as exc:
            self.msg.say(f"Changing the plan to {plan_title(plan)} failed: {exc}", "error")
            return None
        self.refresh()
        self.msg.say(f"Plan changed to {plan_title(plan)} ({reply}).", "ok")
        return reply

    def request_rotate(self) -> None:
        self.confirm_bar.ask("Rotate the queue token? The current token and password stop working at once.",
                             self.rotate_token, "Rotate")

    def request_upgrade(self, plan: str) -> None:
        self.confirm_bar.ask(f"Change the queue plan to {plan_title(plan)}?", lambda: self.upgrade(plan),
                             self._change_word(plan))

    # ------------------------------------------------------------------ plans
    def _show_compare(self, plan: str) -> None:
        with self._setting_compare:
            self.compare_box.value = plan or None

    def _compare_picked(self, change: Any) -> None:
        if not self._setting_compare:
            self._compare_auto = False  # a person picked: keep it
        self.compare_plan = change["new"] or ""

    def _follow_plan(self, record: Any) -> None:
        """Compare with the next tier above ``record``'s plan (the highest other one on the top plan)."""
        if not self._compare_auto or not self.presets:
            return
        current = _plain(getattr(record, "plan", ""))
        others = [p for p in self.presets if p != current]
        higher = sorted((p for p in others if _rank(p) > _rank(current)), key=_rank)
        pick = higher[0] if higher else max(others, key=_rank, default="")
        if pick and pick != self.compare_plan:
            self._show_compare(pick)

    def _current_plan(self) -> str:
        acc = self.account
        if acc is None:
            return ""
        return _plain(getattr(acc, "plan", None) or getattr(acc, "reserved_type", "") or getattr(acc, "type", ""))

    def _change_word(self, plan: str) -> str:
        """"Upgrade" to a higher tier, "Change plan" otherwise (a lower tier, or one of unknown rank)."""
        return "Upgrade" if _rank(plan) > _rank(self._current_plan()) >= 0 else "Change plan"

    def _label_upgrade(self) -> None:
        plan = self.upgrade_box.value or ""
        self.upgrade_button.description = self._change_word(plan) if plan else "Upgrade"
        self.upgrade_button.icon = "arrow-up" if self.upgrade_button.description == "Upgrade" else "exchange"
        self.upgrade_button.disabled = not plan

    def _render_plan_choice(self) -> None:
        """The plans to move to are every plan but the current one (the nearest higher tier first picked)."""
        current = self._current_plan()
        self.current_plan_label.value = (f"<span class='svc-muted'>Current plan: <b>{html.escape(plan_title(current))}"
                                         "</b></span>")
        targets = [p for p in UPGRADE_PLAN_NAMES if p != current]
        higher = [p for p in targets if _rank(p) > _rank(current)]
        pick = higher[0] if higher else (targets[-1] if targets else None)
        with self.upgrade_box.hold_trait_notifications():
            self.upgrade_box.options = [(plan_title(p), p) for p in targets]
            self.upgrade_box.value = pick
        self._label_upgrade()

    # ------------------------------------------------------------------ drawing
    def _render(self) -> None:
        acc = self.account
        if acc is None:
            return
        other = self.presets.get(self.compare_plan) if self.compare_plan else None
        self.limits = frames.account_limits_frame(acc, compare=other)
        self._render_header(acc)
        self._render_plan_choice()
        self._render_usage(acc)
        self._render_groups()
        self._render_chart()

    def _render_header(self, acc: Any) -> None:
        plan = self._current_plan()
        state = _plain(getattr(acc, "state", ""))
        if not self.token_masked:
            self.token_masked = mask(getattr(acc, "token", None))
        created = frames.format_limit(getattr(acc, "creation_time", None), "unix s")
        badges = [badge(f"plan: {plan_title(plan) if plan else '?'}", BADGE_COLORS.get(plan, "#4b5563"),
                        title=f"plan id: {plan}"),
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
        counts = self.counts if isinstance(self.counts, dict) else None
        self.usage_frame = frames.account_usage_frame(acc, self.usage, counts=counts)
        note = ""
        if counts is None:
            note = "schedules, queues and URL groups are " + (
                f"not counted: {self.counts}" if isinstance(self.counts, SvcError)
                else "counted with the queue client (AccountDashboard(..., queue=...))")
        self.usage_box.value = usage_card(self.usage_frame, self.period, note)

    def _render_groups(self) -> None:
        current = f"{plan_title(self._current_plan())} (current plan)"
        self.groups_box.children = [W.HTML(card) for card in limit_cards(self.limits, current, self.compare_plan)]

    def _render_chart(self) -> None:
        if "compare" not in self.limits:
            return
        current = f"{plan_title(self._current_plan())} (current plan)"
        self.figure.show(limits_figure(frames.comparison_frame(self.limits), current=current,
                                       other=plan_title(self.compare_plan)))
