"""One shared list, and each harness's generated list pinned to exactly it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import override_settings

from motion_runner.harnesses.claude_code_command import CLAUDE_LOCAL_READS
from motion_runner.harnesses.pi import PI_LOCAL_READS
from tests.harness_support import claude_tool_arguments, codex_tool_arguments, pi_tool_arguments
from wakes.turn import tool_policy
from wakes.turn.tool_policy import WIKI_WRITE_TOOLS, look_only_policy

MEMORY_LANE_SERVERS = {"pickipedia": {"command": "wiki-mcp"}, "magenta-memory-v2": {"command": "memory-mcp"}}


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_claude_look_only_list_is_exactly_the_shared_list(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    argv, files = claude_tool_arguments("look", str(workspace))
    try:
        allowed = flag(argv, "--allowedTools").split(",")
        reads = [f"{tool}(/{workspace}/**)" for tool in CLAUDE_LOCAL_READS]
        assert allowed == [*reads, *look_only_policy().mcp_tool_names()]
        assert flag(argv, "--tools") == "Read,Grep,Glob"
        assert flag(argv, "--permission-mode") == "dontAsk"
        assert "--strict-mcp-config" in argv
    finally:
        for path in files:
            path.unlink()


def test_claude_look_only_reads_are_confined_to_the_workspace(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    argv, files = claude_tool_arguments("look", str(tmp_path / "link"))
    for path in files:
        path.unlink()
    allowed = flag(argv, "--allowedTools").split(",")
    # Never a bare Read (it reaches any path); the rule names the workspace's real path.
    assert not set(CLAUDE_LOCAL_READS) & set(allowed)
    assert f"Read(/{real}/**)" in allowed
    # --restricted: the CLI refuses reads outside its working directory and ignores settings
    # files whose allow rules would widen the turn.
    assert "--restricted" in argv


def test_claude_look_only_without_a_workspace_allows_no_local_read_rule():
    argv, files = claude_tool_arguments("look", None)
    for path in files:
        path.unlink()
    allowed = flag(argv, "--allowedTools").split(",")
    assert allowed == look_only_policy().mcp_tool_names()
    assert "--restricted" in argv


def test_pi_look_only_list_is_exactly_the_shared_list():
    """Standalone: the record server, loaded whole, named tool by tool (Pi's --tools is an exact
    allowlist; its tools are the record extension's, harnesses/pi_record_extension.ts)."""
    tools = flag(pi_tool_arguments("look"), "--tools").split(",")
    assert look_only_policy().mcp_tool_names() == ["mcp__motion-record"]
    record = [f"mcp__motion-record__{tool}" for tool in ("search", "read", "remember")]
    assert tools == [*PI_LOCAL_READS, "codemode", *record]


@override_settings(WAKE_READ_MCP_SERVERS=MEMORY_LANE_SERVERS)
def test_pi_names_a_deployments_own_server_whole_by_its_pattern():
    tools = flag(pi_tool_arguments("look"), "--tools").split(",")
    shared = [n if "__" in n[5:] else f"{n}__*" for n in look_only_policy().mcp_tool_names()]
    assert tools == [*PI_LOCAL_READS, "codemode", *shared]


@pytest.mark.parametrize("servers", [{}, MEMORY_LANE_SERVERS])
def test_both_harnesses_offer_the_same_mcp_tools(settings, servers):
    settings.WAKE_READ_MCP_SERVERS = servers
    argv, files = claude_tool_arguments("look", None)
    for path in files:
        path.unlink()
    claude_mcp = [t for t in flag(argv, "--allowedTools").split(",") if t.startswith("mcp__")]
    pi_mcp = [
        t.removesuffix("__*")
        for t in flag(pi_tool_arguments("look"), "--tools").split(",")
        if t.startswith("mcp__")
    ]

    # Claude Code names a server loaded whole by its name; Pi names it by a pattern, or, for the
    # turn's own server, tool by tool: each names what the other does, nothing more.
    def covers(entry: str, name: str) -> bool:
        return name == entry or name.startswith(f"{entry}__")

    assert all(any(covers(entry, name) for entry in claude_mcp) for name in pi_mcp)
    assert all(any(covers(entry, name) for name in pi_mcp) for entry in claude_mcp)


@pytest.mark.parametrize("write", WIKI_WRITE_TOOLS)
def test_no_wiki_write_is_on_any_look_only_list(write):
    name = f"mcp__pickipedia__{write}"
    argv, files = claude_tool_arguments("look", None)
    for path in files:
        path.unlink()
    assert name not in flag(argv, "--allowedTools").split(",")
    assert name in flag(argv, "--disallowedTools").split(",")
    assert name not in flag(pi_tool_arguments("look"), "--tools").split(",")


@override_settings(WAKE_READ_MCP_SERVERS=MEMORY_LANE_SERVERS)
def test_the_wiki_reads_are_named_one_by_one_never_the_whole_server():
    names = look_only_policy().mcp_tool_names()
    assert "mcp__pickipedia__get-page" in names and "mcp__pickipedia__get-pages" in names
    assert "mcp__pickipedia" not in names


@override_settings(WAKE_READ_MCP_SERVERS=MEMORY_LANE_SERVERS)
def test_the_memory_server_is_loaded_whole_by_default():
    assert "mcp__magenta-memory-v2" in look_only_policy().mcp_tool_names()


@override_settings(WAKE_MEMORY_LOADED_WHOLE=False, WAKE_READ_MCP_SERVERS=MEMORY_LANE_SERVERS)
def test_the_memory_server_can_be_limited_to_its_read_tools():
    names = look_only_policy().mcp_tool_names()
    assert "mcp__magenta-memory-v2" not in names
    assert "mcp__magenta-memory-v2__search" in names
    assert not any(n.endswith("__remember") for n in names)


@override_settings(WAKE_EXTRA_LOOK_ONLY_TOOLS=["mcp__pickipedia__update-page"])
def test_a_dial_cannot_sneak_a_wiki_write_onto_the_list():
    with pytest.raises(ValueError, match="update-page"):
        pi_tool_arguments("look")


@override_settings(WAKE_EXTRA_LOOK_ONLY_TOOLS=["mcp__record__timeline"])
def test_a_dial_may_extend_the_list_for_both_harnesses():
    argv, files = claude_tool_arguments("look", None)
    for path in files:
        path.unlink()
    assert "mcp__record__timeline" in flag(argv, "--allowedTools").split(",")
    assert "mcp__record__timeline" in flag(pi_tool_arguments("look"), "--tools").split(",")


def test_secret_paths_are_denied_in_both_modes():
    look, files = claude_tool_arguments("look", None)
    for path in files:
        path.unlink()
    full, _ = claude_tool_arguments("full", None)
    for argv in (look, full):
        denied = flag(argv, "--disallowedTools").split(",")
        assert "Read(~/.ssh/**)" in denied and "Read(**/.env)" in denied and "Grep(~/.config/**)" in denied


@override_settings(
    WAKE_READ_MCP_SERVERS={
        "pickipedia": {"command": "wiki-mcp"},
        "magenta-memory-v2": {"command": "memory-mcp"},
        "playwright": {"command": "browser-mcp"},
    }
)
def test_the_generated_mcp_config_holds_only_the_read_servers():
    argv, files = claude_tool_arguments("look", None)
    config = json.loads(Path(flag(argv, "--mcp-config")).read_text())
    for path in files:
        path.unlink()
    assert set(config["mcpServers"]) == {"pickipedia", "magenta-memory-v2"}


def test_full_mode_has_no_tool_selection():
    full, files = claude_tool_arguments("full", None)
    assert "--tools" not in full and "--allowedTools" not in full and files == []
    assert "--restricted" not in full and "--strict-mcp-config" not in full
    assert pi_tool_arguments("full") == []


def test_full_mode_accepts_edits_headless_where_nobody_answers_a_prompt():
    full, _ = claude_tool_arguments("full", None)
    assert flag(full, "--permission-mode") == "acceptEdits"


@override_settings(WAKE_CLAUDE_FULL_PERMISSION_MODE="")
def test_full_mode_permission_mode_is_a_dial():
    full, _ = claude_tool_arguments("full", None)
    assert "--permission-mode" not in full


def test_full_mode_may_write_the_wiki():
    full, _ = claude_tool_arguments("full", None)
    denied = flag(full, "--disallowedTools").split(",")
    assert not [name for name in denied if name.startswith("mcp__")]


@override_settings(WAKE_READ_MCP_SERVERS=MEMORY_LANE_SERVERS)
def test_codex_look_only_is_the_read_only_sandbox_with_mcp_filters():
    argv = codex_tool_arguments("look", ["magenta-memory-v2", "pickipedia", "playwright"])
    assert argv[:2] == ["-s", "read-only"]
    filters = [a for a in argv if a.startswith("mcp_servers.pickipedia.enabled_tools=")]
    assert json.loads(filters[0].split("=", 1)[1]) == list(tool_policy.WIKI_READ_TOOLS)
    assert "mcp_servers.playwright.enabled=false" in argv
    assert not any(a.startswith("mcp_servers.magenta-memory-v2") for a in argv)  # loaded whole
    assert codex_tool_arguments("full", ["playwright"]) == ["-s", "workspace-write"]


def test_codex_names_no_server_its_config_does_not_hold():
    assert codex_tool_arguments("look", []) == ["-s", "read-only"]


def test_standalone_the_record_server_is_the_memory_loaded_whole():
    names = look_only_policy().mcp_tool_names()
    assert "mcp__motion-record" in names
    assert not any("magenta-memory" in name for name in names)


def test_standalone_no_wiki_read_is_allowed_without_a_wiki_server():
    assert not any(name.startswith("mcp__pickipedia") for name in look_only_policy().mcp_tool_names())


@override_settings(WAKE_MEMORY_REMEMBER_ON_LOOK=False)
def test_the_remember_dial_lists_the_record_servers_reads_only():
    names = look_only_policy().mcp_tool_names()
    assert names == ["mcp__motion-record__search", "mcp__motion-record__read"]


@override_settings(WAKE_MEMORY_SERVERS=["team-memory"])
def test_a_deployment_naming_its_own_memory_server_gets_no_record_server():
    names = look_only_policy().mcp_tool_names()
    assert "mcp__team-memory" in names and not any("motion-record" in name for name in names)
