#!/usr/bin/env python3
"""Record what the real Claude Code CLI writes, against the fake Messages API on 127.0.0.1.

For one session it keeps three files in tests/recordings/claude-code/:
  <name>.stream.jsonl      stdout of `claude -p --output-format stream-json --verbose`
  <name>.transcript.jsonl  the session's transcript (~/.claude/projects/<cwd>/<session>.jsonl)
  <name>.hooks.jsonl       every hook payload Claude Code gave a command hook on stdin
The session is: a prompt that makes the model call Read and then reply; a resumed second
prompt; then `/compact` (a compaction boundary in the transcript).

Run: .venv/bin/python tests/recordings/record_claude_code.py [name]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.fakes.anthropic_api import FakeAnthropic, tool_then_reply  # noqa: E402

OUT = ROOT / "tests" / "recordings" / "claude-code"
CLAUDE = ROOT / "node_modules" / ".bin" / "claude"
HOOK_EVENTS = ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionStart", "PreCompact"]


def run(argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    proc = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=180)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr.decode(errors="replace"))
    return [line for line in proc.stdout.decode().splitlines() if line.strip()]


def main(name: str = "read-then-reply") -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        work = Path(tmp) / "work"
        (home / ".claude").mkdir(parents=True)
        work.mkdir()
        (work / "hello.txt").write_text("hello from the recorder\n")
        hook_log = Path(tmp) / "hooks.jsonl"
        hook_cmd = (
            f'{sys.executable} -c "import sys,json; '
            f"open('{hook_log}','a').write(json.dumps(json.load(sys.stdin))+'\\n')\""
        )
        settings = {
            "hooks": {
                event: [{"matcher": "*", "hooks": [{"type": "command", "command": hook_cmd}]}]
                for event in HOOK_EVENTS
            }
        }
        (home / ".claude" / "settings.json").write_text(json.dumps(settings))
        responder = tool_then_reply(
            [("Read", {"file_path": str(work / "hello.txt")})], "Done: the file says hello."
        )
        with FakeAnthropic(default=responder) as fake:
            env = {
                "PATH": os.environ["PATH"],
                "HOME": str(home),
                "ANTHROPIC_BASE_URL": fake.url,
                "ANTHROPIC_API_KEY": "sk-fake",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
            }
            base = [
                str(CLAUDE),
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--allowedTools",
                "Read",
            ]
            stream = run(base + ["--", "Read hello.txt and tell me what it says."], env, work)
            session = next(json.loads(line)["session_id"] for line in stream if '"session_id"' in line)
            stream += run(base + ["--resume", session, "--", "Thanks. Say it once more."], env, work)
            stream += run(base + ["--resume", session, "--", "/compact"], env, work)
        transcripts = list((home / ".claude" / "projects").glob(f"*/{session}.jsonl"))
        if not transcripts:
            raise SystemExit(f"no transcript for session {session} under {home / '.claude/projects'}")
        (OUT / f"{name}.stream.jsonl").write_text("\n".join(stream) + "\n")
        shutil.copy(transcripts[0], OUT / f"{name}.transcript.jsonl")
        if hook_log.exists():
            shutil.copy(hook_log, OUT / f"{name}.hooks.jsonl")
        print(
            f"session {session}: {len(stream)} stream lines, transcript {transcripts[0].stat().st_size} bytes"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
