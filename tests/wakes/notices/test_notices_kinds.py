"""memory-lane's two notice kinds (views_moods.notices_for): "mentioned you" when a person's or
an agent's post @-mentions a person, and "answered" to the last person who spoke before an agent's
reply, with no @ needed; each in the list and by push, and none ever takes the writer down."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import logging

import pytest
from rest_framework.test import APIClient

from motion_runner.ingest.fit import announce
from motion_runner.models import Message, Turn
from motion_runner.signals import message_created
from tests.factories import MessageFactory
from tests.wakes_support import clock, room, say
from wakes.models import Notice
from wakes.models import clock as wake_clock
from wakes.notices import answers, push

pytestmark = pytest.mark.django_db


def reply(turn: Turn, text: str) -> Message:
    """The agent's answer, posted now by the wake rules' clock (the test's), like the people's posts."""
    message = MessageFactory(
        motion=turn.motion,
        agent=turn.agent,
        sender=turn.agent.name,
        source="runner",
        turn=turn,
        text=text,
        created_at=wake_clock.now(),
    )
    message_created.send(sender=Message, message=message, newest_of_batch=True)
    return message


@pytest.fixture
def pushes(monkeypatch):
    sent = []
    monkeypatch.setattr(answers, "send_when_broker_answers", lambda name, *args: sent.append((name, args)))
    return sent


def signed_in(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def kinds(person) -> list[tuple[str, str]]:
    return [(n.kind, n.answer.sender) for n in Notice.objects.filter(person=person).order_by("pk")]


# --- "mentioned you" ----------------------------------------------------------------------------


def test_an_agents_reply_mentioning_a_person_tells_them(
    room, clock, pushes, django_capture_on_commit_callbacks
):
    say(room.motion, room.rosemary, "@magent who has the shirts?", clock)
    turn = Turn.objects.get(agent=room.magent)
    with django_capture_on_commit_callbacks(execute=True):
        answer = reply(turn, "@justin has it")
    notice = Notice.objects.get(person=room.justin)
    assert (notice.kind, notice.agent, notice.answer, notice.mention) == (
        "mention",
        room.magent,
        answer,
        None,
    )
    assert any(name == "wakes.push_notices" and notice.pk in args[0] for name, args in pushes)


def test_a_persons_post_mentioning_another_person_tells_them(room, clock):
    post = say(room.motion, room.justin, "@rosemary the posters are yours", clock)
    notice = Notice.objects.get()
    assert (notice.person, notice.kind, notice.agent, notice.answer) == (room.rosemary, "mention", None, post)


def test_mentioning_yourself_tells_nobody(room, clock):
    say(room.motion, room.justin, "note to @justin: buy strings", clock)
    assert not Notice.objects.exists()


def test_a_person_who_may_not_read_the_motion_is_not_told(room, clock):
    room.motion.visibility = "members"
    room.motion.save()
    room.motion.people.add(room.justin)
    say(room.motion, room.justin, "@rosemary can you see this?", clock)
    assert not Notice.objects.exists()


def test_a_post_mentioning_a_person_twice_tells_them_once(room, clock):
    post = say(room.motion, room.justin, "@rosemary @Rosemary, @rosemary!", clock)
    message_created.send(sender=Message, message=post)  # announced again: still one
    assert Notice.objects.filter(person=room.rosemary).count() == 1


def test_a_mention_in_code_or_an_address_is_not_a_mention(room, clock):
    say(room.motion, room.justin, "mail rosemary@example.org or run `ping @rosemary`", clock)
    assert not Notice.objects.exists()


def test_a_mention_of_an_unknown_name_tells_nobody(room, clock):
    say(room.motion, room.justin, "@nobody here?", clock)
    assert not Notice.objects.exists()


# --- "answered" to the last person who spoke ----------------------------------------------------


def test_an_agents_reply_answers_the_last_person_who_spoke_with_no_at(room, clock):
    say(room.motion, room.justin, "@magent shirts?", clock)
    clock.advance(1)
    say(room.motion, room.rosemary, "and the posters, please", clock)
    answer = reply(Turn.objects.get(agent=room.magent), "Both came on Tuesday.")
    notice = Notice.objects.get(person=room.rosemary)
    assert (notice.kind, notice.agent, notice.answer, notice.mention) == ("answer", room.magent, answer, None)


def test_the_one_who_mentioned_is_answered_once_not_twice(room, clock):
    say(room.motion, room.justin, "@magent shirts?", clock)
    reply(Turn.objects.get(agent=room.magent), "In on Tuesday.")
    assert kinds(room.justin) == [("answer", "magent")]


def test_a_reply_that_mentions_the_last_speaker_is_a_mention_not_also_an_answer(room, clock):
    say(room.motion, room.justin, "@magent who has the shirts?", clock)
    clock.advance(1)
    say(room.motion, room.rosemary, "not me", clock)
    reply(Turn.objects.get(agent=room.magent), "@rosemary has them, says the list")
    assert kinds(room.rosemary) == [("mention", "magent")]


def test_a_reply_that_mentions_the_one_who_asked_is_one_mention_for_the_whole_turn(room, clock):
    say(room.motion, room.justin, "@magent shirts?", clock)
    turn = Turn.objects.get(agent=room.magent)
    reply(turn, "@justin in on Tuesday")
    reply(turn, "Also: posters on Friday.")
    assert kinds(room.justin) == [("mention", "magent")]


def test_a_silent_turn_answers_no_last_speaker(room, clock):
    say(room.motion, room.justin, "@magent thanks!", clock)
    clock.advance(1)
    say(room.motion, room.rosemary, "thanks from me too", clock)
    reply(Turn.objects.get(agent=room.magent), "<silent>nothing to add</silent>")
    assert not Notice.objects.filter(person=room.rosemary).exists()


def test_a_second_post_of_the_turn_answers_nobody_again(room, clock):
    say(room.motion, room.justin, "@magent shirts?", clock)
    clock.advance(1)
    say(room.motion, room.rosemary, "posters?", clock)
    turn = Turn.objects.get(agent=room.magent)
    reply(turn, "Shirts: Tuesday.")
    reply(turn, "Posters: Friday.")
    assert kinds(room.rosemary) == [("answer", "magent")]


# --- the list, the push, and containment --------------------------------------------------------


def test_the_list_says_each_kind(room, clock):
    say(room.motion, room.rosemary, "@justin over to you", clock)
    page = signed_in(room.justin).get("/api/notices/").json()
    (notice,) = page["notices"]
    assert (notice["kind"], notice["from"], notice["says"]) == ("mention", "rosemary", "mentioned you")
    assert notice["agent"] is None and notice["mention"] is None
    assert "@rosemary mentioned you in" in signed_in(room.justin).get("/").content.decode()


def test_the_push_says_mentioned_you(room, clock):
    say(room.motion, room.magent, "@justin has it", clock)
    notice = Notice.objects.get(person=room.justin)
    assert push.notification(notice)["title"] == "@magent mentioned you"


def test_a_notice_failure_never_takes_the_writer_down(room, clock, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("the notices table is on fire")

    monkeypatch.setattr(answers, "record_mentions", broken)
    with caplog.at_level(logging.ERROR, logger="wakes.notices.answers"):
        post = say(room.motion, room.justin, "@rosemary @magent hello", clock)
    assert Message.objects.filter(pk=post.pk).exists()
    assert Turn.objects.filter(agent=room.magent).exists()  # the wake still came
    assert "notices" in caplog.text


def test_a_post_with_no_at_and_no_turn_costs_no_statement(room, clock, django_assert_num_queries):
    post = MessageFactory(
        motion=room.motion, author=room.justin, sender="justin", source="web", text="hi all"
    )
    with django_assert_num_queries(0):
        answers.record_notices(post)


# An agent's first reply in a turn woken by Justin's mention: the mention answered (the turn's
# wakes, the notices already made, a mention back this turn?, a savepoint and an insert), the @ look skipped (no @), the last
# speaker (who, already told this turn?) — pinned so a read added per reply shows.
AGENT_REPLY_STATEMENTS = 12


def test_an_agents_reply_costs_a_pinned_number_of_statements(room, clock, django_assert_num_queries):
    say(room.motion, room.justin, "@magent shirts?", clock)
    turn = Turn.objects.get(agent=room.magent)
    answer = MessageFactory(
        motion=room.motion,
        agent=room.magent,
        sender="magent",
        source="runner",
        turn=turn,
        text="Tuesday.",
        created_at=wake_clock.now(),
    )
    with django_assert_num_queries(AGENT_REPLY_STATEMENTS):
        answers.record_notices(answer)
    assert kinds(room.justin) == [("answer", "magent")]


def test_an_at_in_an_agents_earlier_post_of_a_batch_is_a_mention(room, clock):
    say(room.motion, room.rosemary, "@magent who has the shirts?", clock)
    turn = Turn.objects.get(agent=room.magent)
    fields = {
        "motion": room.motion,
        "agent": room.magent,
        "sender": "magent",
        "source": "runner",
        "turn": turn,
        "created_at": wake_clock.now(),
    }
    first = MessageFactory(text="@justin has them", **fields)
    last = MessageFactory(text="I asked him to bring them.", **fields)
    announce([first, last])
    assert [(n.kind, n.answer) for n in Notice.objects.filter(person=room.justin)] == [("mention", first)]
    assert [(n.kind, n.answer) for n in Notice.objects.filter(person=room.rosemary)] == [("answer", last)]


def test_one_recorder_failing_leaves_the_others_working(room, clock, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("mentions are down")

    say(room.motion, room.justin, "@magent shirts?", clock)
    monkeypatch.setattr(answers, "record_mentions", broken)
    answer = reply(Turn.objects.get(agent=room.magent), "@rosemary has them")
    assert [(n.person, n.kind, n.answer) for n in Notice.objects.all()] == [(room.justin, "answer", answer)]
