"""Mentions as people expect them: owed mentions of one agent in one Motion answered in one turn,
at most `mention_wakes_per_hour` of an agent's an hour (its Motions together), and a hold said in the thread while one waits.

A mention joins the pair's mention turn that is queued and has not started, if there is one
(coalesced); else it queues one, whose task starts after `mention_gather_seconds`, so a person's
quick run of mentions is answered together. The prompt is built when the turn starts
(`build_started_prompt`, the runner's `prompt_builders` hook), from the record as it stands then,
so every mention that joined is in it. A mention that must wait says why in the thread, once:
"a turn is under way here; this one is next", or "the hourly cap: next slot at …"; the hold is
lifted when its turn starts.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Min

from motion_runner.conf import app_settings as runner_settings  # the runner's settings (conf.py)
from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Agent, Kind, Message, Motion, Turn, TurnStatus
from motion_runner.runner.turns import wake_line_id

from ..decision.steering import NEVER
from ..holds import keep_hold, lift_hold
from ..models import MentionWake, Spend, clock
from ..models.dials import reading_dials_once
from ..models.in_force import Resolved, resolve
from ..money.budget import day_of
from ..turn.context import mention_prompt
from ..turn.footer import finalize_prompt
from ..turn.wake import post_wake_line, shadowed, wake, wake_mode_for
from .loop import mark_busy
from .slots import slots_full

MENTION = "mention"
UNDER_WAY = "a turn is under way here; this one is next"


def running_turn(motion_id: str, agent_id: int) -> Turn | None:
    return Turn.objects.filter(motion_id=motion_id, agent_id=agent_id, status=TurnStatus.RUNNING).first()


def queued_mention_turn(motion_id: str, agent_id: int) -> Turn | None:
    return (
        Turn.objects.select_for_update()
        .filter(motion_id=motion_id, agent_id=agent_id, reason=MENTION, status=TurnStatus.QUEUED)
        .order_by("queued_at", "pk")
        .first()
    )


def next_slot(motion_id: str, agent_id: int, dials: Resolved, now: datetime) -> datetime | None:
    """When the hourly cap next lets a mention turn start; None: now. A turn counts from its
    first mention (mentions that joined it are the same turn). The agent's turns in every Motion
    count together, as memory-lane's poller counted its wakes (`recent_wakes`): two agents
    mentioning each other in many Motions are bounded as in one."""
    if dials.mention_wakes_per_hour <= 0:
        return NEVER  # the dial at 0: no mention turn starts (was an IndexError, issue 39)
    hour_ago = now - timedelta(hours=1)
    turns = (
        MentionWake.objects.filter(agent_id=agent_id, turn__isnull=False)
        .values("turn")
        .annotate(first=Min("created_at"))
        .filter(first__gt=hour_ago)
    )
    firsts = sorted(row["first"] for row in turns)
    if len(firsts) < dials.mention_wakes_per_hour:
        return None
    return firsts[len(firsts) - dials.mention_wakes_per_hour] + timedelta(hours=1)


def show_hold(motion: Motion, agent: Agent, reason: str, until: datetime | None) -> None:
    """The hold where memory-lane's thread page reads a runner's holds (`…/held/`, Django's cache):
    it lapses after MOOD_HELD_SECONDS unless renewed (check_mentions renews it), or at `until`."""
    lasts = runner_settings.MOOD_HELD_SECONDS
    if until is not None:
        lasts = max(1, min(lasts, int((until - clock.now()).total_seconds())))
    keep_hold(motion, agent, reason, until.isoformat() if until else None, lasts)


def renew_holds() -> int:
    """Every hold still in force shown again before it lapses (check_mentions, every 30 s)."""
    held = (
        MentionWake.objects.holds_in_force().select_related("message__motion", "agent").order_by("created_at")
    )
    count = 0
    for record in held:
        show_hold(record.message.motion, record.agent, record.hold, record.hold_until)
        count += 1
    return count


def hold(record: MentionWake, reason: str, until: datetime | None = None) -> None:
    """Write the hold on the mention and say it in the thread (once per mention and reason). In
    shadow mode the hold is recorded as the decision, and neither shown nor said."""
    mode, rule = wake_mode_for(record.message)
    if shadowed(
        record.message.motion,
        record.agent,
        record.message,
        kind=MENTION,
        mode=mode,
        rule=rule,
        why=reason,
        verdict="held",
    ):
        return
    MentionWake.objects.filter(pk=record.pk).update(hold=reason[:300], hold_until=until)
    message = record.message
    show_hold(message.motion, record.agent, reason, until)
    post_system_message(
        message.motion,
        f"@{record.agent.name}'s answer to {message.sender} is held: {reason}",
        kind=Kind.WAKE,
        message_id=system_uuid("mention-hold", record.pk, reason),
        agent=record.agent,
    )


@reading_dials_once  # the pair's dials, the prompt and its session: one reading of the dials
def wake_for_mention(record: MentionWake, *, dispatch: bool = True, late: str = "") -> Turn | None:
    """The mention's turn: the queued one it joins, a new one, or None while the hourly cap holds
    it (it is then due again at the next slot: check_mentions wakes it)."""
    message, agent = record.message, record.agent
    motion = message.motion
    dials = resolve(motion.pk, agent.pk)
    now = clock.now()
    with transaction.atomic():
        Agent.objects.select_for_update().filter(pk=agent.pk).first()  # one decider per agent at a time
        queued = queued_mention_turn(motion.pk, agent.pk)
        if queued is not None:
            mode, rule = wake_mode_for(message)
            if queued.mode == "full" and mode != "full":
                # The least trusted post of the turn decides: a look-only mention joining a
                # full-tools turn makes it look-only (it has not started; its line says so).
                Turn.objects.filter(pk=queued.pk).update(mode=mode, mode_rule=rule[:200])
            MentionWake.objects.filter(pk=record.pk).update(turn=queued, status=MentionWake.Status.WOKEN)
            mark_busy(motion, agent, message.created_at, now)
            if running_turn(motion.pk, agent.pk):
                hold(record, UNDER_WAY)
            return queued
        slot = next_slot(motion.pk, agent.pk, dials, now)
        if slot is not None:
            MentionWake.objects.filter(pk=record.pk).update(status=MentionWake.Status.WAITING, due_at=slot)
            if slot == NEVER:
                hold(record, "the hourly cap of mention wakes is 0: none starts until it is raised")
            else:
                hold(record, f"the hourly cap: next slot at {slot:%H:%M} UTC", slot)
            return None
        mark_busy(motion, agent, message.created_at, now)
        busy = running_turn(motion.pk, agent.pk) is not None
        waits_for_a_worker = None if busy else slots_full(motion, agent)
        turn = wake(
            motion,
            agent,
            prompt=mention_prompt(motion, agent, [message], summarize=False),  # built again at its start
            reason=MENTION,
            why=f"mentioned by {message.sender}{late}",
            effort=dials.mention_effort,
            cap=dials.dials.mention_cap_usd,
            woken_by=message,
            cost_note="not counted against the consideration budget",
            dispatch=dispatch,
            start_after=dials.dials.mention_gather_seconds,
            # Behind a running turn, or waiting for a worker: a hold now, the wake line when it starts.
            line=not busy and not waits_for_a_worker,
        )
        MentionWake.objects.filter(pk=record.pk).update(turn=turn, status=MentionWake.Status.WOKEN)
        if turn is None:
            return None  # shadow mode: decided and recorded, nothing launched or reserved
        if busy:
            hold(record, UNDER_WAY)
        elif waits_for_a_worker:
            hold(record, waits_for_a_worker)
        Spend.objects.create(
            kind=Spend.Kind.MENTION,
            motion_id=motion.pk,
            agent=agent,
            turn=turn,
            day=day_of(now),
            at=now,
            amount=0,
            counted=False,
            note="mention (not counted)",
        )
    return turn


@reading_dials_once
def build_started_prompt(turn: Turn) -> str | None:
    """The runner's `prompt_builders` hook: a mention turn's prompt from the record as it stands
    when it starts, answering every mention that joined it; its holds are lifted and its wake line
    said (once) now."""
    if turn.reason != MENTION:
        return None
    records = list(
        MentionWake.objects.filter(turn=turn)
        .select_related("message", "agent")
        .order_by("message__created_at")
    )
    if not records:
        return None
    if MentionWake.objects.filter(turn=turn).exclude(hold="").update(hold="", hold_until=None):
        lift_hold(turn.motion, turn.agent)
    mentions = [r.message for r in records]
    if not Message.objects.filter(pk=wake_line_id(turn.pk)).exists():
        names = ", ".join(dict.fromkeys(m.sender for m in mentions))
        post_wake_line(
            turn, f"mentioned by {names}", cost_note="not counted against the consideration budget"
        )
    motion: Motion = turn.motion
    prompt = mention_prompt(motion, turn.agent, mentions)
    return finalize_prompt(prompt, motion, turn.agent, turn.mode, turn.reason)
