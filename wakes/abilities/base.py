"""The small base every ability implements, and its typed error.

An ability is the one extra thing a wake may grant for its reason, fixed by the runner when it
queues the turn (Turn.ability, a dict with a `kind`) and never chosen by the agent. The safe
shape: the turn itself stays look-only, and after it FINISHED the runner acts on the agent's
words itself, exactly as the ability says (e.g. posts the reply on the one page it names).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from motion_runner.models import Kind, Message, Turn
from motion_runner.thread.request_tags import without_asking_tags

SILENT = re.compile(r"<silent\b", re.IGNORECASE)


class AbilityError(Exception):
    """Acting on an ability failed. `permanent`: asking again cannot help (a protected page, a
    wrong password); `retry_after`: the other side asked us to come back in that many seconds
    (None with permanent=False: a transient failure, retried with back-off)."""

    def __init__(self, message: str, *, permanent: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.permanent = permanent
        self.retry_after = retry_after


@dataclass
class Done:
    """What acting did: one line for the thread, and what to keep on the AbilityRun."""

    line: str
    result: dict[str, Any] = field(default_factory=dict)


def final_reply(turn: Turn) -> str | None:
    """What the agent said last in this turn, as it would stand alone: its text after its last
    tool call or result (so "let me look…" before a tool call is not part of it). None when it
    chose silence (`<silent>…</silent>`), said only requests to the runner (`<tools to=…/>`),
    or said nothing."""
    said: list[str] = []
    for kind, text in (
        Message.objects.filter(
            turn=turn, agent=turn.agent, kind__in=[Kind.TEXT, Kind.TOOL_CALL, Kind.TOOL_RESULT]
        )
        .order_by("created_at", "id")
        .values_list("kind", "text")
    ):
        said = [*said, text] if kind == Kind.TEXT else []
    reply = "\n\n".join(part.strip() for part in said if part.strip())
    if SILENT.search(reply):
        return None  # it chose silence: nothing around the tag is meant for the outside
    # The asks are the runner's (each made a request card from its own message), not the page's; a
    # tag that asks nothing (inside an address, shown as code) is the agent's words, as in the thread.
    reply = "\n\n".join(kept for part in said if (kept := without_asking_tags(part).strip()))
    return reply or None


class Ability:
    """One kind of ability. Subclasses set `kind` and implement the methods below."""

    kind: ClassVar[str]

    def target(self, spec: dict[str, Any]) -> str:
        """What it acts on, for people: `Talk:Foo on pickipedia.xyz`."""
        raise NotImplementedError

    def prompt(self, spec: dict[str, Any]) -> str:
        """What the woken agent is told about it (part of the wake prompt)."""
        raise NotImplementedError

    def payload(self, turn: Turn) -> str | None:
        """What the runner will act with, from the finished turn; None: nothing to do."""
        return final_reply(turn)

    def perform(self, turn: Turn, spec: dict[str, Any], payload: str, *, attempt: int) -> Done:
        """Act, once. Raise AbilityError saying why it could not. `attempt` > 1 means an earlier
        try may have half-happened (a lost answer): check before acting again."""
        raise NotImplementedError
