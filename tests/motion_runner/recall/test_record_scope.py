"""What the record's tools answer for a turn: only what the agent may read and every reader of
the woken Motion may read too (docs/security.md), each with its link."""

from __future__ import annotations

import pytest

from motion_runner.models import Kind, Message, TurnStatus, Visibility
from motion_runner.recall import record
from motion_runner.recall.passes import issue_pass, running_turn_for
from motion_runner.signals import message_created
from tests.factories import AgentFactory, MotionFactory

from .conftest import post


def texts(answer: dict) -> list[str]:
    return [line["text"] for line in answer["results"]]


def test_search_finds_a_post_in_the_woken_motion_with_its_link(launch, running_turn):
    said = post(launch, "The deploy key rotates on Tuesdays.")
    found = record.search(running_turn, "deploy tuesdays")["results"]
    assert [line["id"] for line in found] == [str(said.id)]
    assert found[0]["link"] == f"/motions/launch/#m-{said.id}"
    assert found[0]["motion"] == "launch" and found[0]["author"] == "ada"


def test_search_shows_nothing_from_a_motion_the_agent_may_not_read(rooms, running_turn):
    post(rooms["elsewhere"], "deploy plan for the other team")
    assert record.search(running_turn, "deploy")["results"] == []


def test_search_shows_nothing_a_reader_of_the_woken_motion_may_not_read(rooms, running_turn):
    post(rooms["side"], "deploy notes only Ada may see")  # @magent may read it; Bo may not
    assert record.search(running_turn, "deploy")["results"] == []


def test_search_shows_nothing_another_agent_of_the_woken_motion_may_not_read(
    launch, ada, bo, magent, running_turn
):
    pair = MotionFactory(slug="pair", visibility=Visibility.MEMBERS)
    pair.people.add(ada, bo)
    pair.agents.add(magent)
    post(pair, "deploy notes for Ada, Bo and @magent")
    assert texts(record.search(running_turn, "deploy")) == ["deploy notes for Ada, Bo and @magent"]

    launch.agents.add(AgentFactory(name="codey"))  # a reader of launch that may not read pair

    assert record.search(running_turn, "deploy")["results"] == []


def test_search_reaches_another_motion_every_reader_may_read(rooms, running_turn):
    post(rooms["lobby"], "deploy window is Friday")
    assert texts(record.search(running_turn, "deploy")) == ["deploy window is Friday"]


def test_search_is_newest_first_and_filtered_by_motion_and_author(launch, rooms, running_turn):
    post(launch, "deploy one", sender="ada")
    post(launch, "deploy two", sender="bo")
    post(rooms["lobby"], "deploy three", sender="bo")
    assert texts(record.search(running_turn, "deploy")) == ["deploy three", "deploy two", "deploy one"]
    only = record.SearchFilters(motion="launch", author="@bo")
    assert texts(record.search(running_turn, "deploy", only)) == ["deploy two"]


def test_a_motion_filter_out_of_reach_finds_nothing(rooms, running_turn):
    post(rooms["side"], "deploy notes")
    assert record.search(running_turn, "deploy", record.SearchFilters(motion="side-room"))["results"] == []


def test_a_bad_filter_is_said_back_and_nothing_is_searched(running_turn):
    with pytest.raises(record.RecordError, match="since"):
        record.search(running_turn, "deploy", record.SearchFilters(since="last tuesday"))
    with pytest.raises(record.RecordError, match="query"):
        record.search(running_turn, "  ")


def test_answers_are_redacted(launch, running_turn):
    key = "sk-ant-api03-" + "Zq7" * 30
    post(launch, f"deploy with ANTHROPIC_API_KEY={key}")  # pasted before a rule knew its shape
    (line,) = record.search(running_turn, "deploy")["results"]
    assert key not in line["text"] and "[REDACTED]" in line["text"]


def test_read_shows_a_post_with_the_posts_around_it(launch, running_turn):
    lines = [post(launch, f"line {n}") for n in range(5)]
    answer = record.read(running_turn, message_id=str(lines[2].id), around=1)
    assert [line["text"] for line in answer["messages"]] == ["line 1", "line 2", "line 3"]


def test_read_refuses_a_post_out_of_reach(rooms, running_turn):
    hidden = post(rooms["side"], "deploy notes")
    with pytest.raises(record.RecordError, match="reach"):
        record.read(running_turn, message_id=str(hidden.id))


def test_remember_keeps_a_note_of_the_agents_own_in_the_woken_motion(running_turn):
    kept = record.remember(running_turn, "Ada prefers Tuesday deploys.")["kept"]
    note = Message.objects.get(pk=kept["id"])
    assert (note.kind, note.sender, note.motion_id, note.turn_id) == (
        Kind.NOTE,
        "magent",
        "launch",
        running_turn.pk,
    )
    assert texts(record.search(running_turn, "tuesday")) == ["Ada prefers Tuesday deploys."]


def test_a_remembered_note_is_announced_like_every_line_written(
    running_turn, django_capture_on_commit_callbacks
):
    heard = []

    def hear(sender, message, newest_of_batch, **kwargs):
        heard.append((message.kind, message.text, newest_of_batch))

    message_created.connect(hear)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            record.remember(running_turn, "Ada prefers Tuesday deploys.")
    finally:
        message_created.disconnect(hear)
    assert heard == [(Kind.NOTE, "Ada prefers Tuesday deploys.", True)]


def test_a_remembered_note_is_redacted_once_stored(running_turn):
    secret = "sk-ant-api03-" + "C" * 40
    kept = record.remember(running_turn, f"the key is {secret}")["kept"]
    stored = Message.objects.get(pk=kept["id"]).text
    assert secret not in stored and secret not in kept["text"]


def test_the_dial_takes_remember_off_look_only_wakes(running_turn, settings):
    settings.WAKE_MEMORY_REMEMBER_ON_LOOK = False
    with pytest.raises(record.RecordError, match="off"):
        record.remember(running_turn, "a note")
    assert not Message.objects.filter(kind=Kind.NOTE).exists()


def test_a_pass_opens_only_its_running_turn(running_turn):
    token = issue_pass(running_turn)
    assert running_turn_for(token) == running_turn
    assert running_turn_for("mrp_guessed") is None
    assert running_turn_for("") is None
    running_turn.status = TurnStatus.FINISHED
    running_turn.save(update_fields=["status"])
    assert running_turn_for(token) is None
