"""A person's arrival greeted (wakes/turn/arrivals.py): at most one agent, once per gap."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from motion_runner.models import Agent, Motion, Turn


class Greeting(models.Model):
    """One arrival of a person and the agent woken to greet them: the row the next arrival reads
    ("greeted within the gap": no second greeting, from a second device or another agent)."""

    class How(models.TextChoices):
        SIGNED_IN = "signed_in", "signed in"
        POSTED = "posted", "posted"

    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="greetings")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="greetings")
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    how = models.CharField(max_length=10, choices=How.choices)
    away_since = models.DateTimeField(null=True, blank=True, help_text="Their last post before; blank: none.")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["person", "-at"])]

    def __str__(self) -> str:
        return f"{self.person_id} greeted by @{self.agent_id} in {self.motion_id}"
