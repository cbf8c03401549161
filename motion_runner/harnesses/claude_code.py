"""Claude Code: `claude -p --output-format stream-json --verbose`.

Line types (checked against recordings in tests/recordings/claude-code/): system/init,
assistant (one API message spans several lines sharing message.id, one content block a
line), user (tool results), result (the turn's end: cost, usage, subtype, is_error,
permission_denials), stream_event (partials, only with --include-partial-messages: they
move the activity line and never post text), rate_limit_event, system/compact_boundary.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from . import register
from .base import Event, EventKind, HarnessAdapter, LaunchSpec, StreamParser, stable_uuid
from .env import harness_environment

IGNORED_TYPES = {"rate_limit_event"}
IGNORED_SYSTEM_SUBTYPES = {"status", "hook_started", "hook_response", "hook_progress"}


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


def _cost(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(str(value))
    except ArithmeticError:
        return None


class ClaudeCodeParser(StreamParser):
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
        if subtype in IGNORED_SYSTEM_SUBTYPES:
            return []
        return [Event(EventKind.UNKNOWN, session_id=self.session_id, raw=line)]

    def _block_uuid(self, line: dict[str, Any], index: int) -> str | None:
        line_uuid = line.get("uuid")
        if not line_uuid:
            message_id = (line.get("message") or {}).get("id", "")
            return stable_uuid("claude-code", self.session_id, message_id, index) if message_id else None
        return str(line_uuid) if index == 0 else stable_uuid(line_uuid, index)

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
        common = {
            "message_id": str(message.get("id") or ""),
            "session_id": self.session_id,
            "model": str(message.get("model") or ""),
            "usage": message.get("usage") or {},
            "stop_reason": str(message.get("stop_reason") or ""),
        }
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
            # thinking / redacted_thinking blocks are the model's own: not posted.
        return events

    def _user(self, line: dict[str, Any]) -> list[Event]:
        message = line.get("message") or {}
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return []  # the prompt itself, echoed: it is already in the thread
        events = []
        for index, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                events.append(
                    Event(
                        EventKind.TOOL_RESULT,
                        uuid=self._block_uuid(line, index),
                        session_id=self.session_id,
                        tool_id=str(block.get("tool_use_id") or ""),
                        text=_text_of(block.get("content")),
                        is_error=bool(block.get("is_error")),
                        raw=line,
                    )
                )
        return events

    def _result(self, line: dict[str, Any]) -> Event:
        subtype = str(line.get("subtype") or "")
        is_error = bool(line.get("is_error")) or (subtype not in ("", "success"))
        text = ""
        if is_error:
            errors = line.get("errors")
            text = "; ".join(map(str, errors)) if errors else str(line.get("result") or subtype)
        return Event(
            EventKind.TURN_END,
            uuid=line.get("uuid"),
            session_id=self.session_id,
            text=text,
            is_error=is_error,
            subtype=subtype,
            usage=line.get("usage") or {},
            cost_usd=_cost(line.get("total_cost_usd")),
            permission_denials=line.get("permission_denials") or [],
            stop_reason=str(line.get("stop_reason") or ""),
            raw=line,
        )

    def _partial(self, line: dict[str, Any]) -> list[Event]:
        event = line.get("event") or {}
        if event.get("type") == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") == "tool_use":
                return [Event(EventKind.ACTIVITY, text=f"calling {block.get('name', 'a tool')}…")]
            if block.get("type") == "thinking":
                return [Event(EventKind.ACTIVITY, text="thinking…")]
        if (
            event.get("type") == "content_block_delta"
            and (event.get("delta") or {}).get("type") == "text_delta"
        ):
            return [Event(EventKind.ACTIVITY, text="writing…")]
        return []


@register
class ClaudeCodeAdapter(HarnessAdapter):
    harness = "claude-code"
    default_binary = "claude"
    parser_class = ClaudeCodeParser
    compact_prompt = "/compact"

    def build_launch(self, turn, *, resume_session: str | None) -> LaunchSpec:
        agent = turn.agent
        argv = [self.binary_or_error(agent), "-p", "--output-format", "stream-json", "--verbose"]
        if resume_session:
            argv += ["--resume", resume_session]
        if agent.model:
            argv += ["--model", agent.model]
        if turn.effort:
            argv += ["--effort", turn.effort]
        if turn.max_budget_usd is not None:
            argv += ["--max-budget-usd", str(turn.max_budget_usd)]
        if agent.system_prompt:
            argv += ["--append-system-prompt", agent.system_prompt]
        cwd = turn.motion.workspace or agent.workdir or None
        from wakes.tool_policy import claude_tool_arguments

        tool_argv, temp_files = claude_tool_arguments(turn.mode, cwd)
        argv += tool_argv
        argv += ["--", turn.prompt]
        return LaunchSpec(argv=argv, env=harness_environment(agent), cwd=cwd, temp_files=temp_files)
