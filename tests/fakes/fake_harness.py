#!/usr/bin/env python3
"""A stand-in harness for the runner's failure tests: it misbehaves on purpose.

It plays back lines (by default those recorded from the real Claude Code CLI) and then does
what FAKE_HARNESS_PLAN says: a JSON object with any of
  lines: a file of lines to print (default: the env FAKE_HARNESS_LINES)
  pace: seconds between lines
  exit: exit code;  hang: sleep forever after the lines;  signal: kill itself with it
  garbage: a list of raw strings printed between the lines
  flood_bytes: print this many bytes with no newline;  no_result: drop the result line
  stderr: text written to stderr;  child: start a sleeping child in the same group (it
  inherits stdout, like a shell's background job) and write its pid to this file
  launches: a file this run appends its pid to (so a test can count launches)
  transcript: {"from": a recorded transcript, "to": where to write it} before printing, as
    Claude Code keeps its transcript beside its stdout
  survive_lost_stdout: go on when nobody reads stdout any more (its runner died), as the real
    CLI did, instead of dying of the broken pipe
  printed: a file kept holding how many of the lines were written whole to stdout (so a test
    knows what a harness stopped mid-way had printed)
  stdin_to: write what it read on stdin (its prompt, as the real CLIs read it) to this file
  fresh_ids: give each line a fresh uuid (and each message a fresh id), so one file plays as
    many runs, each its own lines (as a real harness's runs are)
  gate: a folder; line i is printed only once the file `<gate>/<i>` exists (a browser test
    says when each line is printed, and sees when the page shows it)
"""

import json
import os
import select
import signal
import subprocess
import sys
import time

plan = json.loads(os.environ.get("FAKE_HARNESS_PLAN", "{}"))
if plan.get("launches"):
    with open(plan["launches"], "a") as handle:
        handle.write(f"{os.getpid()}\n")
if plan.get("stdin_to"):
    with open(plan["stdin_to"], "w") as handle:
        handle.write(sys.stdin.read())
lines_file = plan.get("lines") or os.environ.get("FAKE_HARNESS_LINES")
lines = open(lines_file).read().splitlines() if lines_file else []
if plan.get("fresh_ids"):
    import uuid

    def fresh(line: str) -> str:
        event = json.loads(line)
        if "uuid" in event:
            event["uuid"] = str(uuid.uuid4())
        if isinstance(event.get("message"), dict) and event["message"].get("id"):
            event["message"]["id"] = f"msg_{uuid.uuid4().hex}"
        return json.dumps(event)

    lines = [fresh(line) for line in lines if line.strip()]
if plan.get("no_result"):
    lines = [line for line in lines if '"type":"result"' not in line.replace(" ", "")]
if plan.get("child"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(plan["child"], "w") as handle:
        handle.write(str(child.pid))
if plan.get("stderr"):
    sys.stderr.write(plan["stderr"])
    sys.stderr.flush()
if plan.get("transcript"):
    os.makedirs(os.path.dirname(plan["transcript"]["to"]), exist_ok=True)
    with open(plan["transcript"]["from"]) as source, open(plan["transcript"]["to"], "w") as kept:
        kept.write(source.read())
garbage = list(plan.get("garbage", []))


def say(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        if not plan.get("survive_lost_stdout"):
            raise
        sys.stdout = open(os.devnull, "w")  # nobody listens; carry on regardless


def keep_printed(count: int) -> None:
    with open(plan["printed"] + ".new", "w") as handle:
        handle.write(str(count))
    os.replace(plan["printed"] + ".new", plan["printed"])


def say_counted(text: str, count: int) -> None:
    """Write a line and count it, so that a SIGTERM never parts the two: with the default action
    it could land between the write and the count, leaving the count one short of what the runner
    read. SIGTERM waits while the line goes out; if it comes while the pipe is full, the harness
    dies with the line not (or not wholly) written and the count already right."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    os.set_blocking(1, False)
    data = text.encode()
    while data:
        if signal.SIGTERM in signal.sigpending():
            os._exit(128 + signal.SIGTERM)
        try:
            data = data[os.write(1, data) :]
        except BlockingIOError:
            select.select([], [1], [], 0.02)
    os.set_blocking(1, True)
    keep_printed(count)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # a SIGTERM that came ends it here


for index, line in enumerate(lines):
    while plan.get("gate") and not os.path.exists(os.path.join(plan["gate"], str(index))):
        time.sleep(0.01)
    if plan.get("printed"):
        say_counted(line + "\n", index + 1)
    else:
        say(line + "\n")
    if index == 0 and garbage:
        for junk in garbage:
            say(junk + "\n")
    if plan.get("pace"):
        time.sleep(plan["pace"])
if plan.get("flood_bytes"):
    chunk = "x" * 65536
    remaining = plan["flood_bytes"]
    while remaining > 0:
        sys.stdout.write(chunk[: min(remaining, len(chunk))])
        remaining -= len(chunk)
    sys.stdout.flush()
if plan.get("signal"):
    os.kill(os.getpid(), getattr(signal, plan["signal"]))
if plan.get("hang"):
    time.sleep(3600)
sys.exit(plan.get("exit", 0))
