"""Spawn a harness and hand its stdout to a callback line by line, as the lines come.

The process gets stdin from /dev/null, or from a file holding its prompt (Claude Code and Codex
wait on an open stdin; a file ends), and its
own process group, so a kill takes its children (shells, MCP servers) with it. Reading is a
select loop over raw file descriptors: nothing waits for the process to exit, a line is
handed on the moment its newline arrives, and the limits (turn timeout, line size, total
output, silence) are checked on every chunk, so a harness that hangs or floods is stopped on time.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

READ_CHUNK = 64 * 1024
# Once the harness itself has exited, what it wrote is already in the pipe: read on while
# more comes within this long, then stop, even if a child it left behind holds stdout open.
EXIT_DRAIN_SECONDS = 0.25


class Outcome:
    EXITED = "exited"
    TIMED_OUT = "timed_out"
    SILENT = "silent"  # printed nothing for the silence limit: a hung pipe or a tool that never returns
    FLOODED = "flooded"
    STOPPED = "stopped"  # the caller asked for it (the loop guard, a person's kill)
    # It printed its last word (the result line) but did not exit: a known Claude Code hang
    # (anthropics/claude-code#25629, #39700). Stopped after a grace; nothing was lost.
    LINGERED = "lingered"


class Bell(Protocol):
    def fileno(self) -> int | None: ...
    def heard(self) -> bool: ...


@dataclass
class ProcessResult:
    outcome: str
    returncode: int | None
    stderr_tail: str
    detail: str = ""
    stdout_bytes: int = 0
    lines: int = 0
    pid: int | None = None
    duration: float = 0.0
    unterminated_tail: bytes = field(default=b"", repr=False)


@dataclass
class Limits:
    # The wall clock: None for none (a full-tools turn does real work as long as it takes).
    timeout: float | None
    max_line_bytes: int
    max_output_bytes: int
    stderr_tail_bytes: int = 16 * 1024
    kill_grace: float = 3.0
    # How long a harness may take to exit once `ended()` says it printed its last word.
    after_end_grace: float = 10.0
    # Stop a harness that printed nothing on stdout for this long; None: no silence limit.
    silence: float | None = None


def kill_group(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM the process group, then SIGKILL it if it lingers.

    The group's id is the leader's pid (start_new_session), so this works after the leader
    has exited and been reaped too: what it left in the group (a background shell job, an
    MCP server) is still killed.
    """
    pgid = proc.pid
    if proc.poll() is None:
        try:
            os.killpg(pgid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # nobody left in the group
    try:
        proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
        pass


# Every harness process (and whatever it starts, which inherits its environment) carries its
# turn's marker here (runner.turns.turn_marker), so a reaper can tell a lost turn's processes
# from anyone else's before killing.
TURN_MARKER = "MOTION_RUNNER_TURN"


def marked_processes() -> dict[int, str]:
    """{pid: marker} of the live processes on this host that carry a turn marker."""
    found: dict[int, str] = {}
    prefix = f"{TURN_MARKER}=".encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        for variable in environ.split(b"\0"):
            if variable.startswith(prefix):
                found[int(entry.name)] = variable[len(prefix) :].decode(errors="replace")
                break
    return found


def kill_marked(markers: set[str], pgids: set[int] = frozenset()) -> list[int]:
    """SIGKILL every process on this host carrying one of these markers, and those of the listed
    groups it belongs to; returns the pids killed. The marker is checked first, so a pid or
    group id the system reused for someone else is never touched."""
    killed = []
    for pid, marker in marked_processes().items():
        if marker not in markers:
            continue
        try:
            group = os.getpgid(pid)
            if group in pgids:
                os.killpg(group, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except ProcessLookupError:
            continue
    return killed


# Outcomes after which the pipe is read to its end once the harness is stopped. Not a flood:
# its pipe holds only more of what flooded.
DRAINED_OUTCOMES = (Outcome.STOPPED, Outcome.TIMED_OUT, Outcome.SILENT, Outcome.LINGERED)
# How long a stopped harness's pipe may stay silent before the drain gives up (a process outside
# its group may hold it open).
DRAIN_QUIET_SECONDS = 1.0


@dataclass
class Drained:
    lines: int = 0
    bytes: int = 0


def drain_after_stop(
    stdout, pending: bytearray, on_lines: Callable[[list[bytes]], None], limits: Limits, total: int
) -> Drained:
    """Hand on every complete line left in `pending` and in the stopped harness's pipe, up to the
    output limit. The group is dead by now, so the pipe ends (EOF) once read; a line cut off by
    the kill is dropped, as it was never printed whole."""
    drained = Drained()
    fd = stdout.fileno()
    os.set_blocking(fd, False)
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while total + drained.bytes <= limits.max_output_bytes:
            batch: list[bytes] = []
            while (newline := pending.find(b"\n")) >= 0:
                line = bytes(pending[:newline])
                del pending[: newline + 1]
                if len(line) <= limits.max_line_bytes:
                    batch.append(line)
            if batch:
                drained.lines += len(batch)
                on_lines(batch)
            if not selector.select(timeout=DRAIN_QUIET_SECONDS):
                break
            try:
                chunk = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                break
            drained.bytes += len(chunk)
            pending += chunk
    return drained


def run_streaming(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    limits: Limits,
    on_lines: Callable[[list[bytes]], None],
    on_start: Callable[[int], None] | None = None,
    should_stop: Callable[[], str | None] | None = None,
    ended: Callable[[], bool] | None = None,
    on_tick: Callable[[], str | None] | None = None,
    stdin: bytes | None = None,
    bell: Bell | None = None,
    on_ring: Callable[[], str | None] | None = None,
) -> ProcessResult:
    """`on_tick` is called at least twice a second whether or not the harness prints (the
    runner renews its lease and retries buffered writes there); a reason it returns stops the
    harness, as `should_stop`'s does after a batch of lines.

    `stdin`: what the harness reads on its standard input (the prompt: an argument is capped at
    128 KiB by the kernel, a file is not). It is written to an unnamed temporary file first, so
    the harness reads it at its own pace and never blocks on a pipe we are not draining.

    `bell` (runner/stop_bell.py) is selected on with the harness's pipes: when it has heard a
    ring, `on_ring` is asked (once at the start too, for a stop asked before the bell listened)
    and a reason it returns stops the harness at once."""
    started = time.monotonic()
    with tempfile.TemporaryFile() if stdin is not None else open(os.devnull, "rb") as source:
        if stdin is not None:
            source.write(stdin)
            source.seek(0)
        proc = subprocess.Popen(
            argv,
            stdin=source,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    return _stream(proc, started, limits, on_lines, on_start, should_stop, ended, on_tick, bell, on_ring)


def _stream(
    proc: subprocess.Popen,
    started: float,
    limits: Limits,
    on_lines: Callable[[list[bytes]], None],
    on_start: Callable[[int], None] | None,
    should_stop: Callable[[], str | None] | None,
    ended: Callable[[], bool] | None,
    on_tick: Callable[[], str | None] | None,
    bell: Bell | None = None,
    on_ring: Callable[[], str | None] | None = None,
) -> ProcessResult:
    deadline = started + limits.timeout if limits.timeout is not None else float("inf")
    heard = started  # the last moment stdout said anything (the silence limit's clock)
    if on_start:
        on_start(proc.pid)
    assert proc.stdout is not None and proc.stderr is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, "out")
    selector.register(proc.stderr, selectors.EVENT_READ, "err")
    bell_fd = bell.fileno() if bell is not None and on_ring is not None else None
    if bell_fd is not None:
        selector.register(bell_fd, selectors.EVENT_READ, "bell")
    pending = bytearray()
    stderr_tail = bytearray()
    total = 0
    lines = 0
    outcome = Outcome.EXITED
    detail = ""
    open_streams = 2
    leader_exited = False
    lingering_since: float | None = None
    try:
        if on_ring is not None and (reason := on_ring()):
            outcome, detail = Outcome.STOPPED, reason
            open_streams = 0
        while open_streams:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if lingering_since is not None:
                    outcome = Outcome.LINGERED
                    detail = f"printed its result but did not exit within {limits.after_end_grace:g} s"
                else:
                    outcome, detail = Outcome.TIMED_OUT, f"no end after {limits.timeout:g} s"
                break
            silent_for = time.monotonic() - heard
            if limits.silence is not None and lingering_since is None and silent_for > limits.silence:
                outcome, detail = Outcome.SILENT, f"nothing printed for {limits.silence:g} s"
                break
            if not leader_exited and proc.poll() is not None:
                leader_exited = True
            if on_tick and (reason := on_tick()):
                outcome, detail = Outcome.STOPPED, reason
                break
            ready = selector.select(timeout=min(remaining, EXIT_DRAIN_SECONDS if leader_exited else 0.5))
            if not ready and leader_exited:
                break  # the harness is gone and nothing more came: a leftover child holds the pipe
            for key, _ in ready:
                if key.data == "bell":
                    rang = bell.heard()
                    if bell.fileno() is None:  # its connection dropped: the lease renewal looks
                        selector.unregister(key.fileobj)
                    if rang and (reason := on_ring()):
                        outcome, detail = Outcome.STOPPED, reason
                        break
                    continue
                chunk = os.read(key.fileobj.fileno(), READ_CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                if key.data == "err":
                    stderr_tail += chunk
                    del stderr_tail[: max(0, len(stderr_tail) - limits.stderr_tail_bytes)]
                    continue
                heard = time.monotonic()
                total += len(chunk)
                pending += chunk
                batch: list[bytes] = []
                while (newline := pending.find(b"\n")) >= 0:
                    line = bytes(pending[:newline])
                    del pending[: newline + 1]
                    if len(line) > limits.max_line_bytes:
                        outcome = Outcome.FLOODED
                        detail = f"a line of {len(line):,} bytes (limit {limits.max_line_bytes:,})"
                        break
                    batch.append(line)
                if batch:
                    # Every complete line that arrived in this read goes on together: one line
                    # alone when the harness is slow (lowest latency), a batch when it bursts.
                    lines += len(batch)
                    on_lines(batch)
                    if should_stop and outcome == Outcome.EXITED and (reason := should_stop()):
                        outcome, detail = Outcome.STOPPED, reason
                    if lingering_since is None and ended and ended():
                        lingering_since = time.monotonic()
                        deadline = min(deadline, lingering_since + limits.after_end_grace)
                if outcome != Outcome.EXITED:
                    break
                if len(pending) > limits.max_line_bytes:
                    outcome = Outcome.FLOODED
                    detail = f"more than {limits.max_line_bytes:,} bytes without a newline"
                    break
                if total > limits.max_output_bytes:
                    outcome = Outcome.FLOODED
                    detail = f"more than {limits.max_output_bytes:,} bytes of output"
                    break
            if outcome != Outcome.EXITED:
                break
        if outcome == Outcome.EXITED:
            try:
                proc.wait(timeout=max(0.1, min(deadline, time.monotonic() + 3600) - time.monotonic()))
            except subprocess.TimeoutExpired:
                outcome, detail = Outcome.TIMED_OUT, "closed its output but did not exit"
    finally:
        # Always: a harness that ended well may still have left children in its group.
        kill_group(proc, limits.kill_grace)
        selector.close()
        if outcome in DRAINED_OUTCOMES:
            # Stopped (a guard, a timeout): what it printed before the stop is still in the pipe,
            # and was spent. Read it to the end before closing, so it is stored and priced.
            drained = drain_after_stop(proc.stdout, pending, on_lines, limits, total)
            lines += drained.lines
            total += drained.bytes
        proc.stdout.close()
        proc.stderr.close()
    return ProcessResult(
        outcome=outcome,
        returncode=proc.returncode,
        stderr_tail=stderr_tail.decode("utf-8", "replace"),
        detail=detail,
        stdout_bytes=total,
        lines=lines,
        pid=proc.pid,
        duration=time.monotonic() - started,
        unterminated_tail=bytes(pending) if outcome == Outcome.EXITED else b"",
    )
