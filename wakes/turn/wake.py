"""Waking an agent: the mode it gets, the prompt, the line in the thread that says why."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from motion_runner.models import Agent, Message, Motion, Turn
from motion_runner.runner.post_answers import say_woke
from motion_runner.runner.turns import enqueue_turn

from ..conf import app_settings
from ..decision.steering import wake_settings
from ..decision.trust import decide, decide_burst
from ..models import Dials, ShadowDecision, clock
from ..models.dials import SessionAfterLookOnly
from .ultracode import ultracode_rides

SILENT_HINT = (
    "If there is nothing useful for you to say, answer only <silent>a few words why</silent>: "
    "it shows as a small dot in the thread instead of a message."
)


def wake_mode_for(message: Message | None, posts: list[Message] | None = None) -> tuple[str, str]:
    """The wake's mode and the rule that chose it (wakes/decision/trust.py). A burst of posts wakes with
    full tools only if every post in it would: the least trusted post decides, so an untrusted
    line cannot ride in on a trusted person's last word."""
    decision = decide_burst(posts) if posts else decide(message)
    return decision.mode, decision.rule


def resume_after_look_only() -> bool:
    """The full_tools_after_look_only dial, as enqueue_turn takes it."""
    return Dials.load().full_tools_after_look_only == SessionAfterLookOnly.RESUME


def human_duration(delta: timedelta | float) -> str:
    seconds = delta.total_seconds() if isinstance(delta, timedelta) else float(delta)
    minutes = int(round(seconds / 60))
    if minutes < 1:
        return f"{int(seconds)} s"
    if minutes < 90:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def wake(
    motion: Motion,
    agent: Agent,
    *,
    prompt: str,
    reason: str,
    why: str,
    effort: str,
    cap: Decimal | None,
    woken_by: Message | None,
    cost_note: str = "",
    dispatch: bool = True,
    posts: list[Message] | None = None,
    reason_detail: str | None = None,
    ability: dict | None = None,
    start_after: float = 0,
    line: bool = True,
) -> Turn | None:
    """Queue the turn and say in the thread why it woke and what that cost so far (`line`: now;
    else its start says it, wakes/consider_loop/mention_turns.py). `start_after`: seconds before its
    task runs.

    Every wake (mention, consideration, long quiet, watch, arrival) passes here: in shadow mode
    (`WAKES_SHADOW`) the decision is recorded instead and None returned — no turn, no line, and
    each caller then reserves nothing."""
    mode, rule = wake_mode_for(woken_by, [p for p in posts or [] if p.agent_id != agent.pk])
    post = woken_by if woken_by is not None else (posts[-1] if posts else None)
    if shadowed(motion, agent, post, kind=reason, mode=mode, rule=rule, why=why):
        return None
    effort, model = wake_settings(motion.pk, agent.pk, reason, effort)  # the room's menus (steering.py)
    turn = enqueue_turn(
        motion,
        agent,
        prompt,
        reason=reason,
        reason_detail=reason_detail if reason_detail is not None else why,
        mode=mode,
        mode_rule=rule,
        effort=effort,
        model=model,
        max_budget_usd=cap,
        woken_by=woken_by,
        dispatch=dispatch,
        ability=ability,
        resume_after_look_only=resume_after_look_only(),
        start_after=start_after,
        queued_at=clock.now(),
    )
    if line:
        post_wake_line(turn, why, cost_note=cost_note)
    return turn


def shadowed(
    motion: Motion,
    agent: Agent,
    post: Message | None,
    *,
    kind: str,
    mode: str,
    rule: str,
    why: str,
    verdict: str = "wake",
) -> bool:
    """In shadow mode (`WAKES_SHADOW`): record the decision and say so (True), for the caller to
    launch and say nothing. Off: False, and nothing is written."""
    if not app_settings.WAKES_SHADOW:
        return False
    ShadowDecision.objects.create(
        motion=motion,
        agent=agent,
        post=post,
        kind=kind,
        mode=mode,
        mode_rule=rule[:200],
        verdict=verdict,
        reason=why[:300],
    )
    return True


def post_wake_line(turn: Turn, why: str, *, cost_note: str = "") -> None:
    """The line in the thread that says why the agent woke (the core's `say_woke`), with what
    rides with it here: ultracode, a cost note."""
    extras = ["ultracode"] if ultracode_rides(turn) else []
    if cost_note:
        extras.append(cost_note)
    say_woke(turn, why, extras)
