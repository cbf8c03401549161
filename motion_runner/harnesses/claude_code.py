"""Claude Code: `claude -p --output-format stream-json --verbose`.

Checked against recordings of the real CLI (2.1.332) in tests/recordings/claude-code/
(`bin/record-claude` re-records them):

- `system/init` (session_id, tools, model, cwd, uuid); `system/status` (with partials),
  `system/api_retry` (attempt, max_retries, error_status: the activity line shows it),
  `system/permission_denied` (tool_name, tool_use_id: the activity line; the tool result that
  follows carries the error and the result line lists the denial).
- `assistant`: exactly one content block a line; the lines of one API message share
  message.id and each has its own uuid (the same uuid the transcript file gives that line).
  Their usage is the message_start snapshot (output_tokens 1, stop_reason null): the final
  output count is in the message_delta stream event after them (and the transcript), so it is
  not taken from here.
  When the API fails, the CLI writes a synthetic assistant line (`is_api_error_message`,
  `api_error_status`, a uuid for message.id; `isApiErrorMessage`, `apiErrorStatus` in the
  transcript) whose text is its error: an error, not speech. A stopped session's transcript
  gets another `<synthetic>` line ("No response requested."): no one's words, not posted. A
  local command (/context, /usage) answers on stdout as a `<synthetic>` line marked
  `local_command_run`: that one is posted, as the answer to the person who asked.
- `user`: tool results (content a list of tool_result blocks; no tool name, so the parser
  remembers names by tool_use id). Lines of one message may interleave with user lines.
- `result`: subtype, is_error, result, errors, total_cost_usd, usage, modelUsage,
  permission_denials, terminal_reason, api_error_status, uuid. `total_cost_usd` (and
  modelUsage) is the SESSION's running total, not the turn's: each process appends a
  `cost-state` line (totalCostUSD, modelUsage) to the session transcript when it exits, even
  when stopped by SIGTERM, and a `--resume`d process starts from the last one
  (recordings resume_three, resume_other_between, resume_after_kill). `usage` is this
  process's, but it is all zeros when the turn ends on an error (max_budget) and leaves out a
  compaction's calls (read-then-reply), so it cannot be trusted either. The turn's own cost is
  therefore total_cost_usd minus the transcript's last cost-state before the launch. An API failure ends
  with subtype "success" and is_error true: terminal_reason ("api_error",
  "prompt_too_long", …) names it, so that is the subtype kept.
- `stream_event` (with --include-partial-messages, which the runner passes; recording
  `partials`): raw Messages API events. A block's start moves the activity line; a text
  block's `text_delta`s give its text as typed (PARTIAL events, shown growing, never stored):
  the `assistant` line with the whole block comes after its deltas. `message_delta` (after an
  API message's last block) carries its final usage, output counted: a USAGE event, priced
  (a turn stopped before its result line is charged by it) and never stored.
- `rate_limit_event`, `system/compact_boundary` (from the docs; not recorded offline).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from ..lib.ids import stable_uuid
from . import pricing, register
from .base import (
    Event,
    EventKind,
    HarnessAdapter,
    LaunchSpec,
    RecordedEnds,
    StreamParser,
    no_recorded_ends,
    turn_workspace,
)
from .claude_code_command import tool_arguments
from .claude_code_files import dollars, filed_cwd, last_cost_state, transcript_file
from .env import harness_environment
from .policy import ToolPolicy

IGNORED_TYPES = {"rate_limit_event"}
IGNORED_SYSTEM_SUBTYPES = {"status", "hook_started", "hook_response", "hook_progress"}
# A result line that is an error but says subtype "success" (an API failure) is named by this.
VAGUE_ERROR_SUBTYPES = {"", "success"}


# The model name the CLI gives the assistant lines it writes itself (recordings: model_error,
# resume_after_kill).
SYNTHETIC_MODEL = "<synthetic>"


def _text_of(content: Any) -> str:
    """Tool results carry a string or a list of content blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "image":
                    parts.append("[image]")
                else:
                    parts.append(str(block.get("text", "")))
            else:
                parts.append(str(block))
        return "\n".join(p for p in parts if p)
    return str(content)


def line_block_uuid(line_uuid: str, index: int) -> str:
    """The id of a line's content block: the line's own uuid for its first, one derived from it
    for each further block (a line can hold a text and tool calls)."""
    return line_uuid if index == 0 else stable_uuid(line_uuid, index)


class ClaudeCodeParser(StreamParser):
    def __init__(self, session_id: str = "", baseline_usd: Decimal | None = Decimal(0)):
        """`baseline_usd`: the session's running total before this process (0 for a new
        session; None when a resumed session's is unknown: the cost is then priced from usage)."""
        super().__init__(session_id)
        self.baseline_usd = baseline_usd
        self.model = ""
        self.tool_names: dict[str, str] = {}  # tool_use id -> name, for the results
        # Background tasks started and not yet ended: the CLI stays up for them after its
        # result, and answers their end with another turn (recorded, 2.1.332).
        self.background_tasks: dict[str, str] = {}
        self.typing = ""  # the text block being typed, as its deltas said so far
        # The API message streaming now (its message_start): its id, model and usage so far,
        # for its message_delta, which carries the final usage but neither id nor model.
        self.streaming: tuple[str, str, dict[str, Any]] = ("", "", {})
        # Whether that message's message_delta is still owed, and the bytes its deltas streamed
        # so far (text, thinking, tool input JSON): what it is charged if it never comes.
        self.unfinished = False
        self.delta_bytes = 0

    def feed(self, line: dict[str, Any]) -> list[Event]:
        kind = line.get("type")
        if line.get("session_id"):
            self.session_id = str(line["session_id"])
        if kind == "system":
            return self._system(line)
        if kind == "assistant":
            return self._assistant(line)
        if kind == "user":
            return self._user(line)
        if kind == "result":
            return [self._result(line)]
        if kind == "stream_event":
            return self._partial(line)
        if kind in IGNORED_TYPES:
            return []
        return [Event(EventKind.UNKNOWN, session_id=self.session_id, raw=line)]

    def _system(self, line: dict[str, Any]) -> list[Event]:
        subtype = line.get("subtype")
        if subtype == "init":
            self.model = str(line.get("model") or "")
            return [
                Event(
                    EventKind.INIT,
                    uuid=line.get("uuid"),
                    session_id=self.session_id,
                    model=str(line.get("model") or ""),
                    tools=[str(t) for t in line.get("tools") or []],
                    cwd=str(line.get("cwd") or ""),
                    raw=line,
                )
            ]
        if subtype == "compact_boundary":
            meta = line.get("compact_metadata") or {}
            return [
                Event(
                    EventKind.COMPACT,
                    uuid=line.get("uuid"),
                    session_id=self.session_id,
                    text=f"compacted ({meta.get('trigger', 'auto')}, "
                    f"{meta.get('pre_tokens', '?')} tokens before)",
                    raw=line,
                )
            ]
        if subtype == "api_retry":
            status = line.get("error_status") or line.get("error") or "?"
            return [
                Event(
                    EventKind.ACTIVITY,
                    session_id=self.session_id,
                    text=f"API error {status}, retrying ({line.get('attempt', '?')} of "
                    f"{line.get('max_retries', '?')})…",
                    raw=line,
                )
            ]
        if subtype == "permission_denied":
            return [
                Event(
                    EventKind.ACTIVITY,
                    session_id=self.session_id,
                    text=f"{line.get('tool_name') or 'a tool'} denied",
                    tool_name=str(line.get("tool_name") or ""),
                    tool_id=str(line.get("tool_use_id") or ""),
                    raw=line,
                )
            ]
        if subtype in ("task_started", "task_notification", "task_updated", "background_tasks_changed"):
            return self._task(line, subtype)
        if subtype in IGNORED_SYSTEM_SUBTYPES:
            return []
        return [Event(EventKind.UNKNOWN, session_id=self.session_id, raw=line)]

    def _block_uuid(self, line: dict[str, Any], index: int) -> str | None:
        line_uuid = line.get("uuid")
        if not line_uuid:
            message_id = (line.get("message") or {}).get("id", "")
            return stable_uuid("claude-code", self.session_id, message_id, index) if message_id else None
        return line_block_uuid(str(line_uuid), index)

    def _assistant(self, line: dict[str, Any]) -> list[Event]:
        message = line.get("message") or {}
        if not isinstance(message, dict):
            return [
                Event(
                    EventKind.ERROR,
                    session_id=self.session_id,
                    text="assistant line without a message",
                    raw=line,
                )
            ]
        usage = dict(message.get("usage") or {})
        if message.get("stop_reason") is None:
            # The message_start snapshot: output_tokens is a placeholder, not the count.
            usage.pop("output_tokens", None)
        common = {
            "message_id": str(message.get("id") or ""),
            "session_id": self.session_id,
            "model": str(message.get("model") or ""),
            "usage": usage,
            "stop_reason": str(message.get("stop_reason") or ""),
        }
        if line.get("is_api_error_message") or line.get("isApiErrorMessage"):  # stream / transcript
            # The CLI's own words about a failed API call, not the model's.
            status = line.get("api_error_status") or line.get("apiErrorStatus")
            text = _text_of(message.get("content")) or f"API error {status}"
            common["usage"] = {}
            return [Event(EventKind.ERROR, uuid=self._block_uuid(line, 0), text=text, raw=line, **common)]
        if common["model"] == SYNTHETIC_MODEL and not line.get("local_command_run"):
            # A line the CLI wrote with no model behind it ("No response requested." in a stopped
            # session's transcript, copied by every --fork-session): nobody's words. A local
            # command's answer (/context, /usage: `local_command_run` on stdout; a system
            # `local_command` line in the transcript) is the CLI's answer to a person's command.
            return []
        events: list[Event] = []
        for index, block in enumerate(message.get("content") or []):
            if not isinstance(block, dict):
                continue
            block_type = block.get("type")
            if block_type == "text":
                text = str(block.get("text") or "")
                if text.strip():
                    events.append(
                        Event(
                            EventKind.TEXT, uuid=self._block_uuid(line, index), text=text, raw=line, **common
                        )
                    )
            elif block_type in ("tool_use", "server_tool_use"):
                self.tool_names[str(block.get("id") or "")] = str(block.get("name") or "")
                events.append(
                    Event(
                        EventKind.TOOL_CALL,
                        uuid=self._block_uuid(line, index),
                        tool_name=str(block.get("name") or ""),
                        tool_id=str(block.get("id") or ""),
                        tool_input=block.get("input"),
                        raw=line,
                        **common,
                    )
                )
            elif block_type == "thinking" and str(block.get("thinking") or "").strip():
                # Its summary is posted as a collapsed step ("think as if out loud"); a
                # redacted_thinking block is ciphertext, so nothing of it is shown.
                events.append(
                    Event(
                        EventKind.THINKING,
                        uuid=self._block_uuid(line, index),
                        text=str(block.get("thinking")),
                        raw=line,
                        **common,
                    )
                )
        return events

    def _user(self, line: dict[str, Any]) -> list[Event]:
        message = line.get("message") or {}
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list) or not any(
            isinstance(block, dict) and block.get("type") == "tool_result" for block in content
        ):
            # The prompt itself, echoed (the thread has the post that woke the turn), a compaction's
            # summary, a command's output: never posted; only a record that keeps every line does.
            text = _text_of(content)
            if not text.strip():
                return []
            return [
                Event(
                    EventKind.PROMPT,
                    uuid=self._block_uuid(line, 0),
                    session_id=self.session_id,
                    text=text,
                    raw=line,
                )
            ]
        events = []
        for index, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                tool_id = str(block.get("tool_use_id") or "")
                events.append(
                    Event(
                        EventKind.TOOL_RESULT,
                        uuid=self._block_uuid(line, index),
                        session_id=self.session_id,
                        tool_id=tool_id,
                        tool_name=self.tool_names.get(tool_id, ""),
                        text=_text_of(block.get("content")),
                        is_error=bool(block.get("is_error")),
                        raw=line,
                    )
                )
        return events

    def _result(self, line: dict[str, Any]) -> Event:
        subtype = str(line.get("subtype") or "")
        is_error = bool(line.get("is_error")) or (subtype not in VAGUE_ERROR_SUBTYPES)
        text = ""
        if is_error:
            if subtype in VAGUE_ERROR_SUBTYPES:
                subtype = str(line.get("terminal_reason") or "error")
            errors = line.get("errors")
            text = "; ".join(map(str, errors)) if errors else str(line.get("result") or subtype)
        usage = line.get("usage") or {}
        total = dollars(line.get("total_cost_usd"))
        cost, source = self.own_cost(total, usage)
        return Event(
            EventKind.TURN_END,
            uuid=line.get("uuid"),
            session_id=self.session_id,
            text=text,
            is_error=is_error,
            subtype=subtype,
            usage=usage,
            cost_usd=cost,
            cost_source=source,
            harness_total_usd=total,
            permission_denials=line.get("permission_denials") or [],
            stop_reason=str(line.get("stop_reason") or ""),
            raw=line,
        )

    def own_cost(self, total: Decimal | None, usage: dict[str, Any]) -> tuple[Decimal | None, str]:
        """This turn's dollars from the session's running total after it, and how."""
        baseline = self.baseline_usd
        if total is not None and baseline is not None:
            if total >= baseline:
                return total - baseline, "harness total minus the session's total before"
            # A running total never shrinks: this process did not restore the session's, so
            # its total is its own.
            return total, "harness total (the session's was not restored)"
        priced = pricing.anthropic_cost(self.model, usage)
        if priced is None:
            return None, f"no price for model {self.model or '?'} in motion_runner/harnesses/pricing.py"
        return priced, "usage × price (the session's total before this turn is unknown)"

    def _task(self, line: dict[str, Any], subtype: str) -> list[Event]:
        """A background task's start and its end, each a line in the thread; the rest only
        keeps count of what is still running."""
        task_id = str(line.get("task_id") or "")
        description = str(line.get("description") or "") or self.background_tasks.get(task_id, "") or task_id
        common = {
            "uuid": line.get("uuid"),
            "session_id": self.session_id,
            "tool_id": str(line.get("tool_use_id") or ""),
        }
        if subtype == "task_started":
            if not line.get("is_backgrounded"):
                return []
            self.background_tasks[task_id] = description
            return [Event(EventKind.TASK, text=f"background task started: {description}", raw=line, **common)]
        if subtype == "task_notification":
            self.background_tasks.pop(task_id, None)
            said = str(
                line.get("summary") or f"background task {description}: {line.get('status') or 'ended'}"
            )
            return [Event(EventKind.TASK, text=said, raw=line, **common)]
        if subtype == "task_updated":
            if (line.get("patch") or {}).get("status") in ("completed", "failed", "killed", "stopped"):
                self.background_tasks.pop(task_id, None)
            return []
        # background_tasks_changed: the CLI's whole list of what still runs
        running = {
            str(task.get("task_id") or "") for task in line.get("tasks") or [] if isinstance(task, dict)
        }
        self.background_tasks = {key: value for key, value in self.background_tasks.items() if key in running}
        return []

    def _final_usage(self, line: dict[str, Any], event: dict[str, Any]) -> list[Event]:
        """The message's whole usage, output counted (the assistant lines before it carry the
        message_start snapshot, output a placeholder): what a turn stopped before its result line
        spent on this message. Some API versions send only output_tokens here: the rest is the
        message_start's."""
        usage = event.get("usage")
        started_id, model, started_usage = self.streaming
        message_id = str(line.get("api_message_id") or started_id)
        if not isinstance(usage, dict) or not message_id:
            return []
        return [
            Event(
                EventKind.USAGE,
                message_id=message_id,
                session_id=self.session_id,
                model=model or self.model,
                usage={**started_usage, **usage},
            )
        ]

    def _partial(self, line: dict[str, Any]) -> list[Event]:
        """A block's start moves the activity line; a text block's deltas give its text so far
        (PARTIAL: shown, never stored); the assistant line that follows carries the whole block."""
        event = line.get("event") or {}
        if event.get("type") == "message_start":
            message = event.get("message") or {}
            usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
            self.streaming = (str(message.get("id") or ""), str(message.get("model") or ""), usage)
            self.unfinished, self.delta_bytes = True, 0
            return []
        if event.get("type") == "message_delta":
            self.unfinished = False
            return self._final_usage(line, event)
        if event.get("type") == "content_block_delta":
            delta = event.get("delta") or {}
            for key in ("text", "thinking", "partial_json"):  # a signature is no output token
                if isinstance(delta.get(key), str):
                    self.delta_bytes += len(delta[key].encode())
            if delta.get("type") != "text_delta" or not isinstance(delta.get("text"), str):
                return []
            self.typing += delta["text"]
            return [Event(EventKind.PARTIAL, session_id=self.session_id, text=self.typing)]
        if event.get("type") != "content_block_start":
            return []
        block = event.get("content_block") or {}
        self.typing = ""
        activity = {
            "text": "writing…",
            "thinking": "thinking…",
            "redacted_thinking": "thinking…",
            "tool_use": f"calling {block.get('name') or 'a tool'}…",
            "server_tool_use": f"calling {block.get('name') or 'a tool'}…",
        }.get(block.get("type"))
        if activity is None:
            return []
        return [Event(EventKind.ACTIVITY, session_id=self.session_id, text=activity, raw=line)]

    def cut_message(self) -> Event | None:
        """The API message streaming when the process ended, if its message_delta never came:
        its message_start usage (input and cache tokens final), output an estimate from the bytes
        its deltas streamed (pricing.estimated_output_tokens), not the placeholder. The API
        billed all the output the model made; the harness never said how much."""
        message_id, model, usage = self.streaming
        if not self.unfinished or not message_id:
            return None
        estimated = pricing.estimated_output_tokens(self.delta_bytes)
        return Event(
            EventKind.USAGE,
            message_id=message_id,
            session_id=self.session_id,
            model=model or self.model,
            usage={**usage, "output_tokens": estimated, "output_tokens_estimated": estimated},
        )


USAGE_COLUMNS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def previous_result_total(recorded_ends: Iterable[Any]) -> Decimal | None:
    """The running total the session's latest recorded result line gave (when its transcript is
    out of reach, e.g. the session was recorded on another machine). `recorded_ends`: the raw
    lines of the session's recorded turn ends, newest first (the runner reads them)."""
    for raw in recorded_ends:
        if isinstance(raw, dict) and raw.get("type") == "result" and raw.get("total_cost_usd") is not None:
            return dollars(raw["total_cost_usd"])
    return None


@register
class ClaudeCodeAdapter(HarnessAdapter):
    harness = "claude-code"
    default_binary = "claude"
    parser_class = ClaudeCodeParser
    compact_prompt = "/compact"

    def session_running_total(self, agent, session_id: str, cwd: str = "") -> Decimal | None:
        path = transcript_file(harness_environment(agent), session_id)
        return last_cost_state(path) if path else None

    def holds_session(self, agent, session_id: str) -> bool | None:
        return transcript_file(harness_environment(agent), session_id) is not None

    def session_cwd(self, agent, session_id: str) -> str | None:
        path = transcript_file(harness_environment(agent), session_id)
        return filed_cwd(path) if path else None

    def streamed_cost(self, event: Event) -> Decimal | None:
        # The assistant line's usage is the API's message_start snapshot: input and cache
        # tokens are final, output is not yet counted (the parser drops the placeholder), so
        # this is a lower bound; the message's USAGE event (its message_delta) is the whole.
        if event.kind == EventKind.TURN_END or not event.usage:
            return None
        return pricing.anthropic_cost(event.model, event.usage)

    def message_cost(self, message) -> Decimal | None:
        usage = {
            "input_tokens": message.input_tokens,
            "output_tokens": message.output_tokens,
            "cache_creation_input_tokens": message.cache_creation_input_tokens,
            "cache_read_input_tokens": message.cache_read_input_tokens,
        }
        if not any(usage.values()):
            return None
        return pricing.anthropic_cost(message.model_backend, usage)

    def cut_from_rows(self, rows: list[Any]) -> Event | None:
        """Rows of an API message whose message_delta never reached them (stored output 0: a
        final count is at least 1): its message_start usage, output estimated from the bytes
        of what its assistant lines hold (text, thinking, tool input as JSON, each line once;
        as stored, so redacted, and without a block whose assistant line never came)."""
        if not rows or any(row.output_tokens for row in rows):
            return None
        seen: set[str] = set()
        streamed = 0
        for row in rows:
            raw = row.raw if isinstance(row.raw, dict) else {}
            key = str(raw.get("uuid") or row.pk)
            if key in seen:
                continue
            seen.add(key)
            message = raw.get("message") if isinstance(raw.get("message"), dict) else {}
            content = message.get("content") if isinstance(message.get("content"), list) else []
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    streamed += len(str(block.get("text") or "").encode())
                elif block.get("type") == "thinking":
                    streamed += len(str(block.get("thinking") or "").encode())
                elif block.get("type") in ("tool_use", "server_tool_use"):
                    streamed += len(json.dumps(block.get("input"), ensure_ascii=False).encode())
        estimated = pricing.estimated_output_tokens(streamed)
        usage = {key: max((getattr(row, key) or 0) for row in rows) for key in USAGE_COLUMNS}
        return Event(
            EventKind.USAGE,
            message_id=rows[0].harness_message_id,
            session_id=rows[0].session_id,
            model=next((row.model_backend for row in rows if row.model_backend), ""),
            usage={**usage, "output_tokens": estimated, "output_tokens_estimated": estimated},
        )

    def new_parser(
        self, session_id: str = "", *, turn=None, recorded_ends: RecordedEnds = no_recorded_ends
    ) -> ClaudeCodeParser:
        baseline: Decimal | None = Decimal(0)
        if session_id:
            baseline = None
            if turn is not None:
                baseline = self.session_running_total(turn.agent, session_id)
            if baseline is None:
                baseline = previous_result_total(recorded_ends())
        return ClaudeCodeParser(session_id, baseline_usd=baseline)

    def build_launch(self, turn, *, resume_session: str | None, policy: ToolPolicy) -> LaunchSpec:
        agent = turn.agent
        argv = [self.binary_or_error(agent), "-p", "--output-format", "stream-json", "--verbose"]
        argv += ["--include-partial-messages"]  # the words as they are typed (PARTIAL events)
        if resume_session:
            # Forked: a person may be working in that session in a terminal; a turn written
            # underneath it would be theirs to find. The fork's new id comes back on the init
            # line and is claimed for the Motion like any session the runner starts.
            argv += ["--resume", resume_session, "--fork-session"]
        if model := turn.model or agent.model:  # the room's choice for this Motion, else the agent's
            argv += ["--model", model]
        if turn.effort:
            argv += ["--effort", turn.effort]
        if turn.max_budget_usd is not None:
            argv += ["--max-budget-usd", str(turn.max_budget_usd)]
        if agent.system_prompt:
            argv += ["--append-system-prompt", agent.system_prompt]
        workspace = turn_workspace(turn)
        tool_argv, temp_files = tool_arguments(policy, workspace)
        argv += tool_argv
        # Claude Code finds a session only from the directory it is filed under: run there.
        cwd = (resume_session and self.session_cwd(agent, resume_session)) or workspace
        # `claude -p` with no prompt argument reads the prompt from stdin.
        return LaunchSpec(
            argv=argv, env=harness_environment(agent), cwd=cwd, temp_files=temp_files, stdin=turn.prompt
        )
