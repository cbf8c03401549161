"""Endpoints other agents call with their key: the harness stream, quiet dots, Claude Code hooks."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from django.utils.module_loading import import_string
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..conf import app_settings
from ..harnesses.base import Event, EventKind
from ..ingest.display import HOOK_STOP_TEXT
from ..ingest.entry import Line, Producer
from ..ingest.sessions import runner_owned
from ..ingest.writer import IngestContext, insert_one
from ..lib.ids import stable_uuid
from ..models import Agent, Kind, Message, Motion, MotionSession, Source
from ..people.access import MotionAccess, access
from ..record import binding
from ..transcripts.files import allowed_path
from ..transcripts.importer import import_file
from ..transcripts.lines import HARNESS as CLAUDE_CODE
from ..transcripts.lines import prompt_message, turn_end_uuid
from ..transcripts.routing import note_unclaimed
from .auth import AgentPrincipal, IsAgent, request_agent
from .locked import refuse_during_scram
from .serializers import MessageSerializer
from .stream_batch import MAX_EVENTS, Conflict, StreamBody, check_batch_size, claim_for, take_stream

log = logging.getLogger(__name__)


def member_motion(slug: str, agent: Agent, request: Request | None = None) -> Motion:
    """The Motion `slug` if `agent` is one of its agents: 404 when there is none, 403 when the
    agent is not one of them. The request's own authentication may have read both already, in
    the statement that read its key (`MotionRead`): then nothing is asked again."""
    principal = getattr(request, "user", None) if request is not None else None
    read = principal.motion_read if isinstance(principal, AgentPrincipal) else None
    # A slug no Motion has may still be another name of one (a Mood's, an alias): asked below.
    if read is not None and read.slug == slug and read.agent_id == agent.pk and read.motion is not None:
        motion = read.motion
        # The read answered the default rule; a host's own rule (MOTION_RUNNER_ACCESS) is asked.
        if type(access()).is_member_agent is MotionAccess.is_member_agent:
            member = read.member
        else:
            member = access().is_member_agent(AgentPrincipal(agent), motion)
    else:
        motion = binding().motion_for_slug(slug)
        if motion is None:
            raise Http404(f"No {Motion._meta.object_name} matches the given query.")  # as get_object_or_404
        member = access().is_member_agent(AgentPrincipal(agent), motion)
    if not member:
        raise PermissionDenied(f"@{agent.name} is not an agent of Motion {slug!r}.")
    return motion


def check_speaks_for(agent: Agent, named: str | None) -> None:
    if named and named.lstrip("@") != agent.name:
        raise PermissionDenied(f"This key speaks for @{agent.name} only, not for @{named.lstrip('@')}.")


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "body_too_large"


class AgentAPIView(APIView):
    permission_classes = [IsAgent]
    # The URL's Motion is read with the key, in one statement (auth.MotionRead; member_motion).
    motion_url_kwarg = "slug"

    def handle_exception(self, exc):
        # Django's own limit would answer with an HTML page; the API answers in its error body.
        if isinstance(exc, RequestDataTooBig):
            exc = BodyTooLarge(
                f"The body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes; send fewer events at a time."
            )
        return super().handle_exception(exc)

    def get_authenticators(self):
        # The agent keys AGENT_AUTHENTICATION_CLASSES names, by dotted path (memory-lane's runner
        # keys first, then the project's own), so the API imports nothing of memory-lane's room.
        return [import_string(path)() for path in app_settings.AGENT_AUTHENTICATION_CLASSES]


StreamAnswer = inline_serializer(
    "StreamAnswer",
    {
        "imported": serializers.IntegerField(),
        "skipped": serializers.IntegerField(),
        "errors": serializers.ListField(child=serializers.DictField()),
        "finished": serializers.BooleanField(),
    },
)


class StreamView(AgentAPIView):
    """A harness's own JSON lines, posted as they come; written once whatever the order or repeats."""

    replace_nul = True  # a tool's output may hold a NUL: it becomes U+FFFD, the batch is kept

    @extend_schema(
        request=StreamBody,
        responses={
            200: StreamAnswer,
            400: OpenApiResponse(description="A bad body, with the reason."),
            401: OpenApiResponse(description="No key, a wrong key or a revoked one."),
            403: OpenApiResponse(description="The session or Motion is not this agent's."),
            404: OpenApiResponse(description="No such Motion."),
            413: OpenApiResponse(description=f"More than {MAX_EVENTS} events."),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = request_agent(request)
        motion = member_motion(slug, agent, request)
        check_batch_size(request.data)
        body = StreamBody(data=request.data, context={"request": request})
        body.is_valid(raise_exception=True)
        check_speaks_for(agent, body.validated_data.get("agent"))
        return Response(take_stream(agent, motion, body.validated_data).as_dict())


class QuietBody(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)
    by = serializers.ChoiceField(choices=["agent", "screen"], default="agent")
    id = serializers.UUIDField(required=False, help_text="Send one to make a retry idempotent.")
    agent = serializers.CharField(max_length=64, required=False, help_text="Must be the key's own agent.")


def silent_text(by: str, reason: str) -> str:
    """memory-lane's dot: `<silent by="screen">reason</silent>`."""
    return f'<silent by="{by}">{reason.replace("</silent>", "")}</silent>'


class QuietView(AgentAPIView):
    """The agent chose to stay silent (or its screen dismissed the post): a dot in the thread."""

    @extend_schema(request=QuietBody, responses={201: MessageSerializer, 200: MessageSerializer})
    def post(self, request: Request, slug: str) -> Response:
        agent = request_agent(request)
        motion = member_motion(slug, agent, request)
        refuse_during_scram()
        body = QuietBody(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        return post_as_agent(
            agent,
            motion,
            data,
            kind=Kind.DOT,
            text=silent_text(data["by"], data["reason"]),
            raw={"silent": {"by": data["by"], "reason": data["reason"]}},
        )


def post_as_agent(
    agent: Agent, motion: Motion, data: dict[str, Any], *, kind: str, text: str, raw: dict | None = None
) -> Response:
    """One Message from the key's agent (the messages and quiet endpoints): it speaks only for
    itself, and a client-chosen `id` makes a retry land on the same Message."""
    check_speaks_for(agent, data.get("agent"))
    message = Message(
        motion=motion, sender=agent.name, agent=agent, source=Source.API, kind=kind, text=text, raw=raw
    )
    if data.get("id"):
        message.id = data["id"]
    return post_idempotent(message, motion)


def post_idempotent(message: Message, motion: Motion) -> Response:
    """201 with the new Message, or 200 with the one already stored under that id (same Motion,
    same agent and kind: a retry's own). Any other holder of the id is a 409, never served as
    this post's retry (it may be another agent's, or a person's)."""
    if insert_one(message):
        return Response(MessageSerializer(message).data, status=status.HTTP_201_CREATED)
    existing = Message.objects.filter(
        pk=message.id, motion=motion, agent=message.agent, source=message.source, kind=message.kind
    ).first()
    if existing is None:
        raise Conflict("That id is already used by another message.")
    return Response(MessageSerializer(existing).data, status=status.HTTP_200_OK)


# --- Claude Code hooks ---------------------------------------------------------------------


def tool_response_text(response: Any) -> str:
    """PostToolUse's tool_response: a string, or an object whose useful part depends on the tool."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        file = response.get("file")
        if isinstance(file, dict) and isinstance(file.get("content"), str):
            return file["content"]
        for key in ("stdout", "content", "output", "result", "text"):
            if isinstance(response.get(key), str):
                text = response[key]
                if key == "stdout" and response.get("stderr"):
                    text += "\n" + str(response["stderr"])
                return text
    return json.dumps(response, ensure_ascii=False)


class HookBody(serializers.Serializer):
    session_id = serializers.CharField(max_length=200)
    hook_event_name = serializers.CharField(max_length=64)
    transcript_path = serializers.CharField(max_length=1000, required=False, allow_blank=True)
    cwd = serializers.CharField(max_length=500, required=False, allow_blank=True)
    prompt_id = serializers.CharField(max_length=200, required=False, allow_blank=True)
    prompt = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    tool_name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    tool_input = serializers.JSONField(required=False)
    tool_response = serializers.JSONField(required=False)
    tool_use_id = serializers.CharField(max_length=200, required=False, allow_blank=True)
    last_assistant_message = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


HOOK_EVENTS = ("UserPromptSubmit", "PostToolUse", "Stop")


class ClaudeCodeHookView(AgentAPIView):
    """Claude Code hook payloads (the JSON a command hook gets on stdin), posted as they happen.

    `?motion=<slug>` binds the session to that Motion (a terminal started for it); without it
    the session must already be claimed, or it waits in the admin's inbox. Ids are chosen so the
    later transcript import finds these Messages instead of doubling them: a prompt and a turn's
    end by (session, prompt_id), a tool call and its result by (session, tool_use_id).
    """

    replace_nul = True  # as for the stream: a tool's response may hold a NUL

    @extend_schema(
        request=HookBody,
        parameters=[OpenApiParameter("motion", str, description="Bind the session to this Motion.")],
        responses={
            200: inline_serializer(
                "HookAnswer", {"imported": serializers.IntegerField(), "claimed": serializers.BooleanField()}
            )
        },
    )
    def post(self, request: Request) -> Response:
        agent = request_agent(request)
        body = HookBody(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        session_id, event_name = data["session_id"], data["hook_event_name"]
        if slug := request.query_params.get("motion", "").strip():
            motion = member_motion(slug, agent)
            session = claim_for(session_id, motion, agent, CLAUDE_CODE)
        else:
            session = MotionSession.objects.select_related("motion").filter(pk=session_id).first()
            if session is None:
                first = data.get("prompt", "") if event_name == "UserPromptSubmit" else ""
                note_unclaimed(
                    session_id,
                    allowed_path(data.get("transcript_path", "")) or "",
                    agent=agent,
                    first_lines=f"> {first[:300]}" if first else "",
                    cwd=data.get("cwd", ""),
                )
                return Response({"imported": 0, "claimed": False})
            if session.agent_id not in (None, agent.pk):
                raise PermissionDenied(f"Session {session_id} belongs to another agent.")
            member_motion(session.motion_id, agent)
        if event_name not in HOOK_EVENTS or runner_owned(session_id):
            # A runner's own session: its stdout is the source, the hook would only echo it.
            return Response({"imported": 0, "claimed": True})
        imported = self.record(data, session.motion, agent)
        return Response({"imported": imported, "claimed": True})

    def record(self, data: dict[str, Any], motion: Motion, agent: Agent) -> int:
        """The hook's payload as the events it tells of, written through the one way in (ids
        chosen so the transcript's copy of each is matched, not doubled)."""
        session_id, event_name = data["session_id"], data["hook_event_name"]
        cwd = data.get("cwd", "")
        prompt_id = data.get("prompt_id", "")
        producer = Producer(
            IngestContext(
                motion=motion,
                agent=agent,
                harness=CLAUDE_CODE,
                source=Source.TERMINAL,
                session_id=session_id,
                cwd=cwd,
                match_twins=True,
                fill_in=True,
            )
        )
        lines: list[Line] = []
        imported = 0
        if event_name == "UserPromptSubmit":
            if data.get("prompt", "").strip() and prompt_id:
                lines.append(
                    Line(0, built=[prompt_message(motion, session_id, prompt_id, data["prompt"], cwd)])
                )
        elif event_name == "PostToolUse":
            tool_id = data.get("tool_use_id", "")
            if not tool_id:
                raise serializers.ValidationError({"tool_use_id": ["PostToolUse needs the tool_use_id."]})
            tool_name = data.get("tool_name", "")
            said = {"session_id": session_id, "tool_name": tool_name, "tool_id": tool_id}
            call = Event(
                EventKind.TOOL_CALL,
                uuid=stable_uuid(CLAUDE_CODE, "hook-call", session_id, tool_id),
                tool_input=data.get("tool_input"),
                **said,
            )
            result = Event(
                EventKind.TOOL_RESULT,
                uuid=stable_uuid(CLAUDE_CODE, "hook-result", session_id, tool_id),
                text=tool_response_text(data.get("tool_response")),
                **said,
            )
            lines.append(Line(0, [call, result], source_file="hook:PostToolUse"))
        elif event_name == "Stop":
            path = allowed_path(data.get("transcript_path", ""))
            if path is not None and path.stem == session_id and path.exists():
                imported = import_file(path).imported
            if path is None or not path.exists():
                # The transcript is on another machine: the hook's copy of the last reply stands in
                # until (if ever) the transcript arrives; the importer then replaces it, not doubles.
                if text := data.get("last_assistant_message", "").strip():
                    reply = Event(
                        EventKind.TEXT,
                        uuid=stable_uuid(CLAUDE_CODE, "hook-stop-text", session_id, prompt_id),
                        session_id=session_id,
                        text=text,
                    )
                    lines.append(Line(0, [reply], source_file=HOOK_STOP_TEXT))
            if prompt_id:
                end = Event(
                    EventKind.TURN_END,
                    uuid=turn_end_uuid(session_id, prompt_id),
                    session_id=session_id,
                    subtype="success",
                )
                lines.append(Line(1, [end]))
        return imported + producer.write(lines).imported
