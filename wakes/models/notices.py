"""A person's notices (an agent answered them; someone @-mentioned them) and their Web Push
subscriptions.

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
    """Something a person would want to hear about, unseen until they mark it seen (memory-lane's
    `notices_for`, its two kinds):

    - `answer`: an agent's turn answered them: their @mention it was woken by (`mention` set), or,
      with no @, they were the last person who spoke before its reply (`mention` empty);
    - `mention`: a post (a person's or an agent's) @-mentioned them (`mention` empty, `agent` the
      agent who wrote it, or empty for a person's post).

    `answer` is the post that made the notice, whichever kind: the one the list quotes and links."""

    class Kind(models.TextChoices):
        ANSWER = "answer", "answered you"
        MENTION = "mention", "mentioned you"

    person = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notices")
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="notices")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.ANSWER)
    agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="notices")
    mention = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.CASCADE, related_name="mention_notices"
    )
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
            models.UniqueConstraint(fields=["mention", "agent"], name="one_notice_per_answered_mention"),
            # A post mentions a person, or answers the last who spoke, once.
            models.UniqueConstraint(
                fields=["answer", "person"],
                condition=Q(mention__isnull=True),
                name="one_notice_per_post_per_person",
            ),
        ]
        indexes = [
            models.Index(fields=["person", "-created_at"], name="notices_of_person"),
            models.Index(fields=["person"], name="unseen_notices", condition=Q(seen_at__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"{self.answer.sender if self.answer_id else '?'} {self.get_kind_display()}: {self.person}"


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
