"""Config directories that point the real Codex and Pi CLIs at the fake OpenAI API.

Shared by bin/record-harness and the end-to-end tests, so both run the CLIs the same way.

- Codex reads `$CODEX_HOME/config.toml`: a custom provider with `wire_api = "responses"`
  (it ignores OPENAI_BASE_URL) whose key comes from OPENAI_API_KEY, and a model name from its
  own catalog (gpt-5.5), or it adds a warning item.
- Pi reads `$PI_CODING_AGENT_DIR/models.json`: a provider speaking `openai-completions` to
  the fake's /v1/chat/completions, with per-million prices so Pi computes dollars itself.
"""

from __future__ import annotations

import json
from pathlib import Path

CODEX_MODEL = "gpt-5.5"
PI_PROVIDER, PI_MODEL = "fake", "fake-model"
# USD per million tokens, in models.json's shape: Pi prices each assistant message with it.
PI_COST = {"input": 2.0, "output": 8.0, "cacheRead": 0.5, "cacheWrite": 0.0}


def codex_home(
    root: Path, base_url: str, *, model: str = CODEX_MODEL, max_retries: int | None = None
) -> Path:
    """A CODEX_HOME whose config.toml sends every request to `base_url`.

    `max_retries` caps Codex's request and stream retries (its default keeps a failing
    turn going for a while; an unreachable server is retried without end either way)."""
    home = Path(root) / "codex-home"
    home.mkdir(parents=True, exist_ok=True)
    lines = [
        f'model = "{model}"',
        'model_provider = "fake"',
        "",
        "[model_providers.fake]",
        'name = "fake"',
        f'base_url = "{base_url}"',
        'wire_api = "responses"',
        'env_key = "OPENAI_API_KEY"',
    ]
    if max_retries is not None:
        lines += [f"request_max_retries = {max_retries}", f"stream_max_retries = {max_retries}"]
    (home / "config.toml").write_text("\n".join(lines) + "\n")
    return home


def codex_env(root: Path, base_url: str, **kwargs) -> dict[str, str]:
    """Environment for a Codex process (a temporary HOME included)."""
    home = Path(root) / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "CODEX_HOME": str(codex_home(root, base_url, **kwargs)),
        "OPENAI_API_KEY": "fake-key",
    }


def pi_agent_dir(root: Path, base_url: str, *, cost: dict[str, float] | None = None) -> Path:
    agent_dir = Path(root) / "pi-agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = {
        "providers": {
            PI_PROVIDER: {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": "FAKE_OPENAI_KEY",  # the name of the variable holding the key
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [{"id": PI_MODEL, "name": "Fake Model", "cost": cost or PI_COST}],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2))
    return agent_dir


def pi_env(root: Path, base_url: str, **kwargs) -> dict[str, str]:
    """Environment for a Pi process (a temporary HOME included; no startup network calls)."""
    home = Path(root) / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(pi_agent_dir(root, base_url, **kwargs)),
        "FAKE_OPENAI_KEY": "fake-key",
        "PI_OFFLINE": "1",
        "PI_TELEMETRY": "0",
    }
