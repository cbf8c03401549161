"""Handoff blocks (issue 33 item 1): an agent's ```handoff block in its reply is posted in the
Motion it names, as a line saying where it came from and linking the reply; the source thread says
where it went; the next wake there carries it. A Motion the agent and whoever woke it may not both
post in gets a clear line back and nothing. Idempotent by the reply's id.

Personas (tests/wakes_support.py): Justin and Rosemary post from the web; @magent is an agent of
"cryptograss" and of "jams"; "backstage" is members-only (Rosemary is its one person) and @magent
is its agent too; @codey is an agent of none of them."""

# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)
from __future__ import annotations

import pytest

from motion_runner.models import Kind, Message, Source, Turn
from motion_runner.runner.turns import build_prompt_at_start
from motion_runner.signals import message_created
from tests.factories import MessageFactory, MotionFactory, TurnFactory
from tests.wakes_support import clock, dials, room, say
from wakes.turn.handoff import blocks_in
from wakes.turn.wake_lines import guidance

pytestmark = pytest.mark.django_db

BLOCK = """Sure, I'll take it over there.

```handoff
to: jams
about: the Saturday setlist
---
Settled: open with Salt Creek. Open: who brings the banjo.
```
"""


@pytest.fixture
def jams(room):
    motion = MotionFactory(slug="jams", title="Jams and events")
    motion.agents.add(room.magent)
    return motion


@pytest.fixture
def backstage(room):
    motion = MotionFactory(slug="backstage", title="Backstage", visibility="members")
    motion.agents.add(room.magent)
    motion.people.add(room.rosemary)
    return motion


def woken_by(room, clock, who, text="@magent take this to jams") -> Turn:
    post = say(room.motion, who, text, clock.advance(1) and clock)
    return TurnFactory(motion=room.motion, agent=room.magent, reason="mention", woken_by=post)


def reply(turn: Turn, text: str, clock) -> Message:
    """The agent's words, written and announced as the write path does."""
    message = MessageFactory(
        motion=turn.motion,
        sender=turn.agent.name,
        agent=turn.agent,
        source=Source.RUNNER,
        turn=turn,
        text=text,
        created_at=clock.advance(1),
    )
    message_created.send(sender=Message, message=message)
    return message


def handoffs_in(motion) -> list[Message]:
    return list(Message.objects.filter(motion=motion, raw__handoff__isnull=False))


def lines_in(motion) -> list[str]:
    return list(Message.objects.filter(motion=motion, kind=Kind.WAKE).values_list("text", flat=True))


def test_a_handoff_block_posts_its_context_in_the_motion_it_names(room, jams, clock):
    source = reply(woken_by(room, clock, room.justin), BLOCK, clock)

    [line] = handoffs_in(jams)
    assert line.text.startswith("↪ Handed over by @magent from “Cryptograss” — the Saturday setlist")
    assert f"(/motions/cryptograss/#m-{source.pk})" in line.text  # links where it was said
    assert "Settled: open with Salt Creek. Open: who brings the banjo." in line.text
    assert line.source == Source.SYSTEM and line.agent == room.magent


def test_the_source_thread_says_where_it_went_and_links_it(room, jams, clock):
    reply(woken_by(room, clock, room.justin), BLOCK, clock)

    [line] = handoffs_in(jams)
    assert any(
        text.startswith("@magent took this to “Jams and events” (the Saturday setlist)")
        and text.endswith(f": /motions/jams/#m-{line.pk}")
        for text in lines_in(room.motion)
    )


def test_the_next_wake_there_carries_it(room, jams, clock):
    reply(woken_by(room, clock, room.justin), BLOCK, clock)

    post = say(jams, room.rosemary, "@magent what did we settle?", clock.advance(60) and clock)
    turn = Turn.objects.get(motion=jams, agent=room.magent, reason="mention")
    build_prompt_at_start(turn)  # as the runner does when the turn starts

    assert "Context handed to you here from another Motion" in turn.prompt
    assert "Settled: open with Salt Creek." in turn.prompt
    assert turn.prompt.index("Salt Creek") > turn.prompt.index("</motion-wake>")  # content, outside the posts
    assert post.text in turn.prompt


def test_once_the_agent_spoke_there_the_handoff_is_not_carried_again(room, jams, clock):
    reply(woken_by(room, clock, room.justin), BLOCK, clock)
    say(jams, room.magent, "Salt Creek it is.", clock.advance(60) and clock)

    say(jams, room.rosemary, "@magent and the banjo?", clock.advance(60) and clock)
    turn = Turn.objects.get(motion=jams, agent=room.magent, reason="mention")
    build_prompt_at_start(turn)  # as the runner does when the turn starts

    assert "Context handed to you here" not in turn.prompt


def test_the_reply_delivered_again_hands_nothing_over_twice(room, jams, clock):
    source = reply(woken_by(room, clock, room.justin), BLOCK, clock)

    message_created.send(sender=Message, message=source)  # the importer, a retry, the stream API

    assert len(handoffs_in(jams)) == 1
    assert len([t for t in lines_in(room.motion) if t.startswith("@magent took this")]) == 1


def test_a_motion_the_agent_may_not_reach_gets_a_clear_line_back_and_nothing(room, clock):
    elsewhere = MotionFactory(slug="elsewhere")  # @magent is not its agent
    text = BLOCK.replace("to: jams", "to: elsewhere")

    reply(woken_by(room, clock, room.justin), text, clock)

    assert handoffs_in(elsewhere) == []
    assert (
        "Not handed over to “elsewhere”: no Motion by that name that @magent and justin may both post in. "
        "Nothing was posted there."
    ) in lines_in(room.motion)


def test_a_motion_that_does_not_exist_reads_the_same_as_one_out_of_reach(room, clock):
    reply(woken_by(room, clock, room.justin), BLOCK.replace("to: jams", "to: nowhere"), clock)

    assert (
        "Not handed over to “nowhere”: no Motion by that name that @magent and justin may both post in. "
        "Nothing was posted there."
    ) in lines_in(room.motion)


def test_a_motion_the_author_of_the_wake_may_not_post_in_takes_nothing(room, backstage, clock):
    text = BLOCK.replace("to: jams", "to: backstage")

    reply(woken_by(room, clock, room.justin), text, clock)  # Justin is not one of backstage's people

    assert handoffs_in(backstage) == []
    assert any(t.startswith("Not handed over to “backstage”") for t in lines_in(room.motion))


def test_when_the_author_may_post_there_too_it_is_handed_over(room, backstage, clock):
    text = BLOCK.replace("to: jams", "to: backstage")

    reply(woken_by(room, clock, room.rosemary), text, clock)

    assert len(handoffs_in(backstage)) == 1


def test_the_agent_itself_must_be_able_to_post_where_it_hands_over(room, clock):
    town = MotionFactory(slug="town", visibility="public")  # @magent reads it, is not its agent
    text = BLOCK.replace("to: jams", "to: town")

    reply(woken_by(room, clock, room.justin), text, clock)  # Justin may post there: only @magent may not

    assert handoffs_in(town) == []
    assert any(t.startswith("Not handed over to “town”") for t in lines_in(room.motion))


def quiet_turn(motion, agent) -> Turn:
    """A wake no post woke: a long quiet (an arrival alike)."""
    return TurnFactory(motion=motion, agent=agent, reason="quiet")


def test_a_quiet_wake_hands_nothing_to_a_motion_whose_readers_may_not_read_here(room, jams, backstage, clock):
    text = BLOCK.replace("about: the Saturday setlist", "for: codey\nabout: the Saturday setlist")
    jams.agents.add(room.codey)

    reply(quiet_turn(backstage, room.magent), text, clock)  # members-only, into a signed-in Motion

    assert handoffs_in(jams) == []
    assert (
        "Not handed over to “jams”: no post woke this turn, and there is no Motion by that name that "
        "@magent may post in whose every reader may read this one. Nothing was posted there."
    ) in lines_in(backstage)


def test_a_quiet_wake_hands_nothing_to_a_public_motion(room, backstage, clock):
    town = MotionFactory(slug="town", visibility="public")
    town.agents.add(room.magent)

    reply(quiet_turn(backstage, room.magent), BLOCK.replace("to: jams", "to: town"), clock)

    assert handoffs_in(town) == []


def test_a_quiet_wake_hands_over_where_every_reader_may_read_here(room, backstage, clock):
    reply(quiet_turn(room.motion, room.magent), BLOCK.replace("to: jams", "to: backstage"), clock)

    assert len(handoffs_in(backstage)) == 1  # Rosemary and @magent read Cryptograss already


def test_a_watch_line_cannot_send_the_agents_words_elsewhere(room, jams, clock):
    line = say(room.motion, room.justin, "Talk:Merch changed", clock, source="watch", kind="watch")
    turn = TurnFactory(motion=room.motion, agent=room.magent, reason="watch", woken_by=line)

    reply(turn, BLOCK, clock)

    assert handoffs_in(jams) == []
    assert any("has no author who could be asked" in t for t in lines_in(room.motion))


def test_a_persons_block_is_only_text(room, jams, clock):
    say(room.motion, room.justin, BLOCK, clock)

    assert handoffs_in(jams) == []


def test_the_motion_may_be_named_on_the_fence_line():
    [block] = blocks_in("```handoff to: #Jams\nabout: setlist\n---\nopen with Salt Creek\n```")

    assert (block.to, block.about, block.context) == ("jams", "setlist", "open with Salt Creek")


def test_a_block_naming_no_motion_is_none():
    assert blocks_in("```handoff\nabout: nothing\n---\ntext\n```") == []


def test_wakes_say_how_to_hand_off_and_a_dial_turns_it_off(room):
    assert any(line.startswith("Asked to take this to another Motion") for line in guidance())

    dials(handoff_how="")

    assert not any("handoff" in line for line in guidance())


PULLED = """I read #jams over the past twelve hours; here is what matters for us.

```handoff
from: jams
about: the setlist, as jams left it
---
Jams settled on Salt Creek to open.
```
"""


def brought_in(motion) -> list[Message]:
    return list(Message.objects.filter(motion=motion, raw__handoff__pulled=True))


def test_a_from_block_brings_the_context_in_here(room, jams, clock):
    source = reply(woken_by(room, clock, room.justin, "@magent what did jams settle?"), PULLED, clock)

    [line] = brought_in(room.motion)
    assert line.text.startswith(
        "↩ Brought in by @magent from “Jams and events” — the setlist, as jams left it"
    )
    assert f"(/motions/cryptograss/#m-{source.pk})" in line.text
    assert "Jams settled on Salt Creek to open." in line.text
    assert handoffs_in(jams) == []  # nothing of it is posted there


def test_the_motion_it_came_from_says_it_was_taken(room, jams, clock):
    reply(woken_by(room, clock, room.justin, "@magent what did jams settle?"), PULLED, clock)

    [line] = brought_in(room.motion)
    assert (
        f"@magent took this to “Cryptograss” (the setlist, as jams left it): /motions/cryptograss/#m-{line.pk}"
        in (lines_in(jams))
    )


def test_what_was_brought_in_is_for_the_agent_it_names_here(room, jams, clock):
    room.motion.agents.add(room.codey)
    jams.agents.add(room.codey)  # a reader here: brought in only from what it may read too
    text = PULLED.replace("about: the setlist", "for: codey\nabout: the setlist")
    reply(woken_by(room, clock, room.justin, "@magent what did jams settle?"), text, clock)

    [line] = brought_in(room.motion)
    assert line.raw["handoff"]["for"] == "codey"  # the next wake of @codey here carries it (handed_over)


def test_nothing_is_brought_in_from_a_motion_some_reader_here_may_not_read(room, backstage, clock):
    text = PULLED.replace("from: jams", "from: backstage")
    reply(woken_by(room, clock, room.rosemary, "@magent what did backstage settle?"), text, clock)

    assert brought_in(room.motion) == []
    assert lines_in(backstage) == []
    assert any(
        t.startswith("Not brought in from “backstage”") and "Nothing was brought in." in t
        for t in lines_in(room.motion)
    )


def test_nothing_is_brought_in_from_a_motion_another_agent_here_may_not_read(room, jams, clock):
    room.motion.agents.add(room.codey)  # @codey reads Cryptograss; it is none of jams' agents

    reply(woken_by(room, clock, room.justin, "@magent what did jams settle?"), PULLED, clock)

    assert brought_in(room.motion) == []


def test_a_from_block_brought_in_again_brings_nothing_twice(room, jams, clock):
    source = reply(woken_by(room, clock, room.justin, "@magent what did jams settle?"), PULLED, clock)

    message_created.send(sender=Message, message=source)

    assert len(brought_in(room.motion)) == 1
    assert len([t for t in lines_in(jams) if t.startswith("@magent took this")]) == 1


def test_a_block_naming_both_is_a_to_block():
    [block] = blocks_in("```handoff\nto: jams\nfrom: backstage\n---\nx\n```")
    assert (block.to, block.source) == ("jams", "")
