"""The screen and the digest through the agent's own CLI login, when no WAKES_SCREEN_API_KEY is
set: memory-lane's poller screens with `claude -p --model haiku`, the CLI's own login paying.

Each harness its own way, one short headless run with no tools, no session kept and its own
system prompt: Claude Code `-p --model haiku --tools "" --no-session-persistence`; Codex `exec
--ephemeral -s read-only` (Codex has no tool-free mode: the read-only sandbox is its least);
Pi `--no-tools --no-session`. The small model per harness is a setting
(WAKES_SCREEN_CLI_MODELS; blank: the agent's own model, Codex and Pi having no small alias).
The harness's own parser reads the output (motion_runner/harnesses/), so the text, the usage
and the dollars are read as a turn's are; the ledger row is usage × price, as every screen's.
Any failure is the caller's to pass on (fail-open): CliScreenError says why.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from decimal import Decimal

from motion_runner.harnesses import get_adapter
from motion_runner.harnesses.base import EventKind, HarnessError, json_object
from motion_runner.harnesses.env import answers_through_standin, harness_environment
from motion_runner.harnesses.pi import model_arguments
from motion_runner.models import Agent

from ..conf import app_settings as settings

CLAUDE_CODE, CODEX, PI = "claude-code", "codex", "pi"


class CliScreenError(Exception):
    pass


@dataclass
class CliAnswer:
    text: str
    usage: dict
    cost: Decimal | None  # the harness's own dollars for the run (its usage × its price table)
    model: str
    harness: str = CLAUDE_CODE


def enabled_for(agent: Agent) -> bool:
    """No API key, the CLI route not switched off, and the agent's CLI installed here, talking to
    a model: bin/serve's stand-in answers neither PASS nor DISMISS (every post passes, unsaid)."""
    if settings.WAKES_SCREEN_API_KEY or settings.WAKES_SCREEN_CLI != "auto" or answers_through_standin(agent):
        return False
    try:
        return get_adapter(agent.harness).resolve_binary(agent) is not None
    except HarnessError:
        return False


def small_model(agent: Agent) -> str:
    chosen = (settings.WAKES_SCREEN_CLI_MODELS or {}).get(agent.harness, "")
    return chosen or agent.model


def argv_for(agent: Agent, binary: str, system: str) -> list[str]:
    model = small_model(agent)
    if agent.harness == CLAUDE_CODE:
        argv = [binary, "-p", "--output-format", "stream-json", "--verbose", "--tools", ""]
        argv += ["--strict-mcp-config", "--no-session-persistence", "--system-prompt", system]
        return argv + (["--model", model] if model else [])
    if agent.harness == CODEX:
        argv = [binary, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "-s", "read-only"]
        argv += ["-m", model] if model else []
        return argv + ["-c", f"developer_instructions={json.dumps(system)}", "-"]
    if agent.harness == PI:
        argv = [binary, "--mode", "json", "--no-tools", "--no-session", "--no-extensions", "--no-skills"]
        return argv + model_arguments(model) + ["--append-system-prompt", system, "-p"]
    raise CliScreenError(f"no small-model run for the {agent.harness} harness")


def run(argv: list[str], prompt: str, env: dict[str, str], timeout: float) -> str:
    """The CLI's stdout; its whole process group ended if it outlasts `timeout`."""
    with tempfile.TemporaryDirectory(prefix="screen-") as cwd:
        process = subprocess.Popen(  # noqa: S603  (argv is ours: the agent's configured binary)
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(prompt, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise CliScreenError(f"the CLI took longer than {timeout:g} s") from exc
    if process.returncode != 0 and not out.strip():
        raise CliScreenError(f"the CLI exited {process.returncode}: {err.strip()[-200:]}")
    return out


def ask(agent: Agent, system: str, prompt: str) -> CliAnswer:
    adapter = get_adapter(agent.harness)
    binary = adapter.resolve_binary(agent)
    if not binary:
        raise CliScreenError(f"the {agent.harness} CLI is not installed here")
    argv = argv_for(agent, binary, system)
    out = run(argv, prompt, harness_environment(agent), float(settings.WAKES_SCREEN_CLI_TIMEOUT_SECONDS))
    parser = adapter.new_parser()
    events = []
    for line in out.splitlines():
        if line.strip():
            try:
                events += parser.feed(json_object(line))
            except ValueError:
                continue  # a line that is not JSON (a warning): not the answer
    events += parser.finish()
    errors = [e.text for e in events if e.kind == EventKind.ERROR and e.text]
    texts = [e.text for e in events if e.kind == EventKind.TEXT and e.text]
    ends = [e for e in events if e.kind == EventKind.TURN_END]
    if not texts:
        raise CliScreenError(errors[-1][:200] if errors else "the CLI said nothing")
    end = ends[-1] if ends else None
    usage = dict(end.usage) if end is not None and end.usage else {}
    model = next((e.model for e in events if e.model), "") or small_model(agent)
    cost = end.cost_usd if end is not None else None
    return CliAnswer(" ".join(texts).strip(), usage, cost, model, agent.harness)
