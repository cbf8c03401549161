"""Pi: `pi --mode json [--provider P] [--model M] [--tools …] [--append-system-prompt …]
[-e READ_GUARD] [-e RECORD_EXTENSION] [--session ID] -p PROMPT`.

Line types (checked against recordings from pi 0.73.1 in tests/recordings/pi/): `session`
(id, cwd: the session), `agent_start`, `turn_start`, `message_start|update|end` (roles user,
assistant, toolResult; every update repeats the whole partial message), `tool_execution_start|
update|end`, `turn_end`, `agent_end` (messages: this run's messages only, also on resume),
and `auto_retry_*`, `compaction_*`, `queue_update`.

What the recordings showed that matters here:
- Pi's `turn_end` closes ONE model call (a tool call and its results); the run ends with
  `agent_end`, which is where our turn ends.
- Assistant messages carry usage with dollars (`usage.cost.total`, priced by Pi from its
  model's `cost` in models.json); `usage.input` already excludes cache reads. The turn's
  cost is the sum over the run's assistant messages.
- A model error still exits 0: the assistant message's `stopReason: "error"` and
  `errorMessage` are the only sign, so a last assistant message with stopReason error (or
  aborted) ends the turn as an error.
- No per-line uuid: Message ids derive from (session id, the message's millisecond
  timestamp, block index or tool call id), stable for a replayed line.

Agent.model "provider/model" (split at the first "/") becomes `--provider P --model M`, so a
provider from `$PI_CODING_AGENT_DIR/models.json` is named exactly; a bare name is passed as
`--model` alone (Pi's default provider and its own pattern matching).
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from ..lib.ids import stable_uuid
from . import register
from .base import Event, EventKind, HarnessAdapter, HarnessError, LaunchSpec, StreamParser, turn_workspace
from .claude_code import _text_of
from .env import harness_environment
from .policy import ToolPolicy

HARNESS = "pi"
ERROR_STOPS = {"error", "aborted"}
QUIET_TYPES = {"agent_start", "turn_start", "turn_end", "tool_execution_end", "queue_update"}


def _usage(usage: Any) -> dict[str, Any]:
    """Pi's usage in the Message columns' meaning (input excludes cache reads, as in Pi)."""
    if not isinstance(usage, dict):
        return {}
    return {
        "input_tokens": usage.get("input"),
        "output_tokens": usage.get("output"),
        "cache_read_input_tokens": usage.get("cacheRead"),
        "cache_creation_input_tokens": usage.get("cacheWrite"),
    }


def _dollars(usage: Any) -> Decimal | None:
    cost = usage.get("cost") if isinstance(usage, dict) else None
    total = cost.get("total") if isinstance(cost, dict) else None
    if not isinstance(total, (int, float)):
        return None
    try:
        return Decimal(str(total))
    except InvalidOperation:
        return None


class PiParser(StreamParser):
    def __init__(self, session_id: str = ""):
        super().__init__(session_id)
        self.cwd = ""
        self.typing: dict[int, str] = {}  # the assistant message's text blocks as typed so far

    def _uuid(self, *parts: object) -> str:
        return stable_uuid(HARNESS, self.session_id, *parts)

    def feed(self, line: dict[str, Any]) -> list[Event]:
        kind = line.get("type")
        if kind == "session":
            self.session_id = str(line.get("id") or self.session_id)
            self.cwd = str(line.get("cwd") or "")
            return [Event(EventKind.INIT, session_id=self.session_id, cwd=self.cwd, raw=line)]
        if kind == "message_end":
            return self._message(line)
        if kind == "message_start":
            message = line.get("message") or {}
            if isinstance(message, dict) and message.get("role") == "assistant":
                self.typing = {}
                return [self._activity("thinking…")]
            return []
        if kind == "message_update":
            return self._partial(line)
        if kind in ("tool_execution_start", "tool_execution_update"):
            return [self._activity(f"running {line.get('toolName') or 'a tool'}…")]
        if kind == "agent_end":
            return [self._end(line)]
        if kind == "auto_retry_start":
            return [self._activity(f"retrying: {line.get('errorMessage', '')}"[:200])]
        if kind == "compaction_end":
            return self._compaction(line)
        if kind in QUIET_TYPES or kind in ("auto_retry_end", "compaction_start"):
            return []
        return [Event(EventKind.UNKNOWN, session_id=self.session_id, raw=line)]

    def _activity(self, text: str) -> Event:
        return Event(EventKind.ACTIVITY, session_id=self.session_id, text=text)

    def _partial(self, line: dict[str, Any]) -> list[Event]:
        event = line.get("assistantMessageEvent") or {}
        event_type = event.get("type") if isinstance(event, dict) else None
        if event_type == "text_delta" and isinstance(event.get("delta"), str):
            return [self._typed(event)]
        if event_type == "text_start":
            return [self._activity("writing…")]
        if event_type in ("thinking_start", "thinking_delta"):
            return [self._activity("thinking…")]
        if event_type == "toolcall_start":
            return [self._activity("calling a tool…")]
        return []

    def _typed(self, event: dict[str, Any]) -> Event:
        """The text typed so far (PARTIAL: shown, never stored), from the deltas: the update's
        `partial` object is Pi's live one, printed later than it was filled (recording `text`),
        so it can run ahead of the deltas."""
        index = event.get("contentIndex") if isinstance(event.get("contentIndex"), int) else 0
        self.typing[index] = self.typing.get(index, "") + event["delta"]
        text = "\n\n".join(self.typing[key] for key in sorted(self.typing))
        return Event(EventKind.PARTIAL, session_id=self.session_id, text=text)

    def _message(self, line: dict[str, Any]) -> list[Event]:
        message = line.get("message")
        if not isinstance(message, dict):
            return [Event(EventKind.UNKNOWN, session_id=self.session_id, raw=line)]
        role = message.get("role")
        if role == "assistant":
            return self._assistant(message, line)
        if role == "toolResult":
            call_id = str(message.get("toolCallId") or "")
            return [
                Event(
                    EventKind.TOOL_RESULT,
                    uuid=self._uuid(message.get("timestamp"), "result", call_id),
                    session_id=self.session_id,
                    tool_id=call_id,
                    tool_name=str(message.get("toolName") or ""),
                    text=_text_of(message.get("content")),
                    is_error=bool(message.get("isError")),
                    raw=line,
                )
            ]
        if role == "user":
            return []  # the prompt, echoed: it is already in the thread
        return [Event(EventKind.UNKNOWN, session_id=self.session_id, raw=line)]

    def _assistant(self, message: dict[str, Any], line: dict[str, Any]) -> list[Event]:
        stamp = message.get("timestamp")
        common = {
            "session_id": self.session_id,
            "message_id": str(message.get("responseId") or stamp or ""),
            "model": str(message.get("model") or ""),
            "usage": _usage(message.get("usage")),
            # Pi prices each API message as it ends: the runner's spend guard adds these up.
            "cost_usd": _dollars(message.get("usage")),
            "stop_reason": str(message.get("stopReason") or ""),
            "raw": line,
        }
        events: list[Event] = []
        for index, block in enumerate(message.get("content") or []):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and str(block.get("text") or "").strip():
                events.append(
                    Event(EventKind.TEXT, uuid=self._uuid(stamp, index), text=str(block["text"]), **common)
                )
            elif block.get("type") == "toolCall":
                call_id = str(block.get("id") or "")
                events.append(
                    Event(
                        EventKind.TOOL_CALL,
                        uuid=self._uuid(stamp, "call", call_id or index),
                        tool_name=str(block.get("name") or ""),
                        tool_id=call_id,
                        tool_input=block.get("arguments"),
                        **common,
                    )
                )
            # thinking blocks are the model's own: not posted.
        return events

    def _end(self, line: dict[str, Any]) -> Event:
        messages = [m for m in line.get("messages") or [] if isinstance(m, dict)]
        assistant = [m for m in messages if m.get("role") == "assistant"]
        usage: dict[str, int] = {}
        cost: Decimal | None = None
        for message in assistant:
            for key, value in _usage(message.get("usage")).items():
                if isinstance(value, (int, float)):
                    usage[key] = usage.get(key, 0) + int(value)
            dollars = _dollars(message.get("usage"))
            if dollars is not None:
                cost = (cost or Decimal(0)) + dollars
        last = assistant[-1] if assistant else {}
        stop = str(last.get("stopReason") or "")
        is_error = stop in ERROR_STOPS or not assistant
        if not assistant:
            text = "pi ended without an answer from the model"
        elif is_error:
            text = str(last.get("errorMessage") or f"the model stopped with {stop}")
        else:
            text = ""
        stamp = messages[-1].get("timestamp") if messages else ""
        return Event(
            EventKind.TURN_END,
            uuid=self._uuid("agent-end", stamp),
            session_id=self.session_id,
            model=str(last.get("model") or ""),
            usage=usage,
            cost_usd=cost,
            is_error=is_error,
            subtype=stop or "no_answer",
            stop_reason=stop,
            text=text,
            raw=line,
        )

    def _compaction(self, line: dict[str, Any]) -> list[Event]:
        if line.get("aborted") or not line.get("result"):
            return [self._activity(f"compaction did not finish: {line.get('errorMessage', '')}"[:200])]
        result = line.get("result") or {}
        before = result.get("tokensBefore", "?") if isinstance(result, dict) else "?"
        return [
            Event(
                EventKind.COMPACT,
                uuid=self._uuid(
                    "compaction", result.get("firstKeptEntryId", "") if isinstance(result, dict) else ""
                ),
                session_id=self.session_id,
                text=f"compacted ({line.get('reason', 'auto')}, {before} tokens before)",
                raw=line,
            )
        ]


# The local read tools, under Pi's names.
PI_LOCAL_READS: tuple[str, ...] = ("read", "grep", "find", "ls")

# Pi has no MCP client (by design: its README says to add tools with an extension). This one,
# shipped beside the adapter, starts the turn's own MCP servers (the record server) from the same
# launch Claude Code and Codex get in their generated config and offers their tools under Claude
# Code's names, `mcp__<server>__<tool>`.
PI_RECORD_EXTENSION = Path(__file__).with_name("pi_record_extension.ts")


def _spelled(name: str, server_tools: dict[str, tuple[str, ...]]) -> list[str]:
    """A shared-list entry as Pi's exact allowlist names it: a turn server named whole, as each of
    its tools (what the extension registers); another server whole, `mcp__server__*` (a Pi MCP
    adapter's own pattern)."""
    if "__" in name[5:]:
        return [name]
    if tools := server_tools.get(name[5:]):
        return [f"{name}__{tool}" for tool in tools]
    return [f"{name}__*"]


def look_only_tools(policy: ToolPolicy) -> list[str]:
    """A look-only turn's `--tools`: an exact allowlist of what the model is offered, the
    extension's tools included (an `mcp__` entry switches Pi's MCP side from "keep everything" to
    "only these")."""
    look_only = policy.look_only
    names = [*PI_LOCAL_READS]
    if policy.pi_codemode:
        # codemode chains other tools by name: with the allowlist it adds convenience, not reach.
        names.append("codemode")
    for name in look_only.mcp_tool_names():
        names += _spelled(name, look_only.turn_server_tools)
    look_only.check_no_writes(names)
    return names


def record_extension(policy: ToolPolicy) -> tuple[list[str], dict[str, str]]:
    """The `-e` flag that loads the record extension, and the servers it starts (the turn's own,
    each `{command, args, env}`; the pass is in a file they name, never on a line), where the
    policy carries any; else nothing."""
    servers = policy.look_only.turn_servers
    if not servers:
        return [], {}
    return ["-e", str(PI_RECORD_EXTENSION)], {"MOTION_RUNNER_TURN_SERVERS": json.dumps(servers)}


def tool_arguments(policy: ToolPolicy) -> list[str]:
    """The turn's policy as Pi flags: `--tools` is an exact allowlist of what the model is
    offered. Look-only: the read tools; full: Pi's default set. Anything but "full" is
    look-only."""
    if policy.full:
        return []
    return ["--tools", ",".join(look_only_tools(policy))]


def read_guard(policy: ToolPolicy) -> tuple[list[str], dict[str, str]]:
    """The `-e` flag that loads the policy's read guard (Pi's documented `tool_call` hook, which
    may block a call: Pi has no path rules of its own), and the environment it reads its rules
    from: the secret paths, denied on every turn, and whether reads are confined to the
    working directory (look-only turns)."""
    if not policy.pi_read_guard:
        # Without the guard Pi's reads reach any path, ~/.ssh included: no turn runs so.
        raise HarnessError("a Pi turn needs the read guard its tool policy names, and this policy names none")
    env = {"MOTION_RUNNER_DENIED_PATHS": json.dumps(list(policy.look_only.denied_paths))}
    env["MOTION_RUNNER_CONFINE_READS"] = "0" if policy.full else "1"
    return ["-e", policy.pi_read_guard], env


def model_arguments(model: str) -> list[str]:
    """Agent.model "provider/model" → --provider P --model M; a bare name → --model M."""
    model = (model or "").strip()
    if not model:
        return []
    provider, sep, name = model.partition("/")
    if sep and provider and name:
        return ["--provider", provider, "--model", name]
    return ["--model", model]


@register
class PiAdapter(HarnessAdapter):
    harness = HARNESS
    default_binary = "pi"
    parser_class = PiParser

    def build_launch(self, turn, *, resume_session: str | None, policy: ToolPolicy) -> LaunchSpec:
        agent = turn.agent
        argv = [self.binary_or_error(agent), "--mode", "json"]
        argv += model_arguments(turn.model or agent.model)
        argv += tool_arguments(policy)
        guard_argv, guard_env = read_guard(policy)
        record_argv, record_env = record_extension(policy)
        argv += guard_argv + record_argv
        # Pi is told its mode in the system prompt too (seed 001, "Pi wakes"); the prompt
        # itself already ends with the same footer.
        system = "\n\n".join(p for p in (agent.system_prompt, policy.footer) if p)
        argv += ["--append-system-prompt", system]
        if resume_session:
            argv += ["--session", resume_session]
        # Pi reads piped stdin as the prompt (before any message argument): none is given.
        argv += ["-p"]
        cwd = turn_workspace(turn)
        # The guard's rules and the turn's servers last: an agent's own env cannot change them.
        env = {**harness_environment(agent), **guard_env, **record_env}
        files = list(policy.look_only.turn_files)  # the record server's pass, removed at the end
        return LaunchSpec(argv=argv, env=env, cwd=cwd, stdin=turn.prompt, temp_files=files)
