"""The wake rules' one notion of now: tests and the replay bench drive it. What the rules write is
stamped by it, the turns they queue too (`enqueue_turn(queued_at=…)`), so a turn is never older
than the post that woke it, whatever the machine's hour (tests/wakes/turn/test_turns_on_the_wake_clock.py)."""

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
