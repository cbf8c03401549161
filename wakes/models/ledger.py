"""The ledger: each screen and turn a row of dollars (Spend), and the day row every reservation
locks (BudgetDay)."""

from __future__ import annotations

from decimal import Decimal

from django.db import models

from motion_runner.models import Agent, Motion, Turn

from .listening import Consideration


class Spend(models.Model):
    """The ledger: today's spend is `Sum(amount)` over the day's counted rows."""

    class Kind(models.TextChoices):
        SCREEN = "screen"
        CONSIDERATION = "consideration"  # an envelope reserved, then the turn's real cost
        MENTION = "mention"  # not counted against budgets; kept for the audit
        WATCH = "watch"
        GRANT = "grant"  # a person granted full tools: not counted, like a mention
        MANUAL = "manual"  # `manage.py wake` or another operator's wake: not counted
        COMPACTION = "compaction"  # the runner's own turn: counted like the turn it follows

    kind = models.CharField(max_length=16, choices=Kind.choices)
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="spend")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="spend")
    consideration = models.ForeignKey(
        Consideration, null=True, blank=True, on_delete=models.SET_NULL, related_name="spend"
    )
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="spend")
    day = models.DateField()
    at = models.DateTimeField()
    amount = models.DecimalField(
        max_digits=12, decimal_places=6, help_text="Dollars: real when settled, else reserved."
    )
    reserved = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    settled = models.BooleanField(default=False)
    counted = models.BooleanField(default=True, help_text="Counts against the daily cap.")
    full = models.BooleanField(
        default=False, help_text="A full consideration: counts against the hourly limit."
    )
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    note = models.CharField(max_length=300, blank=True)

    class Meta:
        verbose_name = "ledger entry"
        verbose_name_plural = "ledger"
        indexes = [
            models.Index(fields=["day", "counted"]),
            models.Index(fields=["motion", "agent", "at"]),
        ]

    def __str__(self) -> str:
        return f"{self.kind} ${self.amount} {self.motion_id}/{self.agent_id}"


class BudgetDay(models.Model):
    """The lock every reservation of a day takes first (an UPDATE on this row)."""

    day = models.DateField(primary_key=True)
    reservations = models.PositiveIntegerField(default=0)
