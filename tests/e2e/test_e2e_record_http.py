"""The record over HTTP with the real `claude`, `codex` and `pi` CLIs (issue 41): `manage.py
serve_record` runs as a process of its own, RECORD_SERVER_URL names it, and a look-only wake's
harness connects to it with the turn's pass as bearer token (no server started for the turn); the
fake model calls `search` and the answer lands in the thread as the turn's tool step.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest
from django.db import connection

from motion_runner.models import Kind, Message, TurnStatus, Visibility
from motion_runner.recall.passes import reachable
from motion_runner.runner.turns import enqueue_turn, execute_turn
from motion_runner.sql.server import url_for
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from tests.fakes.anthropic_api import Reply, Text, ToolUse
from tests.paths import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SEARCH = "mcp__motion-record__search"


@pytest.fixture
def record_server(db, settings):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "DATABASE_URL": url_for(connection),
        "DJANGO_SETTINGS_MODULE": "motion_runner.settings",
    }
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve_record", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 90
    while not reachable(url, 0.2) and time.monotonic() < deadline and server.poll() is None:
        time.sleep(0.1)
    assert reachable(url), server.stderr.read().decode() if server.poll() is not None else "not up"
    settings.RECORD_SERVER_URL = url
    yield url
    server.terminate()
    server.wait(15)


def test_claude_code_calls_the_record_over_http_and_the_answer_lands_in_the_thread(
    record_server, claude_binary, claude_on_fake, tmp_path
):
    ada = UserFactory(username="ada")
    magent = AgentFactory(name="magent", harness="claude-code")
    workspace = tmp_path / "launch-room"
    workspace.mkdir()
    room = MotionFactory(slug="launch-room", visibility=Visibility.MEMBERS, workspace=str(workspace))
    room.people.add(ada)
    room.agents.add(magent)
    said = MessageFactory(motion=room, sender="ada", text="The deploy key rotates on Tuesdays.")
    claude_on_fake.script(Reply(ToolUse(SEARCH, {"query": "deploy"})), Reply(Text("On Tuesdays.")))

    queued = enqueue_turn(room, magent, "When does the deploy key rotate?", mode="look", dispatch=False)
    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    assert SEARCH in claude_on_fake.message_requests()[0].offered_tool_names
    call, result = Message.objects.filter(turn=turn, kind__in=[Kind.TOOL_CALL, Kind.TOOL_RESULT]).order_by(
        "created_at", "id"
    )
    assert call.tool_name == SEARCH
    assert not result.is_error and f"/motions/launch-room/#m-{said.id}" in result.text
    # Served by the one process: no record server was said unreachable, none started for the turn.
    assert not Message.objects.filter(turn=turn, kind=Kind.WAKE, text__contains="did not answer").exists()


def test_pi_calls_the_record_over_http_through_its_extension(record_server, fake_openai, tmp_path):
    from tests.conftest import require_cli
    from tests.fakes.harness_homes import PI_MODEL, PI_PROVIDER, pi_env
    from tests.fakes.openai_api import Text as OText
    from tests.fakes.openai_api import ToolCall, reply

    require_cli("pi")
    env = pi_env(tmp_path / "pi", fake_openai.base_url)
    pia = AgentFactory(name="pia", harness="pi", model=f"{PI_PROVIDER}/{PI_MODEL}", env=env)
    room = MotionFactory(slug="launch-room", visibility=Visibility.MEMBERS)
    room.agents.add(pia)
    said = MessageFactory(motion=room, sender="ada", text="The deploy key rotates on Tuesdays.")
    fake_openai.script(reply(ToolCall(SEARCH, {"query": "deploy"})), reply(OText("On Tuesdays.")))

    queued = enqueue_turn(room, pia, "When does the deploy key rotate?", mode="look", dispatch=False)
    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    call, result = Message.objects.filter(turn=turn, kind__in=[Kind.TOOL_CALL, Kind.TOOL_RESULT]).order_by(
        "created_at", "id"
    )
    assert call.tool_name == SEARCH
    assert not result.is_error and f"/motions/launch-room/#m-{said.id}" in result.text, result.text


def test_codex_calls_the_record_over_http_and_the_answer_lands_in_the_thread(
    record_server, fake_openai, tmp_path, settings
):
    from tests.conftest import require_cli
    from tests.fakes.harness_homes import CODEX_MODEL, codex_env
    from tests.fakes.openai_api import Text as OText
    from tests.fakes.openai_api import ToolCall, reply

    require_cli("codex")
    settings.RUNNER_CODEX_LOOK_ONLY = "allow"  # the runner refuses look-only Codex by default
    env = codex_env(tmp_path / "codex", fake_openai.base_url)
    codey = AgentFactory(name="codey", harness="codex", model=CODEX_MODEL, env=env)
    room = MotionFactory(slug="launch-room", visibility=Visibility.MEMBERS)
    room.agents.add(codey)
    said = MessageFactory(motion=room, sender="ada", text="The deploy key rotates on Tuesdays.")
    # Codex 0.171 offers MCP tools in a namespace per server ("-" read as "_"), each by its name.
    fake_openai.script(
        reply(ToolCall("search", {"query": "deploy"}, namespace="mcp__motion_record")),
        reply(OText("On Tuesdays.")),
    )

    queued = enqueue_turn(room, codey, "When does the deploy key rotate?", mode="look", dispatch=False)
    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    call, result = Message.objects.filter(turn=turn, kind__in=[Kind.TOOL_CALL, Kind.TOOL_RESULT]).order_by(
        "created_at", "id"
    )
    assert call.tool_name == SEARCH
    assert not result.is_error and f"/motions/launch-room/#m-{said.id}" in result.text, result.text
    # Served by the one process: no record server was said unreachable, none started for the turn.
    assert not Message.objects.filter(turn=turn, kind=Kind.WAKE, text__contains="did not answer").exists()
