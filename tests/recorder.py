"""Re-record the real Claude Code CLI's stream-json output against the fake model server.

    bin/record-claude                 # every scenario
    bin/record-claude tool_call       # just some
    bin/record-claude --list

For each scenario it starts tests/fakes/anthropic_api.FakeAnthropic, scripts it, runs the real
`claude -p --output-format stream-json --verbose` from node_modules (stdin from /dev/null, a
temporary HOME, a temporary workspace `work/`) and writes, in tests/recordings/claude-code/:

- `<scenario>.jsonl`: the CLI's stdout lines, verbatim (`<scenario>.stream.jsonl` for a
  session scenario: every run's stdout, one after the other);
- `<scenario>.transcript.jsonl`: the session transcript the CLI wrote under
  `$HOME/.claude/projects/<cwd>/<session>.jsonl`, verbatim;
- `<scenario>.hooks.jsonl`: for a scenario that captures hooks, every hook payload Claude Code
  gave a command hook on stdin, one a line;
- `<scenario>.meta.json`: the CLI version, argv, exit code, stderr, the workspace path and a
  summary of every request the fake received (path, model, stream, the tools offered).

The parser tests read these files (tests/recorded.py); tests/fakes/fake_harness.py plays them
back for the runner's failure tests. Re-run this after changing the pinned CLI version, and
commit the diff.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.anthropic_api import (  # noqa: E402
    ApiError,
    FakeAnthropic,
    Hang,
    Reply,
    Text,
    ToolUse,
    Usage,
    tool_then_reply,
)

RECORDINGS = ROOT / "tests" / "recordings" / "claude-code"
CLAUDE = ROOT / "node_modules" / ".bin" / "claude"
README_TEXT = "# Demo workspace\n\nThe answer to the demo question is 42.\n"


@dataclass
class Run:
    argv: list[str]
    returncode: int
    stdout: bytes
    stderr: str
    session_id: str
    transcript: Path | None


@dataclass
class Session:
    """One scenario's sandbox: a HOME, a workspace with a README, and the fake model."""

    api: FakeAnthropic
    home: Path
    workspace: Path
    claude: str
    runs: list[Run] = field(default_factory=list)
    hooks_log: Path | None = None

    def capture_hooks(self, events: list[str]) -> None:
        """Install a command hook for each event that appends its stdin payload to hooks_log."""
        self.hooks_log = self.home.parent / "hooks.jsonl"
        command = (
            f'{sys.executable} -c "import sys,json; '
            f"open('{self.hooks_log}','a').write(json.dumps(json.load(sys.stdin))+'\\n')\""
        )
        hook = [{"matcher": "*", "hooks": [{"type": "command", "command": command}]}]
        settings = self.home / ".claude" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"hooks": {event: hook for event in events}}))

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            **self.api.env(),
            **extra,
        }

    def claude_argv(self, prompt: str, *flags: str) -> list[str]:
        return [self.claude, "-p", "--output-format", "stream-json", "--verbose", *flags, "--", prompt]

    def run(self, prompt: str, *flags: str, timeout: float = 180, **extra_env: str) -> Run:
        argv = self.claude_argv(prompt, *flags)
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=self.env(**extra_env),
            cwd=self.workspace,
            timeout=timeout,
        )
        session_id = ""
        for line in proc.stdout.splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("session_id"):
                session_id = obj["session_id"]
                break
        run = Run(
            argv=argv,
            returncode=proc.returncode,
            stdout=proc.stdout,
            stderr=proc.stderr.decode("utf-8", "replace"),
            session_id=session_id,
            transcript=transcript_path(self.home, session_id),
        )
        self.runs.append(run)
        return run

    def run_killed_after_tool_result(self, prompt: str, *flags: str, timeout: float = 120) -> Run:
        """Run until the first tool result line, then SIGTERM the CLI (as the runner's guards
        and timeouts do) and keep what it printed up to its exit."""
        argv = self.claude_argv(prompt, *flags)
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env(),
            cwd=self.workspace,
        )
        assert proc.stdout is not None
        out = b""
        session_id = ""
        for line in proc.stdout:
            out += line
            obj = json.loads(line)
            session_id = session_id or obj.get("session_id", "")
            if obj.get("type") == "user":
                proc.send_signal(signal.SIGTERM)
                break
        rest, err = proc.communicate(timeout=timeout)
        run = Run(
            argv=argv,
            returncode=proc.returncode,
            stdout=out + rest,
            stderr=err.decode("utf-8", "replace"),
            session_id=session_id,
            transcript=transcript_path(self.home, session_id),
        )
        self.runs.append(run)
        return run


def transcript_path(home: Path, session_id: str) -> Path | None:
    if not session_id:
        return None
    found = sorted((home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    return found[0] if found else None


# --- scenarios ----------------------------------------------------------------------------
# Each gets a fresh Session, scripts the fake, runs the CLI and returns the Run to save.

Scenario = Callable[[Session], Run]
SCENARIOS: dict[str, Scenario] = {}
DESCRIPTIONS: dict[str, str] = {}
# Scenarios that keep every run's stdout as <name>.stream.jsonl (tests/recorded.py's `lines`).
SESSIONS: set[str] = set()


def scenario(description: str, name: str = "", session: bool = False) -> Callable[[Scenario], Scenario]:
    def register(func: Scenario) -> Scenario:
        key = name or func.__name__
        SCENARIOS[key] = func
        DESCRIPTIONS[key] = description
        if session:
            SESSIONS.add(key)
        return func

    return register


@scenario("the model says one thing and ends the turn")
def text_reply(s: Session) -> Run:
    s.api.script(Reply(Text("Hello from the fake model: nothing to do here.")))
    return s.run("Say hello.")


def _read_then_answer(s: Session) -> None:
    s.api.script(
        Reply(
            Text("Let me read the README first."),
            ToolUse("Read", {"file_path": str(s.workspace / "README.md")}),
            usage=Usage(input_tokens=1200, output_tokens=40),
        ),
        Reply(Text("The README says the answer is 42."), usage=Usage(input_tokens=1300, output_tokens=12)),
    )


@scenario("says something, Reads a file in the workspace, then answers (the e2e turn)")
def tool_call(s: Session) -> Run:
    _read_then_answer(s)
    return s.run("What does the README say?")


@scenario("one API message with text and two tool_use blocks (Glob, Read), then an answer")
def two_blocks(s: Session) -> Run:
    s.api.script(
        Reply(
            Text("I'll list the markdown files and read the README."),
            ToolUse("Glob", {"pattern": "*.md"}),
            ToolUse("Read", {"file_path": str(s.workspace / "README.md")}),
        ),
        Reply(Text("There is one markdown file, README.md; it says the answer is 42.")),
    )
    # Glob is not in 2.1.332's default tool set ("find files with `find` via Bash"): offer it.
    return s.run("Which markdown files are there, and what does the README say?", "--tools", "Read,Grep,Glob")


@scenario("the tool_call turn with --include-partial-messages (stream_event lines)")
def partials(s: Session) -> Run:
    _read_then_answer(s)
    return s.run("What does the README say?", "--include-partial-messages")


@scenario("the API answers HTTP 500 every time (CLAUDE_CODE_MAX_RETRIES=1)")
def model_error(s: Session) -> Run:
    s.api.default = ApiError.server()
    return s.run("Say hello.", CLAUDE_CODE_MAX_RETRIES="1")


@scenario("the API answers 529 overloaded every time (CLAUDE_CODE_MAX_RETRIES=1)")
def model_overloaded(s: Session) -> Run:
    s.api.default = ApiError.overloaded()
    return s.run("Say hello.", CLAUDE_CODE_MAX_RETRIES="1")


@scenario("the API refuses the request with 400 invalid_request_error (not retried)")
def model_invalid_request(s: Session) -> Run:
    s.api.default = ApiError.invalid("prompt is too long: 250000 tokens > 200000 maximum")
    return s.run("Say hello.")


@scenario("a second turn with --resume <session> (the first turn is text_reply)")
def resume(s: Session) -> Run:
    s.api.script(Reply(Text("First turn: hello.")), Reply(Text("Second turn: I remember the first.")))
    first = s.run("Say hello.")
    return s.run("Do you remember?", "--resume", first.session_id)


@scenario("--resume of a session this HOME never had (the harness lost it)")
def resume_gone(s: Session) -> Run:
    return s.run("Are you there?", "--resume", "5d0d3d4c-0000-4000-8000-000000000000")


@scenario("an agent with no API key: the CLI answers without calling the model")
def not_logged_in(s: Session) -> Run:
    return s.run("Are you there?", ANTHROPIC_API_KEY="")


@scenario("--max-budget-usd 0.01 with a first reply whose usage costs more than that")
def max_budget(s: Session) -> Run:
    s.api.script(
        Reply(
            Text("Reading."),
            ToolUse("Read", {"file_path": str(s.workspace / "README.md")}),
            usage=Usage(input_tokens=200_000, output_tokens=2_000),
        ),
        Reply(Text("It says 42.")),
    )
    return s.run("What does the README say?", "--max-budget-usd", "0.01")


@scenario("the model calls Bash outside the allowlist --tools Read,Grep,Glob (refused), then answers")
def tool_not_offered(s: Session) -> Run:
    s.api.script(
        Reply(Text("I'll try the shell."), ToolUse("Bash", {"command": "touch written.txt"})),
        Reply(Text("I can only look, not write.")),
    )
    return s.run("Create written.txt.", "--tools", "Read,Grep,Glob")


@scenario("the model asks to Write with no permission to (a permission denial in the result)")
def permission_denied(s: Session) -> Run:
    s.api.script(
        Reply(
            Text("Writing the file."),
            ToolUse("Write", {"file_path": str(s.workspace / "written.txt"), "content": "hi\n"}),
        ),
        Reply(Text("I was not allowed to write it.")),
    )
    return s.run("Create written.txt.")


HOOK_EVENTS = ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionStart", "PreCompact"]


@scenario(
    "a session, three ways (stream, transcript, every hook payload): Read then reply, "
    "a resumed prompt, then /compact",
    name="read-then-reply",
    session=True,
)
def read_then_reply(s: Session) -> Run:
    s.capture_hooks(HOOK_EVENTS)
    (s.workspace / "hello.txt").write_text("hello from the recorder\n")
    s.api.default = tool_then_reply(
        [("Read", {"file_path": str(s.workspace / "hello.txt")})],
        "Done: the file says hello.",
        # Each call costs $0.00096 on the list price; the tests pin the turn's $0.001920.
        usage=Usage(input_tokens=120, output_tokens=24),
    )
    first = s.run("Read hello.txt and tell me what it says.", "--allowedTools", "Read")
    s.run("Thanks. Say it once more.", "--allowedTools", "Read", "--resume", first.session_id)
    return s.run("/compact", "--allowedTools", "Read", "--resume", first.session_id)


# Every turn of the money scenarios reports these tokens (priced by the CLI at its list price),
# so three equal turns must cost three equal amounts: tests/motion_runner/harnesses/test_turn_cost.py pins them.
MONEY_USAGE = Usage(
    input_tokens=3000, output_tokens=200, cache_creation_input_tokens=1000, cache_read_input_tokens=5000
)


@scenario(
    "three turns of one session (--resume), each reporting the same tokens: the result line's "
    "total_cost_usd is the session's running total",
    session=True,
)
def resume_three(s: Session) -> Run:
    s.api.default = lambda request: Reply(Text("Noted."), usage=MONEY_USAGE)
    first = s.run("Turn one.")
    s.run("Turn two.", "--resume", first.session_id)
    return s.run("Turn three.", "--resume", first.session_id)


@scenario(
    "session A, then a new session B in the same workspace, then A resumed: the running total "
    "belongs to the session, not to the workspace",
    session=True,
)
def resume_other_between(s: Session) -> Run:
    s.api.default = lambda request: Reply(Text("Noted."), usage=MONEY_USAGE)
    first = s.run("Session A, turn one.")
    s.run("Session B, turn one.")
    return s.run("Session A, turn two.", "--resume", first.session_id)


@scenario(
    "a session whose second turn is killed (SIGTERM) after one paid API call, then resumed: "
    "what the killed process counted is in the third turn's total or not",
    session=True,
)
def resume_after_kill(s: Session) -> Run:
    def respond(request):
        last = request.messages[-1] if request.messages else {}
        content = last.get("content") if isinstance(last, dict) else None
        if (
            isinstance(content, list)
            and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
            and "Turn three" not in request.last_user_text()
        ):
            return Hang()  # the killed turn's second call: never answered
        if "Read the README" in request.last_user_text():
            read = ToolUse("Read", {"file_path": str(s.workspace / "README.md")})
            return Reply(Text("Reading."), read, usage=MONEY_USAGE)
        return Reply(Text("Noted."), usage=MONEY_USAGE)

    s.api.default = respond
    first = s.run("Turn one.")
    s.run_killed_after_tool_result("Read the README.", "--resume", first.session_id)
    return s.run("Turn three.", "--resume", first.session_id)


# --- recording ----------------------------------------------------------------------------


def request_summary(api: FakeAnthropic) -> list[dict]:
    return [
        {
            "method": r.method,
            "path": r.path,
            "model": r.model,
            "stream": r.stream,
            "tools": r.tool_names,
            "messages": len(r.messages),
            "answered_with": r.response,
        }
        for r in api.requests
    ]


def record(name: str, claude: str, out: Path) -> Run:
    with tempfile.TemporaryDirectory(prefix=f"record-{name}-") as tmp:
        home = Path(tmp) / "home"
        workspace = Path(tmp) / "work"
        home.mkdir()
        workspace.mkdir()
        (workspace / "README.md").write_text(README_TEXT)
        with FakeAnthropic() as api:
            session = Session(api=api, home=home, workspace=workspace, claude=claude)
            run = SCENARIOS[name](session)
            requests = request_summary(api)
        out.mkdir(parents=True, exist_ok=True)
        if name in SESSIONS:
            (out / f"{name}.stream.jsonl").write_bytes(b"".join(r.stdout for r in session.runs))
        else:
            (out / f"{name}.jsonl").write_bytes(run.stdout)
        copy_or_remove(run.transcript, out / f"{name}.transcript.jsonl")
        if session.hooks_log is not None:
            copy_or_remove(session.hooks_log, out / f"{name}.hooks.jsonl")
        meta = {
            "scenario": name,
            "description": DESCRIPTIONS[name],
            "claude_code_version": cli_version(claude),
            "argv": [Path(a).name if a == claude else a for a in run.argv],
            "returncode": run.returncode,
            "stderr": run.stderr[-4000:],
            "workspace": str(workspace),
            "session_id": run.session_id,
            "sessions": [r.session_id for r in session.runs],
            "requests": requests,
        }
        (out / f"{name}.meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        return run


def copy_or_remove(source: Path | None, target: Path) -> None:
    """A file the CLI did not write this time must not survive from an older recording."""
    if source and source.exists():
        shutil.copyfile(source, target)
    else:
        target.unlink(missing_ok=True)


def cli_version(claude: str) -> str:
    result = subprocess.run([claude, "--version"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return result.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("scenarios", nargs="*", help="Scenario names (default: all).")
    parser.add_argument("--claude", default=str(CLAUDE), help="The claude binary.")
    parser.add_argument("--out", default=str(RECORDINGS), help="Where the recordings go.")
    parser.add_argument("--list", action="store_true", help="List the scenarios and exit.")
    args = parser.parse_args(argv)
    if args.list:
        for name, description in DESCRIPTIONS.items():
            print(f"{name:24} {description}")
        return 0
    if not Path(args.claude).exists():
        print(f"no claude binary at {args.claude} (run `npm ci`)", file=sys.stderr)
        return 2
    names = args.scenarios or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    print(f"recording {cli_version(args.claude)} into {args.out}")
    for name in names:
        run = record(name, args.claude, Path(args.out))
        stream = Path(args.out) / (f"{name}.stream.jsonl" if name in SESSIONS else f"{name}.jsonl")
        lines = stream.read_bytes().count(b"\n")
        print(f"  {name:24} exit {run.returncode}, {lines} lines, session {run.session_id or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
