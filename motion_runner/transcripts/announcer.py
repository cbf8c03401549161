"""The importer's announcer: what one import_all commits, announced a batch per Motion."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..ingest.fit import announce as announce_messages
from ..models import Message

# What one import_all commits within this long of its last announcement is announced together.
NOTE_SECONDS = 0.25


class ImportAnnouncer:
    """The Messages one import_all writes, announced at most every NOTE_SECONDS, a batch per Motion.

    `message_created` goes out for every Message once, in order, after its commit, with
    `newest_of_batch` on the newest post of each Motion's batch (`message_fit.announce`): wakes/
    moves that Motion's consider-loop clocks once a batch (`wakes.loop.note_post`, a handful of
    statements). Each file's commit was a batch of its own, so a directory of transcripts in one
    Motion paid the note for every file. Here the
    first commit is announced at once, those within NOTE_SECONDS of the last announcement wait for
    the next commit past it, and `flush` takes the rest when the import ends: mentions and the
    clocks learn of a post at most that much later, as with the runner's own pacing
    (runner/announcing.py, which groups one turn's, always one Motion's).
    """

    def __init__(
        self,
        interval: float | None = None,
        *,
        announce: Callable[[list[Message]], None] = announce_messages,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = NOTE_SECONDS if interval is None else interval
        self._announce = announce
        self._clock = clock
        self.pending: list[Message] = []  # committed, not yet announced
        self._announced_at: float | None = None

    def __call__(self, messages: list[Message]) -> None:
        """A writer's on-commit announcement of the Messages one write inserted."""
        self.pending.extend(messages)
        if self._announced_at is None or self._clock() - self._announced_at >= self.interval:
            self.flush()

    def flush(self) -> None:
        """What waits, now: one batch per Motion, each in the order it was committed."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        by_motion: dict[Any, list[Message]] = {}
        for message in pending:
            by_motion.setdefault(message.motion_id, []).append(message)
        for batch in by_motion.values():
            self._announce(batch)
        self._announced_at = self._clock()
