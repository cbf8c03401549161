"""A claimed consideration, run by a worker: budget, screen, wake (run_consideration); a refusal
said once per cap window; the pair freed and rescheduled once its wake ends; the dot a silent
consideration leaves."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import F

from motion_runner.ingest.fit import POST_KINDS
from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Agent, Kind, Message, Motion, Source, Turn

from ..decision.steering import steering_for
from ..models import Consideration, ListenState, Spend, clock
from ..models.in_force import resolve
from ..models.listening import WakeKind
from ..money.budget import Refusal, release, reserve, turn_cap
from ..turn.commands import is_command_post
from ..turn.context import new_posts_prompt, quiet_prompt
from ..turn.screen import screen_posts
from ..turn.wake import human_duration, shadowed, wake
from .loop import schedule

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    status: str
    turn: Turn | None = None


def new_posts(consideration: Consideration) -> list[Message]:
    posts = Message.objects.filter(
        motion_id=consideration.motion_id, kind__in=POST_KINDS, created_at__lte=consideration.through
    ).exclude(source=Source.SYSTEM)
    posts = posts.exclude(agent_id=consideration.agent_id)
    if consideration.previous_through:
        posts = posts.filter(created_at__gt=consideration.previous_through)
    # A command (`@magent /usage`) is the whole post, run or refused: never a new post to consider
    # (tried as a user: it was counted and marked ► as "demo mentioned you").
    found = list(posts.order_by("created_at", "id"))
    if not any("@" in post.text and "/" in post.text for post in found):
        return found  # no post can be a command: the Motion's agents are not read
    agents = list(consideration.motion.agents.all())
    return [post for post in found if not is_command_post(post, agents)]


def run_consideration(consideration_id: int, *, dispatch: bool = True, screen=None) -> Outcome | None:
    """Budget, screen, wake. Idempotent: a consideration runs once (claimed → running)."""
    if (
        Consideration.objects.filter(pk=consideration_id, status=Consideration.Status.CLAIMED).update(
            status=Consideration.Status.RUNNING, started_at=clock.now()
        )
        != 1
    ):
        return None
    c = Consideration.objects.select_related("motion", "agent").get(pk=consideration_id)
    now = clock.now()
    dials = resolve(c.motion_id, c.agent_id)
    # A room that made the agent chatty welcomes its thoughts: its posts go to it unscreened, as
    # memory-lane's poller did.
    screening = (
        c.kind == WakeKind.NEW_POSTS
        and dials.screen_enabled
        and steering_for(c.motion_id, c.agent_id).discretion != "chatty"
    )
    posts = new_posts(c) if c.kind == WakeKind.NEW_POSTS else []
    if c.kind == WakeKind.NEW_POSTS and not posts:
        # What moved the clock is no post by now: another agent's `<silent>` reply becomes a dot
        # only when its turn ends. Nothing to read is nothing to pay for: no reservation, no turn
        # (two agents woke each other with "0 new posts" every ~15 s until the hourly cap).
        c.status = Consideration.Status.SILENT
        c.detail = "no new posts to read (only dots since it last looked)"
        c.save(update_fields=["status", "detail"])
        free_pair(c, silent=True)
        return Outcome(c.status)
    reserved = reserve(c, dials, now, screen=screening)
    if isinstance(reserved, Refusal):
        return refuse(c, reserved)
    envelope, capped = reserved  # the cap it was reserved for: the context is not read again
    screen_cost = None
    screen_note = ""
    if screening:
        result = (screen or screen_posts)(c.motion, c.agent, posts, dials.dials)
        screen_cost = result.cost
        if result.answered:
            Spend.objects.create(
                kind=Spend.Kind.SCREEN,
                motion_id=c.motion_id,
                agent_id=c.agent_id,
                consideration=c,
                day=envelope.day,
                at=now,
                amount=result.cost,
                settled=True,
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
                note=f"{result.verdict}: {result.reason}"[:300],
            )
            Spend.objects.filter(pk=envelope.pk).update(amount=F("amount") - result.cost)
        c.screen_verdict = result.verdict if not result.failed else "FAILED"
        c.screen_reason = result.reason[:300]
        if not result.off:  # the default setup has no screen: nothing to say on every wake line
            screen_note = f"screen {c.screen_verdict}: {result.reason} · ${result.cost:.4f}"
        if result.dismissed:
            release(envelope, f"screened: {result.reason}"[:300])
            c.status = Consideration.Status.SCREENED
            c.save(update_fields=["status", "screen_verdict", "screen_reason"])
            dismissed = f"screened: {result.reason}"
            # Shadow mode records the screen's "no" too, and leaves no dot in the thread.
            if not shadowed(
                c.motion,
                c.agent,
                posts[-1] if posts else None,
                kind=c.kind,
                mode="",
                rule="",
                why=dismissed,
                verdict="screened",
            ):
                post_dot(c.motion, c.agent, result.reason, by_screen=True, key=("screen", c.pk))
            free_pair(c, silent=True)
            return Outcome(c.status)
    cap = turn_cap(envelope, screen_cost or 0, capped.total)
    if c.kind == WakeKind.NEW_POSTS:
        count = len(posts)
        why = f"{count} new post{'s' if count != 1 else ''}" + (f" ({screen_note})" if screen_note else "")
        prompt = new_posts_prompt(c.motion, c.agent, posts, c.previous_through)
        woken_by = posts[-1] if posts else None
    else:
        quiet = timedelta(seconds=c.quiet_seconds or 0)
        why = f"a long quiet: nothing said for {human_duration(quiet)}"
        prompt = quiet_prompt(c.motion, c.agent, human_duration(quiet))
        woken_by = None
    if not Consideration.objects.filter(pk=c.pk, status=Consideration.Status.RUNNING).exists():
        return None  # given up as lost meanwhile (its screen outlasted the bound): its posts are owed again
    turn = wake(
        c.motion,
        c.agent,
        prompt=prompt,
        reason=c.kind,
        why=why,
        effort=dials.consider_effort,
        cap=cap,
        woken_by=woken_by,
        dispatch=dispatch,
        posts=posts if c.kind == WakeKind.NEW_POSTS else None,
    )
    if turn is None:  # shadow mode: decided and recorded; the reservation is given back
        release(envelope, "shadow mode: not launched")
        c.status = Consideration.Status.WOKEN
        c.detail = f"shadow: {why}"[:300]
        c.save(update_fields=["status", "detail", "screen_verdict", "screen_reason"])
        free_pair(c, silent=False)
        return Outcome(c.status)
    Spend.objects.filter(pk=envelope.pk).update(turn=turn)
    c.turn = turn
    c.status = Consideration.Status.WOKEN
    c.detail = why[:300]
    c.save(update_fields=["turn", "status", "detail", "screen_verdict", "screen_reason"])
    return Outcome(c.status, turn)


def refuse(c: Consideration, refusal: Refusal) -> Outcome:
    c.status = Consideration.Status.REFUSED
    c.detail = refusal.text[:300]
    c.save(update_fields=["status", "detail"])
    with transaction.atomic():
        state = ListenState.objects.select_for_update().get(pk=c.state_id)
        if c.kind == WakeKind.NEW_POSTS and state.considered_through == c.through:
            state.considered_through = c.previous_through  # those posts are still owed
        state.busy_until = None
        state.due_at = refusal.retry_at
        state.version += 1
        state.save()
    what = "new posts" if c.kind == WakeKind.NEW_POSTS else "the long quiet"
    # Said once per cap window (the id is the window's), not on every retry.
    post_system_message(
        c.motion,
        f"@{c.agent.name} is not considering {what}: {refusal.text}. Mentions still wake it.",
        kind=Kind.WAKE,
        message_id=system_uuid("wakes-cap", c.motion_id, c.agent_id, refusal.window),
        agent=c.agent,
    )
    return Outcome(c.status)


def free_pair(c: Consideration | None, *, silent: bool, motion_id=None, agent_id=None) -> None:
    """A wake of the pair ended: clear in-flight, back off after a silent long quiet, reschedule."""
    motion_id = c.motion_id if c else motion_id
    agent_id = c.agent_id if c else agent_id
    with transaction.atomic():
        state = ListenState.objects.select_for_update().filter(motion_id=motion_id, agent_id=agent_id).first()
        if state is None:
            return
        if c is not None and c.kind == WakeKind.QUIET and silent:
            state.idle_level += 1  # each long quiet that ends silent doubles the next wait
        if c is not None:
            state.considered_at = clock.now()  # a long quiet is counted from here
        state.busy_until = None
        state.due_at = schedule(state, resolve(motion_id, agent_id))
        state.version += 1
        state.save()


def post_dot(motion: Motion, agent: Agent, reason: str, *, by_screen: bool, key: tuple, turn=None) -> None:
    attr = ' by="screen"' if by_screen else ""
    post_system_message(
        motion,
        f"<silent{attr}>{reason}</silent>",
        kind=Kind.DOT,
        message_id=system_uuid("wakes-dot", *key),
        agent=agent,
        turn=turn,
    )
