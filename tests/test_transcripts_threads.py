"""import_all reads files in threads on PostgreSQL outside a transaction: each file still lands
once, a re-run adds nothing, a bad line is counted, and an error is not swallowed."""

from __future__ import annotations

import json
import uuid

import pytest
from django.db import connection

from motion_runner import transcripts
from motion_runner.models import Message, TranscriptFile
from motion_runner.sessions import claim_session
from motion_runner.transcripts import import_all
from tests import recorded

pytestmark = pytest.mark.django_db(transaction=True)

RECORDED = recorded.session_id()
# The recorded transcript holds 9 Messages for the thread (tests/test_transcripts.py).
PER_FILE = 9


def write_session(folder, session_id: str, *, junk: bytes = b"") -> None:
    """The recorded transcript again under another session id, with fresh line ids."""
    ids: dict[str, str] = {}
    out = []
    for line in recorded.lines("transcript"):
        text = json.dumps(line).replace(RECORDED, session_id)
        for key in ("uuid", "parentUuid"):
            if isinstance(line.get(key), str):
                ids.setdefault(line[key], str(uuid.uuid4()))
                text = text.replace(line[key], ids[line[key]])
        out.append(text)
    (folder / f"{session_id}.jsonl").write_bytes("\n".join(out).encode() + b"\n" + junk)


@pytest.fixture
def four_files(tmp_path, settings, harbor, scribe):
    folder = tmp_path / "projects" / "-tmp-work"
    folder.mkdir(parents=True)
    settings.TRANSCRIPT_DIRS = [str(tmp_path / "projects")]
    sessions = [str(uuid.uuid4()) for _ in range(4)]
    for n, session_id in enumerate(sessions):
        claim_session(session_id, harbor, scribe.agent, "claude-code")
        write_session(folder, session_id, junk=b'{"type": "attachment", "x": \n' if n == 2 else b"")
    return sessions


def test_files_read_in_threads_land_once(four_files, monkeypatch):
    monkeypatch.setattr(transcripts, "IMPORT_THREADS", 3)
    assert not connection.in_atomic_block  # else import_all would not use threads
    threads_used: list[int] = []
    real = transcripts._import_in_threads
    monkeypatch.setattr(
        transcripts, "_import_in_threads", lambda paths, n: threads_used.append(n) or real(paths, n)
    )
    totals = import_all()
    assert threads_used == [3]
    assert totals.files == 4
    assert [result.path.rsplit("/", 1)[1] for result in totals.results] == sorted(
        f"{s}.jsonl" for s in four_files
    )
    assert totals.imported == 4 * PER_FILE == Message.objects.count()
    assert sorted(TranscriptFile.objects.values_list("bad_lines", flat=True)) == [0, 0, 0, 1]
    again = import_all()
    assert again.imported == 0 and again.lines == 0
    assert Message.objects.count() == 4 * PER_FILE


def test_threads_give_what_one_file_after_another_gives(four_files, monkeypatch):
    monkeypatch.setattr(transcripts, "IMPORT_THREADS", 1)
    serial = import_all()
    rows = sorted(Message.objects.values_list("id", "kind", "text", "session_id"))
    Message.objects.all().delete()
    TranscriptFile.objects.all().delete()
    monkeypatch.setattr(transcripts, "IMPORT_THREADS", 2)
    threaded = import_all()
    assert (threaded.imported, threaded.lines) == (serial.imported, serial.lines)
    assert sorted(Message.objects.values_list("id", "kind", "text", "session_id")) == rows


def test_an_error_in_a_thread_reaches_the_caller(four_files, monkeypatch):
    monkeypatch.setattr(transcripts, "IMPORT_THREADS", 2)
    real = transcripts.import_file

    def failing(path):
        if str(path).endswith(f"{four_files[1]}.jsonl"):
            raise RuntimeError("disk on fire")
        return real(path)

    monkeypatch.setattr(transcripts, "import_file", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        import_all()
    # The other thread finished what it had begun; what was not begun waits for the next run.
    assert Message.objects.count() % PER_FILE == 0
    monkeypatch.setattr(transcripts, "import_file", real)
    import_all()
    assert Message.objects.count() == 4 * PER_FILE
