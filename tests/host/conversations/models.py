"""memory-lane's record, in the shapes the memory_lane binding writes: Mood (bigint id, unique slug
that follows its title), MoodAlias (old slugs), MoodSession (a UUID session claimed by a Mood),
ConversationParticipant (name as the key) and its multi-table child ThinkingEntity, Message
(the harness line's uuid as its id, content JSON, sender FK, Mood SET_NULL, UUID session id,
parent, ms timestamp, sidechain flag) and its multi-table children Thought, ToolUse, ToolResult."""

from django.db import models


class ConversationParticipant(models.Model):
    class ParticipantType(models.TextChoices):
        HUMAN = "human"
        AI = "ai"
        TOOL = "tool"
        ORACLE = "oracle"
        SYSTEM = "system"

    name = models.CharField(max_length=50, primary_key=True)
    participant_type = models.CharField(max_length=20, choices=ParticipantType.choices, default="human")

    class Meta:
        db_table = "conversation_participants"


class ThinkingEntity(ConversationParticipant):
    is_biological_human = models.BooleanField(default=True)

    class Meta:
        db_table = "thinking_entities"


class Mood(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    eth_blockheight = models.BigIntegerField(null=True, blank=True)

    class Meta:
        db_table = "moods"


class MoodAlias(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    mood = models.ForeignKey(Mood, models.CASCADE, related_name="aliases")

    class Meta:
        db_table = "mood_aliases"


class MoodSession(models.Model):
    session_id = models.UUIDField(primary_key=True)
    mood = models.ForeignKey(Mood, models.CASCADE, related_name="claimed_sessions")
    claimed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "mood_sessions"


class Message(models.Model):
    id = models.UUIDField(primary_key=True)
    message_number = models.IntegerField(null=True, blank=True)
    content = models.JSONField()
    mood = models.ForeignKey(Mood, models.SET_NULL, related_name="messages", null=True, blank=True)
    parent = models.ForeignKey("self", models.CASCADE, related_name="children", null=True, blank=True)
    looking_for_parent_id = models.UUIDField(null=True, blank=True)
    sender = models.ForeignKey(ConversationParticipant, models.CASCADE, related_name="sent_messages")
    recipients = models.ManyToManyField(ConversationParticipant, related_name="received_messages")
    session_id = models.UUIDField(null=True, blank=True)
    timestamp = models.BigIntegerField(null=True, blank=True)
    eth_blockheight = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    model_backend = models.CharField(max_length=100, null=True, blank=True)
    effort = models.CharField(max_length=20, null=True, blank=True)
    stop_reason = models.CharField(max_length=50, null=True, blank=True)
    source_file = models.CharField(max_length=255, null=True, blank=True)
    input_tokens = models.IntegerField(null=True, blank=True)
    output_tokens = models.IntegerField(null=True, blank=True)
    cache_creation_input_tokens = models.IntegerField(null=True, blank=True)
    cache_read_input_tokens = models.IntegerField(null=True, blank=True)
    is_sidechain = models.BooleanField(default=False)
    is_synthetic_error = models.BooleanField(default=False)
    cwd = models.TextField(null=True, blank=True)
    git_branch = models.CharField(max_length=255, null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["session_id", "timestamp"]),
            models.Index(fields=["mood", "created_at"]),
        ]


class Thought(Message):
    signature = models.TextField()


class ToolUse(Message):
    tool_name = models.CharField(max_length=100)
    tool_id = models.CharField(max_length=100)


class ToolResult(Message):
    tool_use_id = models.CharField(max_length=100, db_index=True)
    is_error = models.BooleanField(default=False)
