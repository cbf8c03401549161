#!/usr/bin/env python3
"""Ingest benchmark: the stream API and the transcript importer, against memory-lane's baseline of
one `get_or_create` per line, in the same run on the same database.

  DATABASE_URL=postgres://postgres@127.0.0.1:5432/somedb .venv/bin/python bench/ingest.py [--events N] [--mb M]

It creates a throwaway test database (test_<name>) and drops it afterwards. Events and transcript
lines are the ones recorded from the real Claude Code CLI (tests/recordings/claude-code), replicated
with fresh uuids, message ids and tool ids.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _figures import tree  # noqa: E402

ROOT = tree()  # this checkout, or the one bench/against.py names (BENCH_TREE)
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

RECORDINGS = ROOT / "tests" / "recordings" / "claude-code"
STREAM_TYPES = {"assistant", "user", "result"}


def fresh_copy(line: dict, ids: dict[str, str], session_id: str, *, transcript: bool) -> dict:
    """The line again, as if said anew: every uuid, message id and tool id replaced consistently."""
    line = copy.deepcopy(line)

    def renew(value: str, kind: str) -> str:
        if value not in ids:
            ids[value] = {
                "uuid": str(uuid.uuid4()),
                "msg": f"msg_{uuid.uuid4().hex[:24]}",
                "tool": f"toolu_{uuid.uuid4().hex[:24]}",
            }[kind]
        return ids[value]

    for key in ("uuid", "parentUuid", "promptId", "logicalParentUuid"):
        if isinstance(line.get(key), str):
            line[key] = renew(line[key], "uuid")
    if transcript:
        if "sessionId" in line:
            line["sessionId"] = session_id
    elif "session_id" in line:
        line["session_id"] = session_id
    message = line.get("message")
    if isinstance(message, dict):
        if isinstance(message.get("id"), str):
            message["id"] = renew(message["id"], "msg")
        for block in message.get("content") or []:
            if isinstance(block, dict):
                if isinstance(block.get("id"), str) and block.get("type") == "tool_use":
                    block["id"] = renew(block["id"], "tool")
                if isinstance(block.get("tool_use_id"), str):
                    block["tool_use_id"] = renew(block["tool_use_id"], "tool")
    return line


def stream_events(count: int, session_id: str) -> list[dict]:
    recorded = [
        json.loads(x) for x in (RECORDINGS / "read-then-reply.stream.jsonl").read_text().splitlines() if x
    ]
    lines = [x for x in recorded if x.get("type") in STREAM_TYPES]
    out: list[dict] = []
    while len(out) < count:
        ids: dict[str, str] = {}
        out.extend(fresh_copy(line, ids, session_id, transcript=False) for line in lines)
    return out[:count]


def write_transcripts(root: Path, megabytes: float, sessions: int) -> tuple[list[str], int]:
    recorded = [
        json.loads(x) for x in (RECORDINGS / "read-then-reply.transcript.jsonl").read_text().splitlines() if x
    ]
    target = int(megabytes * 1024 * 1024)
    per_file = target // sessions
    session_ids = [str(uuid.uuid4()) for _ in range(sessions)]
    total = 0
    for session_id in session_ids:
        folder = root / "-bench-work"
        folder.mkdir(parents=True, exist_ok=True)
        written = 0
        with (folder / f"{session_id}.jsonl").open("w") as handle:
            while written < per_file:
                ids: dict[str, str] = {}
                for line in recorded:
                    text = json.dumps(fresh_copy(line, ids, session_id, transcript=True)) + "\n"
                    handle.write(text)
                    written += len(text)
        total += written
    return session_ids, total


def baseline_messages(events_by_session: list[tuple[str, list[dict]]], motion, agent, source: str) -> int:
    """memory-lane's way: parse each line, then one get_or_create(id=uuid) per message."""
    from motion_runner.harnesses import get_adapter
    from motion_runner.ingest.writer import EventWriter, IngestContext
    from motion_runner.models import Message

    created = 0
    for session_id, lines in events_by_session:
        writer = EventWriter(
            IngestContext(
                motion=motion, agent=agent, harness="claude-code", source=source, session_id=session_id
            )
        )
        parser = get_adapter("claude-code").new_parser(session_id)
        for line in lines:
            for event in parser.feed(line):
                message = writer.message_for(event)
                if message is None:
                    continue
                fields = {
                    f.attname: getattr(message, f.attname)
                    for f in Message._meta.concrete_fields
                    if f.attname != "id"
                }
                _, was_created = Message.objects.get_or_create(id=message.id, defaults=fields)
                created += was_created
    return created


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000, help="Stream events to post.")
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--mb", type=float, default=100.0, help="Size of the transcript directory.")
    parser.add_argument("--sessions", type=int, default=20, help="Transcript files.")
    args = parser.parse_args()

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    tmp = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    try:
        run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(args, tmp: Path) -> None:
    from motion_runner.api.auth import create_key
    from motion_runner.ingest.sessions import claim_session
    from motion_runner.models import Agent, Message, Motion, MotionSession
    from motion_runner.transcripts.importer import import_all

    print(
        f"database: {connection.vendor} ({connection.settings_dict['NAME']}), python {sys.version.split()[0]}"
    )
    motion = Motion.objects.create(slug="bench", title="Bench")
    agent = Agent.objects.create(name="bencher")
    motion.agents.add(agent)
    _, key = create_key(agent)
    client = Client()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    # --- 1. the stream API, batches of `batch`, through the full Django stack --------------------
    api_session = str(uuid.uuid4())
    events = stream_events(args.events, api_session)
    # Encoded before the clock starts: encoding a body is the harness's work, not the web process's
    # (the test client's json.dumps of each body was ~8 % of a re-post's time here).
    bodies = [
        json.dumps(
            {
                "harness": "claude-code",
                "session_id": api_session,
                "events": events[start : start + args.batch],
            }
        )
        for start in range(0, len(events), args.batch)
    ]
    started = time.perf_counter()
    imported = 0
    for body in bodies:
        response = client.post("/api/motions/bench/stream/", body, content_type="application/json", **headers)
        assert response.status_code == 200, response.content[:300]
        imported += response.json()["imported"]
    api_seconds = time.perf_counter() - started
    api_rate = len(events) / api_seconds

    base_session = str(uuid.uuid4())
    base_events = stream_events(args.events, base_session)
    MotionSession.objects.create(session_id=base_session, motion=motion, agent=agent)
    started = time.perf_counter()
    base_created = baseline_messages([(base_session, base_events)], motion, agent, "api")
    base_seconds = time.perf_counter() - started
    base_rate = len(base_events) / base_seconds
    print(
        f"stream API   : {len(events)} events in batches of {args.batch}: {api_seconds:.2f} s, "
        f"{api_rate:,.0f} events/s ({imported} messages)"
    )
    print(
        f"  baseline   : one get_or_create per line, no HTTP: {base_seconds:.2f} s, "
        f"{base_rate:,.0f} events/s ({base_created} messages)"
    )
    print(f"  ratio      : stream API (with HTTP) / baseline = {api_rate / base_rate:.2f}x")

    # Re-posting the same batches (a retry storm): everything is skipped.
    started = time.perf_counter()
    for body in bodies:
        response = client.post("/api/motions/bench/stream/", body, content_type="application/json", **headers)
        assert response.status_code == 200 and response.json()["imported"] == 0, response.content[:300]
    again = len(events) / (time.perf_counter() - started)
    print(f"  re-post    : the same {len(events)} events again, all skipped: {again:,.0f} events/s")

    # --- 2. the transcript importer over a directory of `mb` MB ---------------------------------
    root = tmp / "projects"
    session_ids, size = write_transcripts(root, args.mb, args.sessions)
    for session_id in session_ids:
        claim_session(session_id, motion, agent, "claude-code")
    settings.TRANSCRIPT_DIRS = [str(root)]
    before = Message.objects.count()
    started = time.perf_counter()
    totals = import_all([root])
    import_seconds = time.perf_counter() - started
    mb = size / 1024 / 1024
    print(
        f"importer     : {mb:.1f} MB in {len(session_ids)} files, {totals.lines:,} lines: {import_seconds:.2f} s, "
        f"{mb / import_seconds:.1f} MB/s, {totals.lines / import_seconds:,.0f} lines/s "
        f"({Message.objects.count() - before} messages)"
    )
    started = time.perf_counter()
    again_totals = import_all([root])
    print(
        f"  re-run     : {again_totals.lines} new lines, {again_totals.imported} added, {time.perf_counter() - started:.2f} s"
    )

    # Baseline: a second copy of the directory, read line by line with one get_or_create each.
    base_root = tmp / "baseline"
    base_ids, base_size = write_transcripts(base_root, args.mb, args.sessions)
    started = time.perf_counter()
    lines_read = 0
    per_session = []
    for session_id in base_ids:
        lines = []
        for raw in (base_root / "-bench-work" / f"{session_id}.jsonl").read_text().splitlines():
            lines_read += 1
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if line.get("type") in ("assistant", "user", "system"):
                lines.append(line)
        per_session.append((session_id, lines))
    base_created = baseline_messages(per_session, motion, agent, "terminal")
    base_import_seconds = time.perf_counter() - started
    base_mb = base_size / 1024 / 1024
    print(
        f"  baseline   : {base_mb:.1f} MB, one get_or_create per line: {base_import_seconds:.2f} s, "
        f"{base_mb / base_import_seconds:.1f} MB/s ({base_created} messages)"
    )
    print(
        f"  ratio      : importer / baseline = {(mb / import_seconds) / (base_mb / base_import_seconds):.2f}x"
    )


if __name__ == "__main__":
    main()
