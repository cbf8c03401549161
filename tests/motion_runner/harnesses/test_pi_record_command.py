"""Pi's command line when the turn's policy carries the record server (issue 35): Pi has no MCP
client, so the adapter loads the record extension (motion_runner/harnesses/pi_record_extension.ts)
and hands it the same launch Claude Code and Codex get in their generated config.

Personas: @pia (Pi) is woken in the Motion "launch-room"."""

from __future__ import annotations

import json

import pytest

from motion_runner.harnesses.pi import PI_RECORD_EXTENSION
from motion_runner.harnesses.policy import PI_READ_GUARD
from motion_runner.recall.passes import SERVER_NAME, TOOLS
from tests.factories import AgentFactory, MotionFactory, TurnFactory
from tests.harness_support import launch_for
from tests.own_loop import run

pytestmark = pytest.mark.django_db

RECORD_TOOLS = [f"mcp__{SERVER_NAME}__{tool}" for tool in TOOLS]


@pytest.fixture
def binary(tmp_path):
    path = tmp_path / "pi"
    path.write_text("#!/bin/sh\n")
    return str(path)


@pytest.fixture
def launched(binary):
    """The launch of a running turn of @pia's, in `mode`; its pass file removed afterwards."""
    launches = []

    def launch(mode: str = "look"):
        pia = AgentFactory(name="pia", harness="pi", binary=binary, model="fake/fake-model")
        motion = MotionFactory(slug="launch-room", workspace="/srv/notes")
        turn = TurnFactory(agent=pia, motion=motion, mode=mode, status="running")
        launches.append(launch_for(turn, resume_session=None))
        return launches[-1]

    yield launch
    for spec in launches:
        for path in spec.temp_files:
            path.unlink(missing_ok=True)


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def extensions(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == "-e"]


@pytest.mark.parametrize("mode", ["look", "full"])
def test_a_standalone_turn_loads_the_record_extension_beside_the_read_guard(launched, mode):
    launch = launched(mode)
    assert extensions(launch.argv) == [str(PI_READ_GUARD), str(PI_RECORD_EXTENSION)]
    assert PI_RECORD_EXTENSION.is_file()


def test_the_extension_is_handed_the_record_servers_launch_and_its_pass_file(launched):
    launch = launched()
    servers = json.loads(launch.env["MOTION_RUNNER_TURN_SERVERS"])
    assert list(servers) == [SERVER_NAME]
    server = servers[SERVER_NAME]
    assert server["args"][:2] == ["-m", "motion_runner.recall"]
    pass_file = server["args"][-1]
    assert [str(path) for path in launch.temp_files] == [pass_file]  # removed when the turn ends
    assert all(path.exists() for path in launch.temp_files)


def test_the_pass_and_the_database_are_never_on_the_line_nor_in_pis_environment(launched):
    launch = launched()
    seen = " ".join([*launch.argv, *launch.env.values()])
    assert "mrp_" not in seen and "DATABASE_URL" not in seen and "postgres://" not in seen


def test_a_look_only_turn_names_each_record_tool_exactly(launched):
    # Pi's --tools is an exact allowlist: a server-wide pattern would offer nothing.
    tools = flag(launched().argv, "--tools").split(",")
    assert [name for name in tools if name.startswith("mcp__")] == RECORD_TOOLS


def test_the_remember_dial_keeps_remember_off_a_look_only_turn(launched, settings):
    settings.WAKE_MEMORY_REMEMBER_ON_LOOK = False
    tools = flag(launched().argv, "--tools").split(",")
    assert [name for name in tools if name.startswith("mcp__")] == [
        f"mcp__{SERVER_NAME}__search",
        f"mcp__{SERVER_NAME}__read",
    ]


def test_the_remember_dial_leaves_a_full_turn_every_tool(launched, settings):
    settings.WAKE_MEMORY_REMEMBER_ON_LOOK = False
    assert "--tools" not in launched("full").argv  # Pi's default set, the extension's tools too


def test_the_record_line_is_in_pis_system_prompt(launched):
    from wakes.turn.footer import RECORD_LINE

    assert RECORD_LINE in flag(launched().argv, "--append-system-prompt")


def test_a_deployment_naming_its_own_memory_server_loads_no_record_extension(launched, settings):
    settings.WAKE_MEMORY_SERVERS = ["magenta-memory-v2"]
    launch = launched()
    assert extensions(launch.argv) == [str(PI_READ_GUARD)]
    assert "MOTION_RUNNER_TURN_SERVERS" not in launch.env and not launch.temp_files


def test_the_record_servers_tools_are_the_ones_pi_is_told_to_allow():

    from mcp import Client

    from motion_runner.recall.server import build

    async def listed():
        async with Client(build("mrp_unused")) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert tuple(run(listed())) == TOOLS
