"""memory-lane's client contract, served beside the Motion routes (docs/memory-lane.md).

memory-lane renamed Motion to Mood in October 2026; its runner (poller/mood_poller.py) and its
transcript watcher (watcher/conversation_watcher.py) call these routes, and run unmodified against
this project with only the base URL and the key changed:

- `POST /api/moods/<slug>/stream/`, `…/quiet/`, `…/held/`: the runner, with an agent key (a
  `MOOD_RUNNER_KEYS` key as memory-lane's vault gives it, or one this project issued). The agent
  must be one of the Motion's agents; everyone else is refused (401 without a valid key, 403 for an
  agent not of that Motion).
- `POST /api/ingest/`: the transcript watcher, with `Bearer <INGEST_API_KEY>`; 503 while no key is
  configured (an open write path into the record is never the fallback), 401 for any other caller.

Errors are `{"error": "<text>"}`, the shape memory-lane's own endpoints answer and its clients log.
The runner gives up at once on 400/401/403/404/413/503 and retries anything else, so every
answer that would change on a retry is a 200 with the per-event counts instead.
"""

from __future__ import annotations

import hmac
import logging
import re
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import APIException, AuthenticationFailed, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from ..api.agent_views import AgentAPIView, BodyTooLarge, QuietView, check_speaks_for, member_motion
from ..api.auth import AgentKeyAuthentication, request_agent
from ..api.outage import answer_if_away
from ..api.stream_batch import MAX_EVENTS, StreamBody, check_batch_size, take_stream
from ..conf import app_settings
from ..ingest.system_lines import post_system_message
from ..lib.ids import system_uuid
from ..models import Agent, Kind, Motion
from ..people.access import readable_motion
from ..record import binding
from .held import holds_in, say_hold
from .remote import ingest_lines
from .runner_keys import RunnerKeyAuthentication

log = logging.getLogger(__name__)


def error_text(data: Any) -> str:
    """One line out of DRF's error data: `detail`, or `field: reason; field: reason`."""
    if isinstance(data, dict):
        if set(data) == {"detail"}:
            return str(data["detail"])
        return "; ".join(f"{key}: {error_text(value)}" for key, value in data.items())
    if isinstance(data, list):
        return "; ".join(error_text(item) for item in data)
    return str(data)


def flat_exception_handler(exc, context):
    """memory-lane's error body, `{"error": "<text>"}`, with DRF's status codes and headers."""
    if (away := answer_if_away(exc, context["request"].path, flat=True)) is not None:
        return away
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    response.data = {"error": error_text(response.data)}
    return response


class MoodAPIView(AgentAPIView):
    """An agent endpoint of memory-lane's contract: its runner keys first, then the project's own."""

    authentication_classes = [RunnerKeyAuthentication, AgentKeyAuthentication]

    def get_authenticators(self):
        return [auth() for auth in self.authentication_classes]

    def get_exception_handler(self):
        return flat_exception_handler


FlatError = inline_serializer("MoodError", {"error": serializers.CharField()})


def mood_motion(slug: str, agent: Agent, request: Request) -> Motion:
    """The route's Motion, its agent a member. Under the memory_lane binding, a Motion made for a
    Mood has no agents until someone chooses (docs/memory-lane.md), while memory-lane lets any
    runner key post into any Mood: the first runner (a key of memory-lane's vault,
    MOOD_RUNNER_KEYS) to post into such a Motion (no agents at all) becomes its agent, said in the
    thread, rather than losing its turn to a 403. A Motion with agents stays the admin's choice:
    another agent is refused (403), and so is one of the project's own agent keys."""
    by_runner_key = isinstance(getattr(request, "successful_authenticator", None), RunnerKeyAuthentication)
    if by_runner_key and binding().shares_memory_lane_record:
        motion = binding().motion_for_slug(slug)
        if motion is not None and not motion.agents.exists():
            motion.agents.add(agent)
            post_system_message(
                motion,
                f"@{agent.name} is now an agent of this Motion: memory-lane's runner posted its turn "
                "here, and the Motion had no agents yet.",
                kind=Kind.WAKE,
                message_id=system_uuid("mood-joined", motion.pk, agent.pk),
                agent=agent,
            )
            return member_motion(slug, agent)  # asked again: the key's read was before the join
    return member_motion(slug, agent, request)


class MoodStreamView(MoodAPIView):
    """memory-lane's stream route: a runner's Claude Code events, posted as they come."""

    replace_nul = True  # as on the Motion route: a tool's output may hold a NUL

    @extend_schema(
        request=StreamBody,
        responses={
            200: inline_serializer(
                "MoodStreamAnswer",
                {
                    "imported": serializers.IntegerField(),
                    "skipped": serializers.IntegerField(),
                    "errors": serializers.ListField(child=serializers.CharField()),
                    "finished": serializers.BooleanField(),
                },
            ),
            400: FlatError,
            401: FlatError,
            403: FlatError,
            404: FlatError,
            413: OpenApiResponse(FlatError, description=f"More than {MAX_EVENTS} events."),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = request_agent(request)
        motion = mood_motion(slug, agent, request)
        check_batch_size(request.data)
        body = StreamBody(data=request.data, context={"request": request})
        body.is_valid(raise_exception=True)
        check_speaks_for(agent, body.validated_data.get("agent"))
        answer = take_stream(agent, motion, body.validated_data).as_dict()
        # memory-lane answers errors as strings, at most 10.
        answer["errors"] = [f"event {e['index']}: {e['reason']}" for e in answer["errors"]][:10]
        return Response(answer)


class MoodQuietView(MoodAPIView, QuietView):
    """memory-lane's quiet route: `{reason, by}` → 201 with the dot's id."""


class HeldBody(serializers.Serializer):
    reason = serializers.CharField(max_length=2000, allow_blank=True, required=False, default="")
    until = serializers.CharField(max_length=64, allow_null=True, required=False, default=None)

    def validate_until(self, value: str | None) -> str | None:
        if not value:
            return None
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise serializers.ValidationError("an ISO 8601 time, or null") from exc
        if moment.tzinfo is None:
            moment = timezone.make_aware(moment, timezone.get_current_timezone())
        return moment.isoformat()


class MoodHeldView(MoodAPIView):
    """The runner holds its agent's next turn in this Motion, and why; an empty reason lifts it.

    Not in the record: it is how things stand, like typing, and lapses unless renewed
    (MOOD_HELD_SECONDS, or at `until` if that is sooner). Who may call it: POST, an agent key of
    one of the Motion's agents (for itself only); GET, anyone who can read the Motion (reading is
    public, as the messages are), for the thread to show who is held and why.
    """

    def get_permissions(self):
        if self.request.method == "GET":
            return [permissions.AllowAny()]
        return super().get_permissions()

    def get_authenticators(self):
        # A read is also a signed-in person's (a members-only Motion's people); a post is a key's.
        authenticators = super().get_authenticators()
        if self.request is not None and self.request.method == "GET":
            authenticators.append(SessionAuthentication())
        return authenticators

    @extend_schema(
        responses={
            200: inline_serializer("Holds", {"held": serializers.DictField(child=serializers.DictField())}),
            401: FlatError,
            404: OpenApiResponse(FlatError, description="No such Motion, or one the caller may not read."),
        }
    )
    def get(self, request: Request, slug: str) -> Response:
        # A Motion the caller may not read answers as one that does not exist: no slug oracle.
        return Response({"held": holds_in(readable_motion(request.user, slug))})

    @extend_schema(
        request=HeldBody,
        responses={200: inline_serializer("HeldAnswer", {"held": serializers.DictField(allow_null=True)})},
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = request_agent(request)
        motion = member_motion(slug, agent, request)
        body = HeldBody(data=request.data)
        body.is_valid(raise_exception=True)
        reason = re.sub(r"<[^>]*>|[<>]", "", body.validated_data["reason"]).strip()[:200]
        if not reason:
            say_hold(motion, agent, None, 0)
            return Response({"held": None})
        until = body.validated_data["until"]
        lasts = app_settings.MOOD_HELD_SECONDS
        if until:
            lasts = max(1, min(lasts, int((datetime.fromisoformat(until) - timezone.now()).total_seconds())))
        hold = {"agent": agent.name, "reason": reason, "until": until, "at": timezone.now().isoformat()}
        say_hold(motion, agent, hold, lasts)
        return Response({"held": hold})


# --- the transcript watcher ------------------------------------------------------------------


class IngestNotConfigured(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "ingest_not_configured"
    default_detail = "Ingest is not configured: set INGEST_API_KEY."


class TooManyLines(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_many_lines"


class IngestBody(serializers.Serializer):
    lines = serializers.ListField(child=serializers.JSONField(), required=False)
    line = serializers.JSONField(required=False)
    username = serializers.CharField(max_length=150, required=False, default="")
    source = serializers.CharField(max_length=200, required=False, default="unknown")
    era_name = serializers.CharField(max_length=200, required=False, allow_blank=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        lines = [attrs["line"]] if "line" in attrs else attrs.get("lines") or []
        if not lines:
            raise ValidationError({"lines": ["No lines provided."]})
        attrs["lines"] = lines
        return attrs


class IngestView(APIView):
    """memory-lane's `/api/ingest/`: batches of Claude Code transcript lines from its watcher.

    Who may call it: whoever holds INGEST_API_KEY (`Authorization: Bearer <key>`), nobody else,
    and nobody at all while it is unset (503). A line that cannot be read is an error in the answer,
    never a non-200 for the batch: the watcher re-sends a refused batch forever.
    """

    authentication_classes: list = []
    permission_classes: list = []

    def get_exception_handler(self):
        return flat_exception_handler

    def handle_exception(self, exc):
        # Django's own body limit answers with an HTML page; this answers in memory-lane's shape.
        if isinstance(exc, RequestDataTooBig):
            exc = BodyTooLarge(
                f"The body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes; send fewer lines at a time."
            )
        return super().handle_exception(exc)

    def check_key(self, request: Request) -> None:
        expected = app_settings.INGEST_API_KEY
        if not expected:
            raise IngestNotConfigured()
        given = request.headers.get("Authorization", "").encode()
        if not hmac.compare_digest(given, f"Bearer {expected}".encode()):
            raise AuthenticationFailed(
                "Unauthorized: this endpoint takes `Authorization: Bearer <INGEST_API_KEY>`."
            )

    @extend_schema(
        request=IngestBody,
        responses={
            200: inline_serializer(
                "IngestAnswer",
                {
                    "imported": serializers.IntegerField(),
                    "skipped": serializers.IntegerField(),
                    "errors": serializers.ListField(child=serializers.CharField()),
                    "error_count": serializers.IntegerField(),
                    "unclaimed_sessions": serializers.ListField(child=serializers.CharField()),
                },
            ),
            400: FlatError,
            401: FlatError,
            413: FlatError,
            503: FlatError,
        },
    )
    def post(self, request: Request) -> Response:
        self.check_key(request)
        body = IngestBody(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        limit = app_settings.INGEST_MAX_LINES
        if len(data["lines"]) > limit:
            raise TooManyLines(f"{len(data['lines'])} lines in one post; send at most {limit} at a time.")
        answer = ingest_lines(data["lines"], username=data["username"], source=data["source"])
        return Response(answer.as_dict())

    def get_authenticate_header(self, request) -> str:
        return 'Bearer realm="motion-runner-ingest"'
