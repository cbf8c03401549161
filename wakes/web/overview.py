"""The Motion list's view of each Motion: when it last moved, which agents rest, what today
cost and what is left, and whether a request waits for a person. A few grouped queries for the
whole list, not a handful per Motion."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from django.db.models import Max, Q, Sum

from motion_runner.models import Message, Motion, Turn, TurnStatus

from ..decision.listening_scopes import listening_by_pair
from ..decision.steering import hushes
from ..models import DialOverride, Dials, ListenState, Spend, WakeRequest, clock
from ..models.in_force import global_daily_budget
from ..money.budget import day_of, spent_today


@dataclass
class AgentState:
    name: str
    state: str  # "working", "resting", "listening", "not listening", the room's "mentions only" …


@dataclass
class MotionCard:
    motion: Motion
    last_activity: datetime | None
    spent_today: Decimal  # every row of the day (the ledger's "Spent")
    budget_left: Decimal
    request_waiting: bool
    agents: list[AgentState] = field(default_factory=list)
    counted_today: Decimal = Decimal("0")  # the rows counted against the caps (the ledger's "Counted")

    @property
    def just_now(self) -> bool:
        """Moved within 45 s: the list says "just now", as the thread's times do (thread.js `ago`)."""
        return self.last_activity is not None and clock.now() - self.last_activity < timedelta(seconds=45)


def motion_cards(motions: list[Motion]) -> list[MotionCard]:
    """Newest activity first. Budget left is the smaller of the global day's remainder and the
    Motion's own daily cap's (an override), never below zero."""
    now = clock.now()
    today = day_of(now)
    slugs = [m.pk for m in motions]
    last = dict(
        Message.objects.filter(motion_id__in=slugs)
        .values("motion_id")
        .annotate(at=Max("created_at"))
        .values_list("motion_id", "at")
    )
    # Today's spend, as the ledger sums it: every row of the day; the caps count the counted ones.
    sums = {
        row["motion_id"]: row
        for row in Spend.objects.filter(day=today, motion_id__in=slugs)
        .values("motion_id")
        .annotate(spent=Sum("amount"), counted=Sum("amount", filter=Q(counted=True)))
    }
    caps = dict(
        DialOverride.objects.filter(
            motion_id__in=slugs, agent__isnull=True, daily_budget_usd__isnull=False
        ).values_list("motion_id", "daily_budget_usd")
    )
    waiting = set(
        WakeRequest.objects.filter(motion_id__in=slugs, status=WakeRequest.Status.OPEN).values_list(
            "motion_id", flat=True
        )
    )
    resting = set(
        ListenState.objects.filter(motion_id__in=slugs, rested=True).values_list("motion_id", "agent_id")
    )
    working = set(
        Turn.objects.filter(motion_id__in=slugs, status=TurnStatus.RUNNING).values_list(
            "motion_id", "agent_id"
        )
    )
    pairs = [(motion.pk, agent.pk) for motion in motions for agent in motion.agents.all()]
    # Archived from the Motions' rows; each pair's listening with every scope counted.
    hushed = {key: value for key, value in hushes(slugs, now).items() if key[1] is None}
    hushed.update(listening_by_pair(pairs, now))
    global_left = global_daily_budget(Dials.load()) - spent_today(today)
    cards = []
    for motion in motions:
        row = sums.get(motion.pk, {})
        mine = row.get("counted") or Decimal("0")
        left = global_left
        if motion.pk in caps:
            left = min(left, caps[motion.pk] - mine)
        agents = []
        for agent in motion.agents.all():
            pair = (motion.pk, agent.pk)
            if pair in working:
                state = "working"
            elif not agent.listening:
                state = "not listening"
            elif (motion.pk, None) in hushed:
                state = "archived: mentions only"
            elif pair in hushed:
                state = "mentions only" if hushed[pair] == "mentions" else "not listening here"
            elif pair in resting:
                state = "resting"
            else:
                state = "listening"
            agents.append(AgentState(agent.name, state))
        cards.append(
            MotionCard(
                motion=motion,
                last_activity=last.get(motion.pk),
                spent_today=row.get("spent") or Decimal("0"),
                counted_today=mine,
                budget_left=max(left, Decimal("0")),
                request_waiting=motion.pk in waiting,
                agents=agents,
            )
        )
    cards.sort(key=lambda card: card.last_activity or card.motion.created_at, reverse=True)
    return cards
