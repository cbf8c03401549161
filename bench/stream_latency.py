"""Latency from a harness printing a line to its Message being readable through the API.

Two paths over the same harness output, measured in the same run:
  runner   - the runner task reads the harness's stdout and writes each event at once;
  baseline - what the seed replaces: the harness writes its transcript file, and a watcher
             tails it and posts what is new in batches every 2 s.
A poller reads /api/motions/<slug>/messages/?after=<cursor> over HTTP from a live server
(a long poll: `wait=5`) and notes when each message first shows; each line carries the wall-clock time
it was printed. Lines are shaped like the recorded Claude Code assistant lines.

    .venv/bin/python bench/stream_latency.py [--events 1000] [--pace-ms 20]

The default pace, a line every 20 ms (50 lines a second), is already far faster than a model
streams its events; --pace-ms 5 is the stress case.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _django import ROOT, bench_database, percentile, web_env, web_process

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


def poll(url: str, expected: int, deadline: float) -> None:
    """A client in its own process: polls with a cursor, prints each event's latency in ms."""
    import httpx

    cursor = None
    seen: set[str] = set()
    latencies: list[float] = []
    polls = 0
    with httpx.Client(timeout=10) as client:
        while len(latencies) < expected and time.time() < deadline:
            params = {"limit": 500, "kind": "text", "wait": 5} | ({"after": cursor} if cursor else {})
            body = client.get(url, params=params).json()
            polls += 1
            now = time.time()
            for message in body["results"]:
                if message["id"] not in seen:
                    seen.add(message["id"])
                    latencies.append((now - float(message["text"].rsplit("t=", 1)[1])) * 1000)
            cursor = body["next"] or cursor
    print(json.dumps({"latencies": latencies, "polls": polls}))


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
    from motion_runner.ingest import EventWriter, IngestContext
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


def measure(name: str, base_url: str, events: int, pace: float, template: dict) -> dict:
    from motion_runner.models import Motion

    script = Path(tempfile.mkdtemp()) / "harness.py"
    script.write_text(HARNESS)
    # Public: the poller reads without signing in (a Motion's default needs a sign-in).
    motion = Motion.objects.create(slug=f"bench-{name}", title=name, visibility="public")
    url = f"{base_url}/api/motions/{motion.slug}/messages/"
    poller = subprocess.Popen(
        [sys.executable, __file__, "--poll", url, str(events), str(time.time() + 120)],
        stdout=subprocess.PIPE,
        text=True,
    )
    started = time.time()
    (run_runner if name == "runner" else run_baseline)(motion, events, pace, template, script)
    report = json.loads(poller.communicate(timeout=180)[0])
    lat = report["latencies"]
    # The writer's share alone: from the print to the row's created_at (the insert).
    written = [
        (created.timestamp() - float(text.rsplit("t=", 1)[1])) * 1000
        for created, text in motion.messages.filter(kind="text").values_list("created_at", "text")
    ]
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
    }


def main() -> None:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--pace-ms", type=float, default=20.0)
    parser.add_argument("--poll", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.poll:
        url, expected, deadline = args.poll
        poll(url, int(expected), float(deadline))
        return
    template = assistant_template()
    with bench_database("bench_latency") as connection:
        # The web process as deployed: gunicorn with threads, in its own process.
        with web_process(web_env(connection), 4) as base_url:
            print(f"database: {connection.vendor}; {args.events} events, one every {args.pace_ms} ms")
            results = [
                measure(name, base_url, args.events, args.pace_ms / 1000, template)
                for name in ("runner", "baseline")
            ]
    for r in results:
        print(
            f"{r['path']:>8}: {r['events']} events  p50 {r['p50_ms']:8.1f} ms  p99 {r['p99_ms']:8.1f} ms"
            f"  max {r['max_ms']:8.1f} ms  ({r['polls']} polls, {r['seconds']:.1f} s)"
            f"  | written: p50 {r['write_p50_ms']:.1f} ms, p99 {r['write_p99_ms']:.1f} ms"
        )
    runner, baseline = results
    print(
        f"ratio (baseline / runner): p50 {baseline['p50_ms'] / runner['p50_ms']:.0f}x, "
        f"p99 {baseline['p99_ms'] / runner['p99_ms']:.0f}x"
    )
    ok = runner["p99_ms"] < 50 and baseline["p99_ms"] / runner["p99_ms"] >= 20
    print(f"target (p99 < 50 ms and >= 20x better): {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
