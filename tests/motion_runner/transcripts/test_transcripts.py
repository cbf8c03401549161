"""The transcript importer, on a transcript recorded from the real Claude Code CLI."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from django.core.management import call_command

from motion_runner.ingest.sessions import claim_session
from motion_runner.models import Kind, Message, MotionSession, TranscriptFile, UnclaimedSession
from motion_runner.transcripts.importer import assign_session, import_all, import_file
from tests import recorded

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()
# What the recorded transcript holds for the thread: 4 texts, 2 tool calls, 2 results, 1 compaction.
# It is a headless (`claude -p`) session: its prompts and turn ends come from stdout, not from here.
IN_TRANSCRIPT = 9


@pytest.fixture
def projects(tmp_path, settings):
    """A ~/.claude/projects of our own, with the recorded session in it."""
    root = tmp_path / "projects"
    (root / "-tmp-work").mkdir(parents=True)
    settings.TRANSCRIPT_DIRS = [str(root)]
    return root


@pytest.fixture
def transcript(projects):
    path = projects / "-tmp-work" / f"{SESSION}.jsonl"
    shutil.copy(recorded.RECORDINGS / "read-then-reply.transcript.jsonl", path)
    return path


@pytest.fixture
def claimed(harbor, scribe):
    return claim_session(SESSION, harbor, scribe.agent, "claude-code")


def counts() -> dict[str, int]:
    out: dict[str, int] = {}
    for kind in Message.objects.values_list("kind", flat=True):
        out[kind] = out.get(kind, 0) + 1
    return out


def test_an_unclaimed_session_waits_in_the_inbox_with_its_first_lines(transcript, harbor):
    result = import_file(transcript)
    assert result.unclaimed
    inbox = UnclaimedSession.objects.get(pk=SESSION)
    assert "> Read hello.txt and tell me what it says." in inbox.first_lines
    assert inbox.cwd.endswith("/work")
    assert not Message.objects.exists()
    assert TranscriptFile.objects.get(path=str(transcript)).offset == 0


def test_assigning_an_unclaimed_session_claims_and_imports_it(transcript, harbor, scribe):
    import_all()
    assign_session(UnclaimedSession.objects.get(pk=SESSION), harbor, scribe.agent)
    assert MotionSession.objects.get(pk=SESSION).motion == harbor
    assert not UnclaimedSession.objects.exists()
    assert counts() == {"text": 4, "tool_call": 2, "tool_result": 2, "compact": 1}
    assert set(Message.objects.values_list("source", flat=True)) == {"terminal"}


def test_assigning_through_the_admin_action(transcript, harbor, scribe, admin_client):
    import_all()
    response = admin_client.post(
        "/admin/motion_runner/unclaimedsession/",
        {"action": "assign", "_selected_action": [SESSION], "motion": "harbor", "agent": scribe.agent.pk},
        follow=True,
    )
    assert response.status_code == 200
    assert Message.objects.filter(motion=harbor).count() == IN_TRANSCRIPT


def test_the_import_keeps_what_only_the_transcript_has(transcript, claimed):
    import_file(transcript)
    call = Message.objects.filter(kind="tool_call").first()
    assert call.model_backend == "claude-opus-5-5"
    assert call.effort == "medium"
    assert call.cwd.endswith("/work")
    assert call.harness_message_id.startswith("msg_fake")
    assert call.text.startswith("Read ") and call.tool_id.startswith("toolu_")
    compact = Message.objects.get(kind="compact")
    assert compact.text == "compacted (manual, 144 tokens before)"
    assert str(TranscriptFile.objects.get().cost_usd) == "0.005760"


def test_message_ids_are_the_transcript_line_uuids(transcript, claimed):
    import_file(transcript)
    uuids = {
        line["uuid"]
        for line in recorded.lines("transcript")
        if line.get("type") in ("assistant", "user", "system")
    }
    assert {str(i) for i in Message.objects.values_list("id", flat=True)} <= uuids


def test_running_again_adds_nothing(transcript, claimed):
    import_file(transcript)
    TranscriptFile.objects.update(offset=0)  # even from the start
    result = import_file(transcript)
    assert result.imported == 0 and result.skipped == IN_TRANSCRIPT
    assert Message.objects.count() == IN_TRANSCRIPT
    call_command("import_transcripts")
    assert Message.objects.count() == IN_TRANSCRIPT


def test_it_resumes_where_it_stopped(projects, claimed):
    lines = recorded.raw_lines("transcript")
    path = projects / "-tmp-work" / f"{SESSION}.jsonl"
    half = len(lines) // 2
    path.write_bytes(b"".join(lines[:half]))
    first = import_file(path)
    assert TranscriptFile.objects.get().offset == path.stat().st_size
    with path.open("ab") as handle:
        handle.write(b"".join(lines[half:]))
    second = import_file(path)
    assert second.lines == len(lines) - half  # it read only the new lines
    assert first.imported + second.imported == IN_TRANSCRIPT
    assert Message.objects.count() == IN_TRANSCRIPT


def test_a_truncated_last_line_waits_until_it_is_complete(projects, claimed):
    lines = recorded.raw_lines("transcript")
    last_assistant = max(
        i for i, line in enumerate(lines) if b'"type":"assistant"' in line.replace(b" ", b"")
    )
    path = projects / "-tmp-work" / f"{SESSION}.jsonl"
    cut = lines[last_assistant][:200]
    path.write_bytes(b"".join(lines[:last_assistant]) + cut)
    import_file(path)
    record = TranscriptFile.objects.get()
    assert record.offset == path.stat().st_size - len(cut)
    assert record.bad_lines == 0
    before = Message.objects.count()
    with path.open("ab") as handle:
        handle.write(lines[last_assistant][200:] + b"".join(lines[last_assistant + 1 :]))
    import_file(path)
    assert Message.objects.count() == IN_TRANSCRIPT > before
    assert TranscriptFile.objects.get().offset == path.stat().st_size


def test_a_rotated_file_is_read_from_its_start_without_doubles(transcript, claimed):
    import_file(transcript)
    old_inode = transcript.stat().st_ino
    replacement = transcript.with_suffix(".new")
    last_reply = [line for line in recorded.lines("transcript") if line["type"] == "assistant"][-1]
    extra = dict(last_reply, uuid="7d4c1c52-0000-4000-8000-000000000001")
    replacement.write_bytes(transcript.read_bytes() + (json.dumps(extra) + "\n").encode())
    os.replace(replacement, transcript)
    assert transcript.stat().st_ino != old_inode
    result = import_file(transcript)
    assert result.rotated
    assert result.imported == 1
    assert Message.objects.count() == IN_TRANSCRIPT + 1


def test_a_file_that_shrank_is_read_again(transcript, claimed):
    import_file(transcript)
    lines = recorded.raw_lines("transcript")
    with transcript.open("wb") as handle:  # same inode, shorter: truncated in place
        handle.write(b"".join(lines[:5]))
    result = import_file(transcript)
    assert result.rotated
    assert TranscriptFile.objects.get().offset == transcript.stat().st_size
    assert Message.objects.count() == IN_TRANSCRIPT


def test_a_deleted_file_is_marked_and_its_messages_kept(transcript, claimed):
    import_all()
    transcript.unlink()
    import_all()
    assert TranscriptFile.objects.get().missing_since is not None
    assert Message.objects.count() == IN_TRANSCRIPT


def test_an_unknown_or_broken_line_is_counted_and_the_rest_land(projects, claimed):
    lines = recorded.raw_lines("transcript")
    path = projects / "-tmp-work" / f"{SESSION}.jsonl"
    junk = [b'{"type": "hologram", "sessionId": "x"}\n', b"this is not json\n", b"[1, 2]\n"]
    path.write_bytes(b"".join(lines[:3] + junk + lines[3:]))
    import_file(path)
    record = TranscriptFile.objects.get()
    assert record.bad_lines == 2
    assert record.unknown_lines == 1
    assert "hologram" in record.last_error or "not a JSON" in record.last_error
    assert Message.objects.count() == IN_TRANSCRIPT


def test_a_terminal_sessions_prompts_and_turn_ends_come_from_the_transcript(projects, claimed):
    """In a terminal (entrypoint cli) nobody has stdout: typed prompts and cost lines are the record."""
    path = recorded.terminal_transcript(projects / "-tmp-work" / f"{SESSION}.jsonl")
    import_file(path)
    prompts = Message.objects.filter(sender="terminal").order_by("created_at")
    assert [p.text for p in prompts] == [
        "Read hello.txt and tell me what it says.",
        "Thanks. Say it once more.",
    ]
    ends = Message.objects.filter(kind="turn_end").order_by("created_at")
    assert [str(e.cost_usd) for e in ends] == ["0.001920", "0.001920", "0.001920"]
    assert ends[0].text == "done · $0.0019"


def copy_recorded_transcript(projects, scenario: str) -> str:
    """A recorded scenario's transcript, under its own session id, in our projects folder."""
    session = recorded.transcript_lines(scenario)[0]["sessionId"]
    shutil.copy(
        recorded.RECORDINGS / f"{scenario}.transcript.jsonl", projects / "-tmp-work" / f"{session}.jsonl"
    )
    return session


def test_the_clis_synthetic_line_after_a_stop_is_nobodys_words(projects, harbor, scribe):
    """A stopped session's transcript gets `<synthetic>` "No response requested." from the CLI
    (recorded: resume_after_kill); no model said it, so it is no post of the agent's."""
    session = copy_recorded_transcript(projects, "resume_after_kill")
    synthetic = [
        line
        for line in recorded.transcript_lines("resume_after_kill")
        if (line.get("message") or {}).get("model") == "<synthetic>"
    ]
    assert synthetic and not synthetic[0].get("isApiErrorMessage")  # the recording still holds one
    claim_session(session, harbor, scribe.agent, "claude-code")

    import_all()

    assert Message.objects.filter(motion=harbor, kind=Kind.TEXT).exists()  # the rest landed
    assert not Message.objects.filter(text__contains="No response requested").exists()
    assert not Message.objects.filter(id=synthetic[0]["uuid"]).exists()


def test_an_api_error_in_a_transcript_is_an_error_not_the_agents_words(projects, harbor, scribe):
    """The transcript marks the CLI's API-error line `isApiErrorMessage` (the stream says
    `is_api_error_message`): either way it is the CLI's error, never a text post."""
    session = copy_recorded_transcript(projects, "model_error")
    error_line = next(
        line for line in recorded.transcript_lines("model_error") if line.get("isApiErrorMessage")
    )
    claim_session(session, harbor, scribe.agent, "claude-code")

    import_all()

    assert not Message.objects.filter(motion=harbor, kind=Kind.TEXT).exists()
    assert not Message.objects.filter(id=error_line["uuid"], kind=Kind.TEXT).exists()
