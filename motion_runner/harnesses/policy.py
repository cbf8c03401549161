"""What a turn may use, as a value the harness adapters turn into flags (policy in, argv out).

The adapters know how each CLI spells a tool list; they do not decide what is on it. wakes/
decides (wakes/turn/tool_policy.py: the shared list, its dials, the wake footer), named by the
setting MOTION_RUNNER_TOOL_POLICY (`motion_runner.signals.tool_policy`; `closed_policy` without
wakes); the runner asks it once a turn (`runner.turns.policy_for`) and hands the answer to the adapter, so the harness layer reads
neither the hooks, nor wakes, nor the database to build a command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FULL = "full"
LOOK = "look"

# Pi's read/grep/find/ls take any path and Pi has no permission rules of its own: this
# extension, shipped beside the Pi adapter (Pi's documented `tool_call` hook, which may block a
# call), confines a look-only turn's reads to its working directory and denies the secret paths
# on every turn. A policy names it in `pi_read_guard`.
PI_READ_GUARD = Path(__file__).with_name("pi_read_guard.ts")


@dataclass(frozen=True)
class LookOnlyPolicy:
    """Everything a look-only wake may use, harness-neutral."""

    wiki_server: str
    wiki_read_tools: tuple[str, ...]
    memory_servers: tuple[str, ...]
    memory_loaded_whole: bool
    memory_read_tools: tuple[str, ...]
    extra_mcp_tools: tuple[str, ...] = ()
    denied_paths: tuple[str, ...] = ()
    # The MCP server configs (name -> the harness-neutral JSON of its launch) a look-only
    # turn may load at all; nothing else is even started.
    read_servers: dict[str, dict] = field(default_factory=dict)
    # The wiki server's write tools: never on a look-only list, denied by name where a harness
    # can deny.
    wiki_write_tools: tuple[str, ...] = ()
    # Servers made for this one turn (the record server, with the turn's pass: recall/passes.py),
    # loaded on a turn of either mode; a look-only turn loads them beside the read servers.
    turn_servers: dict[str, dict] = field(default_factory=dict)
    # Files those servers read (the record's pass): the adapter hands them to the runner as the
    # launch's temporary files, removed when the turn ends.
    turn_files: tuple[Path, ...] = ()
    # Each turn server's tools, for a harness whose allowlist names tools one by one, never a
    # server whole (Pi's --tools).
    turn_server_tools: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def mcp_tool_names(self) -> list[str]:
        """Every MCP tool by its full `mcp__server__tool` name, in a stable order."""
        names = [f"mcp__{self.wiki_server}__{tool}" for tool in self.wiki_read_tools]
        for server in self.memory_servers:
            if self.memory_loaded_whole:
                names.append(f"mcp__{server}")
            else:
                names += [f"mcp__{server}__{tool}" for tool in self.memory_read_tools]
        names += list(self.extra_mcp_tools)
        return names

    def loadable_servers(self) -> list[str]:
        return [self.wiki_server, *self.memory_servers]

    def look_only_servers(self) -> dict[str, dict]:
        """A look-only turn's generated config: the loadable read servers and the turn's own."""
        servers = {**self.read_servers, **self.turn_servers}
        return {name: servers[name] for name in self.loadable_servers() if name in servers}

    def wiki_write_names(self) -> list[str]:
        return [f"mcp__{self.wiki_server}__{tool}" for tool in self.wiki_write_tools]

    def check_no_writes(self, names: list[str]) -> None:
        """A dial may extend the list, never with a known wiki write."""
        if bad := sorted(set(self.wiki_write_names()).intersection(names)):
            raise ValueError(f"look-only tool list names wiki write tools: {', '.join(bad)}")


@dataclass(frozen=True)
class ToolPolicy:
    """One turn's tools: its mode, the shared look-only list, and each harness's dials."""

    mode: str  # "full" or "look"; anything else is treated as "look"
    look_only: LookOnlyPolicy
    # Claude Code's --permission-mode on a full turn ("" for none).
    claude_full_permission_mode: str = "acceptEdits"
    # Pi's codemode tool on a look-only turn's list.
    pi_codemode: bool = True
    # The Pi extension (loaded with -e) that confines reads; "" loads none.
    pi_read_guard: str = ""
    # What the turn is told it may do (Pi is told it in its system prompt too).
    footer: str = ""
    # Claude Code's ultracode (its standing multi-agent workflows), as memory-lane's poller passes it:
    # `--settings {"ultracode": true}`, honoured on a full turn only. Codex and Pi have no such
    # setting and ignore it.
    ultracode: bool = False

    @property
    def full(self) -> bool:
        return self.mode == FULL


def closed_policy(turn: Any = None) -> ToolPolicy:
    """Without wakes (MOTION_RUNNER_TOOL_POLICY's standalone answer): local reads in the workspace,
    no MCP server, no writes."""
    empty = LookOnlyPolicy(
        wiki_server="", wiki_read_tools=(), memory_servers=(), memory_loaded_whole=False, memory_read_tools=()
    )
    return ToolPolicy(mode=LOOK, look_only=empty)
