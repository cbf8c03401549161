"""The shared tool list: the single source of truth every harness builds a wake's tools from.

What separates looking from touching is never the MCP server, it is this list (seed 001, "The
shared list"). Each harness adapter turns it into its own flags (`claude_tool_arguments`,
`pi_tool_arguments`, `codex_tool_arguments` below) and a test on each pins the generated list
to exactly `look_only_policy()`, so the harnesses cannot drift apart.

Deny beats allow, and a tool not on a look-only turn's list is not present at all: Claude Code
gets `--tools Read,Grep,Glob` (its built-in selection) plus `--strict-mcp-config` with a
generated config holding only the read servers; Pi gets `--tools` (an exact allowlist; an
`mcp__` entry switches its MCP side from "keep everything" to "only these").

A look-only Claude Code turn's reads are confined to its workspace by `--restricted` (checked
with the real CLI, 2.1.332, tests/test_e2e_wake_modes.py): a bare `Read` allow rule lets Read,
Grep and Glob reach any path, and the user's own or the workspace's `.claude/settings.json` may
hold one, so the allow rules name the workspace (`Read(//ws/**)`) and `--restricted` makes the
CLI ignore those settings files and refuse any path outside the working directory, through a
symlink or `..` too. Pi has no path rules of its own: `pi_read_guard.ts` (an extension loaded
with `-e`) blocks its read/grep/find/ls outside the workspace on look-only turns and on the
secret paths on every turn.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

# The wiki's MCP server (ProfessionalWiki's MediaWiki-MCP-Server, as PickiPedia runs it) names
# its tools with hyphens. These are its reads; everything else it carries writes or changes
# session state (create-page, update-page, move-page, delete-page, undelete-page,
# protect-page, upload-file*, update-file*, set-my-pronouns, oauth-logout, add-wiki,
# remove-wiki, set-wiki) and is never on a look-only list.
WIKI_SERVER = "pickipedia"
WIKI_READ_TOOLS: tuple[str, ...] = (
    "get-page",
    "get-pages",
    "get-page-history",
    "get-revision",
    "get-file",
    "get-category-members",
    "get-recent-changes",
    "get-links-here",
    "get-site-info",
    "search-page",
    "search-page-by-prefix",
    "compare-pages",
    "parse-wikitext",
    "list-wikis",
    "whoami",
)
WIKI_WRITE_TOOLS: tuple[str, ...] = (
    "create-page",
    "update-page",
    "move-page",
    "delete-page",
    "undelete-page",
    "protect-page",
    "upload-file",
    "upload-file-from-url",
    "update-file",
    "update-file-from-url",
    "set-my-pronouns",
    "oauth-logout",
    "add-wiki",
    "remove-wiki",
    "set-wiki",
)

# The record (memory). Loaded whole on look-only turns by default, so its one write tool,
# `remember`, is available: an agent may keep its notes without being granted tools (the
# seed's open decision). MEMORY_LOADED_WHOLE = False lists its read tools by name instead.
MEMORY_SERVERS: tuple[str, ...] = ("magenta-memory-v2",)
MEMORY_READ_TOOLS: tuple[str, ...] = ("search", "recall", "get-memory", "list-memories")

# Local read tools, per harness: the same three abilities (read a file, search contents,
# find files) under each harness's own names.
CLAUDE_LOCAL_READS: tuple[str, ...] = ("Read", "Grep", "Glob")
PI_LOCAL_READS: tuple[str, ...] = ("read", "grep", "find", "ls")

# Secret paths no turn reads, whatever its mode: deny beats allow.
DENIED_PATHS: tuple[str, ...] = (
    "**/.env",
    "**/.env.*",
    "~/.ssh/**",
    "~/.claude.json",
    "~/.claude/.credentials.json",
    "~/.config/**",
    "~/.aws/**",
    "~/.gnupg/**",
    "**/*.pem",
    "**/*.key",
    "**/id_rsa*",
    "**/id_ed25519*",
    "**/*vault*/**",
    "**/.vault*",
)


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


def dial(name: str, default):
    """A dial from settings (admin-editable dials override these in wakes.dials when present)."""
    return getattr(settings, name, default)


def tool_mode(turn) -> str:
    """The mode a turn's tool flags are built for: "full" only when the turn says so; anything
    else (unset, a mode this code does not know) is "look", so no adapter can hand a look-only
    turn the write tools by reading the mode its own way."""
    return "full" if getattr(turn, "mode", "look") == "full" else "look"


def look_only_policy() -> LookOnlyPolicy:
    return LookOnlyPolicy(
        wiki_server=dial("WAKE_WIKI_SERVER", WIKI_SERVER),
        wiki_read_tools=tuple(dial("WAKE_WIKI_READ_TOOLS", WIKI_READ_TOOLS)),
        memory_servers=tuple(dial("WAKE_MEMORY_SERVERS", MEMORY_SERVERS)),
        memory_loaded_whole=bool(dial("WAKE_MEMORY_LOADED_WHOLE", True)),
        memory_read_tools=tuple(dial("WAKE_MEMORY_READ_TOOLS", MEMORY_READ_TOOLS)),
        extra_mcp_tools=tuple(dial("WAKE_EXTRA_LOOK_ONLY_TOOLS", ())),
        denied_paths=tuple(dial("WAKE_DENIED_PATHS", DENIED_PATHS)),
        read_servers=dict(dial("WAKE_READ_MCP_SERVERS", {})),
    )


def _check_no_writes(names: list[str], policy: LookOnlyPolicy) -> None:
    """A dial may extend the list, never with a known wiki write."""
    writes = {f"mcp__{policy.wiki_server}__{tool}" for tool in WIKI_WRITE_TOOLS}
    if bad := sorted(writes.intersection(names)):
        raise ValueError(f"look-only tool list names wiki write tools: {', '.join(bad)}")


# --- Claude Code ------------------------------------------------------------------------------


def claude_local_reads(workspace: str | None) -> list[str]:
    """The local read tools, each allowed only under the workspace (`//` starts an absolute
    path in a Claude Code permission rule). A bare `Read` would allow reading anywhere. With no
    workspace, no rule: the CLI's default reads only its working directory."""
    if not workspace:
        return []
    root = os.path.realpath(workspace).rstrip("/")
    return [f"{tool}(/{root}/**)" for tool in CLAUDE_LOCAL_READS]


def claude_allowed_tools(policy: LookOnlyPolicy, workspace: str | None) -> list[str]:
    names = [*claude_local_reads(workspace), *policy.mcp_tool_names()]
    _check_no_writes(names, policy)
    return names


def claude_denied_paths(policy: LookOnlyPolicy) -> list[str]:
    """The secret paths, for every read tool: no turn reads them, whatever its mode."""
    return [f"{tool}({pattern})" for pattern in policy.denied_paths for tool in CLAUDE_LOCAL_READS]


def claude_denied_tools(policy: LookOnlyPolicy) -> list[str]:
    """A look-only turn's denies: the secret paths and, by name, every wiki write."""
    return [*claude_denied_paths(policy), *(f"mcp__{policy.wiki_server}__{t}" for t in WIKI_WRITE_TOOLS)]


def write_mcp_config(policy: LookOnlyPolicy) -> Path:
    """The generated --mcp-config: only the read servers, so no other server even loads."""
    servers = {
        name: config for name, config in policy.read_servers.items() if name in policy.loadable_servers()
    }
    handle = tempfile.NamedTemporaryFile("w", prefix="wake-mcp-", suffix=".json", delete=False)
    with handle:
        json.dump({"mcpServers": servers}, handle, indent=2)
    return Path(handle.name)


def claude_tool_arguments(mode: str, workspace: str | None) -> tuple[list[str], list[Path]]:
    """Flags for a Claude Code wake, and the temporary files they name."""
    policy = look_only_policy()
    if mode == "full":
        # The agent's full tools, as in its terminal (its own settings' allow rules; writing the
        # wiki included: seed 001, "The wiki-writing answer"); only the secret paths stay denied.
        # Headless, nobody answers a permission prompt: under the default mode every Write,
        # Edit and shell redirect is refused, so a full turn could not touch anything. The
        # dial's default, acceptEdits, accepts edits (and file-making shell commands) inside
        # the working directory; other commands still need the agent's own allow rules.
        # (bypassPermissions is refused when the worker runs as root.)
        argv = ["--disallowedTools", ",".join(claude_denied_paths(policy))]
        if permission_mode := dial("WAKE_CLAUDE_FULL_PERMISSION_MODE", "acceptEdits"):
            argv = ["--permission-mode", permission_mode, *argv]
        return argv, []
    denied = claude_denied_tools(policy)
    config = write_mcp_config(policy)
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
        ",".join(claude_allowed_tools(policy, workspace)),
        "--disallowedTools",
        ",".join(denied),
    ]
    return argv, [config]


# --- Pi ---------------------------------------------------------------------------------------


def pi_look_only_tools(policy: LookOnlyPolicy | None = None) -> list[str]:
    policy = policy or look_only_policy()
    names = [*PI_LOCAL_READS]
    if dial("WAKE_PI_CODEMODE", True):
        # codemode chains other tools by name: with the allowlist it adds convenience, not reach.
        names.append("codemode")
    names += [name if "__" in name[5:] else f"{name}__*" for name in policy.mcp_tool_names()]
    _check_no_writes(names, policy)
    return names


def pi_tool_arguments(mode: str) -> list[str]:
    if mode == "full":
        return []
    return ["--tools", ",".join(pi_look_only_tools())]


# Pi's read/grep/find/ls take any path and Pi has no permission rules of its own: this
# extension (Pi's documented `tool_call` hook, which may block a call) confines a look-only
# turn's reads to its working directory and denies the secret paths on every turn.
PI_READ_GUARD = Path(__file__).with_name("pi_read_guard.ts")


def pi_read_guard(mode: str) -> tuple[list[str], dict[str, str]]:
    """The `-e` flag that loads the read guard, and the environment it reads its rules from."""
    env = {"MOTION_RUNNER_DENIED_PATHS": json.dumps(list(look_only_policy().denied_paths))}
    env["MOTION_RUNNER_CONFINE_READS"] = "0" if mode == "full" else "1"
    return ["-e", str(PI_READ_GUARD)], env


# --- Codex ------------------------------------------------------------------------------------


def codex_tool_arguments(mode: str, configured_servers: list[str] = ()) -> list[str]:
    """Codex has no per-tool allowlist: look-only is its read-only sandbox, and of the MCP
    servers its config holds, a read server is limited to the listed tools (`enabled_tools`)
    and any other server is switched off, so it never even starts."""
    if mode == "full":
        return ["-s", "workspace-write"]
    policy = look_only_policy()
    argv = ["-s", "read-only"]
    by_server: dict[str, list[str]] = {}
    whole: set[str] = set()
    for name in policy.mcp_tool_names():
        _, server, *tool = name.split("__", 2)
        if tool:
            by_server.setdefault(server, []).append(tool[0])
        else:
            whole.add(server)
    for server in configured_servers:
        if server in whole:
            continue
        if server in by_server:
            argv += ["-c", f"mcp_servers.{server}.enabled_tools={json.dumps(by_server[server])}"]
        else:
            argv += ["-c", f"mcp_servers.{server}.enabled=false"]
    return argv
