from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand

from motion_runner.transcripts.files import transcript_dirs
from motion_runner.transcripts.importer import import_all


class Command(BaseCommand):
    help = (
        "Import Claude Code transcripts (~/.claude/projects/*/<session>.jsonl) into the Motions "
        "their sessions are claimed by. Resumes where it stopped; re-running adds nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--path", action="append", help="A transcripts directory (repeatable).")
        parser.add_argument("--follow", action="store_true", help="Keep reading as the files grow.")
        parser.add_argument(
            "--interval", type=float, default=2.0, help="Seconds between reads with --follow."
        )

    def handle(self, *args, path=None, follow=False, interval=2.0, **options):
        dirs = [Path(p).expanduser() for p in path] if path else transcript_dirs()
        while True:
            totals = import_all(dirs)
            if totals.imported or not follow:
                self.stdout.write(
                    f"{totals.files} file(s), {totals.lines} new line(s): {totals.imported} message(s) "
                    f"imported, {totals.skipped} already there, {totals.unclaimed} session(s) unclaimed"
                )
            if not follow:
                return
            time.sleep(interval)
