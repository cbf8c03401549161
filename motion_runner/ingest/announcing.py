"""The one announcer: committed Messages announced together, a batch per Motion, at most every
NOTE_SECONDS. The runner (a turn's output), the transcript importer (a directory of files) and
the stream API (one post) all announce through it.

`message_created` goes out for every Message once, in order, after its commit, with
`newest_of_batch` on the newest post of each Motion's batch (`message_fit.announce`): receivers
do per-batch work once (wakes/ notes the post, wakes/consider_loop/noting.py). A writer that commits many
small batches (the runner at one per read of the harness's stdout, the importer at one per file)
would otherwise pay a note for each. The first commit is announced at once; those within the
interval of the last announcement wait and go out together, once it has passed (at the next
commit, or a `flush_due` from the runner's tick), or when the writer is done (`flush`). Mentions
and the clocks so learn of a post at most an interval later; readers are not delayed (the
message bell rings on commit, from the database). With an interval of 0 every commit is
announced at once (the stream API: one post, one Motion, one batch).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..models import Message
from .fit import announce as announce_messages

NOTE_SECONDS = 0.25


class Announcer:
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
        self.flush_due()

    def flush_due(self) -> None:
        """What waits, once the interval since the last announcement has passed."""
        if self.pending and (
            self._announced_at is None or self._clock() - self._announced_at >= self.interval
        ):
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
