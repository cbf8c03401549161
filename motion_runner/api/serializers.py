from __future__ import annotations

from django.utils import timezone
from rest_framework import serializers

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..models import Message, Motion, Turn
from ..thread.markup import html_for
from . import cursor


class MotionSerializer(serializers.ModelSerializer):
    agents = serializers.SlugRelatedField(many=True, read_only=True, slug_field="name")

    class Meta:
        model = Motion
        fields = ["slug", "title", "description", "workspace", "agents", "created_at"]


class MessageSerializer(serializers.ModelSerializer):
    cursor = serializers.SerializerMethodField()
    turn_mode = serializers.SerializerMethodField()
    request = serializers.SerializerMethodField()
    html = serializers.SerializerMethodField(
        help_text="The text as sanitized HTML (Markdown), for prose kinds."
    )
    turn_reason = serializers.SerializerMethodField(help_text="Why the turn woke (mention, grant, compact…).")
    turn_reason_detail = serializers.SerializerMethodField()
    taken_back = serializers.SerializerMethodField(
        help_text="Taken back by its author (motion_runner/retract.py): {kind: deleted or edited, by, at}; "
        "null when not."
    )

    class Meta:
        model = Message
        fields = [
            "id",
            "cursor",
            "motion",
            "sender",
            "source",
            "kind",
            "text",
            "html",
            "tool_name",
            "tool_id",
            "is_error",
            "harness_message_id",
            "session_id",
            "turn",
            "turn_mode",
            "turn_reason",
            "turn_reason_detail",
            "request",
            "model_backend",
            "effort",
            "stop_reason",
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "cost_usd",
            "cwd",
            "created_at",
            "taken_back",
        ]

    def get_cursor(self, message: Message) -> str:
        return cursor.encode(message.created_at, message.id)

    def get_request(self, message: Message) -> dict | None:
        """For a request card: the request's id and status (a person answers it by id)."""
        if message.kind != "request":
            return None
        request = getattr(message, "wake_request", None)
        if request is None:
            return None
        decided_by = request.decided_by.get_username() if request.decided_by_id else None
        return {
            "id": request.pk,
            "status": request.status,
            "decided_by": decided_by,
            "decided_at": _iso(request.decided_at),
        }

    def get_html(self, message: Message) -> str | None:
        return html_for(message.kind, message.text, in_a_turn=message.turn_id is not None)

    def get_taken_back(self, message: Message) -> dict | None:
        change = getattr(message, "taken_back", None)
        return None if change is None else {"kind": change.kind, "by": change.by, "at": _iso(change.at)}

    def get_turn_mode(self, message: Message) -> str | None:
        return message.turn.mode if message.turn_id and message.turn else None

    def get_turn_reason(self, message: Message) -> str | None:
        return message.turn.reason if message.turn_id and message.turn else None

    def get_turn_reason_detail(self, message: Message) -> str | None:
        return message.turn.reason_detail if message.turn_id and message.turn else None


# The list endpoint is polled continuously (the thread page, other agents); building model
# instances and DRF fields for every row cost more than the queries. `message_rows` reads the
# same fields with one values() query and renders them as MessageSerializer would; a test
# pins the two to identical output.
ROW_FIELDS = [
    name
    for name in MessageSerializer.Meta.fields
    if name
    not in (
        "cursor",
        "html",
        "turn_mode",
        "turn_reason",
        "turn_reason_detail",
        "request",
        "motion",
        "turn",
        "taken_back",
    )
]


def _iso(moment) -> str | None:
    """As DRF's DateTimeField renders it: in the current time zone (TIME_ZONE), UTC as "Z"."""
    if moment is None:
        return None
    text = timezone.localtime(moment).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def message_rows(queryset, *, raw: bool = False) -> list[dict]:
    names = ROW_FIELDS + [
        "motion_id",
        "turn_id",
        "turn__mode",
        "turn__reason",
        "turn__reason_detail",
        "wake_request__id",
        "wake_request__status",
        "wake_request__decided_by__username",
        "wake_request__decided_at",
        "taken_back__kind",
        "taken_back__by",
        "taken_back__at",
    ]
    if raw:
        names.append("raw")
    rows = []
    shown = settings.THREAD_TOOL_RESULT_SHOWN_CHARS
    for row in queryset.values(*names):
        out = {}
        for name in MessageSerializer.Meta.fields:
            if name == "id":
                out["id"] = str(row["id"])
            elif name == "cursor":
                out["cursor"] = cursor.encode(row["created_at"], row["id"])
            elif name == "motion":
                out["motion"] = row["motion_id"]
            elif name == "turn":
                out["turn"] = row["turn_id"]
            elif name in ("turn_mode", "turn_reason", "turn_reason_detail"):
                column = "turn__" + name.removeprefix("turn_")
                out[name] = row[column] if row["turn_id"] else None
            elif name == "html":
                out["html"] = html_for(row["kind"], row["text"], in_a_turn=row["turn_id"] is not None)
            elif name == "request":
                has = row["kind"] == "request" and row["wake_request__id"] is not None
                out["request"] = (
                    {
                        "id": row["wake_request__id"],
                        "status": row["wake_request__status"],
                        "decided_by": row["wake_request__decided_by__username"],
                        "decided_at": _iso(row["wake_request__decided_at"]),
                    }
                    if has
                    else None
                )
            elif name == "taken_back":
                out["taken_back"] = (
                    {
                        "kind": row["taken_back__kind"],
                        "by": row["taken_back__by"],
                        "at": _iso(row["taken_back__at"]),
                    }
                    if row["taken_back__kind"]
                    else None
                )
            elif name == "cost_usd":
                out["cost_usd"] = None if row["cost_usd"] is None else f"{row['cost_usd']:.6f}"
            elif name == "created_at":
                out["created_at"] = _iso(row["created_at"])
            else:
                out[name] = row[name]
        if raw:
            out["raw"] = row["raw"]
        if shown and out["kind"] == "tool_result" and len(out["text"] or "") > shown:
            # How much of a tool's output a reader sees is a dial; the rest stays on the server.
            out["text"] = out["text"][:shown] + f"\n… ({len(out['text']) - shown} more characters not shown)"
            if raw:
                out["raw"] = None
        rows.append(out)
    return rows


class MessageWithRawSerializer(MessageSerializer):
    class Meta(MessageSerializer.Meta):
        fields = MessageSerializer.Meta.fields + ["raw"]


class PostMessageSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=100_000, trim_whitespace=True)
    id = serializers.UUIDField(required=False, help_text="Makes a retry idempotent (the page sends one).")
    agent = serializers.CharField(max_length=64, required=False, help_text="Agents: must be the key's own.")


class TurnSerializer(serializers.ModelSerializer):
    agent = serializers.CharField(source="agent.name")
    outcome = serializers.SerializerMethodField(help_text="One line: how the turn ended, or that it has not.")

    class Meta:
        model = Turn
        fields = [
            "id",
            "motion",
            "agent",
            "reason",
            "reason_detail",
            "mode",
            "mode_rule",
            "effort",
            "status",
            "session_id",
            "exit_code",
            "queued_at",
            "started_at",
            "ended_at",
            "cost_usd",
            "usage",
            "result_subtype",
            "outcome",
            "activity",
            "events",
            "error",
        ]

    def get_outcome(self, turn: Turn) -> str:
        if not turn.ended:
            return turn.status
        if turn.error:
            return f"{turn.status}: {turn.error}"
        return f"{turn.status} ({turn.result_subtype})" if turn.result_subtype else turn.status
