#!/usr/bin/env python3
"""The transcript importer alone (the "importer" line of bench/ingest.py, without the stream API
and the baseline around it), with this process's CPU time beside the wall time.

  DATABASE_URL=postgres://postgres@127.0.0.1:5432/somedb .venv/bin/python bench/importer.py [--mb M] [--rounds R]

Each round writes a fresh directory of `mb` MB of real-shaped Claude Code transcripts (the recorded
read-then-reply transcript, replicated with fresh ids as bench/ingest.py does), imports it, then
imports it again (a re-run must add nothing). Creates test_<name> and drops it afterwards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _figures import figure, tree  # noqa: E402

ROOT = tree()  # this checkout, or the one bench/against.py names (BENCH_TREE)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from ingest import write_transcripts  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=100.0, help="Size of the transcript directory.")
    parser.add_argument("--sessions", type=int, default=20, help="Transcript files.")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        for _ in range(args.rounds):
            tmp = Path(tempfile.mkdtemp(prefix="bench-importer-"))
            try:
                run(args, tmp)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(args: argparse.Namespace, tmp: Path) -> None:
    from motion_runner.ingest.sessions import claim_session
    from motion_runner.models import Agent, Message, Motion
    from motion_runner.transcripts.importer import import_all

    motion, _ = Motion.objects.get_or_create(slug="bench", defaults={"title": "Bench"})
    agent, _ = Agent.objects.get_or_create(name="bencher")
    motion.agents.add(agent)
    root = tmp / "projects"
    session_ids, size = write_transcripts(root, args.mb, args.sessions)
    for session_id in session_ids:
        claim_session(session_id, motion, agent, "claude-code")
    settings.TRANSCRIPT_DIRS = [str(root)]
    before = Message.objects.count()
    started, cpu = time.perf_counter(), time.process_time()
    totals = import_all([root])
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    mb = size / 1024 / 1024
    added = Message.objects.count() - before
    started = time.perf_counter()
    again = import_all([root])
    print(
        f"importer: {mb:.1f} MB in {len(session_ids)} files, {totals.lines:,} lines: {wall:.2f} s wall, "
        f"{mb / wall:.1f} MB/s; this process's CPU {cpu:.2f} s, {mb / cpu:.1f} MB/s; {added} messages; "
        f"re-run {again.lines} lines, {again.imported} added, {time.perf_counter() - started:.2f} s; "
        f"load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    figure("importer", mb / wall, "MB/s")
    figure("importer, a CPU second", mb / cpu, "MB")


if __name__ == "__main__":
    main()
