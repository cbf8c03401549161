"""A running turn's words as they are typed (runner/live_text.py): the harness's text deltas go
to the page through the cache and the bell, never into the database, never twice, never priced.
Fed with the lines the real Claude Code CLI printed with --include-partial-messages
(tests/recordings/claude-code/partials.jsonl) and those of the same turn without them."""

from __future__ import annotations

import json

import pytest

from motion_runner.harnesses import Event, EventKind
from motion_runner.harnesses.claude_code import ClaudeCodeParser
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import Kind, Message
from motion_runner.runner import live_text
from motion_runner.runner.live_text import LiveText, finished_words
from motion_runner.runner.monitor import TurnMonitor
from motion_runner.runner.process import Outcome, ProcessResult
from motion_runner.runner.turn_run import TurnRun
from motion_runner.runner.turns import keep_what_it_said
from motion_runner.thread import typed
from tests.factories import AgentFactory, MotionFactory, TurnFactory
from tests.recorded import recorded_lines

pytestmark = pytest.mark.django_db


@pytest.fixture
def magent_turn():
    motion = MotionFactory(slug="harbor")
    return TurnFactory(motion=motion, agent=AgentFactory(name="magent"), status="running")


class Seen(TurnMonitor):
    """What the turn's monitors (the spend and loop guards) are shown."""

    def __init__(self, turn) -> None:
        super().__init__(turn)
        self.kinds: list[str] = []

    def observe(self, event) -> None:
        self.kinds.append(event.kind)


def run_for(turn, monitor=None) -> TurnRun:
    context = IngestContext(
        motion=turn.motion, agent=turn.agent, harness="claude_code", source="runner", turn=turn
    )
    return TurnRun(
        turn=turn,
        writer=EventWriter(context),
        parser=ClaudeCodeParser(),
        monitors=[monitor] if monitor else [],
    )


def play(run: TurnRun, scenario: str, after_each=None) -> None:
    for line in recorded_lines(scenario):
        run.handle_line(json.dumps(line).encode())
        run.live.show(force=True)  # as the select loop's tick would, without its clock
        if after_each:
            after_each(line)


def stored(turn) -> list[tuple[str, str]]:
    return list(Message.objects.filter(turn=turn).order_by("created_at", "id").values_list("kind", "text"))


def test_a_turn_with_partials_stores_the_same_messages_as_one_without(magent_turn):
    other = TurnFactory(
        motion=MotionFactory(slug="harbor-2"), agent=AgentFactory(name="nagent"), status="running"
    )
    play(run_for(magent_turn), "partials")
    play(run_for(other), "tool_call")

    # The same Messages (each recording ran in a workspace of its own name), each once.
    assert [(kind, text.replace("partials-31k_o2t1", "X")) for kind, text in stored(magent_turn)] == [
        (kind, text.replace("tool_call-_yl1d9xy", "X")) for kind, text in stored(other)
    ]
    assert [text for kind, text in stored(magent_turn) if kind == Kind.TEXT] == [
        "Let me read the README first.",
        "The README says the answer is 42.",
    ]


def test_the_text_is_shown_growing_while_it_is_typed_and_gone_once_its_message_is_written(magent_turn):
    shown: list[str] = []
    gone_with_message: list[bool] = []

    def look(line) -> None:
        text = typed.typed([magent_turn.pk]).get(magent_turn.pk, "")
        if text and text not in shown:
            shown.append(text)
        if line["type"] == "assistant" and line["message"]["content"][0]["type"] == "text":
            gone_with_message.append(magent_turn.pk not in typed.typed([magent_turn.pk]))

    play(run_for(magent_turn), "partials", look)

    # Whole words only (the word being typed is held back), each block as it grew.
    assert shown == [
        "Let me read ",
        "Let me read the README ",
        "The README ",
        "The README says the ",
        "The README says the answer is ",
    ]
    assert gone_with_message == [True, True]
    assert typed.typed([magent_turn.pk]) == {}


def test_partials_are_never_shown_to_the_monitors_that_price_and_guard_a_turn(magent_turn):
    seen = Seen(magent_turn)
    play(run_for(magent_turn, seen), "partials")

    assert EventKind.PARTIAL not in seen.kinds
    assert EventKind.TURN_END in seen.kinds


def typed_up_to_irst(run: TurnRun, turn) -> None:
    lines = recorded_lines("partials")
    upto = next(
        i for i, line in enumerate(lines) if (line.get("event", {}).get("delta") or {}).get("text") == "irst."
    )
    for line in lines[:upto]:
        run.handle_line(json.dumps(line).encode())
    run.live.show(force=True)
    assert typed.typed([turn.pk]) == {turn.pk: "Let me read the README "}


def test_a_stopped_turns_typed_words_stay_as_its_partial_reply(magent_turn):
    """Issue 43.4: a ■ mid-reply made the words already shown vanish."""
    run = run_for(magent_turn)
    typed_up_to_irst(run, magent_turn)

    keep_what_it_said(run, ProcessResult(outcome=Outcome.STOPPED, returncode=-15, stderr_tail=""))

    assert typed.typed([magent_turn.pk]) == {}
    assert [text for kind, text in stored(magent_turn) if kind == Kind.TEXT] == ["Let me read the README …"]


def test_a_turn_that_exited_keeps_no_typed_words_of_its_own(magent_turn):
    run = run_for(magent_turn)
    typed_up_to_irst(run, magent_turn)

    keep_what_it_said(run, ProcessResult(outcome=Outcome.EXITED, returncode=0, stderr_tail=""))

    assert typed.typed([magent_turn.pk]) == {}
    assert not Message.objects.filter(text__contains="Let me read").exists()


def test_a_secret_being_typed_is_shown_only_once_whole_and_then_redacted(magent_turn):
    live = LiveText(magent_turn.pk, magent_turn.motion_id)
    secret = "sk-ant-api03-" + "x9" * 20

    live.take([_partial("the key is " + secret[:20])])
    live.show(force=True)
    assert typed.typed([magent_turn.pk])[magent_turn.pk] == "the key is "

    live.take([_partial("the key is " + secret + " and more")])
    live.show(force=True)
    assert secret not in typed.typed([magent_turn.pk])[magent_turn.pk]
    assert "[REDACTED]" in typed.typed([magent_turn.pk])[magent_turn.pk]


def test_the_text_is_put_out_at_most_every_interval_and_the_tick_puts_out_what_waits(
    magent_turn, monkeypatch
):
    clock = [100.0]
    monkeypatch.setattr(live_text.time, "monotonic", lambda: clock[0])
    live = LiveText(magent_turn.pk, magent_turn.motion_id)
    live.take([_partial("one two ")])
    live.show()
    live.take([_partial("one two three four ")])
    live.show()
    assert typed.typed([magent_turn.pk])[magent_turn.pk] == "one two "  # within the interval

    clock[0] += live_text.EVERY_SECONDS
    live.show()  # the tick

    assert typed.typed([magent_turn.pk])[magent_turn.pk] == "one two three four "


def test_finished_words_hold_back_the_word_being_typed():
    assert finished_words("Hello wor") == "Hello "
    assert finished_words("Hello world\n") == "Hello world\n"
    assert finished_words("Hel") == ""


def _partial(text: str) -> Event:
    return Event(EventKind.PARTIAL, text=text)
