from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager, nullcontext
from datetime import timedelta

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import generics, permissions, serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import NotAuthenticated, PermissionDenied, Throttled, ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..conf import app_settings
from ..models import Kind, Message, Motion, Turn, TurnStatus
from ..people.access import access, readable_motion
from ..people.posting import PostIdTaken, post_person_message
from ..signals import thread_poll_fields, thread_poll_news
from ..thread import holds_shown, typed
from ..thread.bell import bell, release_connection, shared_answers
from ..thread.markup import html_for
from . import cursor as cursors
from .agent_views import Conflict, member_motion, post_as_agent
from .auth import AgentKeyAuthentication, request_agent
from .bounds import finite_number, names_shown_typing, parse_time, whole_number
from .locked import refuse_during_scram
from .poll_caps import client_of, poll_slots
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
LIVE_TOKEN_CHARACTERS = 16


def wait_for_messages(
    motion: Motion,
    newer,
    wait: float,
    someone_typing=None,
    typing_at_first_look: bool = False,
    live_changed=None,
) -> bool:
    """Until something is written after the cursor or who is typing changes (True), or the wait
    is over (False): one look, then none until the message bell rings for this Motion
    (motion_runner/thread/bell.py; a typing ping or stop rings it too, and a turn starting,
    changing its activity, typing or ending).

    The first look asks about typing only for a reader that said whom it shows typing (the thread
    page): a ping between its polls is news to it. For the others it stays one query. A reader
    that said what live state it shows (`live_changed`: its `live` token) is answered as soon as
    that is not so, at the first look too (a turn that started between its polls)."""

    looked = False

    def has_news() -> bool:
        nonlocal looked
        if newer.exists():
            return True
        if live_changed is not None:
            return live_changed()
        typing = (looked or typing_at_first_look) and someone_typing is not None and someone_typing()
        looked = True
        return typing

    return bell.wait(motion.pk, has_news, wait)


@contextmanager
def held_slot(request: Request):
    """One of the client's long-poll slots while the poll waits (api/poll_caps.py), or 429 at once."""
    client = client_of(request)
    anonymous = not request.user.is_authenticated
    if not poll_slots.take(client, anonymous=anonymous):
        release_connection()
        raise Throttled(
            wait=app_settings.LONG_POLL_RETRY_AFTER_SECONDS,
            detail="Too many long polls at once from this reader: ask again after Retry-After seconds.",
        )
    try:
        yield
    finally:
        poll_slots.give_back(client, anonymous=anonymous)


def running_activity(motion: Motion) -> list[dict]:
    """The Motion's running turns, newest queued first: every poll of a thread reads them, with
    whether each was asked to stop and the text it is typing (thread/typed.py; never stored)."""
    rows = list(
        Turn.objects.filter(motion=motion, status=TurnStatus.RUNNING)
        .order_by("-queued_at")
        .values_list("pk", "agent__name", "activity", "mode", "stop_requested_at")
    )
    texts = typed.typed(row[0] for row in rows)
    return [
        {
            "agent": name,
            "activity": activity,
            "turn": pk,
            "mode": mode,
            "stopping": stop_asked is not None,
            "typed": texts.get(pk, ""),
            # As its Message will show it (None: shown plain), so the words do not jump (issue 43.4).
            "typed_html": html_for("text", texts[pk], in_a_turn=True) if texts.get(pk) else None,
        }
        for pk, name, activity, mode, stop_asked in rows
    ]


def live_state(motion: Motion, reader: str | None) -> dict:
    """What a thread's poll says besides its messages: the running turns, the holds
    (thread/holds_shown.py), and wakes' parts (request cards, who is typing, a scram), with
    `live`, a token of them all."""
    state = {"activity": running_activity(motion), "holds": holds_shown.shown(motion.pk)}
    for provide in thread_poll_fields:  # wakes/: request cards and who is typing
        state.update(provide(motion, reader))
    state["live"] = live_token(state)
    return state


def live_token_now(motion: Motion, reader: str | None) -> str:
    """The live token as a waiting reader looks for news: the readers of a Motion woken by one
    ring (a turn typing rings a few times a second) share one read of it (SharedAnswers)."""
    return shared_answers.answer(
        motion.pk,
        ("live", motion.pk, reader),
        bell.rung(motion.pk),
        lambda: live_state(motion, reader)["live"],
    )


def live_token(state: dict) -> str:
    """A short digest of the live state: a reader sends it back (`live=`), and its long poll
    answers as soon as the state differs."""
    said = json.dumps(state, sort_keys=True, default=str).encode()
    return hashlib.sha256(said).hexdigest()[:LIVE_TOKEN_CHARACTERS]


class Pages(LimitOffsetPagination):
    default_limit = 100
    max_limit = MAX_PAGE


class MotionList(generics.ListAPIView):
    """Motions, newest first; `agent=<name>` keeps those the agent belongs to."""

    serializer_class = MotionSerializer
    pagination_class = Pages

    @extend_schema(parameters=[OpenApiParameter("agent", str, description="An agent's name.")])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        queryset = access().readable(self.request.user, Motion.objects.prefetch_related("agents"))
        if name := self.request.query_params.get("agent"):
            queryset = queryset.filter(agents__name=name.lstrip("@"))
        return queryset


class MotionDetail(generics.RetrieveAPIView):
    serializer_class = MotionSerializer
    lookup_field = "slug"

    def get_queryset(self):
        return access().readable(self.request.user, Motion.objects.all())

    def get_object(self) -> Motion:
        # By the record's names for it too (under the memory_lane binding, a Mood's slug or alias).
        motion = readable_motion(self.request.user, self.kwargs["slug"])
        self.check_object_permissions(self.request, motion)
        return motion


class MessageList(APIView):
    authentication_classes = [AgentKeyAuthentication, SessionAuthentication]

    """Messages of one Motion in order, after a cursor.

    `after` is exclusive. `overlap=N` (seconds, at most 30) also returns what was written up to
    N seconds before the cursor: a poller that dedupes on `id` uses it so that a message whose
    insert committed late is still seen. `wait=N` (seconds, at most 25) holds the request until
    there is something after the cursor (a long poll): a reader learns of a new message within
    the server's check interval instead of its own poll interval. `typing=a&typing=b` (with
    `wait`; `typing=` for nobody) says whom the reader shows typing: the poll also answers when
    that changes.
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
            OpenApiParameter("latest", bool, description="The newest page (a thread opens here)."),
            OpenApiParameter(
                "before", str, description="A message's cursor: the page just older; exclusive."
            ),
            OpenApiParameter("around", str, description="A message's id: the page around it."),
            OpenApiParameter(
                "live",
                str,
                description="With `wait`: the `live` token of the last answer; the poll answers as "
                "soon as the live state differs (a turn starts, types, ends; a scram).",
            ),
            OpenApiParameter(
                "typing",
                str,
                description="With `wait`: a name the reader shows typing, repeated for each (`typing=` "
                "alone for nobody); the poll answers as soon as that is no longer so.",
            ),
        ],
        responses=inline_serializer(
            "MessagePage",
            {
                "results": MessageSerializer(many=True),
                "next": serializers.CharField(
                    allow_null=True, help_text="The cursor to send as `after` next."
                ),
                "more": serializers.BooleanField(help_text="True when the page was full: ask again at once."),
                "previous": serializers.CharField(
                    required=False,
                    allow_null=True,
                    help_text="With latest, before or around: the cursor to send as `before` for "
                    "the older page, or null at the thread's start.",
                ),
                "activity": serializers.ListField(
                    child=serializers.DictField(),
                    help_text="Running turns: agent, activity, turn, mode, stopping, and the text it "
                    "is typing (`typed`, never stored: the final message follows; `typed_html`, its "
                    "Markdown as the message will show it, or null for plain).",
                ),
                "holds": serializers.ListField(
                    child=serializers.DictField(),
                    help_text="Agents whose next turn here is held: agent, reason, until.",
                ),
                "live": serializers.CharField(
                    help_text="A token of the live state (running turns, typing, cards, a scram): "
                    "sent back as `live` with `wait`, the poll answers as soon as it differs."
                ),
                "requests": serializers.ListField(
                    child=serializers.DictField(), help_text="Open request cards."
                ),
            },
        ),
    )
    def get(self, request: Request, slug: str) -> Response:
        motion = readable_motion(request.user, slug)
        params = request.query_params
        queryset = Message.objects.filter(motion=motion).select_related("turn")
        limit = whole_number(params, "limit", DEFAULT_PAGE, low=1, high=MAX_PAGE)
        if params.get("latest") in ("1", "true") or params.get("before") or params.get("around"):
            return Response(backward_page(request, motion, queryset, limit))
        overlap = whole_number(params, "overlap", 0, low=0, high=MAX_OVERLAP_SECONDS)
        wait = finite_number(params, "wait", 0.0, low=0.0, high=MAX_WAIT_SECONDS)
        shown_typing = names_shown_typing(params)
        shown_live = params.get("live")
        if shown_live is not None and len(shown_live) > LIVE_TOKEN_CHARACTERS:
            raise ValidationError({"live": [f"a token of at most {LIVE_TOKEN_CHARACTERS} characters"]})
        newer = None
        only_newer = False  # the page holds nothing at or before the cursor
        if after := params.get("after"):
            created, message_id = cursors.decode(after)
            newer = Q(created_at__gt=created) | Q(created_at=created, id__gt=message_id)
            only_newer = True
            if overlap:
                try:
                    queryset = queryset.filter(created_at__gt=created - timedelta(seconds=overlap))
                    only_newer = False
                except OverflowError:  # a cursor at the start of time: nothing is before it
                    queryset = queryset.filter(newer)
            else:
                queryset = queryset.filter(newer)
        if kinds := params.get("kind"):
            queryset = queryset.filter(kind__in=[k.strip() for k in kinds.split(",")])
        for name, lookup in (("since", "created_at__gte"), ("until", "created_at__lt")):
            if value := params.get(name):
                queryset = queryset.filter(**{lookup: parse_time(name, value)})
        queryset = queryset.order_by("created_at", "id")
        me = request.user.get_username() if request.user.is_authenticated else None
        raw = params.get("raw") in ("1", "true")
        waited = bool(wait and newer is not None)
        results = None
        woke = None  # the ring this poll woke to, if the bell woke it
        if waited:
            began = timezone.now()
            # Without overlap the page itself says whether there is news: a busy stream's poll
            # answers from it, without an exists() first.
            if only_newer:
                results = message_rows(queryset[:limit], raw=raw)
            if not results:
                with held_slot(request):
                    woken = wait_for_messages(
                        motion,
                        queryset.filter(newer),
                        wait,
                        lambda: any(news(motion, began, me, shown_typing) for news in thread_poll_news),
                        typing_at_first_look=shown_typing is not None,
                        live_changed=None
                        if shown_live is None
                        else lambda: live_token_now(motion, me) != shown_live,
                    )
                # Nothing came: the empty page read before the wait stands (a row committed as
                # the wait ended is in the next poll's answer).
                if woken or not only_newer:
                    results = None
                if woken and bell.listening:
                    woke = bell.rung(motion.pk)

        def read() -> dict:
            # A long poll reads in turn with the others woken with it, then lets its connection go.
            with bell.slot() if waited else nullcontext():
                rows = message_rows(queryset[:limit], raw=raw) if results is None else results
                body = {
                    "results": rows,
                    "next": rows[-1]["cursor"] if rows else after or cursors.START,
                    "more": len(rows) == limit,
                    **live_state(motion, me),
                }
                if waited:
                    release_connection()
            return body

        if woke is None:
            return Response(read())
        # Readers of this Motion asking the same (the same cursor and filters, the same reader's
        # name for "who else is typing"), woken by the same ring, share one read. Each checked its
        # own access above.
        question = (motion.pk, me, tuple(sorted((k, tuple(v)) for k, v in params.lists() if k != "wait")))
        body = shared_answers.answer(motion.pk, question, woke, read)
        release_connection()  # an answer read by another: this reader's look still held one
        return Response(body)

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
            refuse_during_scram()
            body.is_valid(raise_exception=True)
            data = body.validated_data
            return post_as_agent(agent, motion, data, kind=Kind.TEXT, text=data["text"])
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in, or send an agent key, to post in a Motion.")
        motion = readable_motion(request.user, slug)
        if not access().can_post(request.user, motion):
            raise PermissionDenied("You may read this Motion but not post in it.")
        refuse_during_scram()
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


def backward_page(request: Request, motion: Motion, queryset, limit: int) -> dict:
    """A page read from the newest end: the newest (`latest`), the one just older than a cursor
    (`before`) or the one around a message (`around`), in order, with `previous` (older, or
    None at the start) and `next` (to poll after). A long thread opens here in one request
    however long it is: each page reads its own rows off the (motion, created_at, id) index."""
    params = request.query_params
    if params.get("after"):
        raise ValidationError({"after": ["not with latest, before or around: one direction a page"]})
    raw = params.get("raw") in ("1", "true")
    newest_first = ("-created_at", "-id")
    more = False
    if around := params.get("around"):
        try:
            target = queryset.filter(pk=around).values("created_at", "id").first()
        except (ValueError, DjangoValidationError):
            target = None
        if target is None:
            raise ValidationError({"around": [f"no message {around[:40]!r} in this Motion"]})
        at, pk = target["created_at"], target["id"]
        older_count = limit // 2
        older = Q(created_at__lt=at) | Q(created_at=at, id__lt=pk)
        older_rows = message_rows(queryset.filter(older).order_by(*newest_first)[: older_count + 1], raw=raw)
        newer_rows = message_rows(
            queryset.exclude(older).order_by("created_at", "id")[: limit - older_count + 1], raw=raw
        )
        more = len(newer_rows) > limit - older_count
        has_older = len(older_rows) > older_count
        rows = older_rows[:older_count][::-1] + newer_rows[: limit - older_count]
    else:
        if before := params.get("before"):
            created, message_id = cursors.decode(before, "before")
            queryset = queryset.filter(Q(created_at__lt=created) | Q(created_at=created, id__lt=message_id))
        rows = message_rows(queryset.order_by(*newest_first)[: limit + 1], raw=raw)
        has_older = len(rows) > limit
        rows = rows[:limit][::-1]
    me = request.user.get_username() if request.user.is_authenticated else None
    body = {
        "results": rows,
        "next": rows[-1]["cursor"] if rows else params.get("before") or cursors.START,
        "previous": rows[0]["cursor"] if rows and has_older else None,
        "more": more,
        **live_state(motion, me),
    }
    return body


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
        readable = access().readable(self.request.user, Motion.objects.all()).values("slug")
        queryset = Turn.objects.select_related("agent").filter(motion__in=readable)
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
    serializer_class = TurnSerializer
    permission_classes = [permissions.AllowAny]

    def get_queryset(self):
        readable = access().readable(self.request.user, Motion.objects.all()).values("slug")
        return Turn.objects.select_related("agent").filter(motion__in=readable)
