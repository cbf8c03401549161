"""The core's two calls on a post's mention path: what it knows of the post, read in one call
(`read_post_facts`), and what wakes decided, written in one call and one transaction
(`answer_post`)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from motion_runner.models import Kind, Message, Turn
from motion_runner.runner import post_answers
from motion_runner.runner.post_answers import Line, TurnOrder, answer_post
from motion_runner.runner.post_facts import read_post_facts
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def post():
    motion = MotionFactory(slug="jams")
    motion.agents.add(AgentFactory(name="magent"))
    demo = UserFactory(username="demo")
    return MessageFactory(motion=motion, sender="demo", author=demo, source="web", text="@magent /usage")


def maintenance(agent) -> TurnOrder:
    return TurnOrder(
        agent=agent,
        prompt="/usage",
        reason="command",
        reason_detail="/usage asked by demo",
        mode="look",
        mode_rule="a maintenance command by demo",
        effort="low",
        why="/usage asked by demo (maintenance)",
    )


def test_a_post_asked_for_nothing_reads_nothing(post, django_assert_num_queries):
    with django_assert_num_queries(0):
        facts = read_post_facts(post)
    assert not facts.first_run and not facts.hosted


@override_settings(DEBUG=True, MOTION_RUNNER_FIRST_RUN_GRANTS=["demo"])
def test_the_first_run_accounts_grant_is_read_when_asked(post):
    assert read_post_facts(post, first_run=True).first_run


@override_settings(DEBUG=True, MOTION_RUNNER_FIRST_RUN_GRANTS=["someone-else"])
def test_another_accounts_post_has_no_first_run_grant(post):
    assert not read_post_facts(post, first_run=True).first_run


def test_the_context_of_an_agent_with_no_session_here_reads_none(post):
    magent = post.motion.agents.get()
    assert read_post_facts(post, context_for=[magent.pk], context_window=200_000).context == {magent.pk: None}


def test_a_turn_is_queued_woken_by_the_post_with_its_wake_line(post):
    magent = post.motion.agents.get()
    turn = answer_post(post, turn=maintenance(magent), dispatch=False)
    assert (turn.woken_by, turn.prompt, turn.mode) == (post, "/usage", "look")
    line = Message.objects.get(turn=turn, kind=Kind.WAKE)
    assert line.text.startswith("@magent woke: /usage asked by demo (maintenance) · look-only")


def test_the_lines_are_said_once_each_by_their_ids(post):
    magent = post.motion.agents.get()
    lines = [Line("not run: a scram holds", "11111111-1111-4111-8111-111111111111", magent)]
    answer_post(post, lines)
    answer_post(post, lines)
    assert Message.objects.filter(motion=post.motion, kind=Kind.WAKE).count() == 1


def test_a_turn_that_cannot_be_queued_leaves_no_line_said_before_it(post, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(post_answers, "enqueue_turn", broken)
    magent = post.motion.agents.get()
    lines = [Line("said with the turn", "22222222-2222-4222-8222-222222222222", magent)]
    with pytest.raises(RuntimeError):
        answer_post(post, lines, maintenance(magent), dispatch=False)
    assert not Message.objects.filter(motion=post.motion, kind=Kind.WAKE).exists()
    assert not Turn.objects.exists()
