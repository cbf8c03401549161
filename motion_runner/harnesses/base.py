"""What every harness adapter provides: a command line, and a parser from its stdout lines
to the common events the runner writes as Messages."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .policy import ToolPolicy

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..lib.json_text import read_json


def json_object(line: str | bytes) -> dict[str, Any]:
    """One JSON Lines line as an object. ValueError, saying what it was instead, for anything
    else: every harness and transcript line is an object, so a bare value is a bad line.
    Read by `read_json`, whose contract says where it differs from `json.loads`."""
    obj = read_json(line)
    if not isinstance(obj, dict):
        raise ValueError(f"a JSON {type(obj).__name__}, not an object")
    return obj


# The raw lines of a session's recorded turn ends, newest first, read only when called: the
# runner passes its reader to `new_parser`, so an adapter finds a resumed session's running
# total without touching the database itself.
RecordedEnds = Callable[[], Iterable[Any]]


def no_recorded_ends() -> Iterable[Any]:
    return ()


class EventKind:
    INIT = "init"
    TEXT = "text"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    TURN_END = "turn_end"
    ERROR = "error"
    COMPACT = "compact"
    # A background task the turn started (a `run_in_background` shell), and its end.
    TASK = "task"
    # Not written as a Message: only moves the activity line ("writing…").
    ACTIVITY = "activity"
    # A line the adapter does not know: kept in the turn's raw log, never fatal.
    UNKNOWN = "unknown"
    # The model's thinking summary (Claude Code's `thinking` block): posted as a collapsed step;
    # memory-lane's record keeps it as a `Thought` row (memory_lane/rows.py).
    THINKING = "thinking"
    # A user line that is no tool result (a `claude -p` prompt's echo, a compaction's summary, a
    # command's output): likewise only for a record binding that keeps every line.
    PROMPT = "prompt"
    # The text of the block the model is typing now, whole so far (Claude Code's text_delta,
    # Pi's text_delta): shown growing on the page, never stored, never priced; the final line
    # that follows is the Message (motion_runner/runner/live_text.py).
    PARTIAL = "partial"
    # An API message's final usage, streamed after its blocks (Claude Code's message_delta):
    # never stored as a Message, only priced (the runner prices a turn that printed no result
    # line by it; the spend guard counts it), once per message_id.
    USAGE = "usage"


@dataclass
class Event:
    kind: str
    uuid: str | None = None
    message_id: str = ""
    session_id: str = ""
    text: str = ""
    tool_name: str = ""
    tool_id: str = ""
    tool_input: Any = None
    is_error: bool = False
    model: str = ""
    tools: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    # On TURN_END: the turn's OWN cost (never a session's running total), how it was found,
    # and the harness's running total for the session after it where the harness keeps one.
    cost_usd: Decimal | None = None
    cost_source: str = ""
    harness_total_usd: Decimal | None = None
    subtype: str = ""
    stop_reason: str = ""
    permission_denials: list[Any] = field(default_factory=list)
    cwd: str = ""
    raw: Any = None


def turn_workspace(turn) -> str:
    """Where a turn runs: the Motion's workspace, else the agent's working directory, else a
    folder of the Motion's own under DATA_DIR/workspaces, never the runner's own checkout
    (a look-only turn's reads are confined to this folder)."""
    chosen = turn.motion.workspace or turn.agent.workdir
    if chosen:
        return chosen
    folder = Path(settings.DATA_DIR) / "workspaces" / turn.motion.slug
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder)


class HarnessError(Exception):
    """A harness could not be launched or used. `permanent` says whether retrying can help."""

    def __init__(self, message: str, *, permanent: bool = True):
        super().__init__(message)
        self.permanent = permanent


class StreamParser:
    """Turns one harness process's stdout lines (already decoded JSON) into events.

    One instance per process: harnesses spread one logical message over several lines.
    """

    def __init__(self, session_id: str = ""):
        self.session_id = session_id
        # The harness's running total for the session before this process, where it keeps
        # one (Claude Code): a turn's own cost is the growth. None: no running total.
        self.baseline_usd: Decimal | None = None

    def feed(self, line: dict[str, Any]) -> list[Event]:  # pragma: no cover - abstract
        raise NotImplementedError

    def finish(self) -> list[Event]:
        """Events owed once stdout closes (e.g. a half-assembled message)."""
        return []

    def cut_message(self) -> Event | None:
        """The API message cut off before its final usage (the process ended in the middle of
        it), as a USAGE event whose output is estimated from what it streamed
        (`usage["output_tokens_estimated"]`); None when none was (docs/money.md, "A message
        cut off")."""
        return None


@dataclass
class LaunchSpec:
    argv: list[str]
    env: dict[str, str]
    cwd: str | None
    # Files written for this launch (an MCP config) that the runner removes afterwards.
    temp_files: list[Path] = field(default_factory=list)
    # What the harness reads on stdin: the prompt, never an argument (the kernel caps one argument
    # at 128 KiB, and a wake quoting a long thread passes that). None: stdin is /dev/null.
    stdin: str | None = None


class HarnessAdapter:
    harness: ClassVar[str]
    default_binary: ClassVar[str]
    parser_class: ClassVar[type[StreamParser]]
    # The prompt that compacts a resumed session headless, where the harness has one.
    compact_prompt: ClassVar[str | None] = None

    def resolve_binary(self, agent) -> str | None:
        name = agent.binary or self.default_binary
        if "/" in name:
            return name if Path(name).is_file() else None
        for directory in settings.HARNESS_BIN_DIRS:
            candidate = Path(directory) / name
            if candidate.is_file():
                return str(candidate)
        return shutil.which(name)

    def binary_or_error(self, agent) -> str:
        binary = self.resolve_binary(agent)
        if not binary:
            raise HarnessError(
                f"the {self.harness} binary {agent.binary or self.default_binary!r} "
                f"for @{agent.name} was not found (run `npm ci`, or set the agent's binary)",
                permanent=True,
            )
        return binary

    def build_launch(
        self, turn, *, resume_session: str | None, policy: ToolPolicy
    ) -> LaunchSpec:  # pragma: no cover
        """The turn's command line. `policy` (what the turn may use) is the runner's to hand
        over (it asks the `signals.tool_policy` setting's answer once a turn): an adapter only spells it."""
        raise NotImplementedError

    def session_running_total(self, agent, session_id: str, cwd: str = "") -> Decimal | None:
        """The harness's own running total of dollars for a session, as it stands now, where
        the harness keeps one on disk (Claude Code's transcript); None elsewhere."""
        return None

    def holds_session(self, agent, session_id: str) -> bool | None:
        """Whether this machine holds the session (Claude Code: its transcript is on disk here);
        None where the harness cannot tell."""
        return None

    def session_cwd(self, agent, session_id: str) -> str | None:
        """The directory a session must be resumed from, where the harness files sessions by
        directory (Claude Code) and that directory exists; None elsewhere."""
        return None

    def streamed_cost(self, event: Event) -> Decimal | None:
        """What the API message behind a streamed event cost, as far as the stream says (the
        spend guard adds these up while the turn runs); None when it says nothing."""
        return event.cost_usd

    def message_cost(self, message) -> Decimal | None:
        """What one streamed API message (a stored Message row) cost, from its usage × the price
        table, or None when the harness streams nothing to price it by: the estimate for a turn
        that never printed its result line."""
        return None

    def cut_from_rows(self, rows: list[Any]) -> Event | None:
        """An API message's stored rows (one harness message id) when its final usage never
        reached them and nobody heard it (the turn's worker died): as a USAGE event with its
        output estimated from what they hold, like StreamParser.cut_message; None when the
        harness streams no token counts, or the rows hold the final usage."""
        return None

    def new_parser(
        self, session_id: str = "", *, turn=None, recorded_ends: RecordedEnds = no_recorded_ends
    ) -> StreamParser:
        """A parser for one process's stdout. The runner passes its Turn, so an adapter whose
        harness gives no per-line ids can scope its derived ids to the turn (Codex numbers
        its items from item_0 again in every `exec` run of a thread), and the reader of the
        session's recorded turn ends (`RecordedEnds`) for a resumed session's running total."""
        return self.parser_class(session_id)
