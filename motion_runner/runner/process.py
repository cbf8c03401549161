"""Spawn a harness and hand its stdout to a Listener line by line, as the lines come.

The process gets stdin from /dev/null, or from a file holding its prompt (Claude Code and Codex
wait on an open stdin; a file ends), and its own process group, so a kill takes its children
(shells, MCP servers) with it. Reading is a select loop over raw file descriptors (HarnessStream):
nothing waits for the process to exit, a line is handed on the moment its newline arrives, and
the limits (turn timeout, line size, total output, silence) are checked on every chunk, so a
harness that hangs or floods is stopped on time.
"""

from __future__ import annotations

import fcntl
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
# The harness's stdout pipe holds this much (Linux's default is 64 KiB): what it printed that the
# runner has not read yet. A guard acts on what it has read, so a harness faster than the runner
# makes at most this much output's worth of calls unseen, besides the read in hand (docs/limits.md).
PIPE_BYTES = 8 * 1024
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
    def reopen(self) -> bool: ...


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


class Listener:
    """Who runs a harness, as the select loop tells and asks it (TurnRun is the runner's). Each
    does nothing by default, so a caller overrides only what it needs."""

    # runner/stop_bell.py: selected on with the harness's pipes; once it has heard a ring,
    # `on_ring` is asked (once at the start too, for a stop asked before the bell listened).
    bell: Bell | None = None

    def on_start(self, pid: int) -> None:
        """The harness runs, as `pid` (its group's id too)."""

    def on_lines(self, lines: list[bytes]) -> None:
        """The complete lines of one read, together (one alone when the harness is slow)."""

    def stop_reason(self) -> str | None:
        """Asked after each batch of lines: a reason stops the harness."""
        return None

    def ended(self) -> bool:
        """Asked after each batch: whether the harness printed its last word (it then has
        `after_end_grace` to exit)."""
        return False

    def on_tick(self) -> str | None:
        """Called at least twice a second whether or not the harness prints (the runner renews its
        lease and retries buffered writes there); a reason stops the harness."""
        return None

    def on_ring(self) -> str | None:
        """The bell rang: a reason stops the harness at once."""
        return None


def run_streaming(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    limits: Limits,
    listener: Listener,
    stdin: bytes | None = None,
) -> ProcessResult:
    """Run the harness and stream its stdout to `listener` (HarnessStream) until it ends or is stopped.

    `stdin`: what the harness reads on its standard input (the prompt: an argument is capped at
    128 KiB by the kernel, a file is not). It is written to an unnamed temporary file first, so
    the harness reads it at its own pace and never blocks on a pipe we are not draining."""
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
    try:
        fcntl.fcntl(proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except OSError:  # it already printed more than that: the pipe keeps its size
        pass
    return HarnessStream(proc, started, limits, listener).run()


class HarnessStream:
    """One harness's pipes, read by a select loop: each round checks the clocks (the wall clock,
    the grace after its last word, silence, the listener's tick), then hands on what is ready
    (a ring of the bell, stderr's tail, stdout's complete lines) until the pipes close or a
    stop is decided. `outcome` stays EXITED until something stops it."""

    def __init__(self, proc: subprocess.Popen, started: float, limits: Limits, listener: Listener) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self.proc, self.started, self.limits, self.listener = proc, started, limits, listener
        self.deadline = started + limits.timeout if limits.timeout is not None else float("inf")
        self.heard = started  # the last moment stdout said anything (the silence limit's clock)
        self.pending = bytearray()
        self.stderr_tail = bytearray()
        self.total = 0
        self.lines = 0
        self.outcome = Outcome.EXITED
        self.detail = ""
        self.open_streams = 2
        self.leader_exited = False
        self.lingering_since: float | None = None
        self.selector = selectors.DefaultSelector()
        self.selector.register(proc.stdout, selectors.EVENT_READ, "out")
        self.selector.register(proc.stderr, selectors.EVENT_READ, "err")
        bell = listener.bell
        if bell is not None and bell.fileno() is not None:
            self.selector.register(bell.fileno(), selectors.EVENT_READ, "bell")

    def run(self) -> ProcessResult:
        self.listener.on_start(self.proc.pid)
        try:
            if reason := self.listener.on_ring():  # a stop asked before the bell listened
                self.stop(Outcome.STOPPED, reason)
            while self.open_streams and self.outcome == Outcome.EXITED and self.round():
                pass
            if self.outcome == Outcome.EXITED:
                self.wait_for_exit()
        finally:
            self.close()
        return self.result()

    def stop(self, outcome: str, detail: str) -> None:
        self.outcome, self.detail = outcome, detail

    def round(self) -> bool:
        """One turn of the loop; False when it ends without a stop (the harness is gone and
        nothing more came: a leftover child holds the pipe)."""
        if self.clocks_stop():
            return True
        remaining = self.deadline - time.monotonic()
        ready = self.selector.select(
            timeout=min(remaining, EXIT_DRAIN_SECONDS if self.leader_exited else 0.5)
        )
        if not ready and self.leader_exited:
            return False
        for key, _ in ready:
            self.take(key)
            if self.outcome != Outcome.EXITED:
                break
        return True

    def clocks_stop(self) -> bool:
        """The wall clock, the grace after its last word, silence, then the listener's tick."""
        now = time.monotonic()
        if now >= self.deadline:
            if self.lingering_since is not None:
                self.stop(
                    Outcome.LINGERED,
                    f"printed its result but did not exit within {self.limits.after_end_grace:g} s",
                )
            else:
                self.stop(Outcome.TIMED_OUT, f"no end after {self.limits.timeout:g} s")
            return True
        silence = self.limits.silence
        if silence is not None and self.lingering_since is None and now - self.heard > silence:
            self.stop(Outcome.SILENT, f"nothing printed for {silence:g} s")
            return True
        if not self.leader_exited and self.proc.poll() is not None:
            self.leader_exited = True
        if self.bell_back():
            return True
        if reason := self.listener.on_tick():
            self.stop(Outcome.STOPPED, reason)
            return True
        return False

    def take(self, key: selectors.SelectorKey) -> None:
        if key.data == "bell":
            self.hear_bell(key)
            return
        chunk = os.read(key.fileobj.fileno(), READ_CHUNK)
        if not chunk:
            self.selector.unregister(key.fileobj)
            self.open_streams -= 1
        elif key.data == "err":
            self.stderr_tail += chunk
            del self.stderr_tail[: max(0, len(self.stderr_tail) - self.limits.stderr_tail_bytes)]
        else:
            self.take_stdout(chunk)

    def bell_back(self) -> bool:
        """A bell whose connection dropped listens again (runner/stop_bell.py); the flag is read
        once then, for a ring lost while it was away. True if that stops the harness."""
        bell = self.listener.bell
        if bell is None or bell.fileno() is not None or not bell.reopen():
            return False
        if (fileno := bell.fileno()) is not None:
            self.selector.register(fileno, selectors.EVENT_READ, "bell")
        if reason := self.listener.on_ring():
            self.stop(Outcome.STOPPED, reason)
            return True
        return False

    def hear_bell(self, key: selectors.SelectorKey) -> None:
        bell = self.listener.bell
        rang = bell.heard()
        if bell.fileno() is None:  # its connection dropped: the lease renewal looks
            self.selector.unregister(key.fileobj)
        if rang and (reason := self.listener.on_ring()):
            self.stop(Outcome.STOPPED, reason)

    def take_stdout(self, chunk: bytes) -> None:
        self.heard = time.monotonic()
        self.total += len(chunk)
        self.pending += chunk
        batch = self.complete_lines()
        if batch:
            # Every complete line that arrived in this read goes on together: one line alone
            # when the harness is slow (lowest latency), a batch when it bursts.
            self.hand_on(batch)
        if self.outcome != Outcome.EXITED:
            return
        if len(self.pending) > self.limits.max_line_bytes:
            self.stop(Outcome.FLOODED, f"more than {self.limits.max_line_bytes:,} bytes without a newline")
        elif self.total > self.limits.max_output_bytes:
            self.stop(Outcome.FLOODED, f"more than {self.limits.max_output_bytes:,} bytes of output")

    def complete_lines(self) -> list[bytes]:
        """The complete lines in `pending`, up to one over the line limit (a flood)."""
        batch: list[bytes] = []
        while (newline := self.pending.find(b"\n")) >= 0:
            line = bytes(self.pending[:newline])
            del self.pending[: newline + 1]
            if len(line) > self.limits.max_line_bytes:
                self.stop(
                    Outcome.FLOODED, f"a line of {len(line):,} bytes (limit {self.limits.max_line_bytes:,})"
                )
                break
            batch.append(line)
        return batch

    def hand_on(self, batch: list[bytes]) -> None:
        self.lines += len(batch)
        self.listener.on_lines(batch)
        if self.outcome == Outcome.EXITED and (reason := self.listener.stop_reason()):
            self.stop(Outcome.STOPPED, reason)
        if self.lingering_since is None and self.listener.ended():
            self.lingering_since = time.monotonic()
            self.deadline = min(self.deadline, self.lingering_since + self.limits.after_end_grace)

    def wait_for_exit(self) -> None:
        """Its output closed: it has until the deadline (an hour at most) to exit."""
        now = time.monotonic()
        try:
            self.proc.wait(timeout=max(0.1, min(self.deadline, now + 3600) - now))
        except subprocess.TimeoutExpired:
            self.stop(Outcome.TIMED_OUT, "closed its output but did not exit")

    def close(self) -> None:
        # Always: a harness that ended well may still have left children in its group.
        kill_group(self.proc, self.limits.kill_grace)
        self.selector.close()
        if self.outcome in DRAINED_OUTCOMES:
            # Stopped (a guard, a timeout): what it printed before the stop is still in the pipe,
            # and was spent. Read it to the end before closing, so it is stored and priced.
            drained = drain_after_stop(
                self.proc.stdout, self.pending, self.listener.on_lines, self.limits, self.total
            )
            self.lines += drained.lines
            self.total += drained.bytes
        self.proc.stdout.close()
        self.proc.stderr.close()

    def result(self) -> ProcessResult:
        return ProcessResult(
            outcome=self.outcome,
            returncode=self.proc.returncode,
            stderr_tail=self.stderr_tail.decode("utf-8", "replace"),
            detail=self.detail,
            stdout_bytes=self.total,
            lines=self.lines,
            pid=self.proc.pid,
            duration=time.monotonic() - self.started,
            unterminated_tail=bytes(self.pending) if self.outcome == Outcome.EXITED else b"",
        )
