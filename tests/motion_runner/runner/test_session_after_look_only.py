"""A full-tools wake never silently resumes a session a look-only wake ran in (issue 9).

Personas: @magent listens in the Motion; a watch line woke it look-only, in session S; then
Justin, signed in with an SSH key, mentions it, and it wakes with full tools.
"""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import pytest

from motion_runner.models import Kind, Message, MotionSession, Turn
from motion_runner.runner.turns import enqueue_turn, session_for_launch
from motion_runner.signals import message_created
from tests.factories import MessageFactory, TurnFactory
from tests.wakes_support import clock, dials, room
from wakes.turn.commands import COMMAND_REASON, COMMANDS

pytestmark = pytest.mark.django_db

SESSION = "5e55a0b1-0000-4000-8000-000000000001"
FORK = "5e55a0b1-0000-4000-8000-000000000002"


def session_of(room, *turns: tuple[str, str]) -> str:
    """@magent's session in the Motion, driven by turns of these (mode, rule)."""
    MotionSession.objects.create(session_id=SESSION, motion=room.motion, agent=room.magent)
    for mode, rule in turns:
        TurnFactory(motion=room.motion, agent=room.magent, mode=mode, mode_rule=rule, session_id=SESSION)
    return SESSION


def justin_mentions_magent(room, clock) -> Turn:
    message = MessageFactory(
        motion=room.motion,
        author=room.justin,
        sender="justin",
        source="web",
        sign_in="ssh",
        text="@magent please fix the deploy script",
        created_at=clock.now(),
    )
    message_created.send(sender=Message, message=message)
    return Turn.objects.get(woken_by=message)


def wake_line(turn: Turn) -> str:
    return Message.objects.get(turn=turn, kind=Kind.WAKE).text


def test_a_full_tools_wake_after_a_look_only_wake_starts_a_fresh_session_and_says_why(room, clock):
    session_of(room, ("look", "a watch line"))

    turn = justin_mentions_magent(room, clock)

    assert turn.mode == "full"
    assert session_for_launch(turn) is None
    assert turn.session_note.startswith(f"a fresh session, not {SESSION[:8]}…: a look-only wake")
    assert "a watch line" in turn.session_note
    assert turn.session_note in wake_line(turn)
    assert Message.objects.filter(turn=turn, kind=Kind.WAKE).count() == 1  # said once


def test_the_agent_is_told_its_turn_starts_a_fresh_session_and_why(room, clock):
    session_of(room, ("look", "a watch line"))
    turn = justin_mentions_magent(room, clock)
    queued = turn.prompt

    assert session_for_launch(turn) is None

    turn.refresh_from_db()
    first, rest = turn.prompt.split("\n\n", 1)
    assert first.startswith("(A fresh session:") and "a watch line" in first
    assert rest == queued  # the wake itself, footer last, unchanged


def test_a_resumed_session_is_told_nothing(room, clock):
    session_of(room, ("full", "typed by a person signed in with an SSH key"))
    turn = justin_mentions_magent(room, clock)
    queued = turn.prompt

    assert session_for_launch(turn) == SESSION
    turn.refresh_from_db()
    assert turn.prompt == queued


def test_a_full_tools_turn_queued_without_a_wake_line_says_it_at_launch(room):
    """`manage.py wake --mode full` queues a turn with no wake line: the runner says it."""
    session_of(room, ("look", "a watch line"))
    turn = enqueue_turn(room.motion, room.magent, "deploy", mode="full", dispatch=False)

    assert session_for_launch(turn) is None
    told = Message.objects.get(turn=turn, kind=Kind.WAKE)
    assert told.text.startswith("@magent's full-tools turn: a fresh session")


def test_a_look_only_wake_anywhere_in_the_session_counts_not_only_the_last(room, clock):
    session_of(room, ("look", "a watch line"), ("full", "typed by a person signed in with an SSH key"))

    turn = justin_mentions_magent(room, clock)

    assert session_for_launch(turn) is None


def test_the_dial_can_resume_the_session_and_the_wake_line_says_so(room, clock):
    session_of(room, ("look", "a watch line"))
    dials(full_tools_after_look_only="resume")

    turn = justin_mentions_magent(room, clock)

    assert session_for_launch(turn) == SESSION
    assert (
        "resumes session" in turn.session_note and "full_tools_after_look_only: resume" in turn.session_note
    )
    assert turn.session_note in wake_line(turn)


def test_a_full_tools_wake_after_full_tools_turns_resumes_without_a_word(room, clock):
    session_of(room, ("full", "typed by a person signed in with an SSH key"))

    turn = justin_mentions_magent(room, clock)

    assert session_for_launch(turn) == SESSION
    assert turn.session_note == ""
    assert "session" not in wake_line(turn)


def test_the_runners_own_compaction_does_not_count_as_a_look_only_wake(room, clock):
    session_of(room, ("full", "typed by a person signed in with an SSH key"))
    TurnFactory(motion=room.motion, agent=room.magent, mode="look", reason="compact", session_id=SESSION)

    assert session_for_launch(justin_mentions_magent(room, clock)) == SESSION


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_a_person_asked_for_does_not_count_as_a_look_only_wake(room, clock, command):
    # Justin's `@magent /compact` ran look-only in the session; his next mention keeps what it kept.
    session_of(room, ("full", "typed by a person signed in with an SSH key"))
    TurnFactory(
        motion=room.motion,
        agent=room.magent,
        mode="look",
        reason=COMMAND_REASON,
        reason_detail=f"/{command} asked by justin",
        session_id=SESSION,
    )

    assert session_for_launch(justin_mentions_magent(room, clock)) == SESSION


def test_a_command_that_resumed_a_tainted_session_passes_the_taint_to_its_fork(room, clock):
    # A watch line woke @magent look-only in S; Justin's /usage resumed S and forked S2 (Claude
    # Code's --fork-session); what the watch wake read is in S2 too.
    session_of(room, ("look", "a watch line"))
    command = TurnFactory(motion=room.motion, agent=room.magent, mode="look", reason=COMMAND_REASON)
    assert session_for_launch(command) == SESSION
    Turn.objects.filter(pk=command.pk).update(session_id=FORK)
    MotionSession.objects.create(session_id=FORK, motion=room.motion, agent=room.magent)

    assert session_for_launch(justin_mentions_magent(room, clock)) is None


def test_a_look_only_wake_resumes_the_session_as_before(room, clock):
    session_of(room, ("look", "a watch line"))
    look_only = TurnFactory(motion=room.motion, agent=room.magent, mode="look")

    assert session_for_launch(look_only) == SESSION


def test_a_look_only_wake_that_ran_after_the_full_one_was_queued_is_caught_at_launch(room, clock):
    session_of(room, ("full", "typed by a person signed in with an SSH key"))
    turn = justin_mentions_magent(room, clock)
    assert turn.session_note == ""
    TurnFactory(
        motion=room.motion, agent=room.magent, mode="look", mode_rule="a watch line", session_id=SESSION
    )

    assert session_for_launch(turn) is None
    told = Message.objects.get(turn=turn, kind=Kind.WAKE, text__startswith="@magent's full-tools turn:")
    assert "a fresh session" in told.text and "a watch line" in told.text
