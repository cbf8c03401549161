"""The wake rules' one notion of now: tests and the replay bench drive it."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

_override: datetime | None = None


def now() -> datetime:
    return _override if _override is not None else timezone.now()


def set_now(moment: datetime | None) -> None:
    """Freeze the clock at `moment` (None: back to the real one)."""
    global _override
    _override = moment
