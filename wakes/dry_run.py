"""What the loop would wake now, and why, without waking anything (`manage.py would_wake`).

The same reading as the loop's look (`loop.evaluate`), with no write: no claim, no reschedule,
no reservation. What the budget and the screen would then say is not asked (the screen costs
money); the line says that they decide next.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from motion_runner.models import Turn, TurnStatus

from . import clock
from .loop import due_mention_wakes, rest_at, schedule, still_listening, typing_until
from .models import Dials, ListenState, MentionWake
from .models.dials import resolve
from .steering import mentions_held, scram_holds, steering_for
from .wake import human_duration


@dataclass
class Verdict:
    motion: str
    agent: str
    wakes: bool
    why: str

    def __str__(self) -> str:
        return f"{'WAKE' if self.wakes else 'no  '}  {self.motion} @{self.agent}: {self.why}"


def why_not_listening(state: ListenState) -> str:
    if not state.agent.listening:
        return "not listening anywhere (the admin's switch)"
    steering = steering_for(state.motion_id, state.agent_id)
    if steering.archived:
        return "the Motion is archived (mentions are still answered)"
    if steering.listening != "on":
        return f"the room set its listening here to {steering.listening}"
    return "not an agent of this Motion any more (or memory-lane's poller wakes it)"


def explain(state: ListenState, now: datetime, dials: Dials) -> Verdict:
    def verdict(wakes: bool, why: str) -> Verdict:
        return Verdict(state.motion_id, state.agent.name, wakes, why)

    if not still_listening(state):
        return verdict(False, why_not_listening(state))
    resolved = resolve(state.motion_id, state.agent_id, dials)
    if state.busy_until:
        live = Turn.objects.filter(
            motion_id=state.motion_id,
            agent_id=state.agent_id,
            status__in=(TurnStatus.QUEUED, TurnStatus.RUNNING),
        ).exists()
        if live:
            return verdict(False, "a turn of it is queued or running here")
    if state.pending:
        ready = state.last_post_at + timedelta(seconds=resolved.quiet_seconds)
        typing = typing_until(state.motion_id, now, dials.typing_ttl_seconds)
        if typing and typing > ready:
            return verdict(False, f"new posts, but someone is typing (until {typing:%H:%M:%S} UTC)")
        if ready > now:
            return verdict(False, f"new posts; the quiet ends in {human_duration(ready - now)}")
        return verdict(True, "a consideration of the new posts (the budget and the screen decide next)")
    if state.rested:
        return verdict(False, "resting: no person for a long while; a person's post wakes it")
    if rest_at(state, dials) <= now:
        return verdict(False, "would go to rest now (no person posted for a long while)")
    due = schedule(state, resolved)
    if due and due > now:
        return verdict(False, f"nothing new; a long-quiet look in {human_duration(due - now)}")
    quiet = now - (state.last_said_at or state.created_at)
    return verdict(
        True, f"a long-quiet consideration: nothing said for {human_duration(quiet)} (the budget decides)"
    )


def would_wake(*, every_pair: bool = False, now: datetime | None = None) -> list[Verdict]:
    now = now or clock.now()
    if scram_holds():
        return [Verdict("*", "*", False, "a scram holds: nothing wakes until it is lifted")]
    dials = Dials.load()
    states = ListenState.objects.select_related("agent").order_by("due_at", "motion_id", "agent__name")
    if not every_pair:
        states = states.filter(due_at__lte=now)[: dials.look_batch]
    verdicts = [explain(state, now, dials) for state in states]
    for record in due_mention_wakes(now).select_related("message", "agent"):
        verdicts.append(
            Verdict(
                record.message.motion_id,
                record.agent.name,
                True,
                f"a terminal mention by {record.message.sender}, unless answered meanwhile",
            )
        )
    held = MentionWake.objects.filter(status=MentionWake.Status.HELD).select_related("message", "agent")
    for record in held:
        releasable = mentions_held(record.message.motion_id, record.agent_id) is None
        verdicts.append(
            Verdict(
                record.message.motion_id,
                record.agent.name,
                releasable,
                f"a mention by {record.message.sender} held while its listening was off"
                + (" (listening again: answered now)" if releasable else " (still off)"),
            )
        )
    return verdicts
