"""What the importer makes of awkward transcript lines: each is read by `lib.json_text.read_json`
(its contract: tests/motion_runner/site/test_json_text.py); a line that is not a JSON object is counted bad, noted,
and the import goes on."""

from __future__ import annotations

import pytest

from motion_runner.ingest.sessions import claim_session
from motion_runner.models import Message, TranscriptFile
from motion_runner.transcripts.importer import import_file
from tests import recorded

SESSION = recorded.session_id()


@pytest.mark.django_db
def test_dropped_lines_still_carry_the_prompt_and_entrypoint_and_bad_ones_are_counted(
    tmp_path, harbor, scribe
):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    path = tmp_path / "-tmp-work" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    lines = recorded.raw_lines("transcript")
    junk = [
        b'{"type": "attachment", "promptId": 98765432109876543210987654321, "entrypoint": "cli-long-'
        + b"x" * 40
        + b'"}\n',
        b'{"type": "attachment", "attachment": {"x": "\xff\xfe"}}\n',
        b'{"type": "attachment", "attachment": {"x": 1}\n',
    ]
    path.write_bytes(b"".join(lines + junk))
    import_file(path)
    record = TranscriptFile.objects.get()
    assert record.last_prompt_id == "98765432109876543210987654321"  # an integer past 64 bits, exact
    assert record.entrypoint == ("cli-long-" + "x" * 40)[:32]
    assert record.bad_lines == 1
    assert record.lines == len(lines) + len(junk)
    assert Message.objects.count() == 9


@pytest.mark.django_db
def test_a_line_nested_too_deep_for_json_loads_is_a_bad_line_not_the_end_of_the_import(
    tmp_path, harbor, scribe
):
    """It raised RecursionError out of the import, on every run: the file never got past it."""
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    path = tmp_path / "-tmp-work" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    deep = b'{"type": "attachment", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}\n"
    lines = recorded.raw_lines("transcript")
    path.write_bytes(b"".join(lines[:3] + [deep] + lines[3:]))
    import_file(path)
    record = TranscriptFile.objects.get()
    assert record.bad_lines == 1
    assert record.offset == path.stat().st_size
    assert Message.objects.count() == 9
