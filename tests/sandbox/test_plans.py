"""The sandbox's plan presets tell a true story: a higher tier never has a lower limit."""

from __future__ import annotations

import itertools

import pytest

from svckit.account.plans import LIMIT_FIELDS, SET_PLAN_NAMES, UPGRADE_PLAN_NAMES
from svckit.sandbox.plans import PLAN_ORDER, PLAN_PRESETS

TIERS = list(itertools.pairwise(PLAN_ORDER))


def test_the_order_names_every_preset_once_free_first_then_the_upgrade_targets():
    assert PLAN_ORDER[:len(UPGRADE_PLAN_NAMES) + 1] == ("free", *UPGRADE_PLAN_NAMES)
    # then the plans only the vendor's set-plan reaches (Fixed 100M)
    assert PLAN_ORDER == ("free", *dict.fromkeys(SET_PLAN_NAMES.values()))
    assert sorted(PLAN_ORDER) == sorted(PLAN_PRESETS)


@pytest.mark.parametrize(("lower", "higher"), TIERS, ids=[f"{a}<{b}" for a, b in TIERS])
def test_no_limit_of_a_higher_tier_is_lower_than_the_tier_below(lower, higher):
    fields = [*LIMIT_FIELDS, "reserved_price"]
    lower_than_below = {name: (PLAN_PRESETS[lower][name], PLAN_PRESETS[higher][name]) for name in fields
                        if PLAN_PRESETS[higher][name] < PLAN_PRESETS[lower][name]}
    assert lower_than_below == {}, f"{higher} allows less than {lower}: {lower_than_below}"


@pytest.mark.parametrize("plan", PLAN_ORDER)
def test_the_hard_daily_cap_is_never_below_the_daily_allowance(plan):
    preset = PLAN_PRESETS[plan]
    assert preset["max_requests_per_day_hard"] >= preset["max_requests_per_day"]
