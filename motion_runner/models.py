"""The core data model, shaped like memory-lane's so the app can plug into it.

memory-lane has Motion(slug pk), MotionSession(session_id pk -> motion) and Message(id UUID =
the harness line's uuid). Field names follow it; where we add fields, they are additive.
"""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower
from django.urls import reverse
from django.utils import timezone


class Harness(models.TextChoices):
    CLAUDE_CODE = "claude-code", "Claude Code"
    CODEX = "codex", "Codex"
    PI = "pi", "Pi"


class Agent(models.Model):
    """An agent that can be woken in a Motion: the @name and how to launch its harness."""

    name = models.CharField(max_length=64, unique=True, help_text="The @name, without the @.")
    harness = models.CharField(max_length=20, choices=Harness.choices, default=Harness.CLAUDE_CODE)
    binary = models.CharField(
        max_length=500,
        blank=True,
        help_text="Path or command name of the harness CLI; blank uses the harness's default.",
    )
    workdir = models.CharField(max_length=500, blank=True, help_text="Working directory.")
    model = models.CharField(max_length=100, blank=True)
    system_prompt = models.TextField(blank=True, help_text="Appended to the harness's prompt.")
    env = models.JSONField(default=dict, blank=True, help_text="Extra environment variables.")
    listening = models.BooleanField(
        default=True, help_text="Considers new posts in its Motions (mentions always wake)."
    )
    turn_queue = models.CharField(
        max_length=100,
        blank=True,
        help_text="The Celery queue its turns go to, so only the worker on the machine holding its "
        "sessions and workspace runs them (`celery -A motion_runner worker -Q <queue>`); blank: the "
        "turns queue. A Motion's own queue wins.",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"@{self.name}"


class Visibility(models.TextChoices):
    PUBLIC = "public", "Anyone, signed in or not"
    SIGNED_IN = "signed_in", "Signed-in people and the Motion's agents"
    MEMBERS = "members", "The Motion's people and agents only"


class Motion(models.Model):
    slug = models.SlugField(max_length=100, primary_key=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    workspace = models.CharField(
        max_length=500,
        blank=True,
        help_text="Working directory for this Motion's turns; blank uses the agent's own.",
    )
    turn_queue = models.CharField(
        max_length=100,
        blank=True,
        help_text="The Celery queue every turn in this Motion goes to (a Motion with a machine of its "
        "own); blank: its agent's queue, else the turns queue.",
    )
    agents = models.ManyToManyField(Agent, blank=True, related_name="motions")
    people = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="motions",
        help_text="Its people: who may read a members-only Motion.",
    )
    visibility = models.CharField(
        max_length=16,
        choices=Visibility.choices,
        default=Visibility.SIGNED_IN,
        help_text="Who may read it (docs/security.md).",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title or self.slug

    def get_absolute_url(self) -> str:
        """The thread: the admin's "View on site" goes there."""
        return reverse("motion-thread", args=[self.slug])


class MotionSession(models.Model):
    """A harness session bound to the Motion it speaks in.

    Claimed for every session the runner starts or resumes, so events are never routed
    to a Motion by guessing.
    """

    session_id = models.CharField(max_length=200, primary_key=True)
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="sessions")
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="sessions"
    )
    harness = models.CharField(max_length=20, choices=Harness.choices, default=Harness.CLAUDE_CODE)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(default=timezone.now)
    retired_at = models.DateTimeField(
        null=True, blank=True, help_text="The harness no longer has it: never resumed again."
    )

    class Meta:
        indexes = [models.Index(fields=["motion", "agent", "-last_used_at"])]

    def __str__(self) -> str:
        return f"{self.session_id} → {self.motion_id}"


class Source(models.TextChoices):
    WEB = "web"
    TERMINAL = "terminal"
    RUNNER = "runner"
    API = "api"
    WATCH = "watch"
    SYSTEM = "system"


# The `source_file` of the apps' row for a post made in the host's own record (memory-lane's
# composer), handed over by the record binding; trust reads the sign-in its host vouched for.
HOST_POST_SOURCE_FILE = "memory-lane"


class Kind(models.TextChoices):
    TEXT = "text"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    TURN_END = "turn_end"
    DOT = "dot"
    REQUEST = "request"
    WATCH = "watch"
    ERROR = "error"
    COMPACT = "compact"
    WAKE = "wake"  # why an agent woke and what it cost (wakes/)
    THINKING = "thinking"  # the model's thinking summary, shown collapsed
    TASK = "task"  # a background task the turn started, and its end
    NOTE = "note"  # what an agent kept with the record server's `remember` (motion_runner/recall)


class Message(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: (motion, created_at, id) below serves every `motion_id = …` (each
    # insert paid for both; migration 0014).
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="messages", db_index=False)
    sender = models.CharField(max_length=150, help_text="An agent's name or a person's username.")
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="messages"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="motion_messages",
    )
    sign_in = models.CharField(
        max_length=20,
        blank=True,
        help_text="How the person who typed it signed in (ssh, wiki, password); trust reads it.",
    )
    source = models.CharField(max_length=16, choices=Source.choices)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.TEXT)
    text = models.TextField(blank=True)
    raw = models.JSONField(null=True, blank=True)
    tool_name = models.CharField(max_length=200, blank=True)
    tool_id = models.CharField(max_length=200, blank=True, db_index=True)
    is_error = models.BooleanField(default=False)
    harness_message_id = models.CharField(max_length=200, blank=True, db_index=True)
    session_id = models.CharField(max_length=200, blank=True, db_index=True)
    turn = models.ForeignKey(
        "Turn", null=True, blank=True, on_delete=models.SET_NULL, related_name="messages"
    )
    model_backend = models.CharField(max_length=100, blank=True)
    effort = models.CharField(max_length=16, blank=True)
    stop_reason = models.CharField(max_length=64, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    cache_creation_input_tokens = models.PositiveIntegerField(null=True, blank=True)
    cache_read_input_tokens = models.PositiveIntegerField(null=True, blank=True)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    cwd = models.CharField(max_length=500, blank=True)
    source_file = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["motion", "created_at", "id"]),
            # A session's latest result line (claude_code.previous_result_total, read by every
            # stream post): found among its few turn ends, not among all the session's lines.
            models.Index(
                fields=["session_id", "-created_at"],
                name="message_session_turn_end",
                condition=Q(kind="turn_end"),
            ),
            # The record search, newest first (motion_runner/sql/message_search.py): a window of
            # the newest messages cut before the full-text index is asked, and whose posts.
            models.Index(F("created_at").desc(), F("id").desc(), name="message_newest"),
            models.Index(Lower("sender"), F("created_at").desc(), name="message_author_newest"),
        ]

    def __str__(self) -> str:
        return f"{self.sender} [{self.kind}] {self.text[:60]}"


class TurnStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    KILLED = "killed"
    TIMED_OUT = "timed_out"


class EndedBy(models.TextChoices):
    """What ended a turn, beyond its status: read by code (wakes' compaction, the after-loop note,
    a turn's ability), so no module reads it back out of the error the thread is shown.

    A turn monitor that stops a turn names its cause (`TurnMonitor.stop_cause`); the runner sets
    the session values when it wakes a turn again after its session failed to resume."""

    HARNESS = "", "the harness's own end, or the runner's judgement of it"
    LOOP_GUARD = "loop_guard", "the tool-loop guard stopped it"
    SPEND_GUARD = "spend_guard", "the turn's dollar cap stopped it"
    SESSION_GONE = "session_gone", "its session was gone: retired, and the wake run again"
    SESSION_ELSEWHERE = "session_elsewhere", "its session is on another machine: the wake run again fresh"


ENDED_STATUSES = (
    TurnStatus.FINISHED,
    TurnStatus.FAILED,
    TurnStatus.KILLED,
    TurnStatus.TIMED_OUT,
)


class Turn(models.Model):
    """One launch of a harness for one agent in one Motion."""

    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="turns")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="turns")
    reason = models.CharField(max_length=32, default="manual", help_text="Why it woke.")
    reason_detail = models.TextField(blank=True)
    prompt = models.TextField(blank=True)
    woken_by = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="woke_turns"
    )
    mode = models.CharField(max_length=8, default="look")
    mode_rule = models.CharField(max_length=200, blank=True, help_text="Which rule set the mode.")
    effort = models.CharField(max_length=16, blank=True)
    ability = models.JSONField(
        default=dict,
        blank=True,
        help_text="One extra ability for this wake's reason, fixed by the runner (never the agent), "
        'e.g. {"kind": "reply_on_wiki_page", "api": "...", "page": "Talk:Foo"}.',
    )
    max_budget_usd = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    status = models.CharField(max_length=16, choices=TurnStatus.choices, default=TurnStatus.QUEUED)
    session_id = models.CharField(max_length=200, blank=True)
    resume_after_look_only = models.BooleanField(
        default=False,
        help_text="A full-tools turn whose latest session a look-only wake ran in: resume it (True) "
        "or start a fresh session (False, the default). Set from the full_tools_after_look_only dial.",
    )
    start_fresh = models.BooleanField(
        default=False,
        help_text="Start a fresh session, resuming none: the wake again after the session it was to "
        "resume turned out to be held on another machine (kept there, never replaced).",
    )
    session_note = models.CharField(
        max_length=300,
        blank=True,
        help_text="Which session the turn was to use and why, as the thread was told.",
    )
    carries_taint = models.BooleanField(
        default=False,
        help_text="A look-only maintenance turn (a compaction, a person's command) that resumed a session "
        "a look-only wake ran in: the session it forks counts as tainted too (runner/resume.py).",
    )
    read_taken_back = models.BooleanField(
        default=False,
        help_text="It ran while a post was taken back, having read it (or on a session that held it): "
        "the session it runs in is never resumed, whenever its id is named (motion_runner/retract.py).",
    )
    pid = models.IntegerField(null=True, blank=True)
    pgid = models.IntegerField(null=True, blank=True, help_text="The harness's process group.")
    runner_host = models.CharField(
        max_length=255, blank=True, help_text="The host whose worker runs it (where its processes live)."
    )
    resent_at = models.DateTimeField(
        null=True, blank=True, help_text="Its task was last sent again (a broker lost the first)."
    )
    lease_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Renewed by its live runner every few seconds; once it lapses the turn is reclaimed.",
    )
    exit_code = models.IntegerField(null=True, blank=True)
    queued_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    cost_usd = models.DecimalField(
        max_digits=12, decimal_places=6, default=Decimal("0"), help_text="This turn's own dollars."
    )
    cost_source = models.CharField(
        max_length=120, blank=True, help_text="How cost_usd was found; blank until the turn is costed."
    )
    harness_total_before = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        help_text="The harness's running total for the session when this turn launched (Claude Code "
        "keeps one): the turn's cost is what it grew by.",
    )
    usage = models.JSONField(default=dict, blank=True)
    result_subtype = models.CharField(max_length=64, blank=True)
    activity = models.CharField(max_length=300, blank=True)
    events = models.PositiveIntegerField(default=0)
    raw_log = models.JSONField(default=list, blank=True, help_text="Lines the adapter skipped.")
    stderr_tail = models.TextField(blank=True)
    error = models.TextField(blank=True)
    ended_by = models.CharField(
        max_length=32,
        choices=EndedBy.choices,
        blank=True,
        default=EndedBy.HARNESS,
        help_text="What ended it (a guard, a lost session), for code to read; `error` is for people.",
    )
    model = models.CharField(
        max_length=100, blank=True, help_text="The model this turn runs with; blank: the agent's own."
    )
    # A person's stop (or a scram): set first, then the runner is rung (runner/stop_bell.py).
    stop_requested_at = models.DateTimeField(null=True, blank=True)
    stopped_by = models.CharField(max_length=200, blank=True, help_text="Who stopped it, as the thread says.")
    # The sha256 of the turn's record pass: the credential its generated MCP config hands the
    # record server (motion_runner/recall), good only while the turn runs.
    record_pass = models.CharField(max_length=64, blank=True, db_index=True, editable=False)

    class Meta:
        ordering = ["-queued_at", "-pk"]  # newest first; two turns queued in one instant by pk
        indexes = [
            models.Index(fields=["motion", "agent", "status"]),
            models.Index(fields=["lease_until"], name="running_turn_lease", condition=Q(status="running")),
            # Few rows: which sessions must never be resumed (ingest/sessions.latest_session).
            models.Index(
                fields=["session_id"], name="turn_read_taken_back", condition=Q(read_taken_back=True)
            ),
        ]
        constraints = [
            # One turn at a time per (Motion, agent): a second claim fails at the database.
            models.UniqueConstraint(
                fields=["motion", "agent"],
                condition=Q(status="running"),
                name="one_running_turn_per_motion_agent",
            )
        ]

    def __str__(self) -> str:
        return f"Turn {self.pk} {self.agent} in {self.motion_id} ({self.status})"

    @property
    def ended(self) -> bool:
        return self.status in ENDED_STATUSES


class Scram(models.Model):
    """Stop every agent at once (memory-lane's AZ5). The row with no `lifted_at` holds: while it
    does nothing wakes and no queued turn starts. Rows are kept, lifted, as the record."""

    reason = models.TextField()
    raised_by = models.CharField(max_length=150)
    raised_at = models.DateTimeField(default=timezone.now)
    lifted_by = models.CharField(max_length=150, blank=True)
    lifted_at = models.DateTimeField(null=True, blank=True)
    holds = models.BooleanField(default=True, help_text="Until lifted. At most one row holds.")

    class Meta:
        ordering = ["-raised_at"]
        constraints = [
            models.UniqueConstraint(fields=["holds"], condition=Q(holds=True), name="one_scram_holds")
        ]

    def __str__(self) -> str:
        return f"scram by {self.raised_by}: {self.reason[:60]}"

    @classmethod
    def holding(cls) -> Scram | None:
        return cls.objects.filter(holds=True).first()


class SshKey(models.Model):
    """A person's SSH public key: signing a challenge with it is the sign-in that trust reads."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ssh_keys")
    name = models.CharField(max_length=100, blank=True)
    public_key = models.TextField(help_text="One line, as in ~/.ssh/id_ed25519.pub.")
    fingerprint = models.CharField(max_length=100, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "SSH key"

    def __str__(self) -> str:
        return f"{self.user} {self.fingerprint}"


class AgentKey(models.Model):
    """A per-agent API key. Only its sha256 is stored; the key itself is shown once.

    sha256 rather than a slow password hash (PBKDF2, argon2): the key is 256 random bits, so
    there is nothing to brute-force and no dictionary to slow down; a fast hash keeps every
    API request cheap while a leaked table still yields no usable key.
    """

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="keys")
    prefix = models.CharField(max_length=16, unique=True, help_text="Shown to tell keys apart.")
    hashed = models.CharField(max_length=64, unique=True, editable=False)
    label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… for @{self.agent.name}" if self.agent_id else self.prefix

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class TranscriptFile(models.Model):
    """How far the importer has read one Claude Code transcript file, so it resumes there."""

    path = models.CharField(max_length=1000, unique=True)
    session_id = models.CharField(max_length=200, db_index=True)
    inode = models.BigIntegerField(null=True, blank=True)
    offset = models.BigIntegerField(default=0, help_text="Bytes read up to the last whole line.")
    size = models.BigIntegerField(default=0)
    lines = models.PositiveIntegerField(default=0)
    unknown_lines = models.PositiveIntegerField(default=0)
    bad_lines = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    # State carried across reads: the prompt a turn end belongs to, the session's cost so far.
    last_prompt_id = models.CharField(max_length=200, blank=True)
    entrypoint = models.CharField(
        max_length=32,
        blank=True,
        help_text="cli (a terminal) or sdk-… (a headless run, fed from its stdout).",
    )
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    missing_since = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.path


class UnclaimedSession(models.Model):
    """A transcript (or hook) session no Motion has claimed: it waits here, never guessed."""

    session_id = models.CharField(max_length=200, primary_key=True)
    harness = models.CharField(max_length=20, choices=Harness.choices, default=Harness.CLAUDE_CODE)
    path = models.CharField(max_length=1000, blank=True)
    cwd = models.CharField(max_length=500, blank=True)
    first_lines = models.TextField(blank=True, help_text="The session's first prompts and replies.")
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.SET_NULL, help_text="The key that reported it."
    )
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-last_seen_at"]

    def __str__(self) -> str:
        return self.session_id


class TakenBack(models.Model):
    """A post its author (or staff) took back: deleted or edited (motion_runner/retract.py). Who and
    when, never what it said before (memory-lane's `MessageChange`: history is where a secret would
    survive). The newest change stands."""

    class Change(models.TextChoices):
        DELETED = "deleted"
        EDITED = "edited"

    message = models.OneToOneField(
        Message, on_delete=models.CASCADE, primary_key=True, related_name="taken_back"
    )
    kind = models.CharField(max_length=10, choices=Change.choices)
    by = models.CharField(max_length=150, help_text="Who took it back, as the thread says it.")
    at = models.DateTimeField(default=timezone.now, db_index=True)
    scrubbed = models.PositiveIntegerField(default=0, help_text="Copies the words were taken out of.")
    reached = models.JSONField(
        default=list,
        blank=True,
        help_text="What cannot be called back: the agents whose turns already read it.",
    )

    class Meta:
        verbose_name = "post taken back"
        verbose_name_plural = "posts taken back"

    def __str__(self) -> str:
        return f"{self.message_id} {self.kind} by {self.by}"
