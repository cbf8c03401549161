"""`GET /api/motions/<slug>/search/?q=…`: the thread's search box, over one Motion's words.

Who may call it: whoever may read the Motion (`readable_motion`: a person, the Motion's agents
by key, anyone for a public one); everyone else gets the same 404 as a Motion that does not
exist. A plain case-insensitive match on what people and agents said (text kinds), newest
first, at most 50: the record's own search (issue 35) is built elsewhere; this one only finds
a message so the thread can open around it (`#m-<id>`)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Kind, Message
from ..people.access import readable_motion
from ..thread.markup import plain_text
from .bounds import whole_number
from .serializers import _iso

MIN_CHARS = 2
MAX_CHARS = 200
MAX_RESULTS = 50
DEFAULT_RESULTS = 20
SNIPPET_CHARS = 160
SEARCHED_KINDS = (Kind.TEXT,)


def snippet(text: str, query: str) -> str:
    """The words around the first match, on one line."""
    flat = " ".join(text.split())
    at = flat.lower().find(query.lower())
    start = max(0, at - SNIPPET_CHARS // 3) if at >= 0 else 0
    piece = flat[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(flat) else "")


class SearchView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("q", str, description=f"{MIN_CHARS} to {MAX_CHARS} characters."),
            OpenApiParameter("limit", int, description=f"At most {MAX_RESULTS}."),
        ],
        responses=inline_serializer(
            "MotionSearch",
            {
                "query": serializers.CharField(),
                "results": serializers.ListField(child=serializers.DictField()),
                "more": serializers.BooleanField(help_text="More matched than are shown."),
            },
        ),
    )
    def get(self, request: Request, slug: str) -> Response:
        motion = readable_motion(request.user, slug)
        query = " ".join((request.query_params.get("q") or "").split())
        if not MIN_CHARS <= len(query) <= MAX_CHARS or "\x00" in query:
            raise ValidationError({"q": [f"search for {MIN_CHARS} to {MAX_CHARS} characters"]})
        limit = whole_number(request.query_params, "limit", DEFAULT_RESULTS, low=1, high=MAX_RESULTS)
        rows = list(
            Message.objects.filter(motion=motion, kind__in=SEARCHED_KINDS, text__icontains=query)
            .exclude(text__startswith="<silent")
            .order_by("-created_at", "-id")
            .values("id", "sender", "agent_id", "turn_id", "created_at", "text")[: limit + 1]
        )
        results = [
            {
                "id": str(row["id"]),
                "sender": row["sender"],
                "is_agent": row["agent_id"] is not None,
                "created_at": _iso(row["created_at"]),
                "snippet": snippet(plain_text(row["text"], in_a_turn=row["turn_id"] is not None), query),
            }
            for row in rows[:limit]
        ]
        return Response({"query": query, "results": results, "more": len(rows) > limit})
