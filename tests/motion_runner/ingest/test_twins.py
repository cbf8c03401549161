"""without_twins: a Message stored under another id is a twin (dropped, its blanks filled); the
batch's own rows, already stored under the same ids, are not twins of themselves."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from motion_runner.ingest.display import HOOK_STOP_TEXT
from motion_runner.ingest.twins import hook_replies_stored, session_lock, stored_like, without_twins
from motion_runner.models import Kind, Message
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db

SESSION = "5e55e55e-0000-4000-8000-000000000001"


def unsaved(motion, **fields) -> Message:
    fields.setdefault("id", uuid.uuid4())
    return Message(motion=motion, sender="scribe", source="terminal", session_id=SESSION, **fields)


def test_a_tool_call_stored_under_another_id_is_a_twin_and_gets_the_blanks(harbor):
    stored = MessageFactory(motion=harbor, session_id=SESSION, kind=Kind.TOOL_CALL, tool_id="toolu_1", cwd="")
    copy = unsaved(harbor, kind=Kind.TOOL_CALL, tool_id="toolu_1", cwd="/work")
    other = unsaved(harbor, kind=Kind.TOOL_CALL, tool_id="toolu_2")
    assert without_twins([copy, other], harbor.pk, fill_in_blanks=True) == [other]
    stored.refresh_from_db()
    assert stored.cwd == "/work"


def test_the_batchs_own_stored_rows_are_not_their_own_twins(harbor):
    own_call = MessageFactory(motion=harbor, session_id=SESSION, kind=Kind.TOOL_CALL, tool_id="toolu_1")
    own_text = MessageFactory(motion=harbor, session_id=SESSION, kind=Kind.TEXT, text="done")
    MessageFactory(motion=harbor, session_id=SESSION, kind=Kind.TEXT, text="done", source_file=HOOK_STOP_TEXT)
    again = [
        # The same id as a string, as a line's uuid reads before fit_message.
        unsaved(harbor, id=str(own_call.id), kind=Kind.TOOL_CALL, tool_id="toolu_1"),
        unsaved(harbor, id=own_text.id, kind=Kind.TEXT, text="done"),
    ]
    # The call's only match is itself: kept (its insert then finds it there). The text's own row
    # is not its twin either; the hook's copy of the same words is.
    assert without_twins(again, harbor.pk, fill_in_blanks=False) == again[:1]


def test_a_hooks_reply_and_the_transcripts_are_twins_in_order(harbor):
    first = MessageFactory(
        motion=harbor, session_id=SESSION, kind=Kind.TEXT, text="ok", source_file=HOOK_STOP_TEXT
    )
    second = MessageFactory(
        motion=harbor, session_id=SESSION, kind=Kind.TEXT, text="ok", source_file=HOOK_STOP_TEXT
    )
    Message.objects.filter(pk=second.pk).update(
        created_at=first.created_at.replace(year=first.created_at.year + 1)
    )
    copies = [
        unsaved(harbor, kind=Kind.TEXT, text="ok", model_backend="m1"),
        unsaved(harbor, kind=Kind.TEXT, text="ok", model_backend="m2"),
    ]
    assert without_twins(copies, harbor.pk, fill_in_blanks=True) == []
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.model_backend, second.model_backend) == ("m1", "m2")


def test_the_stored_copies_are_those_the_orm_finds_in_its_order(harbor):
    elsewhere = MessageFactory(session_id=SESSION, text="hello")  # another Motion's
    awkward = ['say "hi", {ok}', "back\\slash", "naïve ✓", "NULL", ""]
    made = []
    for n, text in enumerate(awkward * 2):
        for session in (SESSION, "another-session"):
            made.append(
                MessageFactory(
                    motion=harbor, session_id=session, kind=Kind.TEXT, text=text, source_file=HOOK_STOP_TEXT
                )
            )
            made.append(
                MessageFactory(
                    motion=harbor, session_id=session, kind=Kind.TOOL_CALL, tool_id=f"toolu_{n % 3}"
                )
            )
            made.append(
                MessageFactory(
                    motion=harbor, session_id=session, kind=Kind.TOOL_RESULT, tool_id=f"toolu_{n % 3}"
                )
            )
    tied = made[0].created_at
    Message.objects.filter(pk__in=[m.pk for m in made[:6]]).update(created_at=tied)  # ties: ordered by id
    sessions, tool_ids = {SESSION, "never"}, {"toolu_0", "toolu_2", 'toolu_"x"'}
    calls = [Kind.TOOL_CALL, Kind.TOOL_RESULT]
    orm = Message.objects.filter(
        motion_id=harbor.pk, session_id__in=sessions, kind__in=calls, tool_id__in=tool_ids
    )
    found = stored_like(harbor.pk, sessions, calls, "tool_id", tool_ids, ("created_at", "id"))
    assert [m.pk for m in found] == [m.pk for m in orm] and len(found) == 14
    assert [values(m) for m in found] == [values(m) for m in orm]
    texts = set(awkward[:3]) | {""}
    orm = Message.objects.filter(motion_id=harbor.pk, session_id__in=sessions, kind=Kind.TEXT, text__in=texts)
    found = stored_like(harbor.pk, sessions, [Kind.TEXT], "text", texts, ("created_at", "id"))
    assert [m.pk for m in found] == [m.pk for m in orm.order_by("created_at", "id")] and len(found) == 8
    found = stored_like(elsewhere.motion_id, sessions, [Kind.TEXT], "text", {"hello"}, ("created_at",))
    assert [m.pk for m in found] == [elsewhere.pk]


def test_a_stored_hook_reply_is_found_in_any_of_the_sessions(harbor):
    MessageFactory(motion=harbor, session_id="another-session", kind=Kind.TEXT, source_file=HOOK_STOP_TEXT)
    MessageFactory(motion=harbor, session_id=SESSION, kind=Kind.TEXT, source_file="hook:PostToolUse")
    assert hook_replies_stored({"another-session", "never"})
    assert not hook_replies_stored({SESSION, "never"})


def values(message: Message) -> dict:
    return {f.attname: getattr(message, f.attname) for f in Message._meta.concrete_fields}


def test_the_session_lock_inside_a_callers_transaction_takes_no_savepoint(harbor):
    assert connection.in_atomic_block  # the test's own transaction, as import_file's
    with CaptureQueriesContext(connection) as queries:
        with session_lock(SESSION):
            pass
    sqls = [q["sql"] for q in queries.captured_queries]
    # PostgreSQL: the advisory lock alone; SQLite serializes its writers: nothing at all.
    expected = ["pg_advisory_xact_lock"] if connection.vendor == "postgresql" else []
    assert [("pg_advisory_xact_lock" if "pg_advisory_xact_lock" in sql else sql) for sql in sqls] == expected
