"""Latency from a harness printing a text delta to the words showing on a long-polling reader's
page (issue 34), beside the path it replaces, in the same run.

One turn: the harness prints Claude Code's partial-message lines (`stream_event` text deltas,
shaped like tests/recordings/claude-code/partials.jsonl), one word every --pace-ms, each word
carrying the wall-clock time it was printed, then the block's whole assistant line and its
result. A reader polls the thread over HTTP from a gunicorn web process as the page does (a long
poll with the `live` token of its last answer) and notes when each word first shows:
  typed    - in the running turn's `typed` text (the words as they are typed: runner/live_text.py);
  baseline - in the final Message, as every word arrived before (the reply whole at its end).
The runner and the web process share the cache (Redis: CELERY_BROKER_URL or CACHE_URL).

    CELERY_BROKER_URL=redis://127.0.0.1:6379/<n> .venv/bin/python bench/typed_latency.py [--words 200] [--pace-ms 50]

The target is a ratio: the baseline's p50 at least 10x the typed words' p50 (a 10 s answer).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _django import bench_database, percentile, web_env, web_process
from _figures import figure, ratio

HARNESS = textwrap.dedent(
    """
    import json, sys, time, uuid
    words, pace = int(sys.argv[1]), float(sys.argv[2])
    session = str(uuid.uuid4())
    def emit(obj):
        obj.setdefault("session_id", session); obj.setdefault("uuid", str(uuid.uuid4()))
        sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
    def event(e):
        emit({"type": "stream_event", "event": e, "parent_tool_use_id": None})
    emit({"type": "system", "subtype": "init", "tools": [], "model": "bench", "cwd": "/"})
    event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    said = []
    next_at = time.time()
    for n in range(words):
        next_at += pace
        time.sleep(max(0, next_at - time.time()))
        word = "w%d@%.6f " % (n, time.time())
        said.append(word)
        event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}})
    emit({"type": "assistant", "message": {"id": "msg_bench", "type": "message", "role": "assistant",
          "model": "bench", "content": [{"type": "text", "text": "".join(said)}], "usage": {}}})
    emit({"type": "result", "subtype": "success", "is_error": False, "total_cost_usd": 0.0, "usage": {}})
    """
)
WORD = re.compile(r"w(\d+)@([0-9.]+) ")


def poll(url: str, words: int, deadline: float) -> None:
    """The reader, in its own process: first sight of each word, in `typed` and in a Message."""
    import httpx

    typed: dict[str, float] = {}
    final: dict[str, float] = {}
    polls = 0
    with httpx.Client(timeout=30) as client:
        body = client.get(url, params={"latest": 1, "limit": 50}).json()
        print("ready", flush=True)
        while len(final) < words and time.time() < deadline:
            params = {"after": body["next"], "live": body["live"], "wait": 20, "limit": 500}
            body = client.get(url, params=params).json()
            polls += 1
            now = time.time()
            for turn in body["activity"]:
                for match in WORD.finditer(turn.get("typed") or ""):
                    typed.setdefault(match.group(0), now)
            for message in body["results"]:
                for match in WORD.finditer(message["text"] or ""):
                    final.setdefault(match.group(0), now)
    print(json.dumps({"typed": typed, "final": final, "polls": polls}))


def printed_at(word: str) -> float:
    return float(WORD.match(word).group(2))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--words", type=int, default=200)
    parser.add_argument("--pace-ms", type=float, default=50.0)
    parser.add_argument("--poll", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.poll:
        url, words, deadline = args.poll
        poll(url, int(words), float(deadline))
        return
    with bench_database("bench_typed") as connection, web_process(web_env(connection), 4) as base_url:
        from motion_runner.models import Agent, Message, Motion, Source
        from motion_runner.runner.turns import enqueue_turn, execute_turn

        motion = Motion.objects.create(slug="bench-typed", title="typed", visibility="public")
        Message.objects.create(motion=motion, sender="bench", source=Source.WEB, text="go")
        folder = Path(tempfile.mkdtemp())
        (folder / "harness.py").write_text(HARNESS)
        script = folder / "harness.sh"
        script.write_text(
            f"#!/bin/sh\nexec {sys.executable} {folder / 'harness.py'} {args.words} {args.pace_ms / 1000}\n"
        )
        script.chmod(0o755)
        url = f"{base_url}/api/motions/{motion.slug}/messages/"
        reader = subprocess.Popen(
            [sys.executable, __file__, "--poll", url, str(args.words), str(time.time() + 300)],
            stdout=subprocess.PIPE,
            text=True,
        )
        if reader.stdout.readline().strip() != "ready":
            raise SystemExit("the reader did not start")
        agent = Agent.objects.create(name="bench-typist", binary=str(script))
        execute_turn(enqueue_turn(motion, agent, "bench", dispatch=False).pk)
        report = json.loads(reader.communicate(timeout=300)[0])
    typed = [(seen - printed_at(word)) * 1000 for word, seen in report["typed"].items()]
    final = [(seen - printed_at(word)) * 1000 for word, seen in report["final"].items()]
    print(
        f"{args.words} words, one every {args.pace_ms:g} ms; {report['polls']} polls\n"
        f"   typed: {len(typed)} words seen  p50 {percentile(typed, 50):8.1f} ms  p99 {percentile(typed, 99):8.1f} ms\n"
        f"baseline: {len(final)} words seen  p50 {percentile(final, 50):8.1f} ms  p99 {percentile(final, 99):8.1f} ms"
    )
    figure("delta -> page, p50", 1000 / percentile(typed, 50), "words/s at that latency (1000 / p50 ms)")
    ratio(
        "delta -> page p50, the whole reply at its end / as typed",
        percentile(typed, 50),
        percentile(final, 50),
        "ms",
        10,
        lower_is_better=True,
    )


if __name__ == "__main__":
    main()
