"""How one of the apps' Messages becomes a row of memory-lane's record, as memory-lane's own
writers shape it (its transcript importer, `views_runner.py`, `services/mood_view.py`; read from
cryptograss/memory-lane late 2026, docs/memory-lane.md "What memory-lane's writers store"):

- a tool call is a `ToolUse` whose content is the tool's **input dict** (the page's step summary
  reads it), sent by the agent to the tool's own participant (type tool);
- a tool result is a `ToolResult` sent by the `tool-result` participant (type tool, one of the
  page's machinery senders) to the agent; its content keeps at most the host's
  `TOOL_RESULT_CONTENT_CHARS` characters of the output (memory-lane's default, 0: none, because
  its record is public), whatever the apps' own index keeps for their thread;
- a turn's end is a `turn-result` summary sent by `system`; the turn's last line of the agent is
  stamped with its stop reason from `TURN_ENDS` (`end_turn` when the result names none), which is
  how memory-lane's activity line knows the agent is done (`MemoryLaneRecord.stamp_turn_end`);
- a dot is memory-lane's quiet row: the agent's, `<silent…>…</silent>`, stopped `end_turn`;
- a compaction summary is the agent's folded continuation (`is_continuation_message`); a bare
  compaction marker, a wake line, a request card, a watch's post and an error are the apps' own
  lines, sent by `system` as a dict `{"type", "agent", "text"}`: never anyone's words;
- an agent's text is sent to the agent itself (memory-lane's runner imports a launched turn with
  the agent as the session's user); a person's post made in the apps' thread is filed as a
  composer post (`mood-web`), as memory-lane files its own;
- lines the apps' own record never keeps (`MemoryLaneRecord.write_unindexed`): the model's
  thinking is a `Thought` (its block and signature, the agent's to itself); a compaction's summary
  the agent's continuation; a `claude -p` prompt's echo or a command's output `system`'s;
- a line of a transcript carries its `parentUuid`: the parent row when the host has it, else
  `looking_for_parent_id`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings as host_settings

from ..models import Kind, Message, Source

TOOL_RESULT_SENDER = "tool-result"
SYSTEM_SENDER = "system"
MACHINERY_SENDERS = frozenset({TOOL_RESULT_SENDER, SYSTEM_SENDER})
TURN_ENDS = frozenset({"end_turn", "refusal", "stop_sequence", "max_tokens"})
COMPACTION_PREFIX = "This session is being continued from a previous conversation"
# memory-lane files its composer's posts so; its page reads them as posted, not typed in a session.
COMPOSER_SOURCE_FILE = "mood-web"
# The apps' own lines: written by `system`, never as anyone's words.
OWN_LINE_KINDS = frozenset({Kind.WAKE, Kind.REQUEST, Kind.WATCH, Kind.ERROR, Kind.TASK})


@dataclass
class HostRow:
    """A host row to write: its model role, content, sender (name, participant type) and the rest."""

    role: str  # "message", "thought", "tool_use" or "tool_result" (MOTION_RUNNER_RECORD_MODELS)
    content: Any
    sender: str
    sender_type: str  # "ai", "human", "tool" or "system"
    recipients: list[tuple[str, str]] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    stop_reason: str | None = None
    ends_turn: bool = False
    # Content keys that name a Motion (its pk): the writer puts the Mood's slug there (a handoff's).
    moods: dict[str, str] = field(default_factory=dict)


# After a tool's output cut to the host's limit: how much was not kept.
TRUNCATION_MARK = "\n[{n} more characters not kept]"


def tool_result_chars() -> int:
    """memory-lane's own setting, read from the host's settings: output kept in its public record."""
    value = getattr(host_settings, "TOOL_RESULT_CONTENT_CHARS", 0)
    return max(0, int(value or 0))


def line_block(message: Message, wanted: str) -> dict[str, Any] | None:
    """The harness line's own content block for this Message (a Claude Code line)."""
    raw = message.raw if isinstance(message.raw, dict) else {}
    inner = raw.get("message")
    blocks = inner.get("content") if isinstance(inner, dict) else None
    if not isinstance(blocks, list):
        return None
    key = "tool_use_id" if wanted == "tool_result" else "id"
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") not in (wanted, f"server_{wanted}"):
            continue
        if wanted == "text" or block.get(key) == message.tool_id:
            return block
    return None


def tool_input(message: Message) -> dict[str, Any]:
    """The call's input dict: Claude Code's block `input`; Codex's item (its command, its
    arguments); else the apps' one-line summary of the call, under the key the page reads first."""
    block = line_block(message, "tool_use")
    if block is not None and isinstance(block.get("input"), dict):
        return block["input"]
    raw = message.raw if isinstance(message.raw, dict) else {}
    item = raw.get("item") if isinstance(raw.get("item"), dict) else raw
    for key in ("arguments", "args", "input"):
        if isinstance(item.get(key), dict):
            return item[key]
    if isinstance(item.get("command"), str):
        return {"command": item["command"]}
    return {"description": message.text} if message.text else {}


def thinking_block(event: Any) -> dict[str, Any]:
    """A thinking event's own block (redacted with its line), else one holding its text."""
    raw = event.raw if isinstance(event.raw, dict) else {}
    inner = raw.get("message") if isinstance(raw.get("message"), dict) else {}
    for block in inner.get("content") or []:
        if (
            isinstance(block, dict)
            and block.get("type") == "thinking"
            and block.get("thinking") == event.text
        ):
            return block
    return {"type": "thinking", "thinking": event.text}


def unindexed_row(event: Any, agent: str) -> HostRow:
    """A line the apps' index never keeps: the model's thinking (a `Thought`, its block and its
    signature), a compaction's summary (the agent's continuation), or another user line (a
    `claude -p` prompt's echo, a command's output), which is the apps' own and so `system`'s."""
    if event.kind == "thinking":
        block = thinking_block(event)
        fields = {"signature": str(block.get("signature") or "")}
        return HostRow("thought", [block], agent, "ai", recipients=[(agent, "ai")], fields=fields)
    raw = event.raw if isinstance(event.raw, dict) else {}
    if raw.get("isCompactSummary") or event.text.startswith(COMPACTION_PREFIX):
        return HostRow(
            "message",
            event.text,
            agent,
            "ai",
            recipients=[(agent, "ai")],
            fields={"is_continuation_message": True},
        )
    return HostRow("message", {"type": "prompt", "agent": agent, "text": event.text}, SYSTEM_SENDER, "system")


def text_content(message: Message) -> Any:
    """An agent's words: the harness line's own text block when it has one, else the text."""
    block = line_block(message, "text")
    return [block] if block is not None else message.text


def run_cost(message: Message, raw: dict[str, Any]) -> float | None:
    """What the run cost, as memory-lane keeps it: the index's figure once the turn is settled,
    else the result line's own `total_cost_usd` (a streamed turn's row is written before the
    runner prices it)."""
    if message.cost_usd is not None:
        return float(message.cost_usd)
    total = raw.get("total_cost_usd")
    return float(total) if isinstance(total, int | float) and not isinstance(total, bool) else None


def kept_output(text: str) -> str:
    """A tool's output as memory-lane's public record keeps it: at most TOOL_RESULT_CONTENT_CHARS
    characters (none by default), and when some was kept but not all, a marker saying how much
    was left out, so a cut output never reads as whole."""
    kept = tool_result_chars()
    if not kept:
        return ""
    if len(text) <= kept:
        return text
    return f"{text[:kept]}{TRUNCATION_MARK.format(n=len(text) - kept)}"


def turn_result(message: Message) -> dict[str, Any]:
    raw = message.raw if isinstance(message.raw, dict) else {}
    return {
        "type": "turn-result",
        "agent": message.sender,
        "subtype": raw.get("subtype") or ("error" if message.is_error else "success"),
        "is_error": message.is_error,
        "cost_usd": run_cost(message, raw),
        "duration_ms": raw.get("duration_ms"),
        "num_turns": raw.get("num_turns"),
        "stop_reason": raw.get("stop_reason") or None,
        "text": message.text,
    }


def turn_stop(message: Message) -> str:
    """The stop reason a turn's last line is stamped with: the result's own, if memory-lane knows
    it as a turn's end, else `end_turn` (views_runner.finish_turn's rule)."""
    raw = message.raw if isinstance(message.raw, dict) else {}
    stop = raw.get("stop_reason") or message.stop_reason
    return stop if stop in TURN_ENDS else "end_turn"


def line_stop(message: Message) -> str | None:
    """The stop reason the harness line itself carries (a transcript's; a stream line has none)."""
    return message.stop_reason[:50] if message.stop_reason else None


# memory-lane's handoff events (its services/handoff.py `from_message`): `system`'s rows filed
# under this source, whose content is a dict of type `handoff` (where it lands) or `handoff-sent`.
HANDOFF_SOURCE_FILE = "handoff"


def handoff_row(message: Message) -> HostRow | None:
    """A handoff line of the apps (wakes/turn/handoff.py `carry`) as memory-lane's own event: sent by
    `system`, filed `handoff`, its content `{type, by, for, from_mood|to_mood, about, [context],
    message, [pulled]}`; `message` is the reply that carried the block, whose id memory-lane keeps
    too, so its own `from_message` finds the event and makes none again."""
    raw = message.raw if isinstance(message.raw, dict) and message.source == Source.SYSTEM else {}
    if isinstance(raw.get("handoff"), dict):
        said, kind, where = raw["handoff"], "handoff", ("from_mood", "from")
    elif isinstance(raw.get("handoff_sent"), dict):
        said, kind, where = raw["handoff_sent"], "handoff-sent", ("to_mood", "to")
    else:
        return None
    content: dict[str, Any] = {
        "type": kind,
        "by": said.get("by") or message.sender,
        "for": said.get("for") or said.get("by") or message.sender,
        where[0]: said.get(where[1], ""),
        "about": said.get("about", ""),
        **({"context": said.get("context", "")} if kind == "handoff" else {}),
        "message": said.get("message", ""),
        **({"pulled": True} if said.get("pulled") else {}),
    }
    return HostRow(
        "message",
        content,
        SYSTEM_SENDER,
        "system",
        fields={"source_file": HANDOFF_SOURCE_FILE},
        moods={where[0]: str(said.get(where[1], ""))},
    )


def parent_of(message: Message) -> uuid.UUID | None:
    raw = message.raw if isinstance(message.raw, dict) else {}
    try:
        return uuid.UUID(str(raw["parentUuid"])) if raw.get("parentUuid") else None
    except ValueError:
        return None


def by_agent(message: Message) -> bool:
    """An agent's line: its agent is known (a line of an unclaimed session may name an agent the
    apps have no row for, memory-lane's own assistant: `remote_transcripts.UNCLAIMED_ASSISTANT`)."""
    return message.agent_id is not None or message.agent is not None


def speaker_type(message: Message) -> str:
    return "ai" if by_agent(message) else "human"


def host_row(message: Message) -> HostRow:
    """The row memory-lane's own writers would store for this Message."""
    own = {"sender": message.sender[:50], "sender_type": speaker_type(message)}
    kind = message.kind
    if kind == Kind.TURN_END:
        return HostRow(
            "message", turn_result(message), SYSTEM_SENDER, "system", stop_reason=None, ends_turn=True
        )
    if kind == Kind.TOOL_CALL:
        tool = (message.tool_name or "unknown-tool")[:50]
        return HostRow(
            "tool_use",
            tool_input(message),
            **own,
            recipients=[(tool, "tool")],
            fields={"tool_name": message.tool_name[:100], "tool_id": message.tool_id[:100]},
            stop_reason=line_stop(message),
        )
    if kind == Kind.TOOL_RESULT:
        return HostRow(
            "tool_result",
            kept_output(message.text),
            TOOL_RESULT_SENDER,
            "tool",
            recipients=[(own["sender"], own["sender_type"])],
            fields={"tool_use_id": message.tool_id[:100], "is_error": message.is_error},
        )
    if kind == Kind.THINKING:
        # The model's thinking, a `Thought` (its block and its signature), the agent's to itself.
        block = thinking_block(message)  # its block as the line holds it, else its text
        fields = {"signature": str(block.get("signature") or "")}
        return HostRow("thought", [block], **own, recipients=[(own["sender"], "ai")], fields=fields)
    if kind == Kind.DOT:
        text = message.text if message.text.startswith("<silent") else f"<silent>{message.text}</silent>"
        return HostRow("message", text, **own, stop_reason="end_turn")
    if kind == Kind.COMPACT and message.text.startswith(COMPACTION_PREFIX):
        return HostRow("message", message.text, **own, fields={"is_continuation_message": True})
    if (handoff := handoff_row(message)) is not None:
        return handoff
    if kind in OWN_LINE_KINDS or kind == Kind.COMPACT or message.source == Source.SYSTEM:
        agent = message.sender if by_agent(message) else None
        content = {"type": str(kind), "agent": agent, "text": message.text}
        return HostRow("message", content, SYSTEM_SENDER, "system")
    # Text: an agent's words, or a person's.
    if by_agent(message):
        return HostRow(
            "message",
            text_content(message),
            **own,
            recipients=[(own["sender"], "ai")],
            stop_reason=line_stop(message),
        )
    row = HostRow("message", text_content(message), **own)
    if message.source == Source.WEB:
        row.fields["source_file"] = COMPOSER_SOURCE_FILE
    return row
