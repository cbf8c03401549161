"""Test helpers that spell the shared tool list through each harness adapter, and launch a turn
as the runner does (its policy asked of the hook once, then handed to the adapter).

They live here, not in wakes/turn/tool_policy.py, so the wakes app imports no harness adapter."""

from __future__ import annotations

from pathlib import Path

from motion_runner.harnesses import LaunchSpec, claude_code_command, codex, get_adapter, pi
from motion_runner.harnesses.policy import LOOK
from motion_runner.runner.turns import policy_for
from wakes.turn.tool_policy import policy_for_mode


def claude_tool_arguments(mode: str, workspace: str | None) -> tuple[list[str], list[Path]]:
    """Flags for a Claude Code wake, and the temporary files they name."""
    return claude_code_command.tool_arguments(policy_for_mode(mode), workspace)


def pi_look_only_tools() -> list[str]:
    return pi.look_only_tools(policy_for_mode(LOOK))


def pi_tool_arguments(mode: str) -> list[str]:
    return pi.tool_arguments(policy_for_mode(mode))


def codex_tool_arguments(mode: str, configured_servers: list[str] = ()) -> list[str]:
    return codex.tool_arguments(policy_for_mode(mode), configured_servers)


def launch_for(turn, *, resume_session: str | None = None) -> LaunchSpec:
    """The turn's launch as the runner builds it: the registered provider's policy, handed over."""
    adapter = get_adapter(turn.agent.harness)
    return adapter.build_launch(turn, resume_session=resume_session, policy=policy_for(turn))
