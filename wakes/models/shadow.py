"""Shadow mode (`WAKES_SHADOW`): every wake decided as usual and written here, nothing launched.

One row per wake that would have started: when, where, who, the post that caused it, the mode it
would have had and why. `manage.py shadow_report` lays these beside the turns memory-lane's poller
ran in the same Moods (docs/switch-over.md).
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from motion_runner.models import Agent, Message, Motion


class ShadowDecision(models.Model):
    """A wake decided while `WAKES_SHADOW` is on: no turn was queued, no harness ran, nothing was
    reserved."""

    at = models.DateTimeField(default=timezone.now, db_index=True)
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="shadow_decisions")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="shadow_decisions")
    post = models.ForeignKey(
        Message,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The post that caused it; blank: a long quiet, an arrival.",
    )
    kind = models.CharField(max_length=40, help_text="mention, new_posts, quiet, watch, arrival")
    mode = models.CharField(max_length=10, help_text="look or full: the tools it would have had")
    mode_rule = models.CharField(max_length=200, blank=True)
    verdict = models.CharField(max_length=20, default="wake")
    reason = models.CharField(max_length=300, help_text="Why it would have woken, as its wake line says.")

    class Meta:
        indexes = [models.Index(fields=["motion", "at"])]

    def __str__(self) -> str:
        return f"shadow: would wake @{self.agent_id} in {self.motion_id} ({self.reason})"
