"""without_twins: a Message stored under another id is a twin (dropped, its blanks filled); the
batch's own rows, already stored under the same ids, are not twins of themselves."""

from __future__ import annotations

import uuid

import pytest

from motion_runner.display import HOOK_STOP_TEXT
from motion_runner.models import Kind, Message
from motion_runner.twins import without_twins
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
