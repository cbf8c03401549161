"""The environment a harness process gets.

Only an allowlist of the worker's own variables is passed on: the worker holds the
database URL and the secret key, and an agent's shell has no business seeing them.
"""

from __future__ import annotations

import os

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
    return env
