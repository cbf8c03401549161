"""POST /api/motions/<slug>/stop/: stop an agent's running turn (or every one) in a Motion."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import NotAuthenticated, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Agent
from ..people.access import access, readable_motion
from ..runner.stopping import stop_turns
from .auth import AgentKeyAuthentication, request_agent


class StopBody(serializers.Serializer):
    agent = serializers.CharField(required=False, allow_blank=True, max_length=64)


class StopView(APIView):
    """Everyone who may post in the Motion may stop its turns (a person signed in, or one of its
    own agents by its key); everyone else is refused."""

    authentication_classes = [AgentKeyAuthentication, SessionAuthentication]

    @extend_schema(
        request=StopBody,
        responses=inline_serializer(
            "Stopped",
            {
                "stopped": serializers.ListField(child=serializers.IntegerField(), help_text="Turn ids."),
                "by": serializers.CharField(),
            },
        ),
    )
    def post(self, request: Request, slug: str) -> Response:
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to stop an agent.")
        motion = readable_motion(request.user, slug)
        if not access().can_post(request.user, motion):
            raise PermissionDenied("Only someone who may post in this Motion may stop its agents.")
        body = StopBody(data=request.data)
        body.is_valid(raise_exception=True)
        agents = None
        if name := (body.validated_data.get("agent") or "").lstrip("@"):
            agent = Agent.objects.filter(name=name, motions=motion).first()
            if agent is None:
                raise ValidationError({"agent": [f"@{name} is not an agent of this Motion"]})
            agents = [agent]
        speaker = request_agent(request)
        by = f"@{speaker.name}" if speaker else request.user.get_username()
        turns = stop_turns(motion, by, agents=agents)
        return Response({"stopped": [turn.pk for turn in turns], "by": by}, status=status.HTTP_200_OK)
