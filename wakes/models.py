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
