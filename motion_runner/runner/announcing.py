"""A turn's Messages announced as they commit, with wakes/' clock note paced.

`message_created` goes out for every Message once, in order, after its commit (mentions wake at
once); its `newest_of_batch` asks the receivers for per-batch work, which for wakes/ is moving
the consider loop's clocks (`wakes.loop.note_post`: four queries and an update per listening
agent). The runner writes a batch per read of the harness's stdout, so at 200 lines a second it
noted 100-200 times a second, most of its time, and the lines behind it waited in the pipe
(bench/stream_latency.py). The clocks need only the newest post and count in seconds (the quiet
period is 10 s by default), so here the note goes out at most once per NOTE_SECONDS: the newest
Message of a batch inside the interval is held back, and announced (unnoted) before the next
batch, or noted once the interval has passed (the runner's tick, at least twice a second) or the
turn's output is all written (`flush`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..message_fit import announce as announce_messages
from ..models import Message

NOTE_SECONDS = 0.25


class PacedAnnouncer:
    def __init__(
        self,
        interval: float = NOTE_SECONDS,
        *,
        announce: Callable[..., None] = announce_messages,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = interval
        self._announce = announce
        self._clock = clock
        self.held: Message | None = None
        self._noted_at: float | None = None

    def __call__(self, messages: list[Message]) -> None:
        """The writer's on-commit announcement of the Messages one write inserted."""
        if not messages:
            return
        if self.held is not None:
            messages = [self.held, *messages]
            self.held = None
        if self._due():
            self._announce(messages)
            self._noted_at = self._clock()
        else:
            self._announce(messages[:-1], note_newest=False)
            self.held = messages[-1]

    def flush_due(self) -> None:
        """The held Message, noted, once the interval since the last note has passed."""
        if self.held is not None and self._due():
            self.flush()

    def flush(self) -> None:
        """The held Message, noted, now (the turn's output is all written)."""
        held, self.held = self.held, None
        if held is not None:
            self._announce([held])
            self._noted_at = self._clock()

    def _due(self) -> bool:
        return self._noted_at is None or self._clock() - self._noted_at >= self.interval
