#!/usr/bin/env python3
"""The CPU of two parts of a fresh stream post, on stream_web.py's real bodies (100 recorded
Claude Code events, ~105 KB): reading the body (BoundedJSONParser.parse, orjson.loads alone
beside it) and fitting its Messages (fit_message with the batch's Redactor). No database, no
HTTP: the parts alone, steadier than a whole post on a shared machine. Run it in two trees, taking
turns, for a before/after.

  .venv/bin/python bench/read_and_fit.py [--bodies 20] [--rounds 9]
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")


def per_body(rounds: int, bodies: int, one_round: Callable[[], float]) -> tuple[float, float]:
    """(min, median) of `one_round`'s CPU seconds, in ms a body."""
    times = []
    for _ in range(rounds):
        gc.collect()
        times.append(one_round() * 1000 / bodies)
    times.sort()
    return times[0], times[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bodies", type=int, default=20, help="Posts of 100 events.")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()

    import django

    django.setup()
    import orjson
    from stream_web import bodies_for

    from motion_runner.api.bounds import BoundedJSONParser
    from motion_runner.harnesses import EventKind, get_adapter
    from motion_runner.ingest.fit import fit_message
    from motion_runner.ingest.redaction import Redactor
    from motion_runner.ingest.writer import EventWriter, IngestContext
    from motion_runner.models import Agent, Message, Motion, Source

    raws = bodies_for(args.bodies * 100, 100)
    motion, agent = Motion(pk=1, slug="bench", title="Bench"), Agent(pk=1, name="bencher")
    adapter = get_adapter("claude-code")

    def timed(work: Callable[[bytes], Any]) -> Callable[[], float]:
        def one_round() -> float:
            started = time.process_time()
            for raw in raws:
                work(raw)
            return time.process_time() - started

        return one_round

    def parse(raw: bytes) -> Any:
        return BoundedJSONParser().parse(io.BytesIO(raw), None, {"encoding": "utf-8"})

    def messages_of(raw: bytes) -> list[Message]:
        """The post's Messages as EventWriter.message_for builds them, before fit_message."""
        data = orjson.loads(raw)
        writer = EventWriter(
            IngestContext(
                motion=motion,
                agent=agent,
                harness="claude-code",
                source=Source.API,
                session_id=data["session_id"],
            )
        )
        lines = adapter.new_parser(data["session_id"], recorded_ends=lambda: [])
        events = [event for line in data["events"] for event in lines.feed(line)]
        built = (writer.message_for(e) for e in events if e.kind not in (EventKind.INIT, EventKind.UNKNOWN))
        return [message for message in built if message is not None]

    def fit_round() -> float:
        batches = [messages_of(raw) for raw in raws]  # fitting redacts in place: new ones each round
        gc.collect()
        started = time.process_time()
        for messages in batches:
            redactor = Redactor()
            for message in messages:
                fit_message(message, redactor)
        return time.process_time() - started

    print(
        f"{len(raws)} bodies of 100 events, {sum(map(len, raws)) // len(raws):,} bytes each; load {os.getloadavg()}"
    )
    for label, one_round in (
        ("orjson.loads alone", timed(orjson.loads)),
        ("reading the body (BoundedJSONParser.parse)", timed(parse)),
        (f"fitting its {len(messages_of(raws[0]))} Messages (fit_message)", fit_round),
    ):
        low, median = per_body(args.rounds, len(raws), one_round)
        print(f"{label}: {low:.3f} ms a body (median {median:.3f})")


if __name__ == "__main__":
    main()
