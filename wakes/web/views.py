"""What wakes/ adds to the runner's pages: the Motion list (its cards are the wakes' overview:
spend, budget left, waiting requests, agents' states), and, through the runner's hooks
(motion_runner/signals.py, connected in WakesConfig.ready), the thread page's and the thread
poll's wake parts."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib import messages
from django.db import connection
from django.http import HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from motion_runner.models import Message, Motion, Scram
from motion_runner.people.access import access
from motion_runner.people.context import sign_in_of
from motion_runner.runner.stopping import ScramHeld, lift_scram, raise_scram
from motion_runner.signals import MAX_SHOWN_TYPING
from motion_runner.sql import wake_parts

from ..decision.trust import decide
from ..models import Dials, TypingPing, WakeRequest, clock
from ..turn.requests import person_may_grant
from .api import RECENTLY_ANSWERED, request_cards, typing_since
from .api_steer import may_scram
from .overview import motion_cards

TYPING_TTL_DEFAULT = Dials._meta.get_field("typing_ttl_seconds").default


def motion_list(request):
    motions = list(access().readable(request.user, Motion.objects.all()).prefetch_related("agents"))
    # "None" and "none you may see" differ: a signed-out visitor is told to sign in.
    hidden = Motion.objects.count() - len(motions)
    context = {
        "cards": motion_cards(motions),
        "hidden": hidden,
        "scram": Scram.holding(),
        "may_scram": may_scram(request.user),
    }
    return render(request, "motion_runner/motion_list.html", context)


@require_POST
def scram_button(request):
    """The scram's button (the Motion list, a thread's banner): raise it with a reason, or lift
    it; staff and the people the `scram_for` dial names. Back to the page it was pressed on."""
    if not request.user.is_authenticated or not may_scram(request.user):
        return HttpResponseForbidden(
            "Only staff and the people the scram_for dial names raise or lift a scram."
        )
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("motion-list")
    by = request.user.get_username()
    if request.POST.get("action") == "lift":
        if lift_scram(by) is None:
            messages.info(request, "No scram holds.", fail_silently=True)
        return redirect(back)
    reason = request.POST.get("reason", "").strip()
    if not reason:
        messages.error(request, "A scram needs a reason: nothing was raised.", fail_silently=True)
        return redirect(back)
    try:
        raise_scram(by, reason[:2000])
    except ScramHeld:
        messages.info(request, "A scram already holds.", fail_silently=True)
    return redirect(back)


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
    return {
        "can_grant": can_grant,
        "wake_mode": wake_mode,
        "wake_rule": wake_rule,
        "can_post": access().can_post(request.user, motion),
        "steer_url": reverse("api-steer", args=[motion.pk]),
        "preview_url": reverse("wake-preview", args=[motion.pk]),
        "may_scram": may_scram(request.user),
        "scram_holds": Scram.holding() is not None,
    }


# wakes' models the wake parts read (motion_runner/sql/wake_parts.py names their columns through them).
WAKE_PART_MODELS = wake_parts.WakeModels(dials=Dials, cards=WakeRequest, pings=TypingPing)


def thread_poll_fields(motion: Motion, reader: str | None) -> dict[str, Any]:
    """The runner's `thread_poll_fields` hook: request cards, who is typing, and a scram.

    Every poll of the thread asks, so it is one query: the typing dial, whether any request card
    shows, a holding scram, and the Motion's pings (one row each, or one row of NULLs); the cards
    themselves only when some show (`request_cards`). The same answers as `open_requests`,
    `recently_answered` and `typing_in` (tests/motion_runner/api/test_poll_cost.py)."""
    now = clock.now()
    since = now - RECENTLY_ANSWERED
    rows = wake_part_rows(motion, since, reader)
    scram = None
    for _, _, _, _, reason, raised_by, raised_at in rows:
        if reason is not None:
            scram = {"reason": reason, "raised_by": raised_by, "raised_at": raised_at}
    opened, answered = request_cards(motion, since) if rows and rows[0][1] else ([], [])
    return {"requests": opened, "answered_requests": answered, "typing": typers(rows, now), "scram": scram}


def wake_part_rows(motion: Motion, since: datetime, reader: str | None) -> list[tuple]:
    return wake_parts.read(
        connection,
        WAKE_PART_MODELS,
        open_status=WakeRequest.Status.OPEN.value,
        since=since,
        reader=reader or "",
        motion_id=motion.pk,
    )


def typers(rows: list[tuple], now: datetime) -> list[str]:
    """Who the wake parts' rows say is typing: pings younger than the typing dial, as `typing_in`
    (Dials.load(): the field's default while no row is saved)."""
    typing = []
    for seconds, _, who, at, *_ in rows:
        ttl = timedelta(seconds=TYPING_TTL_DEFAULT if seconds is None else seconds)
        if who is not None and at > now - ttl:
            typing.append(who)
    # As many as a poll may name back (`typing=`), so a crowd's page can ask with what it shows.
    return sorted(typing)[:MAX_SHOWN_TYPING]


def someone_else_typed(motion: Motion, since: datetime, reader: str | None, shown: list[str] | None) -> bool:
    """The runner's `thread_poll_news` hook. A reader that says who it shows typing is answered
    when that is no longer so: someone began (even between its polls) or stopped. Another is
    answered by a ping since its wait began."""
    if shown is None:
        return typing_since(motion, since, exclude=reader)
    # Read as the answer reads it (one query), so that the answer shows what differed.
    now = clock.now()
    return typers(wake_part_rows(motion, now - RECENTLY_ANSWERED, reader), now) != sorted(shown)
