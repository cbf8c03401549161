"""The environment a harness process gets.

Only an allowlist of the worker's own variables is passed on: the worker holds the
database URL and the secret key, and an agent's shell has no business seeing them.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)

INHERITED_NAMES = {"PATH", "HOME", "LANG", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ"}
INHERITED_PREFIXES = ("LC_", "XDG_", "NODE_", "ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "PI_")


def harness_environment(agent) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if name in INHERITED_NAMES or name.startswith(INHERITED_PREFIXES)
    }
    env.update({str(k): str(v) for k, v in (settings.RUNNER_EXTRA_ENV or {}).items()})
    env.update({str(k): str(v) for k, v in (agent.env or {}).items()})
    if settings.STANDIN_MODEL_URL and agent.harness == "claude-code" and not has_own_model(env):
        # bin/serve found no model key and started the stand-in (motion_runner/lib/standin_model.py).
        env.update(
            ANTHROPIC_BASE_URL=settings.STANDIN_MODEL_URL,
            ANTHROPIC_API_KEY=STANDIN_KEY,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
    return env


STANDIN_KEY = "stand-in"  # not a secret: the stand-in takes any key


def answers_through_standin(agent) -> bool:
    """The agent's harness would talk to bin/serve's stand-in, not a model."""
    return bool(settings.STANDIN_MODEL_URL) and (
        harness_environment(agent).get("ANTHROPIC_BASE_URL") == settings.STANDIN_MODEL_URL
    )


def has_own_model(env: dict[str, str]) -> bool:
    """A key, a model server or a `claude /login` of the agent's own: never sent to the stand-in."""
    if any(env.get(name) for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")):
        return True
    home = env.get("HOME")
    return bool(home) and (Path(home) / ".claude" / ".credentials.json").is_file()
