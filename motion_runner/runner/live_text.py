"""A running turn's words as they are typed: the harness's PARTIAL events (its text deltas,
whole so far) taken out of the stream before anything is written or priced, and handed to the
thread page through the cache (thread/typed.py) and the message bell, a few times a second.

Only what is finished is shown: a word still being typed could be half of a secret, which the
redaction would not know yet, so the text is shown up to its last space, redacted. The final
line's Message replaces it: the text is dropped (without a ring: the Message's commit rings)
before that Message is written. A harness stopped mid-reply (■, a guard) has its finished words
kept as the turn's partial reply (runner/turns.py keep_what_it_said), so what was read stays.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from ..harnesses import Event, EventKind
from ..ingest.redaction import redact
from ..thread import typed
from ..thread.bell import ring_on_commit

# At most this often a turn's text is put where the page reads it (each time rings its readers).
EVERY_SECONDS = 0.2
# What ends a block's typing: its Message (or the turn's end, or an error) is on its way.
FINAL_KINDS = {EventKind.TEXT, EventKind.TURN_END, EventKind.ERROR}
UNFINISHED_WORD = re.compile(r"\S+\Z")


def finished_words(text: str) -> str:
    """`text` without the word still being typed."""
    return UNFINISHED_WORD.sub("", text)


@dataclass
class LiveText:
    turn_id: int
    motion_id: str
    text: str = ""  # the latest PARTIAL's
    shown: str = ""  # what the page may read now
    shown_at: float = 0.0

    def take(self, events: list[Event]) -> list[Event]:
        """The events without the PARTIALs (kept here: never written, never observed)."""
        rest = []
        for event in events:
            if event.kind == EventKind.PARTIAL:
                self.text = event.text
                continue
            if event.kind in FINAL_KINDS:
                self.text = ""
            rest.append(event)
        return rest

    def show(self, *, force: bool = False) -> None:
        """Put the text where the page reads it: at once when it is gone (before its Message is
        written), else at most every EVERY_SECONDS (the select loop's tick shows what waits)."""
        wanted = redact(finished_words(self.text)) if self.text else ""
        if wanted == self.shown:
            return
        now = time.monotonic()
        if not wanted:
            typed.drop(self.turn_id)
            self.shown, self.shown_at = "", now
            return
        if not force and now - self.shown_at < EVERY_SECONDS:
            return
        if typed.keep(self.turn_id, wanted):
            self.shown, self.shown_at = wanted, now
            ring_on_commit(self.motion_id)

    def unsaid(self) -> str:
        """The words typed and never said in a Message: what a stopped harness had shown so far."""
        return finished_words(self.text).rstrip() if self.text else ""

    def clear(self) -> None:
        self.text = ""
        self.show()
