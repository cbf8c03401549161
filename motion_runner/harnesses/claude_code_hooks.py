"""The Claude Code settings that post a terminal session's hooks to /api/hooks/claude-code/.

The key comes from $MOTION_RUNNER_KEY and the Motion from $MOTION_RUNNER_MOTION in the shell that
starts `claude` (e.g. `MOTION_RUNNER_MOTION=harbor claude`), so no secret sits in settings.json.
curl gets the hook's JSON on stdin; a short timeout and `|| true` keep a down server from ever
blocking the terminal.
"""

from __future__ import annotations

HOOK_EVENTS = ("UserPromptSubmit", "PostToolUse", "Stop")


def hook_command(base_url: str) -> str:
    url = base_url.rstrip("/") + "/api/hooks/claude-code/?motion=${MOTION_RUNNER_MOTION:-}"
    return (
        'curl -sS --max-time 5 -X POST -H "Authorization: Bearer $MOTION_RUNNER_KEY" '
        f"-H 'Content-Type: application/json' --data-binary @- \"{url}\" >/dev/null 2>&1 || true"
    )


def hooks_settings(base_url: str) -> dict:
    entry = {"type": "command", "command": hook_command(base_url), "timeout": 10}
    hooks: dict[str, list] = {}
    for event in HOOK_EVENTS:
        block: dict = {"hooks": [entry]}
        if event == "PostToolUse":
            block = {"matcher": "*", **block}
        hooks[event] = [block]
    return {"hooks": hooks}
