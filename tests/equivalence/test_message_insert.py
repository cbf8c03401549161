"""motion_runner/sql/messages.py: the COPY insert writes the rows Django's own bulk insert writes,
column for column, and keeps its exactly-once answer (the ids this call inserted)."""

from __future__ import annotations

import json
import uuid
import warnings
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction

from motion_runner.models import Kind, Message, Source
from motion_runner.record.own import OwnRecord
from motion_runner.sql import fast_paths
from motion_runner.sql.messages import copy_insert, jsonb_text, orm_insert
from tests.factories import AgentFactory, MotionFactory, TurnFactory, UserFactory

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the COPY insert is PostgreSQL's (CI always runs it there)"
)
pytestmark = [postgres_only, pytest.mark.django_db]

AWKWARD_TEXT = [
    "",
    "plain",
    'say "hi"\tand\nbreak\r\n',
    "C:\\path\\to \\N \\\\ \\.",
    "ünïcödé ✓ 日本語 🚀",
    "{x}, [y], NULL, null",
]
AWKWARD_RAW = [
    None,
    {},
    [],
    "a JSON string",
    0,
    1.5,
    True,
    {"type": "assistant", "message": {"content": [{"type": "text", "text": 'a "quoted" \\ word\n'}]}},
    {"nested": [[1, None, "x"], {"deep": {"er": ["ü", "🚀", "\t"]}}], "n": 12345678901234567890},
]
COSTS = [None, Decimal("0"), Decimal("1.5"), Decimal("0.12345678"), Decimal("123456.654321"), 0.1, 2]
TIMES = [
    datetime(2026, 11, 30, 19, 1, 14, 123456, tzinfo=UTC),
    datetime(2026, 11, 30, 19, 1, 14, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
]


def awkward_messages() -> list[Message]:
    """Every shape each column takes, in turn: text, JSON, numbers, NULLs, foreign keys, times."""
    motion = MotionFactory()
    agent = AgentFactory()
    turn = TurnFactory(motion=motion, agent=agent)
    author = UserFactory()
    messages = []
    for index in range(len(AWKWARD_RAW) * 3):
        text = AWKWARD_TEXT[index % len(AWKWARD_TEXT)]
        fields = dict(
            id=uuid.uuid4(),
            motion=motion,
            sender=text[:150] or "someone",
            agent=agent if index % 2 else None,
            author=author if index % 3 == 0 else None,
            source=[Source.API, Source.TERMINAL, Source.WEB][index % 3],
            kind=[Kind.TEXT, Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.TURN_END][index % 4],
            text=text,
            raw=AWKWARD_RAW[index % len(AWKWARD_RAW)],
            tool_name=text[:200],
            tool_id=f"toolu_{index}" if index % 2 else "",
            is_error=bool(index % 2),
            session_id=str(uuid.uuid4()),
            turn=turn if index % 2 else None,
            input_tokens=[None, 0, 7, 2**31 - 1][index % 4],
            output_tokens=index,
            cost_usd=COSTS[index % len(COSTS)],
            cwd="/home/x y/\\z",
        )
        if index % 5:  # else the field's default (timezone.now)
            fields["created_at"] = TIMES[index % len(TIMES)]
        messages.append(Message(**fields))
    return messages


def stored(ids: list[uuid.UUID]) -> dict[str, str]:
    """Each row exactly as PostgreSQL holds it: every column, as its own text (jsonb normalised,
    numeric with its scale, timestamptz in full)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.id::text, to_jsonb(m)::text, m.raw::text FROM motion_runner_message m WHERE m.id = ANY(%s)",
            [ids],
        )
        return {row[0]: (row[1], row[2]) for row in cursor.fetchall()}


def both_ways(make) -> tuple[dict, dict, list, list]:
    """The same messages written by Django's bulk insert, then (deleted) by the COPY insert."""
    orm_batch, copy_batch = make(), make()
    ids = sorted(message.id for message in orm_batch)
    with transaction.atomic():
        orm_ids = orm_insert(connection, Message, sorted(orm_batch, key=lambda m: m.id))
    by_orm = stored(ids)
    Message.objects.filter(pk__in=ids).delete()
    for message, twin in zip(orm_batch, copy_batch, strict=True):
        twin.id, twin.created_at = message.id, message.created_at
    with transaction.atomic():
        copy_ids = copy_insert(connection, Message).insert(connection, sorted(copy_batch, key=lambda m: m.id))
    return by_orm, stored(ids), orm_ids, copy_ids


def test_the_copy_insert_is_used_on_postgresql():
    assert fast_paths(connection)


def test_the_copy_insert_writes_djangos_rows_column_for_column():
    made: list[list[Message]] = []

    def make() -> list[Message]:
        if made:  # the same values again, as fresh objects
            return [
                Message(**{f.attname: getattr(m, f.attname) for f in Message._meta.concrete_fields})
                for m in made[0]
            ]
        made.append(awkward_messages())
        return made[0]

    by_orm, by_copy, orm_ids, copy_ids = both_ways(make)
    assert len(by_orm) == len(made[0])
    assert set(orm_ids) == set(copy_ids) == {m.id for m in made[0]}
    for key in by_orm:
        assert by_copy[key] == by_orm[key]


def test_a_naive_time_is_made_aware_as_django_makes_it():
    motion = MotionFactory()

    def make() -> list[Message]:
        return [
            Message(motion=motion, sender="x", source=Source.WEB, created_at=datetime(2026, 1, 2, 3, 4, 5))
        ]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # Django's "received a naive datetime", both ways
        by_orm, by_copy, _, _ = both_ways(make)
    assert by_copy == by_orm


def test_conflicts_are_left_alone_and_only_new_ids_come_back():
    record = OwnRecord()
    batch = sorted(awkward_messages(), key=lambda m: m.id)
    first = record.insert_batch(batch[::2])
    assert [m.id for m in first] == [m.id for m in batch[::2]]
    assert all(not m._state.adding and m._state.db == "default" for m in first)
    before = stored([m.id for m in batch])
    again = [
        Message(**{f.attname: getattr(m, f.attname) for f in Message._meta.concrete_fields}) for m in batch
    ]
    for message in again:
        message.text = "changed"  # a conflicting row is never updated
    second = record.insert_batch(again)
    assert [m.id for m in second] == [m.id for m in batch[1::2]]
    assert all(m.text == "changed" for m in second)
    after = stored([m.id for m in batch])
    assert {key: after[key] for key in before} == before
    assert record.insert_batch(again) == []


def test_the_stage_is_empty_after_each_insert_and_after_a_failure():
    record = OwnRecord()
    with transaction.atomic():
        record.insert_batch(sorted(awkward_messages(), key=lambda m: m.id))
        record.insert_batch(sorted(awkward_messages(), key=lambda m: m.id))
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_temp.motion_runner_message_stage")
            assert cursor.fetchone()[0] == 0
    broken = Message(motion=MotionFactory(), sender=None, source=Source.WEB)  # NOT NULL
    fine = Message(motion=MotionFactory(), sender="y", source=Source.WEB)
    with pytest.raises(IntegrityError), transaction.atomic():
        record.insert_batch(sorted([broken, fine], key=lambda m: m.id))
    assert not Message.objects.filter(pk__in=[broken.id, fine.id]).exists()
    assert [m.id for m in record.insert_batch([fine])] == [fine.id]


def test_a_line_holding_a_non_finite_number_is_stored_with_its_batch_not_lost():
    """JSON has no NaN and jsonb refuses the standard library's `NaN`, which failed the whole
    batch's insert; a harness line read by json.loads can hold one (the runner reads its lines
    so). The line is kept, its non-finite numbers as null, and the batch with it."""
    motion = MotionFactory()
    odd = Message(
        motion=motion, sender="x", source=Source.RUNNER, raw={"n": float("nan"), "m": [float("inf")]}
    )
    plain = Message(motion=motion, sender="y", source=Source.RUNNER, raw={"n": 1.5})
    inserted = OwnRecord().insert_batch(sorted([odd, plain], key=lambda m: m.id))
    assert {m.id for m in inserted} == {odd.id, plain.id}
    assert Message.objects.get(pk=odd.id).raw == {"n": None, "m": [None]}
    assert Message.objects.get(pk=plain.id).raw == {"n": 1.5}


@pytest.mark.parametrize(
    "value",
    [
        {"big": 2**70},  # past 64 bits: orjson refuses, the standard library writes it
        {"lone": "\ud800"},
        {1: "an integer key"},
        {"when": datetime(2026, 12, 1, tzinfo=UTC)},
        {"kind": Kind.TEXT},  # a str subclass
        *AWKWARD_RAW,
    ],
)
def test_jsonb_text_is_read_by_postgresql_as_the_standard_librarys_text(value):
    try:
        expected = json.dumps(value)
    except TypeError:
        with pytest.raises(TypeError):
            jsonb_text(value)
        return
    text = jsonb_text(value)
    if isinstance(text, str):  # left to the standard library: its very text
        assert text == expected
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::jsonb = %s::jsonb", [text.decode(), expected])
        assert cursor.fetchone()[0] is True


def test_a_uuid_the_standard_library_refuses_is_written_as_its_text():
    value = {"id": uuid.UUID("12345678-1234-5678-1234-567812345678")}
    with pytest.raises(TypeError):
        json.dumps(value)
    assert jsonb_text(value) == b'{"id":"12345678-1234-5678-1234-567812345678"}'


def test_the_known_ids_are_the_orms(settings):
    motion = MotionFactory()
    stored = [Message(motion=motion, sender=name, source=Source.WEB) for name in "abc"]
    OwnRecord().insert_batch(sorted(stored, key=lambda m: m.id))
    asked = [stored[0].id, uuid.uuid4(), stored[2].id]
    fast = OwnRecord().known_ids(asked)
    settings.MOTION_RUNNER_SQL_FAST_PATHS = False
    assert fast == OwnRecord().known_ids(asked) == {stored[0].id, stored[2].id}
