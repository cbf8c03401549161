"""What a Claude Code transcript line says: the lines the importer drops, a typed prompt's text,
and the stable ids of what only the transcript (and the hooks) know: a typed prompt, a terminal
turn's end."""

from __future__ import annotations

from typing import Any

from ..ingest.fit import fit_message
from ..lib.ids import stable_uuid
from ..models import Kind, Message, Motion, Source

HARNESS = "claude-code"

# Transcript bookkeeping lines that carry nothing for the thread.
SKIPPED_TYPES = {
    "queue-operation",
    "attachment",
    "api-request",
    "api-request-shape",
    "api-request-blob",
    "last-prompt",
    "atis-latch",
    "tools-used",
    "mode",
    "file-history-snapshot",
    "summary",
    "custom-title",
}
SKIPPED_SYSTEM_SUBTYPES = {"stop_hook_summary", "turn_duration", "local_command", "informational"}
# What Claude Code itself writes into user lines around a slash command: not a person's words.
COMMAND_MARKERS = ("<command-name>", "<local-command-", "<command-message>")


def prompt_uuid(session_id: str, prompt_id: str) -> str:
    """The id of a typed prompt: the UserPromptSubmit hook and the transcript both know prompt_id."""
    return stable_uuid(HARNESS, "prompt", session_id, prompt_id)


def turn_end_uuid(session_id: str, prompt_id: str) -> str:
    """The id of a terminal turn's end: the Stop hook and the transcript's cost line agree on it."""
    return stable_uuid(HARNESS, "turn-end", session_id, prompt_id)


TERMINAL_SENDER = "terminal"


def prompt_message(motion: Motion, session_id: str, prompt_id: str, text: str, cwd: str = "") -> Message:
    """A prompt typed at a terminal, as its own Message (sender 'terminal': no signed-in person)."""
    return fit_message(
        Message(
            id=prompt_uuid(session_id, prompt_id),
            motion=motion,
            sender=TERMINAL_SENDER,
            source=Source.TERMINAL,
            kind=Kind.TEXT,
            text=text,
            session_id=session_id,
            cwd=cwd,
        )
    )


def text_of_user(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return ""
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def typed_prompt(line: dict[str, Any]) -> str:
    """The text of a prompt a person typed, or '' for tool results, summaries and command noise."""
    if line.get("isMeta") or line.get("isCompactSummary") or line.get("isSidechain"):
        return ""
    if line.get("promptSource") == "sdk":
        return ""  # a headless run: its prompt came from the thread
    text = text_of_user((line.get("message") or {}).get("content")).strip()
    if not text or text.startswith(COMMAND_MARKERS):
        return ""
    return text
