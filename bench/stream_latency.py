"""Latency from a harness printing a line to its Message being readable through the API.

Two paths over the same harness output, measured in the same run:
  runner   - the runner task reads the harness's stdout and writes each event at once;
  baseline - what the seed replaces: the harness writes its transcript file, and a watcher
             tails it and posts what is new in batches every 2 s.
A poller reads /api/motions/<slug>/messages/?after=<cursor> over HTTP from a live server
(a long poll: `wait=5`) and notes when each message first shows; each line carries the wall-clock time
it was printed. Lines are shaped like the recorded Claude Code assistant lines. The thread holds
the prompt the turn answers, and the harness starts once the poller has read it and waits: a line
printed before any reader listened would measure the poller's start-up (it was the whole p99).
The runner's latency is also cut by stage (written, bell rung, poller busy, answered: `stages`).

    .venv/bin/python bench/stream_latency.py [--events 1000] [--pace-ms 20]

The default pace, a line every 20 ms (50 lines a second), is already far faster than a model
streams its events; --pace-ms 5 is the stress case. The target (issue 31) is a ratio: the runner's
p99 at most 1/50 of the watcher's, measured in the same run; the last line says whether it is met.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

from _django import ROOT, bench_database, database_url, percentile, web_env, web_process
from _figures import figure, ratio

RECORDING = ROOT / "tests" / "recordings" / "claude-code" / "text_reply.jsonl"

HARNESS = textwrap.dedent(
    """
    import json, sys, time, uuid
    template, events, pace, out = json.loads(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    sink = sys.stdout if out == "-" else open(out, "a")
    session = str(uuid.uuid4())
    def emit(obj):
        sink.write(json.dumps(obj) + "\\n"); sink.flush()
    emit({"type": "system", "subtype": "init", "session_id": session, "uuid": str(uuid.uuid4()),
          "tools": [], "model": "bench", "cwd": "/"})
    next_at = time.time()
    for n in range(events):
        next_at += pace
        time.sleep(max(0, next_at - time.time()))
        line = dict(template, uuid=str(uuid.uuid4()), session_id=session)
        line["message"] = dict(template["message"], id="msg_%d" % n,
                               content=[{"type": "text", "text": "n=%d t=%.6f" % (n, time.time())}])
        emit(line)
    emit({"type": "result", "subtype": "success", "is_error": False, "session_id": session,
          "uuid": str(uuid.uuid4()), "total_cost_usd": 0.0, "usage": {}})
    """
)


def listen(dsn: str, slug: str, heard: list[float], ready: threading.Event) -> None:
    """The bell as a process of the web's kind hears it: the arrival time of each NOTIFY for the
    Motion on the channel the web process listens to (motion_runner/thread/bell.py)."""
    import psycopg

    if not dsn.startswith("postgres"):  # SQLite's bell rings on sockets: no stage breakdown
        ready.set()
        return
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("LISTEN motion_messages")
        ready.set()
        for note in conn.notifies():
            if note.payload == slug:
                heard.append(time.time())


def poll(url: str, expected: int, deadline: float, dsn: str, slug: str) -> None:
    """A client in its own process: polls with a cursor, prints each event's latency in ms, and
    for the stage breakdown when each poll was sent and answered and when the bell rang."""
    import httpx

    heard: list[float] = []
    ready = threading.Event()
    threading.Thread(target=listen, args=(dsn, slug, heard, ready), daemon=True).start()
    ready.wait(10)
    seen: set[str] = set()
    latencies: list[float] = []
    received: list[tuple[float, float, int]] = []  # (printed, received, poll number) per event
    sent_at: list[float] = []
    with httpx.Client(timeout=10) as client:
        # The thread as a reader finds it (the prompt that started the turn): its cursor is where
        # this reader waits from. Only then does the harness start: a line printed before any
        # reader was listening measures how long the reader took to start, not the stream.
        cursor = client.get(url, params={"limit": 500, "kind": "text"}).json()["next"]
        print("ready", flush=True)
        while len(latencies) < expected and time.time() < deadline:
            params = {"limit": 500, "kind": "text", "wait": 5} | ({"after": cursor} if cursor else {})
            sent_at.append(time.time())
            body = client.get(url, params=params).json()
            now = time.time()
            for message in body["results"]:
                if message["id"] not in seen:
                    seen.add(message["id"])
                    printed = float(message["text"].rsplit("t=", 1)[1])
                    latencies.append((now - printed) * 1000)
                    received.append((printed, now, len(sent_at) - 1))
            cursor = body["next"] or cursor
    time.sleep(0.2)  # the last rings
    print(
        json.dumps(
            {
                "latencies": latencies,
                "polls": len(sent_at),
                "received": received,
                "sent": sent_at,
                "heard": list(heard),
            }
        )
    )


def stages(report: dict, created: dict[float, float]) -> dict[str, list[float]]:
    """Each event's latency cut at the moments the bench sees (ms): printed -> inserted (its
    created_at) -> the bell heard (the first NOTIFY after it) -> a poll waiting for it (the
    poller may still be busy with the previous answer) -> its answer received."""
    heard = sorted(report["heard"])
    out: dict[str, list[float]] = {"written": [], "rung": [], "poller busy": [], "answered": []}
    for printed, received, number in report["received"]:
        inserted = created.get(printed)
        at = bisect.bisect_left(heard, inserted) if inserted is not None else len(heard)
        if at == len(heard) or heard[at] > received:
            continue  # no ring seen for it (the poll found it before the note came): not cut
        rang = heard[at]
        waiting = max(rang, report["sent"][number])
        out["written"].append((inserted - printed) * 1000)
        out["rung"].append((rang - inserted) * 1000)
        out["poller busy"].append((waiting - rang) * 1000)
        out["answered"].append((received - waiting) * 1000)
    return out


def assistant_template() -> dict:
    for raw in RECORDING.read_text().splitlines():
        line = json.loads(raw)
        if line.get("type") == "assistant" and any(
            block.get("type") == "text" for block in line["message"]["content"]
        ):
            return line
    raise SystemExit(f"no assistant text line in {RECORDING}; run bin/record-claude")


def run_runner(motion, events: int, pace: float, template: dict, script: Path) -> None:
    from motion_runner.models import Agent
    from motion_runner.runner.turns import enqueue_turn, execute_turn

    wrapper = script.with_suffix(".sh")
    wrapper.write_text(
        f"#!/bin/sh\nexec {sys.executable} {script} '{json.dumps(template)}' {events} {pace} -\n"
    )
    wrapper.chmod(0o755)
    agent = Agent.objects.create(name="bench-runner", binary=str(wrapper))
    turn = enqueue_turn(motion, agent, "bench", dispatch=False)
    execute_turn(turn.pk)


def run_baseline(motion, events: int, pace: float, template: dict, script: Path) -> None:
    """A watcher tailing the transcript file and posting new lines every 2 s."""
    from motion_runner.harnesses import get_adapter
    from motion_runner.ingest.writer import EventWriter, IngestContext
    from motion_runner.models import Agent

    agent = Agent.objects.create(name="bench-baseline")
    transcript = script.with_suffix(".jsonl")
    transcript.touch()
    proc = subprocess.Popen(
        [sys.executable, str(script), json.dumps(template), str(events), str(pace), str(transcript)]
    )
    parser = get_adapter("claude-code").new_parser()
    writer = EventWriter(IngestContext(motion=motion, agent=agent, harness="claude-code", source="terminal"))
    offset = 0
    while True:
        finished = proc.poll() is not None
        if not finished:
            time.sleep(2.0)
        data = transcript.read_bytes()
        end = data.rfind(b"\n") + 1
        for raw in data[offset:end].splitlines():
            for event in parser.feed(json.loads(raw)):
                writer.write(event)
        offset = max(offset, end)
        if finished and offset >= len(data):
            break


def measure(name: str, base_url: str, dsn: str, events: int, pace: float, template: dict) -> dict:
    from motion_runner.models import Message, Motion, Source

    script = Path(tempfile.mkdtemp()) / "harness.py"
    script.write_text(HARNESS)
    # Public: the poller reads without signing in (a Motion's default needs a sign-in).
    motion = Motion.objects.create(slug=f"bench-{name}", title=name, visibility="public")
    # The post a turn answers: the reader starts from it, as a reader of a live thread does.
    prompt = Message.objects.create(motion=motion, sender="bench", source=Source.WEB, text="go")
    url = f"{base_url}/api/motions/{motion.slug}/messages/"
    poller = subprocess.Popen(
        [sys.executable, __file__, "--poll", url, str(events), str(time.time() + 120), dsn, motion.slug],
        stdout=subprocess.PIPE,
        text=True,
    )
    if poller.stdout.readline().strip() != "ready":
        raise SystemExit("the poller did not start")
    started, cpu = time.time(), time.process_time()
    (run_runner if name == "runner" else run_baseline)(motion, events, pace, template, script)
    # The writer's CPU (the runner task, or the watcher): less disturbed by load than wall time.
    cpu = time.process_time() - cpu
    report = json.loads(poller.communicate(timeout=180)[0])
    lat = report["latencies"]
    # The writer's share alone: from the print to the row's created_at (the insert).
    created = {
        float(text.rsplit("t=", 1)[1]): created.timestamp()
        for created, text in motion.messages.filter(kind="text")
        .exclude(pk=prompt.pk)
        .values_list("created_at", "text")
    }
    written = [(inserted - printed) * 1000 for printed, inserted in created.items()]
    cut = stages(report, created)
    return {
        "write_p50_ms": percentile(written, 50),
        "write_p99_ms": percentile(written, 99),
        "path": name,
        "events": len(lat),
        "p50_ms": percentile(lat, 50),
        "p99_ms": percentile(lat, 99),
        "max_ms": max(lat) if lat else float("nan"),
        "polls": report["polls"],
        "seconds": time.time() - started,
        "cpu_ms_a_line": cpu * 1000 / events,
        "stages": {
            stage: (percentile(v, 50), percentile(v, 99), max(v, default=0.0)) for stage, v in cut.items()
        },
        "cut": len(cut["written"]),
    }


def main() -> None:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--pace-ms", type=float, default=20.0)
    parser.add_argument("--poll", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.poll:
        url, expected, deadline, dsn, slug = args.poll
        poll(url, int(expected), float(deadline), dsn, slug)
        return
    template = assistant_template()
    with bench_database("bench_latency") as connection:
        # The web process as deployed: gunicorn with threads, in its own process.
        with web_process(web_env(connection), 4) as base_url:
            print(f"database: {connection.vendor}; {args.events} events, one every {args.pace_ms} ms")
            results = [
                measure(name, base_url, database_url(connection), args.events, args.pace_ms / 1000, template)
                for name in ("runner", "baseline")
            ]
    for r in results:
        print(
            f"{r['path']:>8}: {r['events']} events  p50 {r['p50_ms']:8.1f} ms  p99 {r['p99_ms']:8.1f} ms"
            f"  max {r['max_ms']:8.1f} ms  ({r['polls']} polls, {r['seconds']:.1f} s)"
            f"  | written: p50 {r['write_p50_ms']:.1f} ms, p99 {r['write_p99_ms']:.1f} ms"
            f"  | writer's CPU {r['cpu_ms_a_line']:.2f} ms a line"
        )
    runner, baseline = results
    print(f"runner's latency by stage, {runner['cut']} events the bell announced (p50 / p99 / max ms):")
    for stage, (p50, p99, worst) in runner["stages"].items():
        print(f"  {stage:>12}: {p50:6.1f} / {p99:6.1f} / {worst:6.1f}")
    print(
        f"ratio (baseline / runner): p50 {baseline['p50_ms'] / runner['p50_ms']:.0f}x, "
        f"p99 {baseline['p99_ms'] / runner['p99_ms']:.0f}x"
    )
    # The watcher's own p99 grows with the load (its one write a line falls behind); beside it, the
    # stricter form: the runner's p99 against the watcher's 2 s period alone, a constant.
    print(
        f"the watcher's 2 s period / the runner's p99: {2000 / runner['p99_ms']:.1f}x (no load in the period)"
    )
    figure("line -> readable, p99", 1000 / runner["p99_ms"], "lines/s at that latency (1000 / p99 ms)")
    ratio(
        "line -> readable p99, memory-lane's watcher / the runner",
        runner["p99_ms"],
        baseline["p99_ms"],
        "ms",
        50,
        lower_is_better=True,
    )


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
