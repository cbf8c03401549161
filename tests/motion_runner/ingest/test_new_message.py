"""A Message built from its values in column order is the Message the keyword form builds."""

from __future__ import annotations

import pytest

from motion_runner.harnesses import get_adapter
from motion_runner.ingest.writer import EventWriter, IngestContext, new_message
from motion_runner.models import Message
from tests import recorded
from tests.factories import AgentFactory, MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db

COLUMNS = [field.attname for field in Message._meta.concrete_fields]


def recorded_fields(turn=None) -> list[dict]:
    """The fields of every Message a recorded `claude -p` run writes, as the writer makes them."""
    motion, agent = MotionFactory(slug="harbor"), AgentFactory(name="magent")
    writer = EventWriter(
        IngestContext(motion=motion, agent=agent, harness="claude-code", source="runner", turn=turn)
    )
    parser = get_adapter("claude-code").new_parser()
    events = [event for line in recorded.lines("stream") for event in parser.feed(line)]
    found = [fields for event in events if (fields := writer.message_fields(event)) is not None]
    assert {fields["kind"] for fields in found} >= {"text", "tool_call", "tool_result", "turn_end"}
    return found


def values(message: Message) -> dict:
    return {name: getattr(message, name) for name in COLUMNS if name != "created_at"}


def test_every_recorded_message_is_the_same_in_both_forms():
    for fields in recorded_fields():
        by_name, by_position = Message(**dict(fields)), new_message(dict(fields))
        assert values(by_position) == values(by_name)
        assert by_position._state.adding
        assert by_position._state.db == by_name._state.db
        assert by_position.motion is fields["motion"] and by_position.agent is fields["agent"]


def test_a_turn_given_is_the_messages_turn_without_a_query(django_assert_num_queries):
    turn = TurnFactory()
    fields = recorded_fields(turn)[0]
    message = new_message(dict(fields))
    with django_assert_num_queries(0):
        assert message.turn is turn and message.turn_id == turn.pk


def test_a_default_is_made_for_each_message_not_shared():
    fields = recorded_fields()[0]
    fields.pop("id", None)
    first, second = new_message(dict(fields)), new_message(dict(fields))
    assert first.id != second.id and first.created_at is not None


def test_a_field_it_does_not_have_is_refused_as_the_keyword_form_refuses_it():
    fields = {**recorded_fields()[0], "colour": "blue"}
    with pytest.raises(TypeError):
        Message(**dict(fields))
    with pytest.raises(TypeError, match="colour"):
        new_message(dict(fields))
