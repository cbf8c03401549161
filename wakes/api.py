"""POST /api/motions/<slug>/typing/: a person's "I am typing" ping (the loop waits for them)."""

from __future__ import annotations

from datetime import timedelta

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated, NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from motion_runner.access import access, readable_motion

from . import clock
from .models import Dials, TypingPing, WakeRequest
from .requests import RequestRefused, answer, grant


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
        now = clock.now()
        who = request.user.get_username()
        TypingPing.objects.update_or_create(motion=motion, who=who, defaults={"at": now})
        ttl = timedelta(seconds=Dials.load().typing_ttl_seconds)
        others = (
            TypingPing.objects.filter(motion=motion, at__gt=now - ttl)
            .exclude(who=who)
            .values_list("who", flat=True)
        )
        return Response({"typing": sorted(others)}, status=status.HTTP_200_OK)


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
