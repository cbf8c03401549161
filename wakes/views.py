"""What wakes/ adds to the runner's pages: the Motion list (its cards are the wakes' overview:
spend, budget left, waiting requests, agents' states), and, through the runner's hooks
(motion_runner/signals.py, connected in WakesConfig.ready), the thread page's and the thread
poll's wake parts."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.shortcuts import render

from motion_runner.access import access
from motion_runner.context import sign_in_of
from motion_runner.models import Message, Motion

from .api import request_cards, typing_in, typing_since
from .overview import motion_cards
from .requests import person_may_grant
from .trust import decide


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
    """The runner's `thread_poll_fields` hook: request cards and who is typing."""
    opened, answered = request_cards(motion)
    return {"requests": opened, "answered_requests": answered, "typing": typing_in(motion, exclude=reader)}


def someone_else_typed(motion: Motion, since: datetime, reader: str | None) -> bool:
    """The runner's `thread_poll_news` hook: a typing ping answers a waiting poll."""
    return typing_since(motion, since, exclude=reader)
