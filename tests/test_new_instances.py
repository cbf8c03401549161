"""lib/rows.NewInstances builds a batch's Messages without Model.__init__: every field, the
related-object caches and the instance's state must be what `Message(**values)` leaves."""

from __future__ import annotations

import uuid
from datetime import UTC
from decimal import Decimal

import pytest
from django.db.models.signals import pre_init

from motion_runner.harnesses import Event, EventKind
from motion_runner.ingest import EventWriter, IngestContext
from motion_runner.lib.rows import NewInstances
from motion_runner.models import Message, Motion
from tests.factories import AgentFactory, MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db

# Filled by a default that differs call by call: compared by type and awareness instead.
FRESH_DEFAULTS = {"created_at"}


def assert_same(built: Message, expected: Message, *, fresh: set[str] = FRESH_DEFAULTS) -> None:
    ours = {k: v for k, v in vars(built).items() if k != "_state"}
    theirs = {k: v for k, v in vars(expected).items() if k != "_state"}
    assert ours.keys() == theirs.keys()
    for key in ours.keys() - fresh:
        assert (key, ours[key]) == (key, theirs[key])
        assert type(ours[key]) is type(theirs[key]), key
    for key in fresh:
        assert type(ours[key]) is type(theirs[key]), key
    assert built.created_at.tzinfo is not None
    assert built._state.adding is expected._state.adding is True
    assert built._state.db == expected._state.db
    assert built._state.fields_cache == expected._state.fields_cache
    assert built._state.fields_cache.keys() == expected._state.fields_cache.keys()


def test_every_field_and_cache_as_init_leaves_them():
    motion, agent = MotionFactory(slug="build"), AgentFactory(name="builder")
    turn = TurnFactory(motion=motion, agent=agent)
    new = NewInstances(Message)
    cases = [
        {
            "motion": motion,
            "sender": "a",
            "agent": agent,
            "turn": turn,
            "text": "hi",
            "id": str(uuid.uuid4()),
        },
        {"motion": motion, "sender": "a", "agent": None, "turn": None, "raw": {"x": [1, None]}},
        {"motion_id": motion.pk, "agent_id": agent.pk, "kind": "tool_call", "cost_usd": Decimal("1.5")},
        {"motion": motion, "input_tokens": 3, "is_error": True, "id": uuid.uuid4()},
        {},
    ]
    for values in cases:
        built, expected = new.new(dict(values)), Message(**dict(values))
        fresh = FRESH_DEFAULTS | ({"id"} if "id" not in values else set())
        assert_same(built, expected, fresh=fresh)
        assert built.motion_id == expected.motion_id
        if "motion" in values:
            # The related object itself is cached (no query to read it back).
            assert built._state.fields_cache["motion"] is motion


def test_what_it_cannot_say_takes_djangos_own_way():
    motion = MotionFactory(slug="build-odd")
    new = NewInstances(Message)
    with pytest.raises(TypeError, match="unexpected keyword"):
        new.new({"motion": motion, "nonsense": 1})
    both = new.new({"motion": motion, "motion_id": motion.pk})
    assert both.motion_id == motion.pk
    with pytest.raises(ValueError, match="must be a"):
        new.new({"motion": AgentFactory(name="not-a-motion")})
    seen = []

    def listener(sender, **kwargs):
        seen.append(dict(kwargs["kwargs"]))  # __init__ pops from it afterwards

    pre_init.connect(listener, sender=Message)
    try:
        new.new({"motion": motion, "text": "x"})
    finally:
        pre_init.disconnect(listener, sender=Message)
    assert seen == [{"motion": motion, "text": "x"}]


def test_message_for_builds_what_the_orm_builds_for_every_kind():
    motion, agent = MotionFactory(slug="build-kinds"), AgentFactory(name="kinds")
    turn = TurnFactory(motion=motion, agent=agent)
    writer = EventWriter(
        IngestContext(
            motion=motion, agent=agent, harness="claude-code", source="api", turn=turn, session_id="s"
        )
    )
    usage = {"input_tokens": 5, "output_tokens": 2.0, "cache_read_input_tokens": "x"}
    events = [
        Event(EventKind.TEXT, uuid=str(uuid.uuid4()), text="said", usage=usage, model="m"),
        Event(EventKind.TOOL_CALL, uuid=str(uuid.uuid4()), tool_name="Bash", tool_input={"command": "ls"}),
        Event(EventKind.TOOL_RESULT, uuid=str(uuid.uuid4()), text="out", tool_id="t1", is_error=True),
        Event(EventKind.TURN_END, uuid=str(uuid.uuid4()), subtype="success", cost_usd=0.25, text="why"),
        Event(EventKind.ERROR, text="broke"),
        Event(EventKind.COMPACT),
    ]
    for event in events:
        fields = writer.message_fields(event)
        assert fields is not None
        assert_same(writer.message_for(event), Message(**fields), fresh=FRESH_DEFAULTS | {"id"} - set(fields))
    assert writer.message_fields(Event(EventKind.ACTIVITY, text="x")) is None
    assert writer.message_for(Event(EventKind.ACTIVITY, text="x")) is None


def test_a_foreign_key_is_set_as_its_descriptor_sets_it_whatever_the_databases():
    new = NewInstances(Message)
    # An unsaved Motion (no db yet): both instances take the default db.
    for values in ({"motion": Motion(slug="unsaved-a")}, {"motion": Motion(slug="unsaved-b"), "turn": None}):
        expected_motion = Motion(slug=values["motion"].slug)
        built = new.new(values)
        expected = Message(**dict(values, motion=expected_motion))
        assert (built._state.db, values["motion"]._state.db) == (
            expected._state.db,
            expected_motion._state.db,
        )
        assert built.motion_id == expected.motion_id and built._state.fields_cache.keys() == (
            expected._state.fields_cache.keys()
        )
    # An object of another database: the relation is refused, as the descriptor refuses it.
    elsewhere = MotionFactory(slug="elsewhere")
    elsewhere._state.db = "other"
    with pytest.raises(ValueError, match="router prevents"):
        new.new({"motion": elsewhere, "agent": AgentFactory(name="here")})
    with pytest.raises(ValueError, match="router prevents"):
        Message(motion=elsewhere, agent=AgentFactory(name="here-too"))


def test_the_time_default_follows_use_tz_as_timezone_now_does(settings):
    new = NewInstances(Message)
    assert new.new({}).created_at.tzinfo is UTC
    settings.USE_TZ = False
    built, expected = new.new({}), Message()
    assert built.created_at.tzinfo is expected.created_at.tzinfo is None
    settings.USE_TZ = True
    assert new.new({}).created_at.tzinfo is UTC
