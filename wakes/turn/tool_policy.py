"""The shared tool list: the single source of truth every harness builds a wake's tools from; and
the full-tools turn's clocks (`full_tools_clocks`, named by the runner's MOTION_RUNNER_TURN_CLOCKS).

What separates looking from touching is never the MCP server, it is this list (seed 001, "The
shared list"). This module decides; the harness adapters only spell: `policy_for_turn` hands each
turn a `ToolPolicy` (a value declared in motion_runner/harnesses/policy.py; the runner's setting
MOTION_RUNNER_TOOL_POLICY names this function by default and the runner hands its answer to the adapter),
and each adapter turns it into its own flags; a test on each (tests/wakes/test_tool_policy.py, through
tests/wakes_support.py) pins the generated list to exactly `look_only_policy()`, so the
harnesses cannot drift apart. This module imports no adapter.

Deny beats allow, and a tool not on a look-only turn's list is not present at all: Claude Code
gets `--tools Read,Grep,Glob` (its built-in selection) plus `--strict-mcp-config` with a
generated config holding only the read servers; Pi gets `--tools` (an exact allowlist; an
`mcp__` entry switches its MCP side from "keep everything" to "only these").

A look-only Claude Code turn's reads are confined to its workspace by `--restricted` (checked
with the real CLI, 2.1.332, tests/e2e/test_e2e_wake_modes.py): a bare `Read` allow rule lets Read,
Grep and Glob reach any path, and the user's own or the workspace's `.claude/settings.json` may
hold one, so the allow rules name the workspace (`Read(//ws/**)`) and `--restricted` makes the
CLI ignore those settings files and refuse any path outside the working directory, through a
symlink or `..` too. Pi has no path rules of its own: `motion_runner/harnesses/pi_read_guard.ts`
(an extension loaded with `-e`, shipped beside the Pi adapter) blocks its read/grep/find/ls
outside the workspace on look-only turns and on the secret paths on every turn. Pi has no MCP
client either: `motion_runner/harnesses/pi_record_extension.ts` starts the turn's record server
and offers its tools, which Pi's `--tools` names one by one (`turn_server_tools`).
"""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings

from motion_runner.conf import app_settings as runner_settings  # the runner's settings (conf.py)
from motion_runner.harnesses.policy import FULL, LOOK, PI_READ_GUARD, LookOnlyPolicy, ToolPolicy
from motion_runner.models import Turn
from motion_runner.recall.passes import SERVER_NAME as RECORD_SERVER
from motion_runner.recall.passes import TOOLS as RECORD_TOOLS
from motion_runner.recall.passes import server_config as record_server_config
from motion_runner.signals import TurnClocks

from ..models import Dials
from ..models.dials import reading_dials_once
from .footer import wake_footer
from .memory_server import own_memory_servers, uses_record_server
from .ultracode import ultracode_rides

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
# seed's open decision). MEMORY_LOADED_WHOLE = False (or WAKE_MEMORY_REMEMBER_ON_LOOK = False)
# lists its read tools by name instead.
# Which memory server (the deployment's own, else the record server): memory_server.py.
MEMORY_READ_TOOLS: tuple[str, ...] = ("search", "recall", "get-memory", "list-memories")
RECORD_READ_TOOLS: tuple[str, ...] = ("search", "read")

# Local read tools (read a file, search contents, find files) are each adapter's own, under
# its harness's names: CLAUDE_LOCAL_READS in harnesses/claude_code_command.py, PI_LOCAL_READS in
# harnesses/pi.py.

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


def dial(name: str, default):
    """A dial from settings (admin-editable dials override these in wakes.models.dials when present)."""
    return getattr(settings, name, default)


def tool_mode(turn) -> str:
    """The mode a turn's tool flags are built for: "full" only when the turn says so; anything
    else (unset, a mode this code does not know) is "look", so no adapter can hand a look-only
    turn the write tools by reading the mode its own way."""
    return "full" if getattr(turn, "mode", "look") == "full" else "look"


def look_only_policy(turn_servers: dict[str, dict] | None = None, turn_files: tuple = ()) -> LookOnlyPolicy:
    """The shared list. It names only servers there are: the wiki's reads only where a wiki
    server is configured (WAKE_READ_MCP_SERVERS, or WAKE_WIKI_READ_TOOLS set), the deployment's
    memory server, else the record server."""
    read_servers = dict(dial("WAKE_READ_MCP_SERVERS", {}))
    wiki_server = dial("WAKE_WIKI_SERVER", WIKI_SERVER)
    wiki_configured = wiki_server in read_servers or hasattr(settings, "WAKE_WIKI_READ_TOOLS")
    memory = own_memory_servers(read_servers)
    whole = bool(dial("WAKE_MEMORY_LOADED_WHOLE", True))
    read_tools = tuple(dial("WAKE_MEMORY_READ_TOOLS", MEMORY_READ_TOOLS))
    if not memory:
        memory, read_tools = (RECORD_SERVER,), RECORD_READ_TOOLS
        whole = whole and bool(dial("WAKE_MEMORY_REMEMBER_ON_LOOK", True))
    return LookOnlyPolicy(
        wiki_server=wiki_server,
        wiki_read_tools=tuple(dial("WAKE_WIKI_READ_TOOLS", WIKI_READ_TOOLS)) if wiki_configured else (),
        memory_servers=memory,
        memory_loaded_whole=whole,
        memory_read_tools=read_tools,
        extra_mcp_tools=tuple(dial("WAKE_EXTRA_LOOK_ONLY_TOOLS", ())),
        denied_paths=tuple(dial("WAKE_DENIED_PATHS", DENIED_PATHS)),
        read_servers=read_servers,
        wiki_write_tools=WIKI_WRITE_TOOLS,
        turn_servers=turn_servers or {},
        turn_files=turn_files,
        turn_server_tools={RECORD_SERVER: RECORD_TOOLS} if RECORD_SERVER in memory else {},
    )


def policy_for_mode(mode: str, *, footer: str = "", look_only: LookOnlyPolicy | None = None) -> ToolPolicy:
    """The tools of a turn in `mode` ("full", else look-only), from the shared list and the dials."""
    return ToolPolicy(
        mode=FULL if mode == FULL else LOOK,
        look_only=look_only or look_only_policy(),
        claude_full_permission_mode=dial("WAKE_CLAUDE_FULL_PERMISSION_MODE", "acceptEdits"),
        pi_codemode=bool(dial("WAKE_PI_CODEMODE", True)),
        pi_read_guard=str(PI_READ_GUARD),
        footer=footer,
    )


@reading_dials_once
def policy_for_turn(turn) -> ToolPolicy:
    """MOTION_RUNNER_TOOL_POLICY's default (`motion_runner.signals.tool_policy`): a turn's policy,
    with the footer it is told and ultracode where the room turned it on (wakes/turn/ultracode.py)."""
    mode = tool_mode(turn)
    look_only = look_only_policy()
    # A turn not saved has no row to hold a pass: no server could ever answer it.
    if record := turn.pk is not None and uses_record_server(turn.agent.harness):
        config, files = record_server_config(turn)
        look_only = look_only_policy({RECORD_SERVER: config}, files)
    policy = policy_for_mode(mode, footer=wake_footer(mode, record=record), look_only=look_only)
    return replace(policy, ultracode=True) if ultracode_rides(turn) else policy


def full_tools_clocks(turn: Turn) -> TurnClocks:
    """A full-tools turn's clocks: the dials where set; blank, the runner's settings (no wall
    clock, 1500 s of silence)."""
    dials = Dials.load()
    wall = dials.full_tools_timeout_seconds
    silence = dials.full_tools_silence_seconds
    return TurnClocks(
        wall=wall if wall is not None else runner_settings.RUNNER_FULL_TOOLS_TIMEOUT_SECONDS,
        silence=silence if silence is not None else runner_settings.RUNNER_SILENCE_SECONDS,
    )
