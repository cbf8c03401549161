"""A person's notices (an agent answered their @mention) and their Web Push subscriptions.

memory-lane keeps the list per person (`notices_for`) and pushes each new one to the devices its
person subscribed (`services/push.py`); here the list is rows, so a person who closed the tab
still finds "answered" in the header when they come back, and a push is sent once per notice.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from motion_runner.models import Agent, Message, Motion


class Notice(models.Model):
    """One answered @mention, for the person who wrote it: unseen until they mark it seen."""

    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notices")
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="notices")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="notices")
    mention = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="mention_notices")
    answer = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="answer_notices")
    created_at = models.DateTimeField()
    seen_at = models.DateTimeField(null=True, blank=True)
    pushed_at = models.DateTimeField(
        null=True, blank=True, help_text="Sent to the person's subscribed browsers (once)."
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            # An agent answers a mention once, however many posts its turn makes.
            models.UniqueConstraint(fields=["mention", "agent"], name="one_notice_per_answered_mention")
        ]
        indexes = [
            models.Index(fields=["person", "-created_at"], name="notices_of_person"),
            models.Index(fields=["person"], name="unseen_notices", condition=Q(seen_at__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"@{self.agent} answered {self.person} in {self.motion_id}"


class PushSubscription(models.Model):
    """A browser's Web Push subscription (PushManager.subscribe): where to send, and the keys
    its payload is encrypted for. The endpoint is a capability URL at the browser's push service:
    shown to nobody, sent to nothing but itself."""

    person = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_subscriptions"
    )
    endpoint = models.URLField(max_length=1000, unique=True)
    p256dh = models.CharField(max_length=200)
    auth = models.CharField(max_length=100)
    created_at = models.DateTimeField()
    last_sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return f"push subscription {self.pk} of {self.person}"
