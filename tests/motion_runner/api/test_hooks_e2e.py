"""The real Claude Code CLI, with the shipped hooks snippet, posting to a live server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from motion_runner.harnesses.claude_code_hooks import hooks_settings
from motion_runner.models import Message, MotionSession
from motion_runner.transcripts.importer import import_all
from tests.fakes.anthropic_api import FakeAnthropic, tool_then_reply

CLAUDE = Path(django_settings.BASE_DIR) / "node_modules" / ".bin" / "claude"

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def kinds() -> dict[str, int]:
    out: dict[str, int] = {}
    for kind in Message.objects.values_list("kind", flat=True):
        out[kind] = out.get(kind, 0) + 1
    return out


def test_a_terminal_session_shows_up_through_its_hooks_and_the_transcript_adds_no_doubles(
    live_server, scribe, tmp_path, settings
):
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    (work / "notes.txt").write_text("the tide turns at six\n")
    (home / ".claude" / "settings.json").write_text(json.dumps(hooks_settings(live_server.url)))
    settings.TRANSCRIPT_DIRS = [str(home / ".claude" / "projects")]
    responder = tool_then_reply(
        [("Read", {"file_path": str(work / "notes.txt")})], "The notes say the tide turns at six."
    )
    with FakeAnthropic(default=responder) as fake:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": "sk-fake",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "MOTION_RUNNER_KEY": scribe.key,
            "MOTION_RUNNER_MOTION": "harbor",
        }
        proc = subprocess.run(
            [
                str(CLAUDE),
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--allowedTools",
                "Read",
                "--",
                "What do my notes say?",
            ],
            env=env,
            cwd=work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=180,
        )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    session_id = next(
        json.loads(line)["session_id"] for line in proc.stdout.decode().splitlines() if '"session_id"' in line
    )
    assert MotionSession.objects.get(pk=session_id).motion_id == "harbor"
    # Live, from the hooks alone (the Stop hook also read the transcript it could reach).
    assert kinds() == {"text": 3, "tool_call": 1, "tool_result": 1, "turn_end": 1}
    assert Message.objects.get(sender="terminal").text == "What do my notes say?"
    assert Message.objects.get(kind="tool_result").text == "the tide turns at six\n"
    assert Message.objects.filter(text="The notes say the tide turns at six.").count() == 1
    import_all()
    assert kinds() == {"text": 3, "tool_call": 1, "tool_result": 1, "turn_end": 1}
