"""What wakes/ adds to the runner's pages: the Motion list (its cards are the wakes' overview:
spend, budget left, waiting requests, agents' states), and, through the runner's hooks
(motion_runner/signals.py, connected in WakesConfig.ready), the thread page's and the thread
poll's wake parts."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Exists, FilteredRelation, OuterRef, Q, Subquery
from django.shortcuts import render

from motion_runner.access import access
from motion_runner.context import sign_in_of
from motion_runner.models import Message, Motion

from . import clock
from .api import RECENTLY_ANSWERED, request_cards, showing_cards, typing_since
from .models import Dials, WakeRequest
from .overview import motion_cards
from .requests import person_may_grant
from .trust import decide

TYPING_TTL_DEFAULT = Dials._meta.get_field("typing_ttl_seconds").default


def motion_list(request):
    motions = list(access().readable(request.user, Motion.objects.all()).prefetch_related("agents"))
    return render(request, "motion_runner/motion_list.html", {"cards": motion_cards(motions)})


def what_your_posts_wake(request) -> tuple[str, str]:
    """The mode a post by this reader would wake an agent with, and the rule that says so."""
    post = Message(
        source="web", author=request.user, sender=request.user.get_username(), sign_in=sign_in_of(request)
    )
    decision = decide(post)
    return decision.mode, decision.rule


def thread_page_context(request, motion: Motion) -> dict[str, Any]:
    """The runner's `thread_page_context` hook, for a signed-in reader."""
    can_grant, _ = person_may_grant(request.user, sign_in_of(request))
    wake_mode, wake_rule = what_your_posts_wake(request)
    return {"can_grant": can_grant, "wake_mode": wake_mode, "wake_rule": wake_rule}


def thread_poll_fields(motion: Motion, reader: str | None) -> dict[str, Any]:
    """The runner's `thread_poll_fields` hook: request cards and who is typing.

    Every poll of the thread asks, so it is one query: the Motion's row with the typing dial,
    whether any request card shows, and the pings (one row each, or one row of NULLs); the cards
    themselves only when there are some (`request_cards`)."""
    now = clock.now()
    since = now - RECENTLY_ANSWERED
    pings = ~Q(typing__who=reader) if reader else Q(typing__who__isnull=False)
    rows = list(
        Motion.objects.filter(pk=motion.pk)
        .annotate(
            ttl=Subquery(Dials.objects.filter(pk=1).values("typing_ttl_seconds")[:1]),
            cards=Exists(WakeRequest.objects.filter(showing_cards(since), motion=OuterRef("pk"))),
            ping=FilteredRelation("typing", condition=pings),
        )
        .values_list("ttl", "cards", "ping__who", "ping__at")
    )
    typing = []
    for seconds, _, who, at in rows:
        # As `typing_in` (Dials.load(): the field's default while no row is saved).
        ttl = timedelta(seconds=TYPING_TTL_DEFAULT if seconds is None else seconds)
        if who is not None and at > now - ttl:
            typing.append(who)
    cards = bool(rows) and rows[0][1]
    opened, answered = request_cards(motion, since) if cards else ([], [])
    return {"requests": opened, "answered_requests": answered, "typing": sorted(typing)}


def someone_else_typed(motion: Motion, since: datetime, reader: str | None) -> bool:
    """The runner's `thread_poll_news` hook: a typing ping answers a waiting poll."""
    return typing_since(motion, since, exclude=reader)
