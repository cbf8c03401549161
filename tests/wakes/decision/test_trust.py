"""Every trust path, with the personas the seed names."""

from __future__ import annotations

import pytest
from django.test import override_settings

from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory
from wakes.decision.trust import FULL, LOOK, decide

pytestmark = pytest.mark.django_db


@pytest.fixture
def motion():
    return MotionFactory(slug="wake-modes")


def post_by_person(motion, sign_in: str, username: str = "justin"):
    person = UserFactory(username=username)
    return MessageFactory(motion=motion, author=person, sender=username, source="web", sign_in=sign_in)


def post_by_agent_woken(motion, mode: str):
    agent = AgentFactory(name=f"agent-{mode}")
    turn = TurnFactory(motion=motion, agent=agent, mode=mode)
    return MessageFactory(motion=motion, agent=agent, sender=agent.name, source="runner", turn=turn)


def test_a_person_signed_in_with_an_ssh_key_wakes_with_full_tools(motion):
    decision = decide(post_by_person(motion, "ssh"))
    assert decision.mode == FULL
    assert "SSH key" in decision.rule


def test_a_wiki_sign_in_wakes_look_only(motion):
    decision = decide(post_by_person(motion, "wiki", username="wikifan"))
    assert decision.mode == LOOK
    assert "wiki" in decision.rule


@override_settings(WAKE_FULL_TOOLS_FOR=["Rosalind"])
def test_someone_named_in_full_tools_for_wakes_with_full_tools(motion):
    decision = decide(post_by_person(motion, "wiki", username="Rosalind"))
    assert decision.mode == FULL
    assert "full_tools_for" in decision.rule


@override_settings(WAKE_FULL_TOOLS_FOR=["Rosalind"])
def test_an_account_whose_name_differs_only_in_case_is_not_the_one_named(motion):
    # Usernames are compared exactly by the user model: "rosalind" is a separate account.
    decision = decide(post_by_person(motion, "wiki", username="rosalind"))
    assert decision.mode == LOOK


def test_an_agent_woken_with_full_tools_passes_them_on(motion):
    decision = decide(post_by_agent_woken(motion, FULL))
    assert decision.mode == FULL
    assert "agent woken with full tools" in decision.rule


def test_an_agent_woken_look_only_wakes_look_only(motion):
    assert decide(post_by_agent_woken(motion, LOOK)).mode == LOOK


def test_a_terminal_sessions_turn_wakes_look_only_even_from_a_trusted_agent(motion):
    agent = AgentFactory(name="magent")
    message = MessageFactory(motion=motion, agent=agent, sender="magent", source="terminal")
    decision = decide(message)
    assert decision.mode == LOOK
    assert "terminal" in decision.rule


def test_a_watch_line_wakes_look_only(motion):
    decision = decide(MessageFactory(motion=motion, sender="watch", source="watch", kind="watch"))
    assert (decision.mode, decision.rule) == (LOOK, "a watch line")


@override_settings(WAKE_FULL_TOOLS_FOR=[])
def test_a_post_by_api_key_wakes_look_only(motion):
    agent = AgentFactory(name="outside-bot")
    decision = decide(MessageFactory(motion=motion, agent=agent, sender="outside-bot", source="api"))
    assert (decision.mode, decision.rule) == (LOOK, "posted with an API key")


def test_an_outsiders_post_without_a_sign_in_wakes_look_only(motion):
    assert decide(MessageFactory(motion=motion, sender="anon", source="web")).mode == LOOK


def test_a_post_typed_on_memory_lanes_page_with_an_ssh_key_device_wakes_with_full_tools(motion):
    # memory-lane's composer: no user of ours, the sign-in its device vouched for.
    post = MessageFactory(
        motion=motion, author=None, sender="justin", source="web", sign_in="ssh", source_file="memory-lane"
    )
    assert decide(post).mode == FULL


def test_an_authorless_web_post_that_did_not_come_from_the_host_never_vouches(motion):
    # e.g. a person's post kept after their user was deleted (author set to NULL).
    post = MessageFactory(motion=motion, author=None, sender="justin", source="web", sign_in="ssh")
    assert decide(post).mode == LOOK


def test_a_web_post_with_neither_an_author_nor_a_sign_in_wakes_look_only(motion):
    post = MessageFactory(motion=motion, author=None, sender="justin", source="web", sign_in="")
    assert decide(post).mode == LOOK


def test_no_waking_post_wakes_look_only():
    assert (decide(None).mode, decide(None).rule) == (LOOK, "no waking post")


def test_a_burst_reads_the_full_tools_for_dial_once(motion):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from wakes.decision.trust import decide_burst

    posts = [post_by_person(motion, "wiki", username=f"visitor{n}") for n in range(8)]
    with CaptureQueriesContext(connection) as queries:
        decision = decide_burst(posts)
    assert decision.mode == LOOK
    assert sum("wakes_dials" in q["sql"] for q in queries.captured_queries) == 1


@override_settings(WAKE_FULL_TOOLS_FOR=["alpha"])
def test_an_agent_named_in_full_tools_for_does_not_vouch_from_a_look_only_turn(motion):
    alpha = AgentFactory(name="alpha")
    look_only_turn = TurnFactory(motion=motion, agent=alpha, mode=LOOK)
    reply = MessageFactory(motion=motion, agent=alpha, sender="alpha", source="runner", turn=look_only_turn)
    decision = decide(reply)
    assert (decision.mode, decision.rule) == (LOOK, "written by an agent woken look-only")


@override_settings(WAKE_FULL_TOOLS_FOR=["alpha"])
def test_an_agent_named_in_full_tools_for_vouches_from_a_full_tools_turn(motion):
    alpha = AgentFactory(name="alpha")
    full_turn = TurnFactory(motion=motion, agent=alpha, mode=FULL)
    reply = MessageFactory(motion=motion, agent=alpha, sender="alpha", source="runner", turn=full_turn)
    assert decide(reply).mode == FULL


# --- issue 30, item 7: full_tools_for names a person, not a key -------------------------------


@override_settings(WAKE_FULL_TOOLS_FOR=["alpha"])
def test_a_post_by_api_key_never_vouches_even_under_a_name_in_full_tools_for(motion):
    alpha = AgentFactory(name="alpha")
    decision = decide(MessageFactory(motion=motion, agent=alpha, sender="alpha", source="api"))
    assert (decision.mode, decision.rule) == (LOOK, "posted with an API key")


@override_settings(WAKE_FULL_TOOLS_FOR=["rosalind"])
def test_a_person_named_in_full_tools_for_vouches_with_a_password_sign_in(motion):
    # Decided: the admin's naming is of the person, whatever the sign-in (docs/security.md).
    assert decide(post_by_person(motion, "password", username="rosalind")).mode == FULL


@override_settings(WAKE_FULL_TOOLS_FOR=["rosalind"])
def test_an_authorless_web_post_under_a_name_in_full_tools_for_does_not_vouch(motion):
    post = MessageFactory(motion=motion, author=None, sender="rosalind", source="web", sign_in="")
    assert decide(post).mode == LOOK


# --- issue 30, item 13: a burst wakes with full tools only if every post in it would ------------


def test_a_burst_whose_untrusted_post_is_not_last_wakes_look_only(motion):
    from wakes.decision.trust import decide_burst

    burst = [post_by_person(motion, "ssh"), post_by_person(motion, "wiki", username="wikifan")]
    burst.append(post_by_person(motion, "ssh", username="rosemary"))  # a trusted post ends it

    decision = decide_burst(burst)

    assert decision.mode == LOOK
    assert decision.rule == "typed by a person signed in with wiki (one of 3 new posts)"


def test_a_burst_whose_untrusted_post_is_first_wakes_look_only(motion):
    from wakes.decision.trust import decide_burst

    burst = [post_by_agent_woken(motion, LOOK), post_by_person(motion, "ssh")]

    assert decide_burst(burst).mode == LOOK


def test_a_burst_of_trusted_posts_wakes_with_full_tools(motion):
    from wakes.decision.trust import decide_burst

    burst = [post_by_person(motion, "ssh"), post_by_agent_woken(motion, FULL)]

    assert decide_burst(burst).mode == FULL


def test_a_burst_of_one_untrusted_post_says_its_own_rule(motion):
    from wakes.decision.trust import decide_burst

    decision = decide_burst([post_by_person(motion, "wiki", username="wikifan")])

    assert (decision.mode, decision.rule) == (LOOK, "typed by a person signed in with wiki")


def test_an_empty_burst_is_no_waking_post():
    from wakes.decision.trust import decide_burst

    assert decide_burst([]) == decide(None)
