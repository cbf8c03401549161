"""A turn's Messages announced together at most every NOTE_SECONDS.

`message_created` goes out for every Message once, in order, after its commit, with
`newest_of_batch` on the newest of the messages written together: receivers do per-batch work
once (wakes/ moves the consider loop's clocks: `wakes.loop.note_post`, four queries and an update
per listening agent). The runner writes a batch per read of the harness's stdout, so at 200 lines
a second it announced 100-200 batches a second, and the notes were most of its time; the lines
behind them waited in the pipe (bench/stream_latency.py). Here the batches committed within
NOTE_SECONDS of the last announcement wait and go out as one batch: once the interval has passed
(at the next commit or the runner's tick, at least twice a second), or when the turn's output is
all written (`flush`). Mentions and the clocks so learn of a post at most ~0.5 s later; readers
are not delayed (the message bell rings on commit, from the database).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..ingest.fit import announce as announce_messages
from ..models import Message

NOTE_SECONDS = 0.25


class PacedAnnouncer:
    def __init__(
        self,
        interval: float = NOTE_SECONDS,
        *,
        announce: Callable[[list[Message]], None] = announce_messages,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = interval
        self._announce = announce
        self._clock = clock
        self.pending: list[Message] = []  # committed, not yet announced
        self._announced_at: float | None = None

    def __call__(self, messages: list[Message]) -> None:
        """The writer's on-commit announcement of the Messages one write inserted."""
        self.pending.extend(messages)
        self.flush_due()

    def flush_due(self) -> None:
        """What waits, as one batch, once the interval since the last announcement has passed."""
        if self.pending and (
            self._announced_at is None or self._clock() - self._announced_at >= self.interval
        ):
            self.flush()

    def flush(self) -> None:
        """What waits, as one batch, now (the turn's output is all written)."""
        pending, self.pending = self.pending, []
        if pending:
            self._announce(pending)
            self._announced_at = self._clock()
