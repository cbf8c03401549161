"""Budgets: the hourly count, the daily dollars, and atomic reservations.

A consideration reserves its envelope (the per-consideration cap and the cold read of the session
it would resume — `consideration_cap` — plus a screen's reserve, or less when less is left) before it spends anything. The check and the reservation happen in one
transaction that first takes the day's lock (an UPDATE on the day's BudgetDay row, which is a row
lock on PostgreSQL and the write lock on SQLite): twenty racers for the last slot are served one
at a time, and exactly one finds room. An envelope is never smaller than what its turn may
spend (the turn's cap), and the spend guard stops the turn before one more call would pass that
cap, so the daily cap is approached, not crossed (to within one call: docs/money.md).

Every turn has one row (`settle_turn` adds the row of a turn that was queued without one), so
the ledger's total is the turns' total.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_DOWN, Decimal
from typing import NamedTuple

from django.db import IntegrityError, transaction
from django.db.models import F, Q, Sum
from django.utils import timezone

from motion_runner.harnesses.pricing import anthropic_price_for
from motion_runner.models import ENDED_STATUSES
from motion_runner.runner.resume import session_context

from ..models import BudgetDay, Consideration, Spend
from ..models.in_force import Resolved
from ..models.listening import WakeKind

HOUR = timedelta(hours=1)
CENT = Decimal("0.01")


def day_of(moment: datetime):
    return timezone.localdate(moment)


def next_day(moment: datetime) -> datetime:
    local = timezone.localtime(moment)
    return local.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)


def spent_today(day, *, motion_id: str | None = None, agent_id: int | None = None) -> Decimal:
    rows = Spend.objects.filter(day=day, counted=True)
    if motion_id is not None:
        rows = rows.filter(motion_id=motion_id)
    if agent_id is not None:
        rows = rows.filter(agent_id=agent_id)
    return rows.aggregate(total=Sum("amount"))["total"] or Decimal("0")


@dataclass(frozen=True)
class ConsiderationCap:
    """The dial plus the cold read of the session a consideration would resume (memory-lane's
    consider_wake): a warm session may be cold by the time the turn starts, and a cold read is
    never cut off after it was paid for — the seed's reason for the cap."""

    dial: Decimal
    cold_read: Decimal
    why: str  # how the cold read was priced, for the ledger row

    @property
    def total(self) -> Decimal:
        return self.dial + self.cold_read

    def note(self) -> str:
        return f"cap ${self.dial:.2f} + cold read ${self.cold_read:.2f} ({self.why})"


def consideration_cap(motion_id: str, agent_id: int, dial: Decimal) -> ConsiderationCap:
    context = session_context(motion_id, agent_id)
    if context is None:
        return ConsiderationCap(dial, Decimal(0), "no session here yet")
    price = anthropic_price_for(context.model)
    if price is None:
        return ConsiderationCap(dial, Decimal(0), f"no price known for {context.model or 'its model'}")
    cold = (Decimal(context.tokens) * price.cache_write / 1_000_000).quantize(CENT)
    return ConsiderationCap(dial, cold, f"{context.tokens:,} tokens at ${price.cache_write}/M cache-written")


def full_in_last_hour(motion_id: str, agent_id: int, now: datetime):
    return Spend.objects.filter(
        kind=Spend.Kind.CONSIDERATION, motion_id=motion_id, agent_id=agent_id, full=True, at__gt=now - HOUR
    )


@dataclass
class Refusal:
    scope: str  # "hour" or "day"
    text: str
    window: str  # a key for "said once per cap window"
    retry_at: datetime


def _lock_day(day) -> None:
    try:
        with transaction.atomic():
            BudgetDay.objects.get_or_create(day=day)
    except IntegrityError:
        pass  # created by a racer: fine
    BudgetDay.objects.filter(day=day).update(reservations=F("reservations") + 1)


@dataclass(frozen=True)
class CapLeft:
    """One daily cap in force for a pair and what is left of it today (plain data: a verdict reads it)."""

    scope: str  # "all", "motion", "agent", "pair"
    limit: Decimal
    left: Decimal


def daily_caps_left(
    motion_id: str, agent_id: int, dials: Resolved, now: datetime, *, lock: bool = True
) -> tuple[CapLeft, ...]:
    """What is left of each daily cap in force for the pair. With `lock`, the day is locked first
    (as `reserve` does): call it inside the transaction that records the wake's Spend. A dry run
    (`lock=False`) writes nothing."""
    day = day_of(now)
    if lock:
        _lock_day(day)
    scopes = {
        "all": {},
        "motion": {"motion_id": motion_id},
        "agent": {"agent_id": agent_id},
        "pair": {"motion_id": motion_id, "agent_id": agent_id},
    }
    return tuple(
        CapLeft(scope, Decimal(limit), limit - spent_today(day, **scopes[scope]))
        for scope, limit in dials.daily_caps
    )


def tightest_cap_refusal(caps: tuple[CapLeft, ...], floor: Decimal, now: datetime) -> Refusal | None:
    """Refused when what is left of the tightest cap is under `floor`, the least a turn may have.
    Pure: the refusal's window names the day and the cap's scope (its line is said once per window)."""
    if not caps:
        return None
    tightest = min(caps, key=lambda cap: cap.left)
    if tightest.left >= floor:
        return None
    label = {"all": "the daily budget", "motion": "this Motion's daily budget"}.get(
        tightest.scope, f"the {tightest.scope}'s daily budget"
    )
    return Refusal(
        scope="day",
        text=f"{label} (${tightest.limit:.2f}) is spent or reserved",
        window=f"day:{day_of(now).isoformat()}:{tightest.scope}",
        retry_at=next_day(now),
    )


def watch_floor(dials: Resolved) -> Decimal:
    """The least a watch's (or a greeting's) turn may have."""
    return min(dials.dials.min_consideration_usd, dials.consideration_cap_usd)


def watch_wake_refusal(motion_id: str, agent_id: int, dials: Resolved, now: datetime) -> Refusal | None:
    """An `always` watch wake goes through the same daily caps as a consideration: refused when
    what is left of the tightest cap is under the least a turn may have. Call it inside the
    transaction that records the wake's Spend (the day is locked here, as `reserve` does)."""
    return tightest_cap_refusal(daily_caps_left(motion_id, agent_id, dials, now), watch_floor(dials), now)


class Reserved(NamedTuple):
    """An envelope reserved, and the cap it was reserved for: the turn's cap is taken from it, so
    the session's context is read once a consideration and the turn may spend what was reserved."""

    envelope: Spend
    capped: ConsiderationCap


def reserve(
    consideration: Consideration, dials: Resolved, now: datetime, *, screen: bool
) -> Reserved | Refusal:
    """Check the hourly and daily budgets and reserve the envelope, atomically."""
    motion_id, agent_id = consideration.motion_id, consideration.agent_id
    day = day_of(now)
    with transaction.atomic():
        _lock_day(day)
        recent = full_in_last_hour(motion_id, agent_id, now)
        per_hour = dials.considerations_per_hour
        if recent.count() >= per_hour:
            oldest = recent.order_by("at", "pk").first()
            return Refusal(
                scope="hour",
                text=f"{per_hour} full consideration{'s' if per_hour != 1 else ''} this hour",
                window=f"hour:{oldest.pk if oldest else now.isoformat()}",
                retry_at=(oldest.at + HOUR) if oldest else now + HOUR,
            )
        remaining = None
        which = ""
        for scope, limit in dials.daily_caps:
            scoped = {
                "all": {},
                "motion": {"motion_id": motion_id},
                "agent": {"agent_id": agent_id},
                "pair": {"motion_id": motion_id, "agent_id": agent_id},
            }[scope]
            left = limit - spent_today(day, **scoped)
            if remaining is None or left < remaining:
                remaining, which = left, f"{scope}:{limit}"
        share = dials.dials.quiet_budget_share
        if consideration.kind == WakeKind.QUIET and share < 1:
            quiet_spent = Spend.objects.filter(
                day=day, counted=True, consideration__kind=WakeKind.QUIET
            ).aggregate(total=Sum("amount"))["total"] or Decimal("0")
            quiet_limit = dials.daily_budget_usd * share
            if quiet_limit - quiet_spent < remaining:
                remaining, which = quiet_limit - quiet_spent, f"quiet:{quiet_limit}"
        capped = consideration_cap(motion_id, agent_id, dials.consideration_cap_usd)
        cap = capped.total
        screen_reserve = dials.dials.screen_reserve_usd if screen else Decimal("0")
        envelope = min(cap + screen_reserve, remaining)
        if envelope < min(dials.dials.min_consideration_usd, cap) + screen_reserve:
            scope, limit = which.split(":")
            label = {
                "all": "the daily budget",
                "motion": "this Motion's daily budget",
                "quiet": "the long quiets' share of the daily budget",
            }.get(scope, f"the {scope}'s daily budget")
            # Money comes back only when an in-flight reservation settles below its envelope,
            # or at midnight: retry soon in the first case, else at the next day.
            in_flight = Spend.objects.filter(day=day, counted=True, settled=False).exists()
            return Refusal(
                scope="day",
                text=f"{label} (${Decimal(limit):.2f}) is spent or reserved",
                window=f"day:{day.isoformat()}:{scope}",
                retry_at=now + timedelta(seconds=dials.dials.budget_retry_seconds)
                if in_flight
                else next_day(now),
            )
        spend = Spend.objects.create(
            kind=Spend.Kind.CONSIDERATION,
            motion_id=motion_id,
            agent_id=agent_id,
            consideration=consideration,
            day=day,
            at=now,
            amount=envelope,
            reserved=envelope,
            full=True,
            note=f"reserved: {capped.note()}"[:300],
        )
        return Reserved(spend, capped)


def turn_cap(envelope: Spend, screen_cost: Decimal, cap: Decimal) -> Decimal:
    """What the turn may spend: the cap, or what is left of the envelope after the screen."""
    return min(cap, envelope.reserved - screen_cost).quantize(CENT, rounding=ROUND_DOWN)


# Turns a person asked for (a mention, a grant, an operator's `manage.py wake`) are in the
# ledger but not counted against the daily budget, which bounds what agents start on their own.
NOT_COUNTED = {"mention", "grant", "manual", "command"}  # a person's ask, not the loop's
KIND_OF_REASON = {
    WakeKind.NEW_POSTS: Spend.Kind.CONSIDERATION,
    WakeKind.QUIET: Spend.Kind.CONSIDERATION,
    "mention": Spend.Kind.MENTION,
    "watch": Spend.Kind.WATCH,
    "arrival": Spend.Kind.CONSIDERATION,  # a greeting is counted as a consideration (memory-lane's)
    "grant": Spend.Kind.GRANT,
    "manual": Spend.Kind.MANUAL,
    "compact": Spend.Kind.COMPACTION,
}


def settle_turn(turn) -> None:
    """A finished turn's row takes its real cost (what it reserved is released). A turn that got
    no row when it was queued (a grant, `manage.py wake`, a compaction) gets one now: every turn
    is in the ledger once, with its reason and its Turn, so the ledger's total is the turns'."""
    note = f"settled: {turn.reason}, {turn.cost_source or 'cost unknown'}"[:300]
    with transaction.atomic():
        # The turn's row lock: two deliveries of turn_finished cannot both add a row.
        type(turn).objects.select_for_update().filter(pk=turn.pk).first()
        if Spend.objects.filter(turn=turn, settled=False).update(
            amount=turn.cost_usd, settled=True, note=note
        ):
            return
        if Spend.objects.filter(turn=turn).exists():
            return  # settled already
        now = turn.ended_at or timezone.now()
        Spend.objects.create(
            kind=KIND_OF_REASON.get(turn.reason, Spend.Kind.MANUAL),
            motion_id=turn.motion_id,
            agent_id=turn.agent_id,
            turn=turn,
            day=day_of(turn.started_at or turn.queued_at or now),
            at=now,
            amount=turn.cost_usd,
            settled=True,
            counted=turn.reason not in NOT_COUNTED,
            note=note,
        )


def resettle_turn(turn) -> None:
    """A turn charged more after it was settled (turn_repriced): its settled row takes the new
    cost, never a lower one; an unsettled one is settled as any."""
    settle_turn(turn)
    note = f"settled again: {turn.cost_source or 'cost unknown'}"[:300]
    Spend.objects.filter(turn=turn, settled=True, amount__lt=turn.cost_usd).update(
        amount=turn.cost_usd, note=note
    )


def reserve_for_retry(failed, retry) -> Spend | None:
    """The same wake run again in a fresh session (its session was gone): the retry is counted
    as the failed turn was, and holds its cap as a reservation while it runs."""
    original = Spend.objects.filter(turn=failed).order_by("pk").first()
    counted = original.counted if original is not None else failed.reason not in NOT_COUNTED
    cap = retry.max_budget_usd or Decimal(0)
    return Spend.objects.create(
        kind=original.kind if original is not None else KIND_OF_REASON.get(failed.reason, Spend.Kind.MANUAL),
        motion_id=retry.motion_id,
        agent_id=retry.agent_id,
        consideration=original.consideration if original is not None else None,
        turn=retry,
        day=day_of(timezone.now()),
        at=timezone.now(),
        amount=cap if counted else Decimal(0),
        reserved=cap if counted else Decimal(0),
        counted=counted,
        note=f"retry of turn {failed.pk} in a fresh session"[:300],
    )


def release(envelope: Spend, note: str, *, full: bool = False) -> None:
    Spend.objects.filter(pk=envelope.pk).update(amount=Decimal("0"), settled=True, full=full, note=note)


def unsettled_of_ended_turns():
    """Safety net: envelopes whose turn ended without the finish hook (a lost worker)."""
    return Spend.objects.filter(Q(turn__status__in=ENDED_STATUSES), settled=False)
