"""`@agent /compact [what to keep]`, `/context`, `/usage` from the thread (issue 24): from a person
who may grant full tools, the command is the whole prompt of a maintenance turn (no footer);
the real Claude Code CLI's answer lands in the thread; anyone else is told, and nothing wakes.

Personas: Justin signs in with his SSH key (he may grant full tools); Rosemary with a password;
demo is the first run's account bin/serve makes (a password too, MOTION_RUNNER_FIRST_RUN_GRANTS).
"""

from __future__ import annotations

import re

import pytest

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner.resume import percent_full
from motion_runner.runner.turns import execute_turn
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from wakes.consider_loop.handlers import handle_message
from wakes.decision.steering import context_fullness
from wakes.models import ListenState, Spend

pytestmark = pytest.mark.django_db


@pytest.fixture
def harbor(tmp_path):
    motion = MotionFactory(slug="harbor", workspace=str(tmp_path))
    motion.agents.add(AgentFactory(name="magent"))
    return motion


def post(motion, who: str, text: str, sign_in: str) -> list[Turn]:
    person = UserFactory(username=who)
    message = MessageFactory(
        motion=motion, sender=who, author=person, sign_in=sign_in, source="web", text=text
    )
    return handle_message(message, dispatch=False)


def test_context_is_the_whole_prompt_of_a_maintenance_turn(harbor):
    [turn] = post(harbor, "justin", "@magent /context", sign_in="ssh")

    assert turn.prompt == "/context"  # no footer, no steering: the CLI reads its own command
    assert (turn.reason, turn.mode) == ("command", "look")
    line = Message.objects.get(motion=harbor, kind=Kind.WAKE, turn=turn)
    assert "/context asked by justin (maintenance)" in line.text


def test_compact_carries_what_to_keep(harbor):
    [turn] = post(harbor, "justin", "@magent /compact keep the tour dates and the merch plan", sign_in="ssh")

    assert turn.prompt == "/compact keep the tour dates and the merch plan"


def test_someone_who_may_not_grant_full_tools_is_told_and_nothing_wakes(harbor):
    assert post(harbor, "rosemary", "@magent /usage", sign_in="password") == []

    assert not Turn.objects.filter(motion=harbor).exists()
    line = Message.objects.get(motion=harbor, kind=Kind.WAKE)
    assert "commands are for people who may grant full tools" in line.text


def test_a_refused_command_is_no_post_for_any_agents_loop(harbor):
    codey = AgentFactory(name="codey", listening=True)
    harbor.agents.add(codey)
    post(harbor, "justin", "good morning", sign_in="ssh")  # every listening pair has its clocks
    before = {
        s.agent_id: (s.last_post_at, s.due_at, s.version) for s in ListenState.objects.filter(motion=harbor)
    }
    assert len(before) == 2

    assert post(harbor, "rosemary", "@magent /usage", sign_in="password") == []

    after = {
        s.agent_id: (s.last_post_at, s.due_at, s.version) for s in ListenState.objects.filter(motion=harbor)
    }
    assert after == before  # no consideration is due for it, for magent or codey


def test_a_command_run_is_no_post_for_the_loop_either(harbor):
    post(harbor, "justin", "good morning", sign_in="ssh")
    before = list(ListenState.objects.filter(motion=harbor).values_list("last_post_at", "due_at", "version"))

    [turn] = post(harbor, "justin", "@magent /context", sign_in="ssh")

    assert turn.reason == "command"
    assert (
        list(ListenState.objects.filter(motion=harbor).values_list("last_post_at", "due_at", "version"))
        == before
    )


@pytest.mark.parametrize("command", ["/context", "/usage", "/compact keep the setlist"])
def test_the_first_run_account_runs_the_readmes_commands_while_debug_is_on(harbor, settings, command):
    settings.DEBUG = True
    settings.MOTION_RUNNER_FIRST_RUN_GRANTS = ["demo"]

    [turn] = post(harbor, "demo", f"@magent {command}", sign_in="password")

    assert (turn.reason, turn.mode) == ("command", "look")  # a maintenance turn, never full tools
    assert "first run's account" in turn.mode_rule


def test_production_settings_refuse_the_first_run_grant(harbor, settings):
    settings.DEBUG = False
    settings.MOTION_RUNNER_FIRST_RUN_GRANTS = ["demo"]

    assert post(harbor, "demo", "@magent /context", sign_in="password") == []

    assert not Turn.objects.filter(motion=harbor).exists()
    assert "commands are for people who may grant" in Message.objects.get(motion=harbor, kind=Kind.WAKE).text


def test_the_first_run_grant_names_one_account_not_every_password(harbor, settings):
    settings.DEBUG = True
    settings.MOTION_RUNNER_FIRST_RUN_GRANTS = ["demo"]

    assert post(harbor, "rosemary", "@magent /context", sign_in="password") == []


def test_the_first_run_grant_never_makes_a_mention_full_tools(harbor, settings):
    settings.DEBUG = True
    settings.MOTION_RUNNER_FIRST_RUN_GRANTS = ["demo"]

    [turn] = post(harbor, "demo", "@magent please deploy the site", sign_in="password")

    assert (turn.reason, turn.mode) == ("mention", "look")


def test_a_command_further_into_a_post_is_an_ordinary_mention(harbor):
    [turn] = post(harbor, "justin", "@magent what does /context show?", sign_in="ssh")

    assert turn.reason == "mention"


def test_usage_followed_by_words_is_a_question_not_a_command(harbor):
    [turn] = post(harbor, "justin", "@magent /usage of the word banjo in the setlist?", sign_in="ssh")

    assert turn.reason == "mention"
    assert "of the word banjo" in turn.prompt


@pytest.mark.parametrize("text", ["@magent /cost", "@magent /usage.", "@magent /context "])
def test_cost_is_usage_and_a_closing_stop_is_no_argument(harbor, text):
    [turn] = post(harbor, "justin", text, sign_in="ssh")

    assert turn.reason == "command"
    assert turn.prompt in ("/usage", "/context")


def test_the_agents_context_fullness_is_its_newest_calls_input(harbor):
    magent = harbor.agents.get()
    MessageFactory(
        motion=harbor,
        agent=magent,
        sender="magent",
        source="runner",
        session_id="s1",
        input_tokens=2_000,
        cache_read_input_tokens=48_000,
        cache_creation_input_tokens=0,
    )

    assert context_fullness(harbor.pk, magent) == {"tokens": 50_000, "window": 200_000, "percent": 25}


def test_the_context_meter_reads_the_window_the_cli_said_for_its_model(harbor):
    magent = harbor.agents.get()
    MessageFactory(
        motion=harbor,
        agent=magent,
        sender="magent",
        source="runner",
        session_id="s1",
        model_backend="claude-opus-5-5",
        input_tokens=250_000,
    )
    # Claude Code's result line, as recorded (tests/recordings/claude-code/text_reply.jsonl).
    MessageFactory(
        motion=harbor,
        agent=magent,
        sender="magent",
        source="runner",
        session_id="s1",
        kind="turn_end",
        raw={"type": "result", "modelUsage": {"claude-opus-5-5": {"contextWindow": 1_000_000}}},
    )

    assert context_fullness(harbor.pk, magent) == {"tokens": 250_000, "window": 1_000_000, "percent": 25}


def test_the_context_meter_reads_the_newest_call_not_the_turns_result_line(harbor):
    magent = harbor.agents.get()
    MessageFactory(
        motion=harbor,
        agent=magent,
        sender="magent",
        source="runner",
        session_id="s1",
        model_backend="claude-opus-5-5",
        input_tokens=50_000,
    )
    # Claude Code's result line names no model, and its usage is the sum of the turn's calls.
    MessageFactory(
        motion=harbor,
        agent=magent,
        sender="magent",
        source="runner",
        session_id="s1",
        kind="turn_end",
        model_backend="",
        input_tokens=150_000,
        raw={"type": "result", "modelUsage": {"claude-opus-5-5": {"contextWindow": 1_000_000}}},
    )

    assert context_fullness(harbor.pk, magent) == {"tokens": 50_000, "window": 1_000_000, "percent": 5}


def test_a_local_commands_synthetic_answer_leaves_the_context_meter_as_it_was(harbor):
    magent = harbor.agents.get()
    for model, tokens in (("claude-opus-5-5", 250_000), ("<synthetic>", 0)):  # /context's answer
        MessageFactory(
            motion=harbor,
            agent=magent,
            sender="magent",
            source="runner",
            session_id="s1",
            model_backend=model,
            input_tokens=tokens,
        )

    assert context_fullness(harbor.pk, magent)["tokens"] == 250_000


# Claude Code 2.1.332's answer to /context on stdout (a `<synthetic>` line), cut to what is read.
CLI_CONTEXT_ANSWER = {
    "type": "assistant",
    "local_command_run": True,
    "context_usage": {
        "model": "claude-opus-5-5",
        "total_tokens": 12_372,
        "raw_max_tokens": 1_000_000,
        "percentage": 1,
    },
}


def said_by_magent(motion, **fields):
    return MessageFactory(
        motion=motion, agent=motion.agents.get(), sender="magent", source="runner", session_id="s1", **fields
    )


def test_after_the_clis_context_answer_the_meter_says_what_it_said(harbor):
    """The stand-in's calls report no input (0 %) while Claude Code's /context counted 1 %: the
    menu reads the CLI's own count once it is the newest (issue 43.7)."""
    said_by_magent(harbor, model_backend="claude-opus-5-5", input_tokens=0)
    said_by_magent(harbor, model_backend="<synthetic>", input_tokens=0, raw=CLI_CONTEXT_ANSWER)

    assert context_fullness(harbor.pk, harbor.agents.get()) == {
        "tokens": 12_372,
        "window": 1_000_000,
        "percent": CLI_CONTEXT_ANSWER["context_usage"]["percentage"],
    }


def test_a_call_after_the_clis_context_answer_is_the_newer_reading(harbor):
    said_by_magent(harbor, model_backend="<synthetic>", input_tokens=0, raw=CLI_CONTEXT_ANSWER)
    said_by_magent(harbor, model_backend="claude-opus-5-5", input_tokens=90_000)

    assert context_fullness(harbor.pk, harbor.agents.get())["tokens"] == 90_000


@pytest.mark.parametrize(
    ("tokens", "window", "percent"),
    [(12_372, 1_000_000, 1), (2_500, 100_000, 3), (2_499, 100_000, 2), (0, 200_000, 0)],
)
def test_the_percent_full_is_rounded_half_up_as_the_cli_rounds(tokens, window, percent):
    assert percent_full(tokens, window) == percent


def test_a_one_million_model_named_so_has_that_window_before_any_turn_said_it(harbor):
    magent = harbor.agents.get()
    MessageFactory(
        motion=harbor,
        agent=magent,
        sender="magent",
        source="runner",
        session_id="s1",
        model_backend="claude-sonnet-4-5[1m]",
        input_tokens=300_000,
    )

    assert context_fullness(harbor.pk, magent)["window"] == 1_000_000


@pytest.mark.e2e
def test_the_real_cli_answers_context_in_the_thread(claude_on_fake, claude_binary, tmp_path):
    motion = MotionFactory(slug="studio", workspace=str(tmp_path))
    magent = AgentFactory(name="magent", harness="claude-code")
    motion.agents.add(magent)
    [queued] = post(motion, "justin", "@magent /context", sign_in="ssh")

    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    said = Message.objects.filter(turn=turn, kind=Kind.TEXT).exclude(source="system")
    assert said.exists() and any("token" in m.text.lower() for m in said), [m.text for m in said]
    assert claude_on_fake.message_requests() == []  # answered by the CLI itself: no model call
    spend = Spend.objects.get(turn=turn)
    assert spend.settled and not spend.counted


@pytest.mark.e2e
def test_the_menus_figure_is_the_real_clis_context_answers(claude_on_fake, claude_binary, tmp_path):
    """Issue 43.7: `/context` said 1 % where the menu said 0 %. After the real CLI's answer the
    menu's percent is the one its words say."""
    motion = MotionFactory(slug="studio", workspace=str(tmp_path))
    magent = AgentFactory(name="magent", harness="claude-code")
    motion.agents.add(magent)
    [queued] = post(motion, "justin", "@magent /context", sign_in="ssh")

    turn = execute_turn(queued.pk)

    answer = " ".join(
        m.text for m in Message.objects.filter(turn=turn, kind=Kind.TEXT).exclude(source="system")
    )
    said = re.search(r"\((\d+)%\)", answer)
    assert said, answer
    assert context_fullness(motion.pk, magent)["percent"] == int(said[1])
