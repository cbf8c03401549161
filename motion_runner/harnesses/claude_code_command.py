"""Claude Code's command line from a ToolPolicy (policy in, argv out): the local read tools and
their workspace rules, the denied paths and wiki writes, the look-only MCP config written to a
temporary file, and the permission mode. The parser and the adapter are in claude_code.py."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .policy import LookOnlyPolicy, ToolPolicy

# The local read tools, under Claude Code's names: its built-in `--tools` selection.
CLAUDE_LOCAL_READS: tuple[str, ...] = ("Read", "Grep", "Glob")


def claude_local_reads(workspace: str | None) -> list[str]:
    """The local read tools, each allowed only under the workspace (`//` starts an absolute
    path in a Claude Code permission rule). A bare `Read` would allow reading anywhere. With no
    workspace, no rule: the CLI's default reads only its working directory."""
    if not workspace:
        return []
    root = os.path.realpath(workspace).rstrip("/")
    return [f"{tool}(/{root}/**)" for tool in CLAUDE_LOCAL_READS]


def claude_allowed_tools(look_only: LookOnlyPolicy, workspace: str | None) -> list[str]:
    names = [*claude_local_reads(workspace), *look_only.mcp_tool_names()]
    look_only.check_no_writes(names)
    return names


def claude_denied_paths(look_only: LookOnlyPolicy) -> list[str]:
    """The secret paths, for every read tool: no turn reads them, whatever its mode."""
    return [f"{tool}({pattern})" for pattern in look_only.denied_paths for tool in CLAUDE_LOCAL_READS]


def claude_denied_tools(look_only: LookOnlyPolicy) -> list[str]:
    """A look-only turn's denies: the secret paths and, by name, every wiki write."""
    return [*claude_denied_paths(look_only), *look_only.wiki_write_names()]


def write_mcp_config(servers: dict[str, dict]) -> Path:
    """A generated --mcp-config holding `servers` (a file only this user reads: a turn's pass is in it)."""
    handle = tempfile.NamedTemporaryFile("w", prefix="wake-mcp-", suffix=".json", delete=False)
    with handle:
        json.dump({"mcpServers": servers}, handle, indent=2)
    return Path(handle.name)


def tool_arguments(policy: ToolPolicy, workspace: str | None) -> tuple[list[str], list[Path]]:
    """Flags for a Claude Code turn, and the temporary files they name."""
    look_only = policy.look_only
    if policy.full:
        # The agent's full tools, as in its terminal (its own settings' allow rules; writing the
        # wiki included: seed 001, "The wiki-writing answer"); only the secret paths stay denied.
        # Headless, nobody answers a permission prompt: under the default mode every Write,
        # Edit and shell redirect is refused, so a full turn could not touch anything. The
        # dial's default, acceptEdits, accepts edits (and file-making shell commands) inside
        # the working directory; other commands still need the agent's own allow rules.
        # (bypassPermissions is refused when the worker runs as root.)
        argv = ["--disallowedTools", ",".join(claude_denied_paths(look_only))]
        if policy.claude_full_permission_mode:
            argv = ["--permission-mode", policy.claude_full_permission_mode, *argv]
        if policy.ultracode:
            # A session setting, not an effort level; never on a look-only turn (below).
            argv += ["--settings", json.dumps({"ultracode": True})]
        if not look_only.turn_servers:
            return argv, list(look_only.turn_files)
        # The turn's own servers (the record) beside the agent's own config (no --strict), each
        # allowed whole: headless, nobody answers the permission prompt an MCP tool would raise.
        config = write_mcp_config(look_only.turn_servers)
        allowed = ",".join(f"mcp__{name}" for name in look_only.turn_servers)
        return [*argv, "--mcp-config", str(config), "--allowedTools", allowed], [
            config,
            *look_only.turn_files,
        ]
    denied = claude_denied_tools(look_only)
    config = write_mcp_config(look_only.look_only_servers())
    argv = [
        "--tools",
        ",".join(CLAUDE_LOCAL_READS),
        "--permission-mode",
        "dontAsk",
        # Confines Read/Grep/Glob to the working directory and ignores the user's and the
        # workspace's settings files, whose allow rules would otherwise widen this turn.
        "--restricted",
        "--strict-mcp-config",
        "--mcp-config",
        str(config),
        "--allowedTools",
        ",".join(claude_allowed_tools(look_only, workspace)),
        "--disallowedTools",
        ",".join(denied),
    ]
    return argv, [config, *look_only.turn_files]
