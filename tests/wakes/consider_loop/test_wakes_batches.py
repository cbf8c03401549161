"""The runner writes a burst of an agent's lines in one go; the consider loop's clocks move once
for it, after the newest line, not once a line."""

from __future__ import annotations

import pytest

from motion_runner.harnesses import Event, EventKind
from motion_runner.ingest.writer import EventWriter, IngestContext
from tests.factories import AgentFactory, MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db


def test_a_burst_of_lines_moves_the_loops_clocks_once(monkeypatch, django_capture_on_commit_callbacks):
    from wakes.consider_loop import handlers

    noted = []
    monkeypatch.setattr(
        handlers, "note_post", lambda message, consumed_by=frozenset(): noted.append(message.text)
    )
    motion = MotionFactory(slug="burst")
    agent = AgentFactory(name="magent")
    motion.agents.add(agent)
    turn = TurnFactory(motion=motion, agent=agent, status="running")
    writer = EventWriter(
        IngestContext(motion=motion, agent=agent, harness="claude-code", source="runner", turn=turn)
    )
    events = [
        Event(EventKind.TEXT, uuid=f"00000000-0000-4000-8000-00000000000{n}", text=f"line {n}")
        for n in range(5)
    ]
    with django_capture_on_commit_callbacks(execute=True):
        outcome = writer.write_many(events)
    assert outcome.imported == 5
    assert noted == ["line 4"]


def test_a_mention_in_the_middle_of_a_burst_is_still_seen(monkeypatch, django_capture_on_commit_callbacks):
    from wakes.consider_loop import handlers

    seen = []
    monkeypatch.setattr(
        handlers, "act", lambda post, agent, verdict, dispatch=True: seen.append((post.text, agent.name))
    )
    motion = MotionFactory(slug="burst-mention")
    speaker, other = AgentFactory(name="alpha"), AgentFactory(name="beta")
    motion.agents.add(speaker, other)
    writer = EventWriter(IngestContext(motion=motion, agent=speaker, harness="claude-code", source="runner"))
    texts = ["thinking", "@beta can you look?", "done"]
    events = [
        Event(EventKind.TEXT, uuid=f"00000000-0000-4000-8000-0000000000a{n}", text=t)
        for n, t in enumerate(texts)
    ]
    with django_capture_on_commit_callbacks(execute=True):
        writer.write_many(events)
    assert seen == [("@beta can you look?", "beta")]


def test_a_burst_ending_in_a_tool_call_still_moves_the_clocks_for_its_newest_post(
    monkeypatch, django_capture_on_commit_callbacks
):
    """A runner or stream batch usually ends with a tool call or the turn's end, not a post:
    its newest post is what the clocks learn of, or the other listening agents never see it."""
    from wakes.consider_loop import handlers

    noted = []
    monkeypatch.setattr(
        handlers, "note_post", lambda message, consumed_by=frozenset(): noted.append(message.text)
    )
    motion = MotionFactory(slug="burst-tool")
    agent = AgentFactory(name="magent")
    motion.agents.add(agent)
    writer = EventWriter(IngestContext(motion=motion, agent=agent, harness="claude-code", source="runner"))
    events = [
        Event(EventKind.TEXT, uuid="00000000-0000-4000-8000-0000000000b0", text="first"),
        Event(EventKind.TEXT, uuid="00000000-0000-4000-8000-0000000000b1", text="I'll look at the file"),
        Event(
            EventKind.TOOL_CALL,
            uuid="00000000-0000-4000-8000-0000000000b2",
            tool_name="Read",
            tool_id="toolu_b2",
            tool_input={"file_path": "/tmp/x"},
        ),
        Event(EventKind.TURN_END, uuid="00000000-0000-4000-8000-0000000000b3", subtype="success"),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        outcome = writer.write_many(events)
    assert outcome.imported == 4
    assert noted == ["I'll look at the file"]
