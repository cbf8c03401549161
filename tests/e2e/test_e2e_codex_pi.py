"""Codex and Pi end to end: the real CLIs from node_modules, launched by the runner
(`execute_turn`), talking to the fake OpenAI API on 127.0.0.1, their events written into a
Motion. Codex speaks the Responses API through a custom provider in $CODEX_HOME/config.toml;
Pi speaks Chat Completions through a provider in its models.json."""

from __future__ import annotations

import json
import socket
from decimal import Decimal

import pytest

from motion_runner.models import Kind, Message, MotionSession, TurnStatus
from motion_runner.runner.turns import execute_turn
from tests.conftest import require_cli
from tests.factories import AgentFactory, MotionFactory, TurnFactory
from tests.fakes.harness_homes import CODEX_MODEL, PI_MODEL, PI_PROVIDER, codex_env, pi_env
from tests.fakes.openai_api import Error, Text, ToolCall, Usage, reply

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NOTES = "The launch code is 4417.\n"


@pytest.fixture(autouse=True)
def codex_look_only_accepted(settings):
    """These tests are about what the CLIs do, look-only turns included; the runner's default
    refuses a look-only Codex turn (tests/motion_runner/harnesses/test_codex_look_only.py says why)."""
    settings.RUNNER_CODEX_LOOK_ONLY = "allow"


USAGE = Usage(input_tokens=1200, cached_input_tokens=200, output_tokens=50)


@pytest.fixture
def workspace(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text(NOTES)
    return work


@pytest.fixture
def launch_room(workspace):
    """The Motion the agents speak in, with its workspace."""
    return MotionFactory(slug="launch-room", workspace=str(workspace))


def codex_agent(tmp_path, base_url: str, **kwargs):
    require_cli("codex")
    env = codex_env(tmp_path / "codex", base_url, **kwargs)
    return AgentFactory(name="codey", harness="codex", model=CODEX_MODEL, env=env)


def pi_agent(tmp_path, base_url: str):
    require_cli("pi")
    env = pi_env(tmp_path / "pi", base_url)
    return AgentFactory(name="pia", harness="pi", model=f"{PI_PROVIDER}/{PI_MODEL}", env=env)


def thread(turn) -> list[Message]:
    return list(Message.objects.filter(turn=turn).order_by("created_at", "id"))


def posted_kinds(turn) -> list[str]:
    return [m.kind for m in thread(turn)]


def codex_shell_call() -> ToolCall:
    # Codex 0.171 offers its shell as exec_command {cmd}.
    return ToolCall(("exec_command", "shell_command", "shell"), {"cmd": "cat notes.txt"})


class TestCodex:
    def test_a_tool_call_and_a_reply_land_once_each_with_the_priced_cost(
        self, tmp_path, fake_openai, launch_room
    ):
        agent = codex_agent(tmp_path, fake_openai.base_url)
        fake_openai.script(
            reply(codex_shell_call(), usage=USAGE),
            reply(Text("The notes say the launch code is 4417."), usage=USAGE),
        )
        turn = TurnFactory(motion=launch_room, agent=agent, prompt="What do the notes say?")

        turn = execute_turn(turn.pk)

        assert turn.status == TurnStatus.FINISHED, turn.error
        assert posted_kinds(turn) == [Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.TEXT, Kind.TURN_END]
        call, result, text, end = thread(turn)
        assert "cat notes.txt" in call.text
        assert result.text == NOTES
        assert text.text == "The notes say the launch code is 4417."
        # 2,000 uncached input at $5, 400 cached at $0.50, 100 output at $30 per million.
        assert turn.cost_usd == Decimal("0.013200")
        assert end.text == "done · $0.0132"

    def test_the_thread_id_becomes_the_motions_session(self, tmp_path, fake_openai, launch_room):
        agent = codex_agent(tmp_path, fake_openai.base_url)
        fake_openai.script(reply(Text("Hello."), usage=USAGE))
        turn = execute_turn(TurnFactory(motion=launch_room, agent=agent).pk)

        session = MotionSession.objects.get(session_id=turn.session_id)
        assert (session.motion, session.agent, session.harness) == (launch_room, agent, "codex")
        assert fake_openai.model_requests()[0]["headers"]["thread-id"] == turn.session_id

    def test_the_next_turn_resumes_the_thread_and_pays_only_for_itself(
        self, tmp_path, fake_openai, launch_room
    ):
        agent = codex_agent(tmp_path, fake_openai.base_url)
        fake_openai.script(reply(Text("Noted: apple."), usage=USAGE))
        first = execute_turn(TurnFactory(motion=launch_room, agent=agent, prompt="Remember apple.").pk)
        fake_openai.script(reply(Text("It was apple."), usage=Usage(1500, 1000, 80)))

        second = execute_turn(TurnFactory(motion=launch_room, agent=agent, prompt="Which word?").pk)

        assert second.status == TurnStatus.FINISHED, second.error
        assert second.session_id == first.session_id
        assert "Remember apple." in json.dumps(fake_openai.model_requests()[-1]["body"]["input"])
        assert [m.text for m in thread(second) if m.kind == Kind.TEXT] == ["It was apple."]
        # Codex reports the thread's running total; the turn is charged 500 + 1,000 cached + 80.
        assert second.cost_usd == Decimal("0.005400")

    def test_a_model_error_fails_the_turn_with_the_models_words(self, tmp_path, fake_openai, launch_room):
        agent = codex_agent(tmp_path, fake_openai.base_url)
        fake_openai.script(
            reply(Error(400, "The model `gpt-5.5` is not available to you.", "model_not_found"))
        )
        turn = execute_turn(TurnFactory(motion=launch_room, agent=agent).pk)

        assert turn.status == TurnStatus.FAILED
        assert "The model `gpt-5.5` is not available to you." in turn.error
        # Said once, by the turn's end, in the thread: no second runner message repeats it.
        (turn_end,) = Message.objects.filter(motion=launch_room, kind=Kind.TURN_END, turn=turn)
        assert "The model `gpt-5.5` is not available to you." in turn_end.text
        assert not Message.objects.filter(motion=launch_room, source="system", turn=turn).exists()
        assert posted_kinds(turn).count(Kind.TURN_END) == 1

    def test_an_unreachable_model_server_is_ended_by_the_turn_timeout(self, tmp_path, launch_room, settings):
        with socket.socket() as sock:  # a port nobody listens on
            sock.bind(("127.0.0.1", 0))
            dead_url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        agent = codex_agent(tmp_path, dead_url)
        settings.RUNNER_TURN_TIMEOUT_SECONDS = 6

        turn = execute_turn(TurnFactory(motion=launch_room, agent=agent).pk)

        assert turn.status == TurnStatus.TIMED_OUT
        assert "ran past its 6 s limit" in turn.error
        said = [m.text for m in Message.objects.filter(motion=launch_room, kind=Kind.ERROR)]
        assert any("its last error: Reconnecting" in text for text in said), said


class TestPi:
    def test_a_tool_call_and_a_reply_land_once_each_with_pis_cost(self, tmp_path, fake_openai, launch_room):
        agent = pi_agent(tmp_path, fake_openai.base_url)
        fake_openai.script(
            reply(ToolCall("read", {"path": "notes.txt"}), usage=USAGE),
            reply(Text("The notes say the launch code is 4417."), usage=USAGE),
        )
        turn = TurnFactory(motion=launch_room, agent=agent, prompt="What do the notes say?")

        turn = execute_turn(turn.pk)

        assert turn.status == TurnStatus.FINISHED, turn.error
        assert posted_kinds(turn) == [Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.TEXT, Kind.TURN_END]
        call, result, text, end = thread(turn)
        assert call.text == "read notes.txt"
        assert result.text == NOTES
        assert text.text == "The notes say the launch code is 4417."
        # Pi's own price: two calls of $0.0025 (models.json: $2 in, $8 out, $0.50 cached).
        assert turn.cost_usd == Decimal("0.005")
        assert end.text == "done · $0.0050"

    def test_a_look_only_turn_offers_the_model_only_the_read_tools_and_its_record(
        self, tmp_path, fake_openai, launch_room
    ):
        agent = pi_agent(tmp_path, fake_openai.base_url)
        fake_openai.script(reply(Text("Looked."), usage=USAGE))
        execute_turn(TurnFactory(motion=launch_room, agent=agent, mode="look").pk)
        # The record's tools come from the record extension (harnesses/pi_record_extension.ts).
        record = [f"mcp__motion-record__{tool}" for tool in ("read", "remember", "search")]
        assert sorted(fake_openai.offered_tools(0)) == ["find", "grep", "ls", *record, "read"]

    def test_the_session_id_becomes_the_motions_session_and_is_resumed(
        self, tmp_path, fake_openai, launch_room
    ):
        agent = pi_agent(tmp_path, fake_openai.base_url)
        fake_openai.script(reply(Text("Noted: apple."), usage=USAGE))
        first = execute_turn(TurnFactory(motion=launch_room, agent=agent, prompt="Remember apple.").pk)
        fake_openai.script(reply(Text("It was apple."), usage=USAGE))

        second = execute_turn(TurnFactory(motion=launch_room, agent=agent, prompt="Which word?").pk)

        session = MotionSession.objects.get(session_id=first.session_id)
        assert (session.motion, session.agent, session.harness) == (launch_room, agent, "pi")
        assert second.session_id == first.session_id
        assert "Remember apple." in json.dumps(fake_openai.model_requests()[-1]["body"]["messages"])
        assert second.cost_usd == Decimal("0.0025")

    def test_a_model_error_that_exits_0_fails_the_turn_with_the_models_words(
        self, tmp_path, fake_openai, launch_room
    ):
        agent = pi_agent(tmp_path, fake_openai.base_url)
        fake_openai.script(
            reply(Error(400, "The model `fake-model` is not available to you.", "model_not_found"))
        )
        turn = execute_turn(TurnFactory(motion=launch_room, agent=agent).pk)

        assert turn.exit_code == 0
        assert turn.status == TurnStatus.FAILED
        assert "The model `fake-model` is not available to you." in turn.error
        # Said once, by the turn's end, in the thread: no second runner message repeats it.
        (turn_end,) = Message.objects.filter(motion=launch_room, kind=Kind.TURN_END, turn=turn)
        assert "The model `fake-model` is not available to you." in turn_end.text
        assert not Message.objects.filter(motion=launch_room, source="system", turn=turn).exists()

    def test_a_prompt_starting_with_an_at_sign_reaches_the_model_as_text(
        self, tmp_path, fake_openai, launch_room
    ):
        agent = pi_agent(tmp_path, fake_openai.base_url)
        fake_openai.script(reply(Text("Hi."), usage=USAGE))
        turn = execute_turn(TurnFactory(motion=launch_room, agent=agent, prompt="@notes.txt is it there?").pk)

        assert turn.status == TurnStatus.FINISHED, turn.error
        sent = json.dumps(fake_openai.model_requests()[0]["body"]["messages"])
        assert "@notes.txt is it there?" in sent
        assert "4417" not in sent  # the file was not pulled into the prompt
