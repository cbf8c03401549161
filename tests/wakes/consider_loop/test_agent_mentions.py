"""Agents mention agents (issue 32): any post but the agent's own names it, as in memory-lane; an
agent's turn's words and its API posts wake at once, its terminal posts after the grace, under
the usual trust rule, holds and caps; and the chain guard bounds agents waking each other.

Personas: Justin (a person on the web), @abot and @bbot (agents of the Motion "volley"), and the
Motion "elsewhere" where both are members too.
"""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from dataclasses import dataclass

import pytest

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner.turns import build_prompt_at_start
from motion_runner.signals import message_created
from tests.factories import (
    AgentFactory,
    MessageFactory,
    MotionFactory,
    SteerFactory,
    TurnFactory,
    UserFactory,
)
from tests.wakes_support import clock, dials, loop
from wakes.consider_loop.handlers import check_mentions
from wakes.models import MentionWake

pytestmark = pytest.mark.django_db


@dataclass
class Volley:
    motion: object
    elsewhere: object
    abot: object
    bbot: object
    justin: object


@pytest.fixture
def volley(db):
    abot, bbot = AgentFactory(name="abot", listening=False), AgentFactory(name="bbot", listening=False)
    motion, elsewhere = MotionFactory(slug="volley"), MotionFactory(slug="elsewhere")
    for place in (motion, elsewhere):
        place.agents.add(abot, bbot)
    return Volley(motion, elsewhere, abot, bbot, UserFactory(username="justin"))


def person_says(volley, text, clock, *, motion=None):
    message = MessageFactory(
        motion=motion or volley.motion,
        sender="justin",
        author=volley.justin,
        source="web",
        sign_in="ssh",
        text=text,
        created_at=clock.now(),
    )
    message_created.send(sender=Message, message=message)
    return message


def started(turn: Turn, clock) -> Turn:
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.RUNNING, started_at=clock.now())
    turn.refresh_from_db()
    return turn


def turn_says(turn: Turn, text: str, clock, *, source: str = "runner") -> Message:
    """The turn's words, written by the runner (and announced) now."""
    message = MessageFactory(
        motion=turn.motion,
        sender=turn.agent.name,
        agent=turn.agent,
        source=source,
        turn=turn if source == "runner" else None,
        text=text,
        created_at=clock.advance(5),
    )
    message_created.send(sender=Message, message=message)
    return message


def ended(turn: Turn, clock) -> None:
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.FINISHED, ended_at=clock.advance(1))


def queued(agent) -> Turn | None:
    return Turn.objects.filter(agent=agent, status=TurnStatus.QUEUED).first()


def answer(turn: Turn, text: str, clock) -> Message:
    """The turn runs, says `text`, and ends."""
    started(turn, clock)
    said = turn_says(turn, text, clock)
    ended(turn, clock)
    return said


def chain_lines(volley) -> list[str]:
    return list(
        Message.objects.filter(kind=Kind.WAKE, text__contains="woken each other").values_list(
            "text", flat=True
        )
    )


# --- agents mention agents ------------------------------------------------------------------------


def test_an_agents_turn_that_names_another_agent_wakes_it_at_once(volley, clock):
    first = TurnFactory(motion=volley.motion, agent=volley.abot, reason="mention", mode="full")
    started(first, clock)

    turn_says(first, "@bbot can you check the merch sheet?", clock)

    woken = Turn.objects.get(agent=volley.bbot, reason="mention")
    assert woken.status == TurnStatus.QUEUED
    assert woken.mode == "full" and woken.mode_rule == "written by an agent woken with full tools"


def test_a_look_only_agents_mention_wakes_look_only(volley, clock):
    first = TurnFactory(motion=volley.motion, agent=volley.abot, reason="mention", mode="look")
    started(first, clock)

    turn_says(first, "@bbot please deploy", clock)

    woken = Turn.objects.get(agent=volley.bbot, reason="mention")
    assert woken.mode == "look" and woken.mode_rule == "written by an agent woken look-only"


def test_an_agent_naming_itself_wakes_nobody(volley, clock):
    first = started(
        TurnFactory(motion=volley.motion, agent=volley.abot, reason="mention", mode="full"), clock
    )

    turn_says(first, "note to self, @abot: check again later", clock)

    assert not Turn.objects.exclude(pk=first.pk).exists()
    assert not MentionWake.objects.exists()


def test_an_agents_post_through_the_api_wakes_the_agent_it_names(volley, clock):
    first = started(
        TurnFactory(motion=volley.motion, agent=volley.abot, reason="mention", mode="full"), clock
    )

    turn_says(first, "@bbot over to you", clock, source="api")

    assert Turn.objects.get(agent=volley.bbot, reason="mention").mode_rule == "posted with an API key"


def test_an_agents_terminal_post_waits_for_the_grace_before_it_wakes(volley, clock):
    MessageFactory(
        motion=volley.motion,
        sender="abot",
        agent=volley.abot,
        source="terminal",
        text="@bbot ping",
        created_at=clock.now(),
    )
    message_created.send(sender=Message, message=Message.objects.get(text="@bbot ping"))
    assert not Turn.objects.filter(agent=volley.bbot).exists()

    clock.advance(601)
    assert check_mentions(dispatch=False)["woken"] == 1
    assert Turn.objects.get(agent=volley.bbot).mode_rule == "a terminal session's turn"


def test_a_machinery_line_that_names_an_agent_wakes_nobody(volley, clock):
    line = MessageFactory(
        motion=volley.motion,
        sender="tool-result",
        source="api",
        text="grep found @bbot",
        created_at=clock.now(),
    )
    message_created.send(sender=Message, message=line)

    assert not Turn.objects.exists()


@pytest.mark.parametrize("listening", ["on", "mentions"])
def test_an_agents_mention_wakes_under_every_listening_that_lets_mentions_through(volley, clock, listening):
    SteerFactory(motion=volley.motion, agent=volley.bbot, setting="listening", value=listening)
    first = started(
        TurnFactory(motion=volley.motion, agent=volley.abot, reason="mention", mode="full"), clock
    )

    turn_says(first, "@bbot your turn", clock)

    assert Turn.objects.filter(agent=volley.bbot, reason="mention").count() == 1


def test_an_agents_mention_of_an_agent_not_listening_here_is_held(volley, clock):
    SteerFactory(motion=volley.motion, agent=volley.bbot, setting="listening", value="off")
    first = started(
        TurnFactory(motion=volley.motion, agent=volley.abot, reason="mention", mode="full"), clock
    )

    turn_says(first, "@bbot your turn", clock)

    assert not Turn.objects.filter(agent=volley.bbot).exists()
    assert MentionWake.objects.get(agent=volley.bbot).status == MentionWake.Status.HELD


def test_the_woken_agents_wake_says_which_agent_asked_and_what_it_said(volley, clock):
    first = started(
        TurnFactory(motion=volley.motion, agent=volley.abot, reason="mention", mode="full"), clock
    )

    turn_says(first, "@bbot is the van booked for Friday?", clock)

    woken = Turn.objects.get(agent=volley.bbot, reason="mention")
    build_prompt_at_start(woken)
    assert "abot mentioned you (@bbot)" in woken.prompt
    assert "@bbot is the van booked for Friday?" in woken.prompt


# --- the chain guard ---------------------------------------------------------------------------------


def run_volley(volley, clock, turns: int) -> list[Turn]:
    """Justin asks @abot; then each woken agent answers naming the other, `turns` times."""
    person_says(volley, "@abot start the setlist with bbot", clock)
    ran = []
    agents = [volley.abot, volley.bbot]
    for index in range(turns):
        agent, other = agents[index % 2], agents[(index + 1) % 2]
        turn = queued(agent)
        if turn is None:
            break
        answer(turn, f"@{other.name} over to you ({index})", clock)
        ran.append(turn)
    return ran


def test_agents_waking_each_other_stop_after_six_turns_with_one_line_naming_both(volley, clock):
    ran = run_volley(volley, clock, turns=12)

    # Justin's ask woke @abot; then six agent-woken turns; the seventh mention is held.
    assert len(ran) == 7
    assert chain_lines(volley) == [
        "@abot and @bbot have woken each other 6 times in a row with no person's post between: "
        "@bbot is not woken by abot's mention. A person's post here lets them go on."
    ]
    held = MentionWake.objects.get(status=MentionWake.Status.CHAINED)
    assert held.agent == volley.bbot and held.turn is None


def test_the_chain_line_is_said_once_however_many_mentions_are_held(volley, clock):
    run_volley(volley, clock, turns=12)
    last = Turn.objects.filter(agent=volley.abot).order_by("-pk").first()

    turn_says(last, "@bbot are you there? @bbot?", clock)
    turn_says(last, "@bbot hello?", clock)

    assert len(chain_lines(volley)) == 1
    assert MentionWake.objects.filter(status=MentionWake.Status.CHAINED).count() == 3


def test_a_persons_post_lets_a_held_chain_go_on_and_counts_from_zero(volley, clock):
    run_volley(volley, clock, turns=12)

    person_says(volley, "fine, carry on", clock)

    resumed = queued(volley.bbot)
    assert resumed is not None and MentionWake.objects.get(turn=resumed).status == MentionWake.Status.WOKEN
    answer(resumed, "@abot where were we", clock)
    assert queued(volley.abot) is not None  # counted from zero again


def test_a_chain_held_mention_is_not_considered_by_the_loop_either(volley, clock, loop):
    volley.abot.listening = True
    volley.abot.save()
    run_volley(volley, clock, turns=12)
    before = Turn.objects.count()

    loop.run(30)

    assert Turn.objects.count() == before


def test_the_bound_is_a_dial(volley, clock):
    dials(agent_chain_turns=2)

    ran = run_volley(volley, clock, turns=12)

    assert len(ran) == 3  # Justin's, then two agent-woken
    assert "woken each other 2 times" in chain_lines(volley)[0]


def test_agents_bouncing_between_motions_are_one_chain(volley, clock):
    """Each answers in the other Motion through the API while its turn runs there: one chain."""
    dials(agent_chain_turns=3)
    person_says(volley, "@abot start with bbot", clock)
    places = [volley.motion, volley.elsewhere]
    agents = [volley.abot, volley.bbot]
    for index in range(6):
        agent, other = agents[index % 2], agents[(index + 1) % 2]
        turn = queued(agent)
        if turn is None:
            break
        started(turn, clock)
        where = places[(index + 1) % 2]
        post = MessageFactory(
            motion=where,
            sender=agent.name,
            agent=agent,
            source="api",
            text=f"@{other.name} go",
            created_at=clock.advance(5),
        )
        message_created.send(sender=Message, message=post)
        ended(turn, clock)

    mention_turns = Turn.objects.filter(reason="mention").count()
    assert mention_turns == 4  # Justin's, then three agent-woken across the two Motions
    assert MentionWake.objects.filter(status=MentionWake.Status.CHAINED).count() == 1


def test_the_hourly_mention_cap_counts_an_agents_motions_together(volley, clock):
    dials(mention_wakes_per_hour=2)
    person_says(volley, "@bbot one", clock)
    person_says(volley, "@bbot two", clock.advance(60) and clock, motion=volley.elsewhere)
    for turn in Turn.objects.filter(agent=volley.bbot):
        answer(turn, "done", clock)

    person_says(volley, "@bbot three", clock.advance(60) and clock)

    assert Turn.objects.filter(agent=volley.bbot).count() == 2
    assert MentionWake.objects.get(message__text="@bbot three").status == MentionWake.Status.WAITING


def test_the_motions_menus_show_the_bound_in_force_here(volley, clock, client):
    from wakes.models import DialOverride

    DialOverride.objects.create(motion=volley.motion, agent_chain_turns=4)
    client.force_login(volley.justin)

    here = client.get(f"/api/motions/{volley.motion.slug}/steer/").json()
    there = client.get(f"/api/motions/{volley.elsewhere.slug}/steer/").json()

    assert here["motion"]["agent_chain_turns"] == 4
    assert there["motion"]["agent_chain_turns"] == 6


def test_a_chain_held_mention_is_among_the_motions_holds(volley, clock, client):
    run_volley(volley, clock, turns=12)
    client.force_login(volley.justin)

    (held,) = client.get(f"/api/motions/{volley.motion.slug}/holds/").json()["holds"]

    assert (held["agent"], held["by"]) == ("bbot", "abot")
    assert (
        held["reason"] == "@abot and @bbot woke each other 6 times in a row; a person's post lets them go on"
    )


def test_a_person_posting_in_the_other_motion_of_a_chain_resets_it(volley, clock):
    """The chain is followed back across Motions; a person's word in either Motion ends it."""
    dials(agent_chain_turns=1)  # without the person's word, the API post would be held
    person_says(volley, "@abot start with bbot", clock)
    first = queued(volley.abot)
    started(first, clock)
    turn_says(first, "@bbot go", clock)
    ended(first, clock)
    started(queued(volley.bbot), clock)
    person_says(volley, "just watching", clock, motion=volley.elsewhere)
    api_post = MessageFactory(
        motion=volley.elsewhere,
        sender="bbot",
        agent=volley.bbot,
        source="api",
        text="@abot go",
        created_at=clock.advance(5),
    )
    message_created.send(sender=Message, message=api_post)

    assert not MentionWake.objects.filter(status=MentionWake.Status.CHAINED).exists()
    assert queued(volley.abot) is not None


# --- the chain guard with commands and waiting mentions in the thread (issue 39) -----------------


def queued_mention(agent) -> Turn | None:
    return Turn.objects.filter(agent=agent, reason="mention", status=TurnStatus.QUEUED).first()


def key_volley(volley, clock, turns: int) -> list[Turn]:
    """Each woken agent's turn ends with nothing said; the agent then posts with its key, outside
    any turn, naming the other (`turns` times)."""
    agents = [volley.abot, volley.bbot]
    ran = []
    for index in range(turns):
        agent, other = agents[index % 2], agents[(index + 1) % 2]
        turn = queued_mention(agent)
        if turn is None:
            break
        ended(turn, clock)
        post = MessageFactory(
            motion=volley.motion,
            sender=agent.name,
            agent=agent,
            source="api",
            text=f"@{other.name} over to you ({index})",
            created_at=clock.advance(5),
        )
        message_created.send(sender=Message, message=post)
        ran.append(turn)
    return ran


def test_a_command_typed_first_leaves_the_chain_counted(volley, clock):
    """`@abot /context` leaves a mention record with no turn: the volley after it is still held."""
    person_says(volley, "@abot /context", clock)
    assert MentionWake.objects.get(message__text="@abot /context").turn is None

    ran = run_volley(volley, clock, turns=12)

    assert len(ran) == 7
    assert len(chain_lines(volley)) == 1
    assert MentionWake.objects.filter(status=MentionWake.Status.CHAINED).count() == 1


def test_agents_posting_with_their_keys_outside_turns_are_held_after_a_command(volley, clock):
    person_says(volley, "@abot /context", clock)
    person_says(volley, "@abot start the setlist with bbot", clock)

    ran = key_volley(volley, clock, turns=12)

    assert len(ran) == 7  # Justin's ask, then six woken by the agents' key posts
    assert chain_lines(volley) == [
        "@abot and @bbot have woken each other 6 times in a row with no person's post between: "
        "@bbot is not woken by abot's mention. A person's post here lets them go on."
    ]


def test_a_waiting_terminal_mention_leaves_the_chain_counted(volley, clock):
    waiting = MessageFactory(
        motion=volley.motion, sender="justin", source="terminal", text="@bbot later", created_at=clock.now()
    )
    message_created.send(sender=Message, message=waiting)
    person_says(volley, "@abot start the setlist with bbot", clock)

    ran = key_volley(volley, clock, turns=12)

    assert len(ran) == 7
    assert len(chain_lines(volley)) == 1


def test_an_hourly_cap_of_zero_holds_the_mention_and_says_so(volley, clock):
    """`mention_wakes_per_hour=0` raised an IndexError on the mention path (issue 39)."""
    dials(mention_wakes_per_hour=0)

    person_says(volley, "@bbot one", clock)

    assert not Turn.objects.filter(agent=volley.bbot).exists()
    assert MentionWake.objects.get(message__text="@bbot one").status == MentionWake.Status.WAITING
    assert Message.objects.filter(kind=Kind.WAKE, text__contains="hourly cap of mention wakes is 0").exists()


# --- mentions during a scram (issue 39.4) --------------------------------------------------------


def scram(raise_it: bool = True) -> None:
    from io import StringIO

    from django.core.management import call_command

    if raise_it:
        call_command("scram", reason="runaway spend", by="ops", stdout=StringIO())
    else:
        call_command("scram", lift=True, stdout=StringIO())


def test_a_mention_typed_in_a_terminal_during_a_scram_is_answered_once_after_the_lift(volley, clock):
    scram()
    typed = MessageFactory(
        motion=volley.motion,
        sender="justin",
        source="terminal",
        text="@bbot are the shirts in?",
        created_at=clock.now(),
    )
    message_created.send(sender=Message, message=typed)
    clock.advance(700)
    check_mentions(dispatch=False)

    assert not Turn.objects.exists()
    assert MentionWake.objects.get(message=typed).status == MentionWake.Status.HELD
    (said,) = Message.objects.filter(kind=Kind.WAKE, text__contains="scram")
    assert said.text.startswith("@bbot is not woken while a scram holds: justin's mention is held")

    scram(raise_it=False)
    check_mentions(dispatch=False)
    check_mentions(dispatch=False)

    (turn,) = Turn.objects.filter(agent=volley.bbot)
    assert turn.woken_by == typed
    assert MentionWake.objects.get(message=typed).turn == turn


def test_an_agents_mention_during_a_scram_is_answered_once_after_the_lift(volley, clock):
    scram()
    post = MessageFactory(
        motion=volley.motion,
        sender="abot",
        agent=volley.abot,
        source="api",
        text="@bbot go",
        created_at=clock.now(),
    )
    message_created.send(sender=Message, message=post)
    message_created.send(sender=Message, message=post)  # heard twice: held once

    assert MentionWake.objects.filter(message=post).count() == 1
    scram(raise_it=False)
    check_mentions(dispatch=False)
    check_mentions(dispatch=False)

    assert Turn.objects.filter(agent=volley.bbot).count() == 1


def test_a_command_typed_during_a_scram_is_answered_as_not_run_and_never_run_after(volley, clock):
    scram()
    typed = MessageFactory(
        motion=volley.motion,
        sender="justin",
        source="terminal",
        text="@bbot /context",
        created_at=clock.now(),
    )
    message_created.send(sender=Message, message=typed)
    message_created.send(sender=Message, message=typed)  # heard twice: said once

    record = MentionWake.objects.get(message=typed)
    assert record.status == MentionWake.Status.LET_GO and "scram" in record.hold
    (said,) = Message.objects.filter(kind=Kind.WAKE, text__contains="was not run")
    assert said.text.startswith("justin's /context for @bbot was not run: a scram holds every wake")

    scram(raise_it=False)
    clock.advance(700)
    check_mentions(dispatch=False)
    assert not Turn.objects.exists()
