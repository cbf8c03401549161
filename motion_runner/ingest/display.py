"""The words a harness event is shown with in the thread: a tool call's short line, a turn's end.

Split out of ingest.py (issue 12, "What to build" 5); no database, no app imports.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any


def summarize_input(tool_name: str, tool_input: Any) -> str:
    """A short human line for a tool call: `Read README.md`, `Bash ls -la`."""
    if isinstance(tool_input, dict):
        for key in ("file_path", "path", "command", "pattern", "url", "query", "title", "cmd"):
            if key in tool_input and tool_input[key]:
                value = tool_input[key]
                if isinstance(value, list):
                    value = " ".join(map(str, value))
                return f"{tool_name} {str(value)[:200]}"
        if tool_input:
            return f"{tool_name} {json.dumps(tool_input, ensure_ascii=False)[:200]}"
    elif tool_input:
        return f"{tool_name} {str(tool_input)[:200]}"
    return tool_name


def _dollars(value: Decimal | None) -> str:
    return f"${value:.4f}" if value is not None else "cost unknown"


# source_file of the Message the Claude Code Stop hook writes from `last_assistant_message`:
# the transcript's copy of that reply replaces it rather than doubling it.
HOOK_STOP_TEXT = "hook:Stop"


def turn_end_text(is_error: bool, subtype: str, cost: Decimal | None) -> str:
    outcome = f"ended with {subtype}" if is_error else "done"
    return f"{outcome} · {_dollars(cost)}"
