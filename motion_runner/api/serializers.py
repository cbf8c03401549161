from __future__ import annotations

from rest_framework import serializers

from ..models import Message, Motion, Turn
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
            "tool_name",
            "tool_id",
            "is_error",
            "harness_message_id",
            "session_id",
            "turn",
            "turn_mode",
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
        ]

    def get_cursor(self, message: Message) -> str:
        return cursor.encode(message.created_at, message.id)

    def get_request(self, message: Message) -> dict | None:
        """For a request card: the request's id and status (a person answers it by id)."""
        if message.kind != "request":
            return None
        request = getattr(message, "wake_request", None)
        return {"id": request.pk, "status": request.status} if request else None

    def get_turn_mode(self, message: Message) -> str | None:
        return message.turn.mode if message.turn_id and message.turn else None


class MessageWithRawSerializer(MessageSerializer):
    class Meta(MessageSerializer.Meta):
        fields = MessageSerializer.Meta.fields + ["raw"]


class PostMessageSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=100_000, trim_whitespace=True)
    id = serializers.UUIDField(required=False, help_text="Agents: makes a retry idempotent.")
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
