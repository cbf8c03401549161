"""A file is read in chunks of at most CHUNK_BYTES: a line across two chunks and a last line still
being written both read as whole lines, once."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from motion_runner.ingest.sessions import claim_session
from motion_runner.models import Message, TranscriptFile
from motion_runner.transcripts import importer
from motion_runner.transcripts.importer import import_file
from tests import recorded

pytestmark = pytest.mark.django_db


@pytest.fixture
def folder(tmp_path) -> Path:
    path = tmp_path / "projects" / "-tmp-work"
    path.mkdir(parents=True)
    return path


def transcript(folder: Path, harbor, scribe, copies: int = 1) -> Path:
    """A claimed terminal session holding `copies` fresh copies of the recorded one."""
    session_id = str(uuid.uuid4())
    path = folder / f"{session_id}.jsonl"
    parts = []
    for _ in range(copies):
        recorded.fresh_terminal_transcript(path, session_id)
        parts.append(path.read_bytes())
    path.write_bytes(b"".join(parts))
    claim_session(session_id, harbor, scribe.agent, "claude-code")
    return path


def test_a_file_of_many_chunks_reads_as_one_chunk_does(folder, harbor, scribe, monkeypatch):
    path = transcript(folder, harbor, scribe, copies=4)
    longest = max(len(line) for line in path.read_bytes().split(b"\n"))
    monkeypatch.setattr(importer, "CHUNK_BYTES", longest + 1000)  # lines cross chunks
    assert path.stat().st_size > 8 * importer.CHUNK_BYTES
    result = import_file(path)
    record = TranscriptFile.objects.get(path=str(path))
    assert record.offset == path.stat().st_size
    assert record.lines == result.lines == path.read_bytes().count(b"\n")
    assert record.bad_lines == 0
    in_chunks = set(Message.objects.values_list("id", flat=True))
    Message.objects.all().delete()
    TranscriptFile.objects.all().delete()
    monkeypatch.undo()
    import_file(path)
    assert set(Message.objects.values_list("id", flat=True)) == in_chunks


def test_a_last_line_still_being_written_waits_for_its_end(folder, harbor, scribe):
    path = transcript(folder, harbor, scribe)
    whole = path.read_bytes()
    being_written = b'{"type":"user","uuid":"' + str(uuid.uuid4()).encode()
    path.write_bytes(whole + being_written)  # no newline yet
    result = import_file(path)
    assert result.lines == whole.count(b"\n")
    record = TranscriptFile.objects.get(path=str(path))
    assert record.offset == len(whole) and record.bad_lines == 0
    path.write_bytes(whole + being_written + b'"}\n')
    again = import_file(path)
    assert again.lines == 1 and TranscriptFile.objects.get(path=str(path)).bad_lines == 0
