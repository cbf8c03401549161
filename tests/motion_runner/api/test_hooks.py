"""Claude Code hooks: a terminal session shows up live, and the transcript adds no doubles.

The payloads are those the real CLI gave a command hook on stdin (tests/recordings)."""

from __future__ import annotations

import json
import shutil

import pytest

from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import Message, MotionSession, TranscriptFile, UnclaimedSession
from motion_runner.transcripts.importer import import_file
from tests import recorded

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()
HOOKS = "/api/hooks/claude-code/"
LIVE = ("UserPromptSubmit", "PostToolUse", "Stop")


def post_hook(client, persona, payload, motion="harbor"):
    url = f"{HOOKS}?motion={motion}" if motion else HOOKS
    return client.post(url, payload, content_type="application/json", **persona.headers)


def live_payloads() -> list[dict]:
    return [h for h in recorded.lines("hooks") if h["hook_event_name"] in LIVE]


@pytest.fixture
def projects(tmp_path, settings):
    root = tmp_path / "projects"
    (root / "-tmp-work").mkdir(parents=True)
    settings.TRANSCRIPT_DIRS = [str(root)]
    return root


def kinds() -> dict[str, int]:
    out: dict[str, int] = {}
    for kind in Message.objects.values_list("kind", flat=True):
        out[kind] = out.get(kind, 0) + 1
    return out


def test_a_prompt_hook_binds_the_session_and_posts_the_prompt(client, scribe):
    prompt = recorded.hooks("UserPromptSubmit")[0]
    response = post_hook(client, scribe, prompt)
    assert response.json() == {"imported": 1, "claimed": True}
    assert MotionSession.objects.get(pk=SESSION).agent == scribe.agent
    message = Message.objects.get()
    assert (message.sender, message.source, message.text) == ("terminal", "terminal", prompt["prompt"])


def test_a_tool_hook_posts_the_call_and_its_result(client, scribe):
    post_hook(client, scribe, recorded.hooks("PostToolUse")[0])
    call, result = Message.objects.order_by("created_at")
    assert (call.kind, call.tool_name) == ("tool_call", "Read")
    assert call.text.startswith("Read /") and call.tool_id == result.tool_id
    assert result.text == "hello from the recorder\n"


def test_a_stop_hook_posts_the_last_reply_and_the_turn_end(client, scribe):
    post_hook(client, scribe, recorded.hooks("Stop")[0])
    assert kinds() == {"text": 1, "turn_end": 1}
    assert Message.objects.get(kind="text").text == "Done: the file says hello."


def test_the_same_hook_twice_posts_once(client, scribe):
    for _ in range(2):
        for payload in live_payloads():
            post_hook(client, scribe, payload)
    assert kinds() == {"text": 4, "tool_call": 2, "tool_result": 2, "turn_end": 2}


def test_hooks_of_an_unbound_session_wait_in_the_inbox(client, scribe):
    response = post_hook(client, scribe, recorded.hooks("UserPromptSubmit")[0], motion=None)
    assert response.json() == {"imported": 0, "claimed": False}
    assert "Read hello.txt" in UnclaimedSession.objects.get(pk=SESSION).first_lines
    assert not Message.objects.exists()


def test_hooks_into_another_agents_session_are_refused(client, scribe, rival):
    post_hook(client, scribe, recorded.hooks("UserPromptSubmit")[0])
    response = post_hook(client, rival, recorded.hooks("PostToolUse")[0], motion=None)
    assert response.status_code == 403
    assert Message.objects.count() == 1


def test_hooks_need_a_key(client, harbor):
    response = client.post(HOOKS, recorded.hooks("Stop")[0], content_type="application/json")
    assert response.status_code == 401


@pytest.mark.parametrize(
    "change",
    [{"session_id": None}, {"hook_event_name": None}, {"tool_use_id": ""}],
)
def test_a_bad_hook_body_is_a_400(client, scribe, change):
    payload = dict(recorded.hooks("PostToolUse")[0])
    for key, value in change.items():
        if value is None:
            payload.pop(key)
        else:
            payload[key] = value
    assert post_hook(client, scribe, payload).status_code == 400
    assert not Message.objects.exists()


def test_hooks_of_a_runner_session_are_left_to_its_stdout(client, scribe, harbor):
    writer = EventWriter(
        IngestContext(motion=harbor, agent=scribe.agent, harness="claude-code", source="runner")
    )
    from motion_runner.harnesses import get_adapter

    parser = get_adapter("claude-code").new_parser()
    for line in recorded.first_run():
        for event in parser.feed(line):
            writer.write(event)
    before = Message.objects.count()
    for payload in live_payloads():
        post_hook(client, scribe, payload)
    assert Message.objects.count() == before


def test_hooks_then_the_transcript_leave_no_doubles(client, scribe, projects):
    for payload in live_payloads():
        post_hook(client, scribe, payload)
    live = kinds()
    path = recorded.terminal_transcript(projects / "-tmp-work" / f"{SESSION}.jsonl")
    import_file(path)
    # The transcript adds the two "Let me use Read." lines and the compaction; the rest it finds.
    assert kinds() == {"text": 6, "tool_call": 2, "tool_result": 2, "turn_end": 3, "compact": 1}
    assert live["tool_call"] == 2
    done = Message.objects.filter(text="Done: the file says hello.")
    assert done.count() == 2
    assert {m.model_backend for m in done} == {"claude-opus-5-5"}  # filled in from the transcript
    ends = Message.objects.filter(kind="turn_end", cost_usd__isnull=False)
    assert ends.count() == 3 and all(e.text == "done · $0.0019" for e in ends)


def test_the_transcript_then_hooks_leave_no_doubles(client, scribe, projects):
    post_hook(client, scribe, recorded.hooks("UserPromptSubmit")[0])  # binds the session
    import_file(recorded.terminal_transcript(projects / "-tmp-work" / f"{SESSION}.jsonl"))
    after_import = kinds()
    for payload in live_payloads():
        post_hook(client, scribe, payload)
    assert (
        kinds() == after_import == {"text": 6, "tool_call": 2, "tool_result": 2, "turn_end": 3, "compact": 1}
    )


def test_a_stop_hook_imports_a_transcript_it_can_read(client, scribe, projects):
    path = projects / "-tmp-work" / f"{SESSION}.jsonl"
    shutil.copy(recorded.RECORDINGS / "read-then-reply.transcript.jsonl", path)
    stop = dict(recorded.hooks("Stop")[0], transcript_path=str(path))
    response = post_hook(client, scribe, stop)
    assert response.json()["imported"] >= 9
    assert TranscriptFile.objects.get().offset == path.stat().st_size


def test_a_stop_hook_never_reads_outside_the_transcript_dirs(client, scribe, projects, tmp_path):
    outside = tmp_path / f"{SESSION}.jsonl"
    shutil.copy(recorded.RECORDINGS / "read-then-reply.transcript.jsonl", outside)
    post_hook(client, scribe, dict(recorded.hooks("Stop")[0], transcript_path=str(outside)))
    assert not TranscriptFile.objects.exists()


def test_the_hooks_snippet_posts_the_three_events_with_the_key_from_the_environment(capsys):
    from django.core.management import call_command

    call_command("claude_code_hooks", url="http://runner.example:8000")
    settings_json = json.loads(capsys.readouterr().out)
    assert set(settings_json["hooks"]) == set(LIVE)
    command = settings_json["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert "$MOTION_RUNNER_KEY" in command and "http://runner.example:8000/api/hooks/claude-code/" in command
    shipped = json.loads(open("docs/claude-code-hooks.json").read())
    assert set(shipped["hooks"]) == set(LIVE)


def test_binding_a_session_later_takes_it_out_of_the_inbox(client, scribe):
    post_hook(client, scribe, recorded.hooks("UserPromptSubmit")[0], motion=None)
    post_hook(client, scribe, recorded.hooks("UserPromptSubmit")[1], motion="harbor")
    assert not UnclaimedSession.objects.exists()
    assert Message.objects.count() == 1


# --- issue 10: a session waiting in the inbox is the admin's to assign -----------------------------


def test_an_agent_cannot_claim_a_session_the_importer_found_on_this_machine(client, scribe):
    from motion_runner.models import UnclaimedSession

    payload = recorded.hooks("UserPromptSubmit")[0]
    UnclaimedSession.objects.create(session_id=payload["session_id"], path="/home/someone/.claude/x.jsonl")

    response = post_hook(client, scribe, payload)

    assert response.status_code == 403 and "inbox" in response.json()["error"]["detail"]
    assert not Message.objects.exists()


def test_an_agent_cannot_claim_a_session_another_agents_key_reported(client, scribe, rival):
    payload = recorded.hooks("UserPromptSubmit")[0]
    post_hook(client, rival, payload, motion=None)

    assert post_hook(client, scribe, payload).status_code == 403


def test_the_key_that_reported_a_session_may_bind_it(client, scribe):
    payload = recorded.hooks("UserPromptSubmit")[0]
    post_hook(client, scribe, payload, motion=None)

    assert post_hook(client, scribe, payload).json()["claimed"] is True
