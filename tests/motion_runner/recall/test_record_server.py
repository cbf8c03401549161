"""The record server spoken to over MCP, as the harness starts it from a look-only wake's
generated config: it answers while the turn runs, scoped by it, and refuses otherwise."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from motion_runner.harnesses import get_adapter
from motion_runner.models import TurnStatus
from motion_runner.recall.passes import PASS_VARIABLE, SERVER_NAME, issue_pass
from motion_runner.recall.server import build
from tests.own_loop import run
from wakes.turn.tool_policy import policy_for_turn

from .conftest import post

pytestmark = pytest.mark.django_db(transaction=True)  # the server reads through its own connection


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def launched(turn):
    launch = get_adapter("claude-code").build_launch(turn, resume_session=None, policy=policy_for_turn(turn))
    config = json.loads(Path(flag(launch.argv, "--mcp-config")).read_text())
    return launch, config


def call(server: dict, tool: str, arguments: dict):
    async def talk():
        params = StdioServerParameters(command=server["command"], args=server["args"], env=server["env"])
        async with Client(params, read_timeout_seconds=60) as client:
            return await client.call_tool(tool, arguments)

    return run(talk())


def found_texts(result) -> list[str]:
    assert not result.is_error, result.content[0].text
    return [line["text"] for line in json.loads(result.content[0].text)["results"]]


def test_a_look_only_wake_names_the_record_server_and_allows_it(running_turn):
    launch, config = launched(running_turn)
    try:
        assert set(config["mcpServers"]) == {SERVER_NAME}
        allowed = [
            name for name in flag(launch.argv, "--allowedTools").split(",") if name.startswith("mcp__")
        ]
        assert allowed == [f"mcp__{SERVER_NAME}"]  # exactly the servers the config holds: no wiki
        assert "--strict-mcp-config" in launch.argv
    finally:
        for path in launch.temp_files:
            path.unlink()


def test_a_full_tools_wake_gets_the_record_server_beside_its_own(running_turn):
    running_turn.mode = "full"
    launch, config = launched(running_turn)
    try:
        assert set(config["mcpServers"]) == {SERVER_NAME}
        assert flag(launch.argv, "--allowedTools") == f"mcp__{SERVER_NAME}"
        assert "--strict-mcp-config" not in launch.argv
    finally:
        for path in launch.temp_files:
            path.unlink()


def test_the_pass_is_never_on_a_command_line(running_turn):
    launch, config = launched(running_turn)
    try:
        server = config["mcpServers"][SERVER_NAME]
        assert "mrp_" not in " ".join([*launch.argv, *server["args"], *server["env"].values()])
    finally:
        for path in launch.temp_files:
            path.unlink()


def test_over_mcp_search_finds_the_woken_motions_post_and_nothing_out_of_reach(launch, rooms, running_turn):
    post(launch, "The deploy key rotates on Tuesdays.")
    post(rooms["elsewhere"], "deploy plan of a Motion @magent is not in")
    post(rooms["side"], "deploy notes Bo may not read")
    run, config = launched(running_turn)
    try:
        result = call(config["mcpServers"][SERVER_NAME], "search", {"query": "deploy"})
        assert found_texts(result) == ["The deploy key rotates on Tuesdays."]
    finally:
        for path in run.temp_files:
            path.unlink()


def start_alone(server: dict, pass_file: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], **server["env"]}
    argv = [server["command"], *server["args"][:-1], pass_file]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_a_server_started_after_its_turn_ended_refuses(running_turn):
    run, config = launched(running_turn)
    running_turn.status = TurnStatus.FINISHED
    running_turn.save(update_fields=["status"])
    server = config["mcpServers"][SERVER_NAME]
    try:
        started = start_alone(server, server["args"][-1])
    finally:
        for path in run.temp_files:
            path.unlink()
    assert started.returncode == 2
    assert "refused" in started.stderr and started.stdout == ""


def test_a_server_started_with_a_forged_pass_refuses(running_turn, tmp_path):
    run, config = launched(running_turn)
    server = config["mcpServers"][SERVER_NAME]
    real = json.loads(Path(server["args"][-1]).read_text())
    for path in run.temp_files:
        path.unlink()
    forged = tmp_path / "pass.json"
    forged.write_text(json.dumps({**real, PASS_VARIABLE: "mrp_guessed"}))
    started = start_alone(server, str(forged))
    assert started.returncode == 2 and "refused" in started.stderr


def test_a_call_after_the_turn_ended_is_refused(launch, running_turn):
    post(launch, "The deploy key rotates on Tuesdays.")
    token = issue_pass(running_turn)

    async def talk():
        async with Client(build(token)) as client:
            before = await client.call_tool("search", {"query": "deploy"})
            await asyncio.to_thread(end, running_turn)
            return before, await client.call_tool("search", {"query": "deploy"})

    before, after = run(talk())
    assert found_texts(before) == ["The deploy key rotates on Tuesdays."]
    assert after.is_error and "only while the turn" in after.content[0].text


def end(turn) -> None:
    turn.status = TurnStatus.FINISHED
    turn.save(update_fields=["status"])


def test_the_tools_say_what_they_do_so_a_harness_asking_approval_for_writes_lets_them_run():
    """Codex asks approval for an MCP tool that may write destructively or reach outside (its
    default when a tool says nothing), and a look-only turn's approval policy is "never": the
    reads say they only read, the note that it destroys nothing, neither reaches outside."""

    async def listed():
        async with Client(build("mrp_unused")) as client:
            return {tool.name: tool.annotations for tool in (await client.list_tools()).tools}

    said = run(listed())
    assert said["search"].read_only_hint and said["read"].read_only_hint
    assert said["remember"].read_only_hint is False and said["remember"].destructive_hint is False
    assert all(annotations.open_world_hint is False for annotations in said.values())
