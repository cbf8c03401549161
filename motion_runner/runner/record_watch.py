"""The record server watched through a turn served over HTTP (issue 41): when one of the record's
tools fails, its health is checked, and a server that no longer answers is said in the thread,
once a turn (the harness's own tool error says only that one call failed, and each later call
fails the same way). A tool error from a server that still answers (a refused call, a bad
argument) is the tool's own answer and says nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..harnesses.base import EventKind
from ..recall.passes import SERVER_NAME, healthy, say_gone
from .monitor import TurnMonitor

if TYPE_CHECKING:
    from ..harnesses import Event
    from ..harnesses.policy import ToolPolicy
    from ..models import Turn

# How every harness names the record's tools in its events (Claude Code, Codex and Pi alike).
TOOL_PREFIX = f"mcp__{SERVER_NAME}__"


class RecordWatch(TurnMonitor):
    def __init__(self, turn: Turn, url: str):
        super().__init__(turn)
        self.url = url
        self.said = False

    def observe(self, event: Event) -> None:
        if self.said or event.kind != EventKind.TOOL_RESULT or not event.is_error:
            return
        if not event.tool_name.startswith(TOOL_PREFIX) or healthy(self.url):
            return
        self.said = True  # and the line's id is the turn's: once a turn, whatever runs it
        say_gone(self.turn, self.url)


def record_watches(turn: Turn, policy: ToolPolicy) -> list[TurnMonitor]:
    """A watch for the turn's record where it was handed the HTTP server (a stdio server of the
    turn's own dies with its harness, whose error says so)."""
    config = policy.look_only.turn_servers.get(SERVER_NAME) or {}
    return [RecordWatch(turn, config["url"])] if config.get("type") == "http" else []
