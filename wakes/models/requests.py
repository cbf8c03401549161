"""What an agent asks of a person (WakeRequest, the request card) and the runner's acting on a
turn's one extra ability (AbilityRun)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class WakeRequest(models.Model):
    """An agent's ask that only a person can answer: full tools, a merge, a deploy."""

    class Kind(models.TextChoices):
        TOOLS = "tools"
        MERGE = "merge"
        DEPLOY = "deploy"

    class Status(models.TextChoices):
        OPEN = "open"
        GRANTED = "granted"
        DECLINED = "declined"
        DONE = "done"

    motion = models.ForeignKey("motion_runner.Motion", on_delete=models.CASCADE, related_name="requests")
    agent = models.ForeignKey("motion_runner.Agent", on_delete=models.CASCADE, related_name="requests")
    turn = models.ForeignKey("motion_runner.Turn", null=True, blank=True, on_delete=models.SET_NULL)
    message = models.OneToOneField(
        "motion_runner.Message",
        on_delete=models.CASCADE,
        related_name="wake_request",
        help_text="The request card in the thread.",
    )
    kind = models.CharField(max_length=8, choices=Kind.choices)
    to = models.TextField(help_text="What the agent says it needs it for.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    granted_turn = models.ForeignKey(
        "motion_runner.Turn", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["motion", "status"])]

    def __str__(self) -> str:
        return f"{self.kind} request by @{self.agent.name} ({self.status})"


class AbilityRun(models.Model):
    """The runner acting on a finished turn's one extra ability (wakes/abilities), at most once.

    One row per turn (the OneToOne is the idempotency key: turn_finished delivered twice finds
    it); a worker acts only after claiming it with a conditional UPDATE (`claim`), so two
    workers racing on the same turn cannot both post.
    """

    class Status(models.TextChoices):
        PENDING = "pending"  # waiting for its first try
        RUNNING = "running"  # claimed by a worker until claimed_until
        WAITING = "waiting"  # the other side asked us to come back at next_attempt_at
        DONE = "done"
        FAILED = "failed"  # gave up; the thread says why
        SKIPPED = "skipped"  # nothing to do (a silent turn, a turn that did not finish)

    turn = models.OneToOneField("motion_runner.Turn", on_delete=models.CASCADE, related_name="ability_run")
    kind = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    payload = models.TextField(blank=True, help_text="What the runner acts with (the reply it posts).")
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True, help_text="e.g. the new revision and its link.")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"{self.kind} for turn {self.turn_id} ({self.status})"
