"""The process seam: lines are handed on as they come, and limits stop a bad harness."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

from motion_runner.runner.process import Limits, Listener, Outcome, run_streaming

LIMITS = Limits(timeout=20, max_line_bytes=1024, max_output_bytes=64 * 1024, kill_grace=0.5)


class Lines(Listener):
    """Hands each batch to `take`; `stop` is its stop reason after every batch."""

    def __init__(self, take: Callable[[list[bytes]], object] = lambda _: None, stop: str | None = None):
        self.take, self.stop = take, stop

    def on_lines(self, lines: list[bytes]) -> None:
        self.take(lines)

    def stop_reason(self) -> str | None:
        return self.stop


def run(argv: list[str], limits: Limits = LIMITS, listener: Listener | None = None):
    return run_streaming(argv, env=dict(os.environ), cwd=None, limits=limits, listener=listener or Lines())


def python(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


def test_a_line_is_handed_on_before_the_process_exits(tmp_path: Path):
    # The harness waits for a file that only the callback creates: a reader that waited for
    # exit (or for a full buffer) would deadlock here and time out.
    flag = tmp_path / "seen"
    argv = python(
        f"""
        import os, sys, time
        print('{{"n": 1}}', flush=True)
        while not os.path.exists({str(flag)!r}):
            time.sleep(0.01)
        print('{{"n": 2}}', flush=True)
        """
    )
    seen: list[bytes] = []

    def on_lines(lines: list[bytes]) -> None:
        seen.extend(lines)
        flag.touch()

    result = run(argv, listener=Lines(on_lines))
    assert result.outcome == Outcome.EXITED
    assert seen == [b'{"n": 1}', b'{"n": 2}']


def test_stdin_is_closed(tmp_path: Path):
    argv = python("import sys; print(repr(sys.stdin.read()))")
    seen: list[bytes] = []
    run(argv, listener=Lines(seen.extend))
    assert seen == [b"''"]


def test_a_hang_is_stopped_at_the_timeout():
    argv = python("import time; print('x', flush=True); time.sleep(60)")
    limits = Limits(timeout=1.0, max_line_bytes=1024, max_output_bytes=4096, kill_grace=0.5)
    result = run(argv, limits)
    assert result.outcome == Outcome.TIMED_OUT
    assert result.duration < 10


def test_output_without_a_newline_is_a_flood():
    argv = python("import sys; sys.stdout.write('y' * 10_000_000); sys.stdout.flush()")
    result = run(argv)
    assert result.outcome == Outcome.FLOODED
    assert "without a newline" in result.detail


def test_too_much_output_in_total_is_a_flood():
    argv = python("import sys\nfor _ in range(100000): print('z' * 100)")
    result = run(argv)
    assert result.outcome == Outcome.FLOODED
    assert "bytes of output" in result.detail


def test_a_last_line_without_newline_is_kept():
    argv = python("import sys; sys.stdout.write('tail')")
    result = run(argv)
    assert result.unterminated_tail == b"tail"


def test_stderr_keeps_only_its_tail():
    argv = python("import sys; sys.stderr.write('a' * 50000 + 'END')")
    limits = Limits(timeout=20, max_line_bytes=1024, max_output_bytes=4096, stderr_tail_bytes=100)
    result = run(argv, limits)
    assert len(result.stderr_tail) == 100
    assert result.stderr_tail.endswith("END")


def test_should_stop_kills_the_whole_process_group(tmp_path: Path):
    pid_file = tmp_path / "child.pid"
    argv = python(
        f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
        open({str(pid_file)!r}, 'w').write(str(child.pid))
        print('go', flush=True)
        time.sleep(60)
        """
    )
    result = run(argv, listener=Lines(stop="the loop guard tripped"))
    assert result.outcome == Outcome.STOPPED
    assert process_gone(int(pid_file.read_text()))


def process_gone(pid: int, wait: float = 3.0) -> bool:
    """Gone, or a zombie waiting for init to reap it."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/status") as status:
                if "zombie" in status.read():
                    return True
        except (FileNotFoundError, ProcessLookupError):  # gone, or going while read
            return True
        time.sleep(0.05)
    return False
