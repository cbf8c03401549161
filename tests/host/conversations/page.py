"""What memory-lane's Mood page reads, written here from what its `services/mood_view.py` does
(read late 2026), so a test reads the binding's rows as memory-lane's people would see them:

- MACHINERY_SENDERS are `tool-result` and `system`: their rows are never anyone's words.
- `timeline(mood)`: a row filed under one of memory-lane's event sources with a dict content is an
  event (a line of the thread, whoever sent it); else a row of a machinery sender, or of a sender
  who is not a ThinkingEntity, is left out; a ToolUse is a step, a Thought a thought (when it holds
  thinking); text is a turn, a quiet (`<silent…>`), a compaction (the continuation summary), or
  nothing (a wrapper: `<…`, `[Request interrupted…`).
- `prose(content)`: a string's text; a list's text blocks; a dict's text only for an attestation.
- `step_summary(tool, args)`: what a step was for, read from the ToolUse's content, its input dict.
- `step_result(step)`: the ToolResult of a step (by tool id and session): its text, as shown.
- `activity(mood, now)`: the agent at work from its first line after its last turn end (its row
  stamped with a TURN_ENDS stop reason) until the next; system rows say nothing.
- `message_count(mood)`: the rows not sent by `system`.
- `scram()`: the scram in force, from the newest global `scram` settings row.
- `held_in(slug)`: the runners' holds, from Django's cache under `held:<slug>`: one dict per Mood,
  `{agent: {reason, until, at (epoch seconds)}}`, an entry lapsing 600 s after its `at`.
"""

from __future__ import annotations

import re
import time

from .models import Message, ThinkingEntity, ToolResult

MACHINERY_SENDERS = {"tool-result", "system"}
TURN_ENDS = {"end_turn", "refusal", "stop_sequence", "max_tokens"}
COMPACTION_PREFIX = "This session is being continued from a previous conversation"
WRAPPER_PREFIXES = ("<", "[Request interrupted", COMPACTION_PREFIX)
EVENT_SOURCES = (
    "deploy",
    "interrupt",
    "mood-new",
    "wiki",
    "release",
    "access",
    "wiki-upload",
    "handoff",
    "merged",
    "release-draft",
)
ACTIVITY_WINDOW = 600
SUMMARY_KEYS = ("description", "file_path", "path", "pattern", "url", "query", "subject", "prompt", "command")
QUIET = re.compile(r'^<silent\s*/>$|^<silent(?:\s+by="(\w+)")?>(.*)</silent>$', re.S)


def prose(content) -> str:
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, dict):  # a tool's input, a turn's result: no words; a signed statement's
        return str(content.get("text", "")).strip() if content.get("type") == "attestation" else ""
    if isinstance(content, list):
        texts = [
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and (b.get("type") == "text" or ("text" in b and "type" not in b))
        ]
        return "\n".join(t for t in texts if t).strip()
    return ""


def thought_text(content) -> str:
    if not isinstance(content, list):
        return ""
    return "\n".join(
        b.get("thinking", "") for b in content if isinstance(b, dict) and b.get("type") == "thinking"
    ).strip()


def timeline(mood) -> list[tuple[str, Message, object]]:
    speakers = set(ThinkingEntity.objects.values_list("name", flat=True))
    items = []
    rows = (
        mood.messages.filter(is_sidechain=False).select_related("tooluse", "thought").order_by("created_at")
    )
    for row in rows:
        if row.source_file in EVENT_SOURCES and isinstance(row.content, dict):
            items.append(("event", row, row.content))
            continue
        if row.sender_id in MACHINERY_SENDERS or row.sender_id not in speakers:
            continue
        if hasattr(row, "tooluse"):
            items.append(("step", row, None))
            continue
        if hasattr(row, "thought"):
            if thinking := thought_text(row.content):
                items.append(("thought", row, thinking))
            continue
        text = prose(row.content)
        if not text:
            continue
        if quiet := QUIET.match(text):
            items.append(("quiet", row, (quiet.group(2) or "").strip()))
        elif text.startswith(COMPACTION_PREFIX):
            items.append(("compaction", row, text))
        elif not text.startswith(WRAPPER_PREFIXES):
            items.append(("turn", row, text))
    return items


def step_summary(tool: str, args) -> str:
    if not isinstance(args, dict):
        return ""
    ordered = [args.get(key) for key in SUMMARY_KEYS] + list(args.values())
    for value in ordered:
        if isinstance(value, str) and value.strip():
            return value.strip().splitlines()[0][:160]
    return ""


def step_result(step: Message) -> str | None:
    result = (
        ToolResult.objects.filter(tool_use_id=step.tooluse.tool_id, session_id=step.session_id)
        .order_by("created_at")
        .first()
    )
    if result is None:
        return None
    return result.content if isinstance(result.content, str) else prose(result.content)


def activity(mood, now: float | None = None) -> dict | None:
    now = now or time.time()
    agents = set(ThinkingEntity.objects.filter(is_biological_human=False).values_list("name", flat=True))
    recent = list(
        mood.messages.filter(is_sidechain=False).exclude(sender_id="system").order_by("-created_at")[:60]
    )
    if not recent:
        return None
    newest = recent[0]
    when = newest.timestamp / 1000 if newest.timestamp else newest.created_at.timestamp()
    if now - when > ACTIVITY_WINDOW:
        return None
    if newest.sender_id in agents and newest.stop_reason in TURN_ENDS:
        return None
    working = next((row.sender_id for row in recent if row.sender_id in agents), None)
    return {"agent": working} if working else None


def message_count(mood) -> int:
    return mood.messages.exclude(sender_id="system").count()


HELD_FOR = 600


def held_in(slug: str, now: float | None = None) -> dict:
    from django.core.cache import cache

    now = now or time.time()
    return {
        agent: hold
        for agent, hold in (cache.get(f"held:{slug}") or {}).items()
        if now - hold["at"] < HELD_FOR
    }


def scram() -> dict | None:
    """The scram memory-lane's page shows (its `settings.scram()`, in the pulse): the newest global
    `scram` row, when its value is true: `{by, at, note}`."""
    from .models import Setting

    row = Setting.objects.filter(key="scram", mood=None, agent=None).order_by("-created_at").first()
    if row is None or not row.value:
        return None
    return {"by": row.set_by_id, "at": row.created_at.isoformat(), "note": row.note}
