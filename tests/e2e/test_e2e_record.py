"""The record server with the real `claude` and `pi` CLIs (issue 35): a standalone look-only
wake loads the project's own record server (Claude Code from its generated config, Pi through the
adapter's extension, motion_runner/harnesses/pi_record_extension.ts), the model (the fake,
scripted) calls its `search`, and the answer lands in the thread as the turn's tool step: the
woken Motion's post with its link, nothing from a Motion the agent may not read.

Personas: Ada reads the Motion "launch-room", where @magent (Claude Code) is woken; "elsewhere"
is Ada's too, but not @magent's; @pia (Pi) is woken in "launch-room" too.
"""

from __future__ import annotations

import pytest

from motion_runner.models import Kind, Message, TurnStatus, Visibility
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from tests.fakes.anthropic_api import Reply, Text, ToolUse
from tests.own_loop import run

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
]  # the server reads on its own connection

SEARCH = "mcp__motion-record__search"


@pytest.fixture
def ada(db):
    return UserFactory(username="ada")


@pytest.fixture
def magent(claude_binary, claude_on_fake):
    return AgentFactory(name="magent", harness="claude-code")


@pytest.fixture
def launch_room(ada, magent, tmp_path):
    workspace = tmp_path / "launch-room"
    workspace.mkdir()
    motion = MotionFactory(slug="launch-room", visibility=Visibility.MEMBERS, workspace=str(workspace))
    motion.people.add(ada)
    motion.agents.add(magent)
    return motion


@pytest.fixture
def elsewhere(ada):
    motion = MotionFactory(slug="elsewhere", visibility=Visibility.MEMBERS)
    motion.people.add(ada)
    return motion


def test_a_look_only_wake_searches_its_record_and_the_answer_lands_in_the_thread(
    launch_room, elsewhere, magent, claude_on_fake
):
    said = MessageFactory(motion=launch_room, sender="ada", text="The deploy key rotates on Tuesdays.")
    MessageFactory(motion=elsewhere, sender="ada", text="deploy plan @magent may not read")
    claude_on_fake.script(
        Reply(ToolUse(SEARCH, {"query": "deploy"})),
        Reply(Text("The key rotates on Tuesdays.")),
    )

    queued = enqueue_turn(
        launch_room, magent, "When does the deploy key rotate?", mode="look", dispatch=False
    )
    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    first = claude_on_fake.message_requests()[0]
    assert SEARCH in first.offered_tool_names
    steps = Message.objects.filter(turn=turn, kind__in=[Kind.TOOL_CALL, Kind.TOOL_RESULT]).order_by(
        "created_at", "id"
    )
    (call, result) = steps
    assert (call.kind, call.tool_name) == (Kind.TOOL_CALL, SEARCH)
    assert result.kind == Kind.TOOL_RESULT and not result.is_error, result.text
    assert "The deploy key rotates on Tuesdays." in result.text
    assert f"/motions/launch-room/#m-{said.id}" in result.text
    assert "may not read" not in result.text
    assert Message.objects.filter(turn=turn, kind=Kind.TEXT, text__contains="Tuesdays").exists()
    # The pass is good only while the turn ran.
    turn.refresh_from_db()
    assert turn.status != TurnStatus.RUNNING and turn.record_pass


# --- Pi: no MCP client, so the record comes through the adapter's extension -------------------
# (motion_runner/harnesses/pi_record_extension.ts, which starts the same server over MCP).


@pytest.fixture
def pia(tmp_path, fake_openai, launch_room):
    from tests.conftest import require_cli
    from tests.fakes.harness_homes import PI_MODEL, PI_PROVIDER, pi_env

    require_cli("pi")
    env = pi_env(tmp_path / "pi", fake_openai.base_url)
    agent = AgentFactory(name="pia", harness="pi", model=f"{PI_PROVIDER}/{PI_MODEL}", env=env)
    launch_room.agents.add(agent)
    return agent


def offered_schemas(fake_openai) -> dict[str, dict]:
    body = fake_openai.model_requests()[0]["body"]
    return {tool["function"]["name"]: tool["function"]["parameters"] for tool in body["tools"]}


def served_schemas() -> dict[str, dict]:

    from mcp import Client

    from motion_runner.recall.server import build

    async def listed():
        async with Client(build("mrp_unused")) as client:
            return (await client.list_tools()).tools

    return {f"mcp__motion-record__{tool.name}": tool.input_schema for tool in run(listed())}


def test_pi_searches_its_record_and_the_answer_lands_in_the_thread(launch_room, elsewhere, pia, fake_openai):
    from tests.fakes.openai_api import Text as OText
    from tests.fakes.openai_api import ToolCall, reply

    said = MessageFactory(motion=launch_room, sender="ada", text="The deploy key rotates on Tuesdays.")
    MessageFactory(motion=elsewhere, sender="ada", text="deploy plan @pia may not read")
    fake_openai.script(
        reply(ToolCall(SEARCH, {"query": "deploy"})),
        reply(OText("The key rotates on Tuesdays.")),
    )

    queued = enqueue_turn(launch_room, pia, "When does the deploy key rotate?", mode="look", dispatch=False)
    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    # Offered on the look-only allowlist beside Pi's reads, as the server lists them.
    offered = offered_schemas(fake_openai)
    assert sorted(offered) == sorted(["read", "grep", "find", "ls", *served_schemas()])
    assert {name: offered[name] for name in served_schemas()} == served_schemas()
    steps = Message.objects.filter(turn=turn, kind__in=[Kind.TOOL_CALL, Kind.TOOL_RESULT]).order_by(
        "created_at", "id"
    )
    (call, result) = steps
    assert (call.kind, call.tool_name) == (Kind.TOOL_CALL, SEARCH)
    assert result.kind == Kind.TOOL_RESULT and not result.is_error, result.text
    assert "The deploy key rotates on Tuesdays." in result.text
    assert f"/motions/launch-room/#m-{said.id}" in result.text
    assert "may not read" not in result.text
    assert Message.objects.filter(turn=turn, kind=Kind.TEXT, text__contains="Tuesdays").exists()


def test_pi_keeps_a_note_on_a_full_turn_and_an_error_is_a_failed_step(launch_room, pia, fake_openai):
    from tests.fakes.openai_api import Text as OText
    from tests.fakes.openai_api import ToolCall, reply

    fake_openai.script(
        reply(ToolCall("mcp__motion-record__remember", {"text": "Ada prefers Tuesdays."})),
        reply(ToolCall(SEARCH, {"query": "   "})),
        reply(OText("Noted.")),
    )

    queued = enqueue_turn(launch_room, pia, "Remember that I prefer Tuesdays.", mode="full", dispatch=False)
    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    note = Message.objects.get(motion=launch_room, kind=Kind.NOTE)
    assert (note.sender, note.text, note.turn_id) == ("pia", "Ada prefers Tuesdays.", turn.pk)
    kept, refused = Message.objects.filter(turn=turn, kind=Kind.TOOL_RESULT).order_by("created_at", "id")
    assert not kept.is_error and f"#m-{note.id}" in kept.text
    assert refused.is_error and "say at least one word" in refused.text


def test_pi_started_outside_its_turn_is_offered_no_record_and_still_answers(launch_room, pia, fake_openai):
    import subprocess

    from motion_runner.models import Turn
    from tests.fakes.openai_api import Text as OText
    from tests.fakes.openai_api import reply
    from tests.harness_support import launch_for

    turn = Turn.objects.create(motion=launch_room, agent=pia, mode="look", status=TurnStatus.RUNNING)
    launch = launch_for(turn, resume_session=None)
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.FINISHED)  # its pass now opens nothing
    fake_openai.script(reply(OText("Nothing to look up.")))
    try:
        ran = subprocess.run(
            launch.argv,
            input="Anything?",
            env=launch.env,
            cwd=launch.cwd,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        for path in launch.temp_files:
            path.unlink()

    assert ran.returncode == 0, ran.stderr
    assert "Nothing to look up." in ran.stdout
    assert not [name for name in fake_openai.offered_tools(0) if name.startswith("mcp__")]
    assert "refused" in ran.stderr
