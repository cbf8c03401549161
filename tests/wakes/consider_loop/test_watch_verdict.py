"""Every gate of a watch line's `always` wake (wakes/consider_loop/watch_verdict.py) as a table
over the pure `decide_watch`, with no database: one row per gate outcome, named after its rule,
and rows for which gate goes first where two would answer.

Personas: @bbot (an agent) in the Motion "volley"; a watch posted "PR #12 merged".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.utils import timezone

from wakes.consider_loop.mention_verdict import NOW, Because, Ignore, Refuse, Wake
from wakes.consider_loop.watch_verdict import SCRAM_IGNORES, WatchFacts, decide_watch
from wakes.money.budget import CapLeft

NOW_AT = datetime(2026, 12, 6, 18, 0, tzinfo=UTC)
DAY = timezone.localdate(NOW_AT).isoformat()  # the budget day is the local one (TIME_ZONE)


@dataclass(frozen=True)
class Line:
    """What the verdict reads of a watch line: its text."""

    text: str = "PR #12 merged"


@dataclass(frozen=True)
class Named:
    name: str = "bbot"


def caps(**left: str) -> tuple[CapLeft, ...]:
    """The four daily caps at $10 each, with $5 left unless said (`motion="0.10"`)."""
    return tuple(
        CapLeft(scope, Decimal("10"), Decimal(left.get(scope, "5")))
        for scope in ("all", "motion", "agent", "pair")
    )


def facts(**changes) -> WatchFacts:
    """A listening pair with money left in every cap: the watch wakes it (changes make each gate answer)."""
    base = WatchFacts(
        now=NOW_AT, scram=False, caps=caps(), floor=Decimal("0.50"), effort="low", cap_usd=Decimal("1")
    )
    return replace(base, **changes)


def refused(label: str, scope: str) -> Refuse:
    return Refuse(Because.CAP, f"{label} ($10.00) is spent or reserved", once_per=f"day:{DAY}:{scope}")


WAKES = Wake(NOW, "a watch: PR #12 merged")

ROWS = [
    # (rule, facts, verdict)
    ("a scram wakes nothing by a watch", facts(scram=True), Ignore(SCRAM_IGNORES)),
    (
        "mentions only here wakes nothing by a watch",
        facts(listening="mentions"),
        Ignore("the room set its listening here to mentions"),
    ),
    (
        "listening off here wakes nothing by a watch",
        facts(listening="off"),
        Ignore("the room set its listening here to off"),
    ),
    ("an archived Motion wakes nothing by a watch", facts(archived=True), Ignore("the Motion is archived")),
    (
        "the daily budget spent refuses, once a day",
        facts(caps=caps(all="0.10")),
        refused("the daily budget", "all"),
    ),
    (
        "the Motion's daily budget spent refuses, once a day for the Motion",
        facts(caps=caps(motion="0")),
        refused("this Motion's daily budget", "motion"),
    ),
    (
        "the agent's daily budget spent refuses",
        facts(caps=caps(agent="-1")),
        refused("the agent's daily budget", "agent"),
    ),
    (
        "the pair's daily budget spent refuses",
        facts(caps=caps(pair="0.49")),
        refused("the pair's daily budget", "pair"),
    ),
    (
        "the tightest cap is the one named",
        facts(caps=caps(motion="0.40", pair="0.20")),
        refused("the pair's daily budget", "pair"),
    ),
    ("exactly the floor left still wakes", facts(caps=caps(pair="0.50")), WAKES),
    ("a listening pair with money left wakes now", facts(), WAKES),
    # Which gate answers first where two would:
    ("the scram before listening", facts(scram=True, listening="off"), Ignore(SCRAM_IGNORES)),
    (
        "listening before archived",
        facts(listening="off", archived=True),
        Ignore("the room set its listening here to off"),
    ),
    ("archived before the cap", facts(archived=True, caps=caps(all="0")), Ignore("the Motion is archived")),
    ("the scram before the cap", facts(scram=True, caps=caps(all="0")), Ignore(SCRAM_IGNORES)),
]


@pytest.mark.parametrize(("given", "expected"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_decide_watch(given, expected):
    assert decide_watch(Line(), Named(), given) == expected


def test_the_turns_reason_quotes_the_line_up_to_120_characters():
    verdict = decide_watch(Line("x" * 300), Named(), facts())
    assert verdict == Wake(NOW, "a watch: " + "x" * 120)
