"""memory-lane's record as its `conversations/models.py` shapes it (read from cryptograss/memory-lane,
late 2026), the subset the memory_lane binding and memory-lane's page touch: Mood (bigint id, a
unique slug that follows its title, `by_slug` finding the current slug or any alias, `free_slug`,
`rename` keeping the old slug as a MoodAlias), MoodAlias (with `retired_at`), MoodSession (a UUID
session claimed by a Mood), ConversationParticipant (name as the key; types human, ai, tool,
oracle, system) and its multi-table child ThinkingEntity, Message (the harness line's uuid as its
id, content JSON, sender FK, recipients M2M, Mood SET_NULL, UUID session id, parent and
looking_for_parent_id, ms timestamp, its flags) and its multi-table children Thought, ToolUse,
ToolResult. Setting (its settings rows: the room's steering and its AZ5 scram under the binding).
MessageChange (its retract's row: a post edited or deleted, who and when). Device (a sign-in on
its page: the browser's cookie token, only its hash here).
Eras, context heaps and the rest of memory-lane's models are left out: the binding
writes none of them. Written here from those facts, not copied.
"""

import uuid

from django.db import models
from django.utils.text import slugify


class ConversationParticipant(models.Model):
    class ParticipantType(models.TextChoices):
        HUMAN = "human", "Human"
        AI = "ai", "AI"
        TOOL = "tool", "Tool"
        ORACLE = "oracle", "Oracle"
        SYSTEM = "system", "System"

    name = models.CharField(max_length=50, unique=True, primary_key=True)
    participant_type = models.CharField(
        max_length=20, choices=ParticipantType.choices, default=ParticipantType.HUMAN
    )

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
        ordering = ["slug"]

    @classmethod
    def by_slug(cls, slug):
        """The Mood going by `slug` now, or before a rename (an alias); None if none."""
        found = cls.objects.filter(slug=slug).first()
        if found is None:
            alias = MoodAlias.objects.filter(slug=slug).select_related("mood").first()
            found = alias.mood if alias else None
        return found

    @classmethod
    def free_slug(cls, title, mood=None):
        """The title's slug (at most 60, 'mood' when empty), numbered -2, -3… past one another
        Mood goes by now or went by; `mood` may take back a name of its own."""
        base = slugify(title)[:60].strip("-") or "mood"
        slug, n = base, 2
        own = getattr(mood, "pk", None)
        while (
            cls.objects.filter(slug=slug).exclude(pk=own).exists()
            or MoodAlias.objects.filter(slug=slug).exclude(mood_id=own).exists()
        ):
            slug, n = f"{base}-{n}", n + 1
        return slug

    def rename(self, title, description=None):
        """A new title and the slug that follows it; the old slug stays as an alias."""
        self.title = title
        if description is not None:
            self.description = description
        slug = Mood.free_slug(title, self)
        if slug != self.slug:
            MoodAlias.objects.get_or_create(slug=self.slug, defaults={"mood": self})
            MoodAlias.objects.filter(slug=slug, mood=self).delete()
            self.slug = slug
        self.save()

    def claim(self, session_id):
        return MoodSession.objects.update_or_create(session_id=session_id, defaults={"mood": self})[0]

    def thinking_entities(self):
        return ThinkingEntity.objects.filter(sent_messages__mood=self).distinct()


class MoodAlias(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    mood = models.ForeignKey(Mood, models.CASCADE, related_name="aliases")
    retired_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "mood_aliases"


class MoodSession(models.Model):
    session_id = models.UUIDField(primary_key=True)
    mood = models.ForeignKey(Mood, models.CASCADE, related_name="claimed_sessions")
    claimed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "mood_sessions"
        ordering = ["claimed_at"]

    @classmethod
    def mood_for(cls, session_id):
        if not session_id:
            return None
        claim = cls.objects.filter(session_id=session_id).select_related("mood").first()
        return claim.mood if claim else None


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
    eth_block_offset = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    model_backend = models.CharField(max_length=100, null=True, blank=True)
    effort = models.CharField(max_length=20, null=True, blank=True)
    stop_reason = models.CharField(max_length=50, null=True, blank=True)
    source_file = models.CharField(max_length=255, null=True, blank=True)
    missing_from_markdown = models.BooleanField(default=False)
    input_tokens = models.IntegerField(null=True, blank=True)
    output_tokens = models.IntegerField(null=True, blank=True)
    cache_creation_input_tokens = models.IntegerField(null=True, blank=True)
    cache_read_input_tokens = models.IntegerField(null=True, blank=True)
    is_sidechain = models.BooleanField(default=False)
    is_synthetic_error = models.BooleanField(default=False)
    is_retry = models.BooleanField(default=False)
    is_continuation_message = models.BooleanField(default=False)
    apparent_duplicate = models.BooleanField(default=False)
    cwd = models.TextField(null=True, blank=True)
    git_branch = models.CharField(max_length=255, null=True, blank=True)
    client_version = models.CharField(max_length=50, null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["session_id", "timestamp"]),
            models.Index(fields=["sender"]),
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


class Setting(models.Model):
    """memory-lane's settings row (its `services/settings.py`): append-only, the newest row of a
    (key, Mood, agent) slot in force; `scram` with no Mood and no agent is its AZ5."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    key = models.CharField(max_length=40)
    value = models.JSONField()
    note = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    mood = models.ForeignKey(Mood, models.CASCADE, related_name="settings", null=True, blank=True)
    agent = models.ForeignKey(ThinkingEntity, models.CASCADE, related_name="settings", null=True, blank=True)
    set_by = models.ForeignKey(
        ThinkingEntity, models.SET_NULL, related_name="settings_set", null=True, blank=True
    )

    class Meta:
        db_table = "settings"
        indexes = [models.Index(fields=["key", "mood", "agent", "created_at"])]


class MessageChange(models.Model):
    """memory-lane's record of a post taken back (its `services/retract.py`): an edit or a deletion,
    who and when, never what it said; the newest stands (`update_or_create`, `at` auto_now)."""

    message = models.OneToOneField(Message, models.CASCADE, primary_key=True, related_name="change")
    mood = models.ForeignKey(Mood, models.CASCADE, related_name="message_changes")
    kind = models.CharField(max_length=10)  # 'edited', 'deleted' or 'restored'
    by = models.CharField(max_length=50)
    at = models.DateTimeField(auto_now=True, db_index=True)
    reached = models.JSONField(default=list, blank=True)

    class Meta:
        db_table = "message_changes"


class Device(models.Model):
    """memory-lane's signed-in browser or phone (its `services/mood_auth.py`): made as a sign-in
    spends its login link (`redeem_login_code`) or enrols one (`enrol_device`); the token stays in
    the device's cookie, only its hash here."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    entity = models.ForeignKey(ThinkingEntity, models.CASCADE, related_name="devices")
    label = models.CharField(max_length=100, blank=True)
    tier = models.CharField(max_length=10, default="key")  # 'key' (SSH key) or 'wiki' (PickiPedia)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "devices"
