"""The dials in force over rows read already (`in_force`, no database): what the mention path
asks for the chain's bound with the host's timing rows read once with the post."""

from __future__ import annotations

from decimal import Decimal

from wakes.models import DialOverride, Dials
from wakes.models.in_force import in_force

JAMS, MAGENT = "jams", 7


def test_the_pairs_override_stands_over_the_agents():
    rows = [
        DialOverride(agent_id=MAGENT, agent_chain_turns=4),
        DialOverride(motion_id=JAMS, agent_id=MAGENT, agent_chain_turns=9),
    ]
    assert in_force(JAMS, MAGENT, Dials(), rows).agent_chain_turns == 9


def test_another_motions_override_does_not_count():
    rows = [DialOverride(motion_id="harbor", agent_id=MAGENT, agent_chain_turns=2)]
    assert in_force(JAMS, MAGENT, Dials(), rows).agent_chain_turns == Dials().agent_chain_turns


def test_the_hosts_timing_row_stands_over_an_override():
    rows = [DialOverride(motion_id=JAMS, agent_id=MAGENT, quiet_seconds=5)]
    resolved = in_force(JAMS, MAGENT, Dials(), rows, timing={"quiet_seconds": (30.0, True)})
    assert resolved.quiet_seconds == 30.0


def test_the_hosts_budget_is_the_global_daily_cap():
    resolved = in_force(JAMS, MAGENT, Dials(), [], host_budget=Decimal("3.00"))
    assert resolved.daily_budget_usd == Decimal("3.00")


def test_without_the_hosts_budget_the_dial_is_the_global_daily_cap():
    assert in_force(JAMS, MAGENT, Dials(), []).daily_budget_usd == Dials().daily_budget_usd
