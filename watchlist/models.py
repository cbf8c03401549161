"""A Motion's watches: what is watched, how often, what a change does, and what was seen last."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

from django.db import models
from django.utils import timezone

from motion_runner.models import Motion

from .conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .kinds import KIND_CHOICES, Snapshot


class Wake(models.TextChoices):
    ALWAYS = "always", "always: wake the Motion's agents now"
    CONSIDER = "consider", "consider: the consider loop sees the line"
    NEVER = "never", "never: display only"


# The stored state each kind may use; anything else lives in `extra`.
STATE_FIELDS = {
    "etag": "etag",
    "last_modified": "last_modified",
    "revision": "last_revision",
    "block": "last_block",
    "text_hash": "text_hash",
}


class Watch(models.Model):
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="watches")
    kind = models.CharField(max_length=20, choices=KIND_CHOICES)
    target = models.CharField(
        max_length=1000,
        help_text="Wiki: a page title. GitHub: owner/repo#12 or its URL. Web: a URL. Contract: an address.",
    )
    options = models.JSONField(
        default=dict,
        blank=True,
        help_text="Per kind: wiki {api}; github {api}; contract {rpc, chain, event, standard, max_range, "
        "start_block, explorer}.",
    )
    label = models.CharField(max_length=200, blank=True, help_text="Shown in lines instead of the target.")
    wake = models.CharField(max_length=10, choices=Wake.choices, default=Wake.CONSIDER)
    enabled = models.BooleanField(default=True)
    interval = models.PositiveIntegerField(default=90, help_text="Seconds between checks.")

    # What was seen last.
    etag = models.CharField(max_length=500, blank=True)
    last_modified = models.CharField(max_length=100, blank=True)
    last_revision = models.CharField(max_length=100, blank=True)
    last_block = models.BigIntegerField(null=True, blank=True)
    text_hash = models.CharField(max_length=64, blank=True)
    extra = models.JSONField(default=dict, blank=True, help_text="Kind-specific state.")
    settings_hash = models.CharField(max_length=64, blank=True, editable=False)

    # Scheduling and health.
    last_checked_at = models.DateTimeField(null=True, blank=True)
    next_due_at = models.DateTimeField(default=timezone.now, db_index=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    claim = models.CharField(max_length=36, blank=True, editable=False)
    consecutive_failures = models.PositiveIntegerField(default=0)
    failing_since = models.DateTimeField(null=True, blank=True)
    failure_notified = models.BooleanField(default=False)
    last_error = models.TextField(blank=True)
    disabled_reason = models.TextField(blank=True)

    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "watches"
        ordering = ["motion", "kind", "target"]
        indexes = [models.Index(fields=["enabled", "next_due_at"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.label or self.target}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Editing what a watch fetches invalidates everything it remembered (an old ETag
        # would otherwise answer 304 for a different URL), and the next check is a first one.
        new_hash = self.compute_settings_hash()
        if new_hash != self.settings_hash:
            if self.settings_hash:
                self.reset_state()
                self.next_due_at = timezone.now()
                # A check in flight was for the old settings: its result must not land here.
                self.claim, self.claimed_until = "", None
            self.settings_hash = new_hash
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = None
        super().save(*args, **kwargs)

    # --- settings and state ---------------------------------------------------------------

    def compute_settings_hash(self) -> str:
        """What decides what is fetched; the wake policy and interval are not part of it."""
        raw = json.dumps([self.kind, self.target, self.options], sort_keys=True, default=str)
        return hashlib.sha256(raw.encode()).hexdigest()

    def reset_state(self) -> None:
        self.etag = self.last_modified = self.last_revision = self.text_hash = ""
        self.last_block = None
        self.extra = {}

    def state_dict(self) -> dict[str, Any]:
        state = dict(self.extra or {})
        for key, field_name in STATE_FIELDS.items():
            value = getattr(self, field_name)
            if value not in ("", None):
                state[key] = int(value) if key == "revision" and str(value).isdigit() else value
        return state

    def apply_state(self, state: dict[str, Any]) -> list[str]:
        """Store a kind's state dict; returns the changed field names."""
        state = dict(state)
        for key, field_name in STATE_FIELDS.items():
            value = state.pop(key, None)
            if field_name == "last_block":
                setattr(self, field_name, value)
            else:
                setattr(self, field_name, "" if value is None else str(value)[:500])
        self.extra = state
        return [*STATE_FIELDS.values(), "extra"]

    def snapshot(self) -> Snapshot:
        return Snapshot(
            id=self.pk,
            kind=self.kind,
            target=self.target,
            options=dict(self.options or {}),
            state=self.state_dict(),
            wake=self.wake,
            label=self.label,
            last_checked_at=self.last_checked_at,
        )

    def backoff(self) -> timedelta:
        """Doubling from the interval, capped."""
        seconds = self.interval * (2 ** min(self.consecutive_failures, 20))
        return timedelta(seconds=min(seconds, settings.WATCH_BACKOFF_MAX_SECONDS))


class SharedCursor(models.Model):
    """State a group of watches shares: a GitHub repository's issue listing (its `since`, its
    ETag, and when each watched issue was last seen to change), so one conditional request
    answers for every watched issue of the repository."""

    kind = models.CharField(max_length=20, choices=KIND_CHOICES)
    key = models.CharField(max_length=1000)
    state = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "key"], name="one_cursor_per_group")]

    def __str__(self) -> str:
        return f"{self.kind}: {self.key}"
