"""A watch line whose policy is `always`: read once (`gather_watch_facts`), decided once
(`watch_verdict.decide_watch`, no database), and acted on once (`act_watch`), as a mention is
(mention_path.py). `wake_for_watch` is the entry watchlist/checker.py calls, once per agent.

`act_watch` is the one place the watch path writes: the cap's line (once per cap window), the pair
marked busy, the turn queued and its Spend row, in the transaction whose day lock the caps were
read under (so two wakes never both take the last of a cap).
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Agent, Kind, Message, Turn

from ..decision.steering import scram_holds, steering_for
from ..models import Spend, clock
from ..models.in_force import resolve
from ..money.budget import daily_caps_left, day_of, watch_floor
from ..turn.context import watch_prompt
from ..turn.wake import wake
from .loop import mark_busy
from .mention_verdict import Because, Ignore, Refuse, Verdict, Wake
from .watch_verdict import WatchFacts, decide_watch


def gather_watch_facts(message: Message, agent: Agent, now: datetime, *, lock: bool = True) -> WatchFacts:
    """Everything the verdict reads, once: the scram, the pair's steering, and (only when those let
    it through) the dials in force and what is left of each daily cap. With `lock` (the real wake),
    call it inside the transaction `act_watch` writes in: the day is locked before the caps are
    read. The dry run passes `lock=False` and writes nothing."""
    if scram_holds():
        return WatchFacts(now=now, scram=True)
    steering = steering_for(message.motion_id, agent.pk)
    if steering.listening != "on" or steering.archived:
        return WatchFacts(now=now, scram=False, listening=steering.listening, archived=steering.archived)
    dials = resolve(message.motion_id, agent.pk)
    return WatchFacts(
        now=now,
        scram=False,
        caps=daily_caps_left(message.motion_id, agent.pk, dials, now, lock=lock),
        floor=watch_floor(dials),
        effort=dials.consider_effort,
        cap_usd=dials.consideration_cap_usd,
    )


def act_watch(
    message: Message,
    agent: Agent,
    verdict: Verdict,
    facts: WatchFacts,
    *,
    prompt: str | None = None,
    reason_detail: str | None = None,
    ability: dict | None = None,
    dispatch: bool = True,
) -> Turn | None:
    """Write what the verdict says: the only writer of the watch path. Returns the turn queued."""
    match verdict:
        case Ignore():
            return None
        case Refuse(kind=Because.CAP, reason=reason, once_per=window):
            post_system_message(
                message.motion,
                f"@{agent.name} is not woken by watches: {reason}. Mentions still wake it.",
                kind=Kind.WAKE,
                message_id=system_uuid("watch-cap", message.motion_id, agent.pk, window),
                agent=agent,
            )
            return None
        case Wake(reason=why):
            mark_busy(message.motion, agent, message.created_at, facts.now)
            turn = wake(
                message.motion,
                agent,
                prompt=watch_prompt(message.motion, agent, message, prompt),
                reason="watch",
                why=why,
                effort=facts.effort,
                cap=facts.cap_usd,
                woken_by=message,
                dispatch=dispatch,
                reason_detail=reason_detail,
                ability=ability,
            )
            if turn is None:
                return None  # shadow mode: decided and recorded by wake(), nothing reserved
            Spend.objects.create(
                kind=Spend.Kind.WATCH,
                motion_id=message.motion_id,
                agent=agent,
                turn=turn,
                day=day_of(facts.now),
                at=facts.now,
                amount=turn.max_budget_usd or 0,
                reserved=turn.max_budget_usd or 0,
                note="watch (always)",
            )
            return turn
    raise ValueError(f"no act for the watch verdict {verdict!r}")


def wake_for_watch(
    message: Message,
    agent: Agent,
    *,
    prompt: str | None = None,
    reason_detail: str | None = None,
    ability: dict | None = None,
    dispatch: bool = True,
) -> Turn | None:
    """A watch line whose policy is `always` wakes the agent (watchlist/checker.py calls this).

    Counted in the day's ledger and refused like any other wake once a daily cap is reached
    (None, and the thread says so once per cap window). Watches with policy `consider` need
    nothing from here: their lines are posts, and the loop considers them like any other. The
    watchlist writes the prompt (the watched content quoted as data) and any ability the wake
    carries.
    """
    now = clock.now()
    with transaction.atomic():
        facts = gather_watch_facts(message, agent, now)
        verdict = decide_watch(message, agent, facts)
        return act_watch(
            message,
            agent,
            verdict,
            facts,
            prompt=prompt,
            reason_detail=reason_detail,
            ability=ability,
            dispatch=dispatch,
        )
