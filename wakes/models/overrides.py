"""A Motion's, an agent's or a pair's own dials (DialOverride): blank fields inherit the global row
(dials.py); in_force.py resolves them for one pair."""

from __future__ import annotations

from collections.abc import Collection

from django.db import models
from django.db.models import Q

from motion_runner.models import Agent, Motion

from .dials import Effort

OVERRIDABLE = (
    "quiet_seconds",
    "idle_looks",
    "considerations_per_hour",
    "consideration_cap_usd",
    "consider_effort",
    "mention_effort",
    "screen_enabled",
    "reads",
    "mention_wakes_per_hour",
    "agent_chain_turns",
)


class DialOverride(models.Model):
    """Overrides for one Motion, one agent, or one pair. Blank fields inherit.

    Replacing dials resolve global → Motion → agent → pair. `daily_budget_usd` is different:
    the global one caps the whole day's spend; one set here adds a narrower cap on this
    scope's own spend (a Motion's, an agent's, a pair's).
    """

    motion = models.ForeignKey(
        Motion, null=True, blank=True, on_delete=models.CASCADE, related_name="dial_overrides"
    )
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="dial_overrides"
    )
    quiet_seconds = models.FloatField(null=True, blank=True)
    idle_looks = models.PositiveIntegerField(null=True, blank=True)
    considerations_per_hour = models.PositiveIntegerField(null=True, blank=True)
    daily_budget_usd = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    consideration_cap_usd = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    consider_effort = models.CharField(max_length=8, choices=Effort.choices, blank=True)
    mention_effort = models.CharField(max_length=8, choices=Effort.choices, blank=True)
    screen_enabled = models.BooleanField(null=True, blank=True)
    reads = models.PositiveIntegerField(null=True, blank=True)
    mention_wakes_per_hour = models.PositiveIntegerField(null=True, blank=True)
    agent_chain_turns = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(motion__isnull=False) | Q(agent__isnull=False), name="override_names_a_scope"
            ),
            models.UniqueConstraint(
                fields=["motion"], condition=Q(agent__isnull=True), name="one_override_per_motion"
            ),
            models.UniqueConstraint(
                fields=["agent"], condition=Q(motion__isnull=True), name="one_override_per_agent"
            ),
            models.UniqueConstraint(fields=["motion", "agent"], name="one_override_per_pair"),
        ]

    def __str__(self) -> str:
        return f"override {self.motion_id or '*'} / {self.agent or '*'}"


def overrides_for(motion_id: str, agent_ids: Collection[int]) -> list[DialOverride]:
    """Every override that applies to one of these agents in this Motion, in one query (resolve's
    `overrides`, for a Motion's listening agents together)."""
    return list(
        DialOverride.objects.filter(
            Q(motion_id=motion_id, agent__isnull=True)
            | Q(agent_id__in=agent_ids, motion__isnull=True)
            | Q(motion_id=motion_id, agent_id__in=agent_ids)
        )
    )
