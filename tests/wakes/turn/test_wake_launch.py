"""How a wake reaches the harness: the prompt on stdin (never an argument the kernel caps at
128 KiB), a resumed Claude Code session forked, run from the directory it is filed under."""

from __future__ import annotations

import json

import pytest

from tests.factories import AgentFactory, MotionFactory, TurnFactory
from tests.harness_support import launch_for

BIG = "x" * (1024 * 1024)


@pytest.fixture
def binary(tmp_path):
    path = tmp_path / "harness-cli"
    path.write_text("#!/bin/sh\n")
    return str(path)


def turn_for(harness: str, binary: str, prompt: str = "What do the notes say?", **agent):
    agent = AgentFactory.build(name=f"{harness}-bot", harness=harness, binary=binary, **agent)
    return TurnFactory.build(agent=agent, motion=MotionFactory.build(workspace="/srv/notes"), prompt=prompt)


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi"])
def test_every_harness_reads_its_prompt_on_stdin_however_long(harness, binary, settings):
    settings.RUNNER_CODEX_LOOK_ONLY = "allow"
    launch = launch_for(turn_for(harness, binary, BIG), resume_session=None)

    assert launch.stdin == BIG
    assert all(len(arg) < 128 * 1024 for arg in launch.argv)


def test_a_resumed_claude_code_session_is_forked(binary):
    launch = launch_for(turn_for("claude-code", binary), resume_session="s-1")

    at = launch.argv.index("--resume")
    assert launch.argv[at : at + 3] == ["--resume", "s-1", "--fork-session"]


def test_a_fresh_claude_code_session_is_not_forked(binary):
    launch = launch_for(turn_for("claude-code", binary), resume_session=None)

    assert "--fork-session" not in launch.argv and "--resume" not in launch.argv


def test_a_resumed_claude_code_session_runs_from_the_directory_it_is_filed_under(binary, tmp_path):
    home = tmp_path / "home"
    worked_in = tmp_path / "src" / "memory-lane"
    worked_in.mkdir(parents=True)
    folder = home / ".claude" / "projects" / str(worked_in).replace("/", "-").replace("_", "-")
    folder.mkdir(parents=True)
    (folder / "s-1.jsonl").write_text(
        json.dumps({"type": "user", "cwd": str(tmp_path / "elsewhere")})
        + "\n"
        + json.dumps({"type": "user", "cwd": str(worked_in)})
        + "\n"
    )
    turn = turn_for("claude-code", binary, env={"HOME": str(home)})

    assert launch_for(turn, resume_session="s-1").cwd == str(worked_in)
    # A session this machine does not hold: the Motion's workspace, as before.
    assert launch_for(turn, resume_session="s-2").cwd == "/srv/notes"
