"""What the importer asks per file before it writes a file's Messages, and what it then knows.

The file's row is locked (and created, when new) in the transaction that reads the file, and the
session comes with its Motion, agent, `runner_owned`'s two EXISTS and the newest recorded turn
end in one ORM query: the statement counts are pinned, and what the reader learns from the one
query is what the separate reads tell. The same on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re
import shutil
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from motion_runner.ingest.sessions import claim_session, claimed_session, runner_owned
from motion_runner.memory_lane.remote import ingest_lines
from motion_runner.models import Kind, Message, MotionSession, Source, TranscriptFile
from motion_runner.transcripts.files import locked_record
from motion_runner.transcripts.importer import import_file
from motion_runner.transcripts.reader import TranscriptReader
from tests import recorded
from tests.factories import MessageFactory, TurnFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()


@pytest.fixture
def transcript(tmp_path, settings):
    root = tmp_path / "projects"
    (root / "-tmp-work").mkdir(parents=True)
    settings.TRANSCRIPT_DIRS = [str(root)]
    path = root / "-tmp-work" / f"{SESSION}.jsonl"
    shutil.copy(recorded.RECORDINGS / "read-then-reply.transcript.jsonl", path)
    return path


def test_a_new_files_row_is_locked_created_and_read_back_in_three_statements(
    transcript, django_assert_num_queries
):
    # The lock finds no row, the insert (ON CONFLICT DO NOTHING), the locked read of it.
    with django_assert_num_queries(3):
        record = locked_record(transcript)
    assert record.pk is not None and record.session_id == SESSION


def test_a_known_files_row_is_one_locked_read(transcript, django_assert_num_queries):
    locked_record(transcript)
    with django_assert_num_queries(1) as queries:
        locked_record(transcript)
    assert (
        "FOR UPDATE" in queries.captured_queries[0]["sql"]
    ) is queries.connection.features.has_select_for_update


def test_the_session_and_all_the_reader_needs_of_it_are_one_query(harbor, scribe, django_assert_num_queries):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    with django_assert_num_queries(1):
        read = claimed_session(SESSION)
        assert read.session.motion.slug == harbor.slug and read.session.agent.name == "scribe"


def test_an_unchanged_known_file_costs_its_lock_and_its_save(
    transcript, harbor, scribe, django_assert_num_queries
):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    import_file(transcript)
    # The transaction's savepoint and its release (inside the test's transaction), the lock, the save.
    with django_assert_num_queries(4) as queries:
        result = import_file(transcript)
    assert result.lines == 0
    assert queries.captured_queries[2]["sql"].startswith("UPDATE")


def test_the_row_is_created_once_and_found_again(transcript, harbor):
    first = locked_record(transcript)
    again = locked_record(transcript)
    assert first.pk == again.pk and first.session_id == SESSION
    assert TranscriptFile.objects.filter(path=str(transcript)).count() == 1
    # A file seen before keeps what it had.
    TranscriptFile.objects.filter(pk=first.pk).update(
        offset=7, lines=3, inode=2**40, cost_usd=Decimal("1.234567"), missing_since=timezone.now()
    )
    assert values(locked_record(transcript)) == values(TranscriptFile.objects.get(pk=first.pk))
    assert (locked_record(transcript).offset, locked_record(transcript).lines) == (7, 3)


@pytest.mark.parametrize("fed_by", ["nobody", "turn", "runner", "api", "terminal"])
def test_the_session_read_in_one_query_knows_what_the_separate_reads_knew(harbor, scribe, fed_by):
    session = claim_session(SESSION, harbor, scribe.agent, "claude-code")
    if fed_by == "turn":
        TurnFactory(motion=harbor, agent=scribe.agent, session_id=SESSION)
    elif fed_by in ("runner", "api", "terminal"):
        MessageFactory(motion=harbor, session_id=SESSION, source=getattr(Source, fed_by.upper()))
    read = claimed_session(SESSION)
    assert isinstance(read.session, MotionSession) and read.session.pk == session.pk
    assert read.session.motion == harbor and read.session.agent == scribe.agent
    record = TranscriptFile.objects.create(path="/x.jsonl", session_id=SESSION)
    reader = TranscriptReader(record, read)
    assert reader.owned_by_runner == runner_owned(SESSION) == (fed_by in ("turn", "runner", "api"))


def test_the_session_read_in_one_query_brings_the_newest_recorded_turn_end(harbor, scribe):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    assert claimed_session(SESSION).newest_end == []
    for total in ("0.10", "0.25"):
        MessageFactory(
            motion=harbor,
            session_id=SESSION,
            kind=Kind.TURN_END,
            raw={"type": "result", "total_cost_usd": float(total), "big": 2**70},
        )
    newest = Message.objects.filter(session_id=SESSION, kind=Kind.TURN_END).order_by("-created_at").first()
    assert claimed_session(SESSION).newest_end == [newest.raw]
    assert claimed_session(SESSION).newest_end[0]["big"] == 2**70


def test_an_unclaimed_session_reads_as_none(harbor):
    assert claimed_session("never-claimed") is None


def values(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


@pytest.mark.parametrize("with_agent", [True, False])
def test_the_session_its_motion_and_agent_read_as_the_orm_reads_them(harbor, scribe, with_agent):
    claim_session(SESSION, harbor, scribe.agent if with_agent else None, "claude-code")
    orm = MotionSession.objects.select_related("motion", "agent").get(pk=SESSION)
    read = claimed_session(SESSION).session
    assert values(read) == values(orm)
    assert values(read.motion) == values(orm.motion)
    assert (read.agent and values(read.agent)) == (orm.agent and values(orm.agent))
    assert read.agent is None if not with_agent else read.agent.name == "scribe"


def test_posted_lines_of_a_claimed_session_read_it_in_one_statement(harbor, scribe, settings, tmp_path):
    settings.INGEST_SPOOL_DIR = str(tmp_path)  # no spool left by another test
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    lines = [json.dumps(line) for line in recorded.lines("transcript")]
    ingest_lines(lines, username="scribe", source="laptop")
    with CaptureQueriesContext(connection) as queries:
        answer = ingest_lines(lines, username="scribe", source="laptop")
    assert answer.imported == 0 and answer.skipped == len(lines)
    asking_the_session = [
        q["sql"]
        for q in queries.captured_queries
        if re.search(r'"motion_runner_(motionsession|turn)"', q["sql"])
    ]
    assert len(asking_the_session) == 1
