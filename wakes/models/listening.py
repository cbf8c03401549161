"""The consider loop's and the mentions' rows: who listens where and when it is due (ListenState),
each consideration claimed (Consideration), each mention woken once (MentionWake), who is typing
(TypingPing)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from motion_runner.models import Agent, Message, Motion, Turn, TurnStatus
from motion_runner.sql.listen_states import instance_from_row


class ListenState(models.Model):
    """The consider loop's memory of one (Motion, listening agent)."""

    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="listen_states")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="listen_states")
    # Newest post by someone else (a person, another agent, a watch): what a new-posts
    # consideration is about. `considered_through` is the cursor: posts up to it were considered.
    last_post_at = models.DateTimeField(null=True, blank=True)
    considered_through = models.DateTimeField(null=True, blank=True)
    # Newest thing said by anyone, this agent included: the long-quiet clock.
    last_said_at = models.DateTimeField(null=True, blank=True)
    last_person_at = models.DateTimeField(null=True, blank=True)
    idle_level = models.PositiveSmallIntegerField(default=0, help_text="Silent long quiets in a row.")
    rested = models.BooleanField(default=False)
    busy_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="A wake of this pair is in flight; re-checked at this time if not ended.",
    )
    due_at = models.DateTimeField(null=True, blank=True, help_text="When the loop looks at this pair next.")
    considered_at = models.DateTimeField(null=True, blank=True)
    version = models.PositiveIntegerField(
        default=0, help_text="Bumped by every write: claims are conditional on it."
    )
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["motion", "agent"], name="one_listen_state_per_pair")]
        indexes = [
            models.Index(fields=["due_at"], name="listen_due", condition=Q(due_at__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.agent} in {self.motion_id}"

    @classmethod
    def from_db(cls, db: str | None, field_names, values) -> ListenState:
        """The look builds every due pair each tick: motion_runner/sql/listen_states.py builds the
        row at a third of Django's cost (its reference path, Django's own, when it declines)."""
        built = instance_from_row(cls, db, field_names, values)
        return built if built is not None else super().from_db(db, field_names, values)

    @property
    def pending(self) -> bool:
        """New posts since the last consideration."""
        return self.last_post_at is not None and (
            self.considered_through is None or self.last_post_at > self.considered_through
        )


class WakeKind(models.TextChoices):
    NEW_POSTS = "new_posts", "new posts"
    QUIET = "quiet", "long quiet"
    MENTION = "mention"
    WATCH = "watch"


class Consideration(models.Model):
    class Status(models.TextChoices):
        CLAIMED = "claimed"
        RUNNING = "running"  # reserving, screening, waking
        REFUSED = "refused"  # a budget stopped it
        SCREENED = "screened"  # the screen dismissed it
        WOKEN = "woken"  # a turn was queued
        SPOKE = "spoke"
        SILENT = "silent"
        FAILED = "failed"

    state = models.ForeignKey(ListenState, on_delete=models.CASCADE, related_name="considerations")
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="considerations")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="considerations")
    kind = models.CharField(max_length=16, choices=WakeKind.choices)
    claim_version = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.CLAIMED)
    through = models.DateTimeField(null=True, blank=True, help_text="Posts up to here are covered.")
    previous_through = models.DateTimeField(null=True, blank=True)
    quiet_seconds = models.FloatField(
        null=True, blank=True, help_text="For a long quiet: how long it had been."
    )
    screen_verdict = models.CharField(max_length=16, blank=True)
    screen_reason = models.CharField(max_length=300, blank=True)
    turn = models.OneToOneField(
        Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="consideration"
    )
    detail = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField()
    resent_at = models.DateTimeField(
        null=True, blank=True, help_text="Claimed but not started in time: its task was sent again (once)."
    )
    started_at = models.DateTimeField(
        null=True, blank=True, help_text="When a worker started it; one not woken soon after lost its worker."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["state", "claim_version"], name="one_consideration_per_claim")
        ]
        indexes = [
            models.Index(fields=["motion", "agent", "created_at"]),
            # What the tick's recovery looks at: the few considerations still in flight.
            models.Index(
                fields=["created_at"],
                name="consideration_in_flight",
                condition=Q(status__in=["claimed", "running"]),
            ),
        ]


class MentionWakeQuerySet(models.QuerySet):
    def holds_in_force(self) -> MentionWakeQuerySet:
        """The mentions held now: a hold said and still owed (no turn yet, or one still queued). A
        mention let go keeps in `hold` why it never will be answered (a ■, a command a scram
        refused): said in the thread, never a hold."""
        return (
            self.exclude(hold="")
            .exclude(status__in=(MentionWake.Status.LET_GO, MentionWake.Status.ANSWERED))
            .filter(Q(turn__isnull=True) | Q(turn__status=TurnStatus.QUEUED))
        )


class MentionWake(models.Model):
    class Status(models.TextChoices):
        WAITING = "waiting"  # a terminal mention, waiting to see if it is answered
        WOKEN = "woken"
        ANSWERED = "answered"  # answered before the wait ran out: no wake
        HELD = "held"  # the agent's listening here is off: woken when it is back (wakes/decision/steering.py)
        LET_GO = "let_go"  # posted before someone stopped the agent's turns: never woken
        CHAINED = "chained"  # agents woke each other too often in a row: woken after a person's post

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="mention_wakes")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="mention_wakes")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WAITING)
    due_at = models.DateTimeField()
    # Several mentions owed to one agent in one Motion are answered by one turn (coalesced).
    turn = models.ForeignKey(
        Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="mention_wakes"
    )
    created_at = models.DateTimeField()
    # Why it has not started yet ("a turn is under way here; this one is next", "the hourly cap:
    # next slot at …"), and until when if known; cleared when its turn starts.
    hold = models.CharField(max_length=300, blank=True)
    hold_until = models.DateTimeField(null=True, blank=True)

    objects = MentionWakeQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["message", "agent"], name="one_wake_per_mention")]
        indexes = [
            models.Index(fields=["due_at"], name="mention_waiting_due", condition=Q(status="waiting")),
            # Held while the agent's listening is off: due at its "until" (wakes/decision/steering.py).
            models.Index(fields=["due_at"], name="mention_held_due", condition=Q(status="held")),
        ]


class TypingPing(models.Model):
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="typing")
    who = models.CharField(max_length=150)
    at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["motion", "who"], name="one_ping_per_person")]
