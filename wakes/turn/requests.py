"""Requests: `<tools to="…"/>`, `<merge to="…"/>`, `<deploy to="…"/>` in an agent's reply.

A tools request shows 🔨 by the Motion's name until a trusted person grants it (the agent is
woken again, with full tools) or declines it. Merge and deploy requests are cards only a person
can act on: nothing merges or deploys on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from motion_runner.ingest.system_lines import insert_system_line
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Kind, Message, Turn
from motion_runner.runner.turns import enqueue_turn
from motion_runner.thread.request_tags import asking_tags

from ..decision.steering import scram_holds
from ..decision.trust import full_tools_for
from ..models import WakeRequest, clock
from .wake import post_wake_line, resume_after_look_only


class RequestRefused(Exception):
    """A person who may not answer this request tried to: the reason is for them to read."""


@dataclass(frozen=True)
class Ask:
    kind: str
    to: str


def find_asks(text: str) -> list[Ask]:
    """The asks in an agent's reply: the thread hides the same tags (motion_runner/thread/request_tags.py)."""
    return [Ask(match[1].lower(), (match[2] or match[3] or "").strip()) for match in asking_tags(text)]


def record_requests(sender, turn: Turn, **kwargs) -> list[WakeRequest]:
    """After a turn, each ask in its replies becomes a request card, once."""
    created = []
    replies = Message.objects.filter(turn=turn, kind=Kind.TEXT).order_by("created_at", "id")
    for reply in replies:
        for index, ask in enumerate(find_asks(reply.text)):
            card = Message(
                id=system_uuid("request", reply.id, index),
                motion=turn.motion,
                sender=turn.agent.name,
                agent=turn.agent,
                source="runner",
                kind=Kind.REQUEST,
                tool_name=ask.kind,
                text=ask.to,
                turn=turn,
            )
            with transaction.atomic():
                if insert_system_line(card):
                    created.append(
                        WakeRequest.objects.create(
                            motion=turn.motion,
                            agent=turn.agent,
                            turn=turn,
                            message=card,
                            kind=ask.kind,
                            to=ask.to,
                        )
                    )
    return created


def person_may_grant(user, sign_in: str) -> tuple[bool, str]:
    if user is None or not user.is_authenticated:
        return False, "Sign in to answer a request."
    if sign_in == "ssh":
        return True, "signed in with an SSH key"
    if user.get_username() in full_tools_for():
        return True, "named in full_tools_for"
    return False, (
        "Only a person signed in with an SSH key, or named in full_tools_for, can grant full tools; "
        f"you signed in with {sign_in or 'a password'}."
    )


def _decide(request_id: int, user, status: str) -> WakeRequest:
    with transaction.atomic():
        request = WakeRequest.objects.select_for_update().select_related("motion", "agent").get(pk=request_id)
        if request.status != WakeRequest.Status.OPEN:
            raise RequestRefused(f"This request was already {request.status}.")
        request.status = status
        request.decided_by = user
        request.decided_at = timezone.now()
        request.save(update_fields=["status", "decided_by", "decided_at"])
    return request


def grant(request_id: int, user, sign_in: str) -> WakeRequest:
    allowed, why = person_may_grant(user, sign_in)
    if not allowed:
        raise RequestRefused(why)
    if scram_holds():
        raise RequestRefused("a scram holds: nothing wakes until it is lifted")
    request = WakeRequest.objects.get(pk=request_id)
    if request.kind != WakeRequest.Kind.TOOLS:
        return answer(request_id, user, WakeRequest.Status.DONE, sign_in)
    with transaction.atomic():
        request = _decide(request_id, user, WakeRequest.Status.GRANTED)
        name = user.get_username()
        turn = enqueue_turn(
            request.motion,
            request.agent,
            f"{name} granted you full tools for: {request.to}\nGo ahead.",
            reason="grant",
            reason_detail=f"full tools granted by {name} ({why})",
            mode="full",
            mode_rule=f"granted by {name}, {why}",
            effort="high",
            woken_by=request.message,
            resume_after_look_only=resume_after_look_only(),
            queued_at=clock.now(),
        )
        post_wake_line(turn, f"full tools granted by {name} ({why})")
        request.granted_turn = turn
        request.save(update_fields=["granted_turn"])
    return request


def answer(request_id: int, user, status: str, sign_in: str = "") -> WakeRequest:
    """Decline a request, or mark a merge/deploy card done. A tools request is answered only
    by someone who could grant it; a merge or deploy card by any signed-in person."""
    if user is None or not user.is_authenticated:
        raise RequestRefused("Sign in to answer a request.")
    if WakeRequest.objects.filter(pk=request_id, kind=WakeRequest.Kind.TOOLS).exists():
        allowed, why = person_may_grant(user, sign_in)
        if not allowed:
            raise RequestRefused(why)
    return _decide(request_id, user, status)
