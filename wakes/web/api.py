"""POST /api/motions/<slug>/typing/: a person's "I am typing" ping (the loop waits for them)."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Q
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated, NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from motion_runner.people.access import access, readable_motion
from motion_runner.thread.bell import ring_for

from ..models import Dials, MentionWake, TypingPing, WakeRequest, clock
from ..turn.requests import RequestRefused, answer, grant


class TypingPingView(APIView):
    @extend_schema(
        request=None,
        responses={
            200: inline_serializer("Typing", {"typing": serializers.ListField(child=serializers.CharField())})
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to post in a Motion.")
        motion = readable_motion(request.user, slug)
        if not access().can_type(request.user, motion):
            raise PermissionDenied("Only a person who may read this Motion says they are typing in it.")
        who = request.user.get_username()
        TypingPing.objects.update_or_create(motion=motion, who=who, defaults={"at": clock.now()})
        ring_for(motion.pk)  # readers waiting in a long poll see the typing at once
        return Response({"typing": typing_in(motion, exclude=who)}, status=status.HTTP_200_OK)

    @extend_schema(
        request=None,
        responses={
            200: inline_serializer(
                "TypingStopped", {"typing": serializers.ListField(child=serializers.CharField())}
            )
        },
        description="The signed-in person stopped typing (or posted): said at once, not after the typing dial.",
    )
    def delete(self, request: Request, slug: str) -> Response:
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to post in a Motion.")
        motion = readable_motion(request.user, slug)
        if not access().can_type(request.user, motion):
            raise PermissionDenied("Only a person who may read this Motion says they are typing in it.")
        who = request.user.get_username()
        if TypingPing.objects.filter(motion=motion, who=who).delete()[0]:
            ring_for(motion.pk)  # readers waiting in a long poll see it stop at once
        return Response({"typing": typing_in(motion, exclude=who)}, status=status.HTTP_200_OK)


def typing_in(motion, exclude: str | None = None) -> list[str]:
    """Who is typing in the Motion now (pings younger than the typing dial), but `exclude`."""
    ttl = timedelta(seconds=Dials.load().typing_ttl_seconds)
    pings = TypingPing.objects.filter(motion=motion, at__gt=clock.now() - ttl)
    if exclude:
        pings = pings.exclude(who=exclude)
    return sorted(pings.values_list("who", flat=True))


def typing_since(motion, moment, exclude: str | None = None) -> bool:
    """Someone other than `exclude` pinged after `moment`: a long poll answers at once."""
    pings = TypingPing.objects.filter(motion=motion, at__gt=moment)
    if exclude:
        pings = pings.exclude(who=exclude)
    return pings.exists()


class WakeRequestSerializer(serializers.ModelSerializer):
    agent = serializers.CharField(source="agent.name")
    decided_by = serializers.CharField(source="decided_by.username", default=None)

    class Meta:
        model = WakeRequest
        fields = [
            "id",
            "motion",
            "agent",
            "kind",
            "to",
            "status",
            "decided_by",
            "decided_at",
            "granted_turn",
            "created_at",
        ]


def open_requests(motion) -> list[dict]:
    """Read on every poll of the thread: the serializer only when there is something to show."""
    queryset = WakeRequest.objects.filter(motion=motion, status=WakeRequest.Status.OPEN).select_related(
        "agent"
    )
    found = list(queryset)
    return WakeRequestSerializer(found, many=True).data if found else []


# Long enough for every open thread page to poll at least once after an answer.
RECENTLY_ANSWERED = timedelta(minutes=10)


def showing_cards(since) -> Q:
    """The requests a thread shows: open ones, and those answered after `since`."""
    return Q(status=WakeRequest.Status.OPEN) | Q(decided_at__gt=since)


def request_cards(motion, since) -> tuple[list[dict], list[dict]]:
    """`open_requests` and `recently_answered(since)` as one query."""
    found = list(
        WakeRequest.objects.filter(showing_cards(since), motion=motion).select_related("agent", "decided_by")
    )
    opened = [request for request in found if request.status == WakeRequest.Status.OPEN]
    answered = [request for request in found if request.decided_at is not None and request.decided_at > since]
    return (
        WakeRequestSerializer(opened, many=True).data if opened else [],
        WakeRequestSerializer(answered, many=True).data if answered else [],
    )


def recently_answered(motion) -> list[dict]:
    """Requests answered in the last few minutes: open pages turn their cards into "granted by
    justin, 2 min ago" without a reload (a page loaded later reads it from the card's row)."""
    since = clock.now() - RECENTLY_ANSWERED
    queryset = WakeRequest.objects.filter(motion=motion, decided_at__gt=since).select_related(
        "agent", "decided_by"
    )
    found = list(queryset)
    return WakeRequestSerializer(found, many=True).data if found else []


class AnswerRequest(APIView):
    """Grant (tools: wake the agent again with full tools; merge/deploy: done), decline, done."""

    actions = {"grant", "decline", "done"}

    @extend_schema(request=None, responses=WakeRequestSerializer)
    def post(self, request: Request, pk: int, action: str) -> Response:
        if action not in self.actions:
            raise NotFound(f"unknown action {action!r}")
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to answer a request.")
        wake_request = WakeRequest.objects.select_related("motion").filter(pk=pk).first()
        if wake_request is None or not access().can_read(request.user, wake_request.motion):
            raise NotFound("no such request")
        if not access().can_answer_request(request.user, wake_request.motion):
            raise PermissionDenied("Only a person answers a request.")
        sign_in = request.session.get("sign_in", "") if hasattr(request, "session") else ""
        try:
            if action == "grant":
                decided = grant(pk, request.user, sign_in)
            else:
                status_for = {"decline": WakeRequest.Status.DECLINED, "done": WakeRequest.Status.DONE}
                decided = answer(pk, request.user, status_for[action], sign_in)
        except RequestRefused as refusal:
            raise PermissionDenied(str(refusal)) from refusal
        return Response(WakeRequestSerializer(decided).data, status=status.HTTP_200_OK)


class MentionHoldSerializer(serializers.Serializer):
    agent = serializers.CharField()
    mention = serializers.UUIDField()
    by = serializers.CharField()
    reason = serializers.CharField()
    until = serializers.DateTimeField(allow_null=True)


class MentionHoldsSerializer(serializers.Serializer):
    holds = MentionHoldSerializer(many=True)


class HoldsView(APIView):
    """GET /api/motions/<slug>/holds/: mentions owed a turn that has not started, and why
    ("a turn is under way here; this one is next", "the hourly cap: next slot at …"). Whoever may
    read the Motion may read its holds; anyone else gets the same 404 as for no Motion."""

    @extend_schema(responses={200: MentionHoldsSerializer})
    def get(self, request: Request, slug: str) -> Response:
        motion = readable_motion(request.user, slug)
        return Response({"holds": holds_in(motion)})


def holds_in(motion) -> list[dict]:
    held = (
        MentionWake.objects.filter(message__motion=motion)
        .holds_in_force()
        .select_related("agent", "message")
        .order_by("created_at", "pk")
    )
    return [
        {
            "agent": h.agent.name,
            "mention": str(h.message_id),
            "by": h.message.sender,
            "reason": h.hold,
            "until": h.hold_until.isoformat() if h.hold_until else None,
        }
        for h in held
    ]
