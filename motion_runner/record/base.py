"""The seam's interface. A binding stores Messages the apps built (already fitted and redacted by
`motion_runner.ingest.fit.fit_message`) and claims sessions; it never builds Messages itself."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from ..models import Agent, Message, Motion

if TYPE_CHECKING:
    from ..signals import SteeringSource


class RecordBinding:
    # True when the binding writes into a record memory-lane's own poller also reads, so that
    # POLLER_AGENTS fences the wakes app off those agents (motion_runner.memory_lane.fence).
    shares_memory_lane_record = False
    # True when the binding keeps lines the apps' index does not (thinking, a prompt's echo): only
    # then are they redacted and handed to `write_unindexed`.
    keeps_unindexed = False
    # True when the binding keeps lines of a session no Motion has claimed yet (memory-lane's
    # importer stores them with no Mood): only then are they read and handed to `write_unclaimed`.
    keeps_unclaimed = False

    def insert_one(self, message: Message) -> bool:
        """Insert unless a Message with this id exists; True when this call inserted it."""
        raise NotImplementedError

    def insert_batch(self, batch: list[Message]) -> list[Message]:
        """Insert those of `batch` (unique ids, in id order) whose id is new, in as few statements
        as the binding can; returns the ones this call inserted."""
        raise NotImplementedError

    def known_ids(self, ids: list[uuid.UUID]) -> set[uuid.UUID]:
        """Those of `ids` the record already holds, for a re-post to skip before building its
        Messages. A binding that cannot tell cheaply answers none: the insert still decides."""
        return set()

    def motion_for_slug(self, slug: str) -> Motion | None:
        """The Motion a route's slug names, or None: here its own slug; a binding whose record
        has other names for it (memory-lane's Mood slugs and aliases) finds it by those too."""
        return Motion.objects.filter(slug=slug).first()

    def write_unindexed(self, events: list[Any], motion: Motion, agent: Agent | None) -> None:
        """Lines the apps' own record does not keep (the model's thinking, a prompt's echo), already
        redacted: a binding whose record keeps every line writes them."""

    def write_unclaimed(self, messages: list[Message], events: list[Any], session_id: str) -> None:
        """Lines of a session no Motion has claimed (fitted and redacted Messages with no Motion,
        and the unindexed lines' events): a binding whose record keeps them writes them now; the
        apps' index gets them from the spool once the session is claimed."""

    def order_batch(self, said: list[tuple[str, Any]], since: Any) -> None:
        """The ids of one batch's lines with when each was read (all of them: indexed Messages
        and lines only the binding keeps): a binding that wrote them in another order orders its
        rows as they were said; `since`: when the batch began writing (older rows are not its)."""

    def fill_in(self, copy: Message, stored: Message, changed: list[str]) -> None:
        """A later copy of a stored line (the transcript's, after the stream's) filled the stored
        Message's blanks (`changed`, already saved): a binding keeping its own copy fills it too."""

    def claim(self, session_id: str, motion: Motion) -> None:
        """A session now belongs to `motion` (after the apps' own MotionSession says so)."""

    def steering_source(self) -> SteeringSource | None:
        """Where the room's settings are kept, when not in wakes' own ``Steer`` table (one source
        of truth, never two that disagree); None: there."""
        return None

    def sweep_changes(self) -> int:
        """Posts taken back in the binding's record where no receiver heard it: taken back in the
        apps' copy too (the beat's `motion_runner.sweep_taken_back`). How many."""
        return 0

    def connect(self) -> None:
        """Connect the receivers the binding needs (AppConfig.ready)."""
