from __future__ import annotations

import time
from datetime import timedelta

from django.db.models import Q
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, permissions, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import NotAuthenticated, ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from wakes.api import open_requests, recently_answered, typing_in, typing_since

from ..models import Kind, Message, Motion, Turn, TurnStatus
from ..posting import PostIdTaken, post_person_message
from . import cursor as cursors
from .agent_views import Conflict, member_motion, post_as_agent
from .auth import AgentKeyAuthentication, request_agent
from .serializers import (
    MessageSerializer,
    MotionSerializer,
    PostMessageSerializer,
    TurnSerializer,
    message_rows,
)

MAX_PAGE = 500
DEFAULT_PAGE = 200
MAX_OVERLAP_SECONDS = 30
MAX_WAIT_SECONDS = 25.0
# How often a long poll looks again: one indexed query, cheap enough at this rate.
WAIT_CHECK_SECONDS = 0.005


# Typing is looked for less often than messages: it only has to show within a fraction of a second.
TYPING_CHECK_SECONDS = 0.25


def wait_for_messages(newer, wait: float, someone_typing=None) -> bool:
    """Until something is written after the cursor (True), someone else starts typing (True),
    or the wait is over (False)."""
    deadline = time.monotonic() + wait
    typing_checked = time.monotonic()
    while True:
        if newer.exists():
            return True
        now = time.monotonic()
        if someone_typing is not None and now - typing_checked >= TYPING_CHECK_SECONDS:
            if someone_typing():
                return True
            typing_checked = now
        if now >= deadline:
            return False
        time.sleep(WAIT_CHECK_SECONDS)


def running_activity(motion: Motion) -> list[dict]:
    return [
        {"agent": name, "activity": activity, "turn": pk, "mode": mode}
        for pk, name, activity, mode in Turn.objects.filter(
            motion=motion, status=TurnStatus.RUNNING
        ).values_list("pk", "agent__name", "activity", "mode")
    ]


class Pages(LimitOffsetPagination):
    default_limit = 100
    max_limit = MAX_PAGE


def parse_time(name: str, value: str):
    from django.utils.dateparse import parse_datetime

    moment = parse_datetime(value)
    if moment is None:
        raise ValidationError({name: [f"not an ISO 8601 time: {value!r}"]})
    return moment


class MotionList(generics.ListAPIView):
    """Motions, newest first; `agent=<name>` keeps those the agent belongs to."""

    serializer_class = MotionSerializer
    pagination_class = Pages

    @extend_schema(parameters=[OpenApiParameter("agent", str, description="An agent's name.")])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        queryset = Motion.objects.prefetch_related("agents")
        if name := self.request.query_params.get("agent"):
            queryset = queryset.filter(agents__name=name.lstrip("@"))
        return queryset


class MotionDetail(generics.RetrieveAPIView):
    queryset = Motion.objects.all()
    serializer_class = MotionSerializer
    lookup_field = "slug"


class MessageList(APIView):
    authentication_classes = [AgentKeyAuthentication, SessionAuthentication]

    """Messages of one Motion in order, after a cursor.

    `after` is exclusive. `overlap=N` (seconds, at most 30) also returns what was written up to
    N seconds before the cursor: a poller that dedupes on `id` uses it so that a message whose
    insert committed late is still seen. `wait=N` (seconds, at most 25) holds the request until
    there is something after the cursor (a long poll): a reader learns of a new message within
    the server's check interval instead of its own poll interval.
    """

    @extend_schema(
        parameters=[
            OpenApiParameter("after", str, description="A message's cursor; exclusive."),
            OpenApiParameter("limit", int, description=f"At most {MAX_PAGE}."),
            OpenApiParameter("kind", str, description="Comma-separated kinds."),
            OpenApiParameter("since", str, description="ISO time; created at or after."),
            OpenApiParameter("until", str, description="ISO time; created before."),
            OpenApiParameter("overlap", int, description="Seconds to look back before `after`."),
            OpenApiParameter("raw", bool, description="Include the harness's raw JSON line."),
            OpenApiParameter("wait", float, description="Seconds to wait for something new (at most 25)."),
        ],
        responses=MessageSerializer(many=True),
    )
    def get(self, request: Request, slug: str) -> Response:
        motion = get_object_or_404(Motion, slug=slug)
        params = request.query_params
        queryset = Message.objects.filter(motion=motion).select_related("turn")
        try:
            limit = min(max(int(params.get("limit", DEFAULT_PAGE)), 1), MAX_PAGE)
            overlap = min(max(int(params.get("overlap", 0)), 0), MAX_OVERLAP_SECONDS)
        except ValueError as exc:
            raise ValidationError({"limit": ["must be a whole number"]}) from exc
        try:
            wait = min(max(float(params.get("wait", 0)), 0.0), MAX_WAIT_SECONDS)
        except ValueError as exc:
            raise ValidationError({"wait": ["must be a number of seconds"]}) from exc
        newer = None
        if after := params.get("after"):
            created, message_id = cursors.decode(after)
            newer = Q(created_at__gt=created) | Q(created_at=created, id__gt=message_id)
            if overlap:
                queryset = queryset.filter(created_at__gt=created - timedelta(seconds=overlap))
            else:
                queryset = queryset.filter(newer)
        if kinds := params.get("kind"):
            queryset = queryset.filter(kind__in=[k.strip() for k in kinds.split(",")])
        for name, lookup in (("since", "created_at__gte"), ("until", "created_at__lt")):
            if value := params.get(name):
                queryset = queryset.filter(**{lookup: parse_time(name, value)})
        queryset = queryset.order_by("created_at", "id")
        me = request.user.get_username() if request.user.is_authenticated else None
        if wait and newer is not None:
            began = timezone.now()
            wait_for_messages(queryset.filter(newer), wait, lambda: typing_since(motion, began, exclude=me))
        results = message_rows(queryset[:limit], raw=params.get("raw") in ("1", "true"))
        next_cursor = results[-1]["cursor"] if results else after
        return Response(
            {
                "results": results,
                "next": next_cursor,
                "more": len(results) == limit,
                "activity": running_activity(motion),
                "requests": open_requests(motion),
                "answered_requests": recently_answered(motion),
                "typing": typing_in(motion, exclude=me),
            }
        )

    @extend_schema(
        request=PostMessageSerializer,
        responses={201: MessageSerializer, 200: MessageSerializer},
        description="As the key's agent (`Authorization: Bearer <key>`; `id` makes a retry "
        "idempotent) or as the signed-in person.",
    )
    def post(self, request: Request, slug: str) -> Response:
        body = PostMessageSerializer(data=request.data)
        if agent := request_agent(request):
            motion = member_motion(slug, agent)
            body.is_valid(raise_exception=True)
            data = body.validated_data
            return post_as_agent(agent, motion, data, kind=Kind.TEXT, text=data["text"])
        motion = get_object_or_404(Motion, slug=slug)
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in, or send an agent key, to post in a Motion.")
        body.is_valid(raise_exception=True)
        try:
            message, created = post_person_message(
                motion,
                request.user,
                body.validated_data["text"],
                sign_in=request.session.get("sign_in", "password"),
                source="web",
                message_id=body.validated_data.get("id"),
            )
        except PostIdTaken as taken:
            raise Conflict(str(taken)) from taken
        answer = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(MessageSerializer(message).data, status=answer)


class TurnList(generics.ListAPIView):
    """Turns, newest first, with their cost and outcome (status, result_subtype, error)."""

    serializer_class = TurnSerializer
    pagination_class = Pages

    @extend_schema(
        parameters=[
            OpenApiParameter("motion", str, description="A Motion's slug."),
            OpenApiParameter("agent", str, description="An agent's name."),
            OpenApiParameter("status", str, description="Comma-separated statuses."),
            OpenApiParameter("since", str, description="ISO time; queued at or after."),
            OpenApiParameter("until", str, description="ISO time; queued before."),
        ]
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        params = self.request.query_params
        queryset = Turn.objects.select_related("agent")
        if slug := params.get("motion"):
            queryset = queryset.filter(motion_id=slug)
        if name := params.get("agent"):
            queryset = queryset.filter(agent__name=name.lstrip("@"))
        if states := params.get("status"):
            wanted = [state.strip() for state in states.split(",")]
            unknown = set(wanted) - set(TurnStatus.values)
            if unknown:
                raise ValidationError(
                    {"status": [f"unknown status {sorted(unknown)}; known: {TurnStatus.values}"]}
                )
            queryset = queryset.filter(status__in=wanted)
        for name, lookup in (("since", "queued_at__gte"), ("until", "queued_at__lt")):
            if value := params.get(name):
                queryset = queryset.filter(**{lookup: parse_time(name, value)})
        return queryset.order_by("-queued_at", "-pk")


class TurnDetail(generics.RetrieveAPIView):
    queryset = Turn.objects.select_related("agent")
    serializer_class = TurnSerializer
    permission_classes = [permissions.AllowAny]
