"""What the room set in the thread's menu for an agent (Steer: reads, mode, effort, …, until when)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from motion_runner.models import Agent, Motion


class Steer(models.Model):
    """One change the room made to how its agents wake (wakes/decision/steering.py): append-only, with who
    and when. The newest row of a (Motion, agent, setting) is in force until its `until`;
    `agent` is blank for the Motion's own settings (rules, archived), and for listening set for
    every agent; `motion` is blank for listening set everywhere."""

    class Setting(models.TextChoices):
        LISTENING = "listening"  # on / mentions / off
        MODEL = "model"
        MENTION_EFFORT = "mention_effort"
        CONSIDER_EFFORT = "consider_effort"
        READS = "reads"
        DISCRETION = "discretion"  # reserved / normal / chatty
        VERBOSITY = "verbosity"  # terse / normal / full
        RULES = "rules"  # the Motion's
        ARCHIVED = "archived"  # the Motion's: "yes" / "no"
        ULTRACODE = "ultracode"  # "on" / "" (off): Claude Code's ultracode on trusted full-tools mentions
        LETTER = "letter"  # the Motion's: the letter its agents' first wake here opens with

    # Blank: every Motion (listening's wider scopes, wakes/decision/listening_scopes.py).
    motion = models.ForeignKey(Motion, null=True, blank=True, on_delete=models.CASCADE, related_name="steers")
    agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="steers")
    setting = models.CharField(max_length=20, choices=Setting.choices)
    value = models.TextField(blank=True, help_text="Blank: back to what the admin's dials say.")
    until = models.DateTimeField(
        null=True, blank=True, help_text="After this the setting is back to its default."
    )
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    by_name = models.CharField(max_length=150)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["motion", "setting", "at"])]

    def __str__(self) -> str:
        whose = f"@{self.agent.name}" if self.agent_id else (self.motion_id or "everyone")
        return f"{whose} {self.setting}={self.value!r} by {self.by_name}"
