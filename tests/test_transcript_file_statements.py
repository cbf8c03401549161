"""What the importer asks per file before it writes a file's Messages, and what it then knows.

Each file cost a `get_or_create` of its TranscriptFile (with a transaction and commit of its own
when new), the row's lock, the session, `runner_owned`'s two EXISTS and the newest recorded turn
end: about a fifth of bench/importer.py's wall time went to the per-file statements. The row is
now locked (and created, when new) in the transaction that reads the file, and the session comes
with the rest in one query; what the reader learns from them must not change."""

from __future__ import annotations

import re
import shutil
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from motion_runner.models import Kind, Message, MotionSession, Source, TranscriptFile
from motion_runner.sessions import claim_session
from motion_runner.transcripts import (
    TranscriptReader,
    claimed_session,
    import_file,
    locked_record,
    save_record,
)
from tests import recorded
from tests.factories import MessageFactory, TurnFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()
_TRANSACTION_CONTROL = re.compile(r"^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE SAVEPOINT)\b")


@pytest.fixture
def transcript(tmp_path, settings):
    root = tmp_path / "projects"
    (root / "-tmp-work").mkdir(parents=True)
    settings.TRANSCRIPT_DIRS = [str(root)]
    path = root / "-tmp-work" / f"{SESSION}.jsonl"
    shutil.copy(recorded.RECORDINGS / "read-then-reply.transcript.jsonl", path)
    return path


def statements(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if not _TRANSACTION_CONTROL.match(q["sql"])]


def before_the_write(sqls: list[str]) -> list[str]:
    """The statements up to the session's advisory lock (the write of the file's Messages)."""
    return sqls[: next(i for i, sql in enumerate(sqls) if "pg_advisory_xact_lock" in sql)]


def test_a_new_files_row_is_created_and_its_session_read_in_three_statements(transcript, harbor, scribe):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    with CaptureQueriesContext(connection) as queries:
        result = import_file(transcript)
    assert result.imported > 0
    asked = before_the_write(statements(queries))
    # The row's lock (none yet), its insert (locked by this transaction), the session with the rest.
    assert len(asked) == 3, asked
    assert TranscriptFile.objects.get(path=str(transcript)).offset == transcript.stat().st_size


def test_an_unchanged_known_file_costs_its_lock_and_its_save(transcript, harbor, scribe):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    import_file(transcript)
    with CaptureQueriesContext(connection) as queries:
        result = import_file(transcript)
    assert result.lines == 0
    sqls = statements(queries)
    assert len(sqls) == 2, sqls
    assert "FOR UPDATE" in sqls[0] and sqls[1].startswith("UPDATE")


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
    apart = TranscriptReader(record, session)
    together = TranscriptReader(
        record, read.session, fed_by_runner=read.fed_by_runner, newest_end=read.newest_end
    )
    assert together.owned_by_runner == apart.owned_by_runner == (fed_by in ("turn", "runner", "api"))


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


def test_a_records_save_writes_every_column_as_the_orms_save(transcript):
    ours, theirs = (locked_record(transcript.with_name(name)) for name in ("a.jsonl", "b.jsonl"))
    now = timezone.now()
    for record in (ours, theirs):
        record.inode, record.offset, record.size, record.lines = 2**40, 12345, 67890, 7
        record.unknown_lines, record.bad_lines, record.last_error = 2, 1, 'line 3: it\'s "odd" ✓'
        record.last_prompt_id, record.entrypoint, record.cost_usd = "p-1", "cli", Decimal("0.1234567")
        record.missing_since, record.updated_at = now, now
    save_record(ours)
    theirs.save()
    stored = {r.path: values(r) for r in TranscriptFile.objects.all()}
    ours_now, theirs_now = stored[ours.path], stored[theirs.path]
    for name in ("id", "path", "session_id"):
        ours_now.pop(name), theirs_now.pop(name)
    assert ours_now == theirs_now
    assert ours_now["cost_usd"] == Decimal("0.123457")  # rounded to the column's places, as Django binds it
    ours.cost_usd = ours.missing_since = ours.inode = None
    save_record(ours)
    assert values(TranscriptFile.objects.get(pk=ours.pk))["cost_usd"] is None


def test_saving_a_record_is_one_statement(transcript):
    record = locked_record(transcript)
    with CaptureQueriesContext(connection) as queries:
        save_record(record)
    assert len(statements(queries)) == 1
