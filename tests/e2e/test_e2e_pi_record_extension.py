"""The record extension (motion_runner/harnesses/pi_record_extension.ts) in the real `pi` CLI, against
a scripted MCP server in place of the record server: what it relays when the server answers, and
when the server dies in the middle of a call (the call fails, Pi goes on, nothing hangs).

The record server itself, through the same extension: tests/e2e/test_e2e_record.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from motion_runner.harnesses.pi import PI_RECORD_EXTENSION
from tests.conftest import require_cli
from tests.fakes.harness_homes import PI_MODEL, PI_PROVIDER, pi_env
from tests.fakes.openai_api import Text, ToolCall, reply

pytestmark = pytest.mark.e2e

FAKE_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
# The fake MCP server, but one that dies when a tool is called, saying why on stderr.
DYING_SERVER = f"""
import os, sys
sys.path.insert(0, {str(FAKE_SERVER.parent)!r})
import mcp_server
answered = mcp_server.answer
def answer(request, args):
    if request.get("method") == "tools/call":
        sys.stderr.write("the server fell over\\n"); sys.stderr.flush(); os._exit(3)
    return answered(request, args)
mcp_server.answer = answer
mcp_server.main()
"""


def run_pi(tmp_path, fake_openai, servers: dict) -> list[dict]:
    env = {
        **pi_env(tmp_path / "pi", fake_openai.base_url),
        "PATH": os.environ["PATH"],
        "MOTION_RUNNER_TURN_SERVERS": json.dumps(servers),
    }
    argv = [require_cli("pi"), "--mode", "json", "--provider", PI_PROVIDER, "--model", PI_MODEL]
    argv += ["-e", str(PI_RECORD_EXTENSION), "-p"]
    ran = subprocess.run(
        argv, input="Look it up.", env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    return [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]


def tool_results(lines: list[dict]) -> list[dict]:
    return [
        line["message"]
        for line in lines
        if line.get("type") == "message_end" and line["message"].get("role") == "toolResult"
    ]


def test_a_call_reaches_the_server_and_its_answer_is_the_tool_result(tmp_path, fake_openai):
    log = tmp_path / "calls.jsonl"
    server = {"command": sys.executable, "args": [str(FAKE_SERVER), "--name", "notes", "--tools", "get-page"]}
    server["args"] += ["--log", str(log)]
    fake_openai.script(reply(ToolCall("mcp__notes__get-page", {"title": "Main"})), reply(Text("Read it.")))

    (result,) = tool_results(run_pi(tmp_path, fake_openai, {"notes": server}))

    assert not result["isError"] and result["content"][0]["text"] == "notes get-page done"
    calls = [json.loads(line) for line in log.read_text().splitlines() if "tool" in line]
    assert calls == [{"server": "notes", "tool": "get-page", "arguments": {"title": "Main"}}]


def test_a_server_that_dies_mid_call_fails_the_call_and_pi_goes_on(tmp_path, fake_openai):
    script = tmp_path / "dying.py"
    script.write_text(DYING_SERVER)
    server = {"command": sys.executable, "args": [str(script), "--name", "notes", "--tools", "get-page"]}
    fake_openai.script(
        reply(ToolCall("mcp__notes__get-page", {"title": "Main"})),
        reply(ToolCall("mcp__notes__get-page", {"title": "Again"})),
        reply(Text("The notes are gone.")),
    )

    lines = run_pi(tmp_path, fake_openai, {"notes": server})

    first, second = tool_results(lines)
    assert first["isError"] and "stopped (exit 3)" in first["content"][0]["text"]
    assert "the server fell over" in first["content"][0]["text"]
    assert second["isError"] and "stopped" in second["content"][0]["text"]
    assert lines[-1]["type"] == "agent_end"
