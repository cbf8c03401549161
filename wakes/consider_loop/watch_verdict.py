"""What a watch line whose policy is `always` asks for one agent, decided once over what was read
(no database, no I/O).

`decide_watch(post, agent, facts)` answers one of the mention path's verdicts:

- `Ignore`: a scram holds, or the room set the agent's listening here to mentions only or off, or
  archived the Motion (a watch wakes only an agent the loop may wake unprompted);
- `Refuse(Because.CAP)`: a daily cap is spent: `always` was chosen by a person, but the cap is the
  operator's (the thread says so once per cap window: `once_per`);
- `Wake(NOW)`: a look-only turn now, counted in the day's ledger.

The gates run in that order (`WATCH_GATES`, for the table tests in
tests/wakes/consider_loop/test_watch_verdict.py). `watch_path.gather_watch_facts` reads the facts
and `watch_path.act_watch` is the one place that writes what the verdict says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from motion_runner.models import Agent, Message

from ..money.budget import CapLeft, tightest_cap_refusal
from .mention_verdict import NOW, Because, Ignore, Refuse, Verdict, Wake

SCRAM_IGNORES = "a scram holds: nothing wakes until it is lifted"

WATCH_GATES = ("scram", "listening", "archived", "daily cap", "wake")


@dataclass(frozen=True)
class WatchFacts:
    """One watch line's wake of one agent, as read once (`watch_path.gather_watch_facts`). What no
    gate reached can ask for is left at its default (a scram's caps are not read)."""

    now: datetime
    scram: bool
    listening: str = "on"  # the pair's steering: "on", "mentions" or "off"
    archived: bool = False
    caps: tuple[CapLeft, ...] = ()  # each daily cap in force and what is left of it today
    floor: Decimal = Decimal(0)  # the least a turn may have (budget.watch_floor)
    effort: str = ""  # consider_effort in force: the turn's effort
    cap_usd: Decimal = Decimal(0)  # consideration_cap_usd in force: the turn's cap


def decide_watch(post: Message, agent: Agent, facts: WatchFacts) -> Verdict:
    """The verdict on waking `agent` for the watch line `post`; reads the post's text only."""
    if facts.scram:
        return Ignore(SCRAM_IGNORES)
    if facts.listening != "on":
        return Ignore(f"the room set its listening here to {facts.listening}")
    if facts.archived:
        return Ignore("the Motion is archived")
    if (refusal := tightest_cap_refusal(facts.caps, facts.floor, facts.now)) is not None:
        return Refuse(Because.CAP, refusal.text, once_per=refusal.window)
    return Wake(NOW, f"a watch: {post.text[:120]}")
