"""Arrivals (issue 33 item 3): a person signing in, or posting, after `greet_gap_hours` away is
greeted by at most one agent, once, and the wake says why (memory-lane's poller: greet_arrivals,
ARRIVAL_ASK, GREET_GAP).

- Away: their last post anywhere is older than the gap; signing in, never having posted counts
  too (memory-lane's "They haven't said anything in a Mood yet"). A first post ever is not an
  arrival: the greeting guidance every wake carries covers a newcomer's first words.
- Once: a Greeting row for the person within the gap (another device, a sign-in then a post)
  means no second greeting, by any agent; the person's row is locked while it is decided.
- Where: a post's own Motion; a sign-in's, the Motion it leads to (`next`), else the one they
  last posted in; only one they may post in.
- Who: an agent the post mentions greets in the wake that mention brings (its prompt carries the
  arrival, wakes/turn/wake_lines.py; no second turn). Otherwise one agent of the Motion that may
  speak unprompted there (listening, not archived, not reserved, not fenced), the one that spoke
  there last, is woken for the arrival (reason "arrival"): look-only, counted in the ledger like a
  consideration and refused by the same daily caps; the post is marked considered for it.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max, Q

from motion_runner.models import Agent, Kind, Message, Motion, Source, Turn
from motion_runner.people.access import access

from ..decision.quoting import header_name
from ..decision.steering import looks_unprompted, scram_holds, steering_for
from ..models import Dials, Greeting, Spend, clock
from ..models.dials import reading_dials_once
from ..models.in_force import resolve
from ..money.budget import day_of, watch_wake_refusal
from ..turn.context import Reading, posts_of, render
from ..turn.wake import wake
from ..turn.wake_lines import why
from .loop import fenced_agents, mark_busy
from .mention_path import mentioned_agents

log = logging.getLogger(__name__)

LATELY = 8  # posts the arrival's wake reads
NEXT_MOTION = re.compile(r"/motions/([\w-]+)/")


def gap() -> timedelta | None:
    hours = Dials.load().greet_gap_hours
    return timedelta(hours=hours) if hours and hours > 0 else None


def own_posts(user) -> Q:
    return Q(author=user) | Q(author__isnull=True, agent__isnull=True, sender__iexact=user.get_username())


def last_post(user, until: datetime, but: Message | None = None) -> Message | None:
    """Their newest post up to `until`, `but` (the post being looked at) aside."""
    return (
        Message.objects.filter(own_posts(user), kind=Kind.TEXT, created_at__lte=until)
        .exclude(source__in=(Source.SYSTEM, Source.WATCH, Source.RUNNER))
        .exclude(pk=getattr(but, "pk", None))
        .order_by("-created_at", "-id")
        .first()
    )


def greeter(motion: Motion, mentioned: list[Agent]) -> tuple[Agent | None, bool]:
    """(the agent to greet, whether it greets in its mention's wake)."""
    fenced = fenced_agents()
    for agent in mentioned:
        if agent.name not in fenced and motion.agents.filter(pk=agent.pk).exists():
            return agent, True
    candidates = [
        agent
        for agent in motion.agents.filter(listening=True).exclude(name__in=fenced)
        if looks_unprompted(motion.pk, agent.pk)
        and steering_for(motion.pk, agent.pk).discretion != "reserved"
    ]
    if not candidates:
        return None, False
    spoke = dict(
        Message.objects.filter(motion=motion, agent__in=candidates)
        .exclude(source=Source.SYSTEM)
        .values_list("agent_id")
        .annotate(last=Max("created_at"))
    )
    # The one that spoke here last; then any, by name.
    candidates.sort(key=lambda a: a.name)
    candidates.sort(key=lambda a: spoke.get(a.pk) or datetime.min.replace(tzinfo=UTC), reverse=True)
    return candidates[0], False


def arrive(user, motion: Motion, how: str, *, post: Message | None = None, mentioned=(), dispatch=True):
    """Greet `user` in `motion` if they arrive; the Greeting, or None."""
    span = gap()
    if span is None or scram_holds() or not access().can_post(user, motion):
        return None
    now = clock.now()
    before = post.created_at if post is not None else now
    last = last_post(user, before, post)
    if last is not None and before - last.created_at < span:
        return None  # they never left
    if last is None:
        return None  # never posted (a first post, a first sign-in): the guidance in every wake covers it
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        if Greeting.objects.filter(person=user, at__gt=now - span).exists():
            return None  # greeted already (another device, another agent)
        agent, in_mention = greeter(motion, list(mentioned))
        if agent is None:
            return None
        greeting = Greeting.objects.create(
            person=user, motion=motion, agent=agent, how=how, away_since=last and last.created_at, at=now
        )
        if not in_mention:
            greeting.turn = wake_to_greet(greeting, post, dispatch=dispatch)
            if greeting.turn is None:
                greeting.delete()  # refused by the caps: nobody greeted them
                return None
            greeting.save(update_fields=["turn"])
    return greeting


def wake_to_greet(greeting: Greeting, post: Message | None, *, dispatch: bool) -> Turn | None:
    motion, agent, now = greeting.motion, greeting.agent, clock.now()
    dials = resolve(motion.pk, agent.pk)
    if watch_wake_refusal(motion.pk, agent.pk, dials, now) is not None:
        return None
    mark_busy(motion, agent, post.created_at if post is not None else None, now)
    reading = Reading(new_since=post.created_at - timedelta(microseconds=1) if post is not None else now)
    reading.posts = list(reversed(posts_of(motion.pk).order_by("-created_at", "-id")[:LATELY]))
    said = why(greeting)
    prompt = render(
        motion,
        agent,
        "arrival",
        f"{header_name(said[0].upper() + said[1:])}. You are the one agent asked to greet them here.",
        reading,
        dials,
        heading="The Motion lately, newest last:",
        ask=Dials.load().arrival_ask.strip() or "Greet them if you have something that is theirs.",
    )
    turn = wake(
        motion,
        agent,
        prompt=prompt,
        reason="arrival",
        why=f"an arrival: {said}",
        effort=dials.consider_effort,
        cap=dials.consideration_cap_usd,
        woken_by=None,  # look-only: a greeting needs no tools
        dispatch=dispatch,
    )
    if turn is None:
        return None  # shadow mode: decided and recorded, nothing reserved
    Spend.objects.create(
        kind=Spend.Kind.CONSIDERATION,
        motion=motion,
        agent=agent,
        turn=turn,
        day=day_of(now),
        at=now,
        amount=turn.max_budget_usd or 0,
        reserved=turn.max_budget_usd or 0,
        note="arrival",
    )
    return turn


# --- the two ways in ---------------------------------------------------------------------------


@reading_dials_once
def on_message_created(sender, message: Message, **kwargs) -> None:
    """A person's post after the gap (message_created receiver; never raises)."""
    if message.kind != Kind.TEXT or message.agent_id is not None or message.author_id is None:
        return
    if message.source in (Source.SYSTEM, Source.WATCH, Source.RUNNER):
        return
    try:
        if message.created_at < clock.now() - timedelta(minutes=Dials.load().backfill_horizon_minutes):
            return  # an old post imported late: its moment has passed
        mentioned = mentioned_agents_of(message)
        arrive(message.author, message.motion, Greeting.How.POSTED, post=message, mentioned=mentioned)
    except Exception:
        log.exception("could not look at the arrival of message %s", message.pk)


def mentioned_agents_of(message: Message) -> list[Agent]:
    return mentioned_agents(message) if "@" in message.text else []


def on_signed_in(sender, request, user, **kwargs) -> None:
    """A sign-in after the gap (user_logged_in receiver; never raises)."""
    try:
        motion = motion_to_greet_in(request, user)
        if motion is not None:
            arrive(user, motion, Greeting.How.SIGNED_IN)
    except Exception:
        log.exception("could not look at the sign-in of %s", user)


def on_host_signed_in(sender, user, **kwargs) -> None:
    """A sign-in on the host's own page (memory-lane's device cookie; signals.host_signed_in): the
    same arrival as a sign-in here, in the Motion they last posted in (never raises)."""
    on_signed_in(sender, None, user)


def motion_to_greet_in(request, user) -> Motion | None:
    target = ""
    if request is not None:
        target = request.GET.get("next", "") or request.POST.get("next", "")
    if match := NEXT_MOTION.search(target or ""):
        return Motion.objects.filter(pk=match.group(1)).first()
    last = last_post(user, clock.now())
    return last.motion if last is not None else None
