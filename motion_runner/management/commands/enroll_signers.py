from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from motion_runner.people import signers


class Command(BaseCommand):
    help = (
        "Bring the keys of an OpenSSH allowed_signers file here (memory-lane's MOOD_ALLOWED_SIGNERS by "
        "default): each listed person gets an account and the key, so what memory-lane's key-signed "
        "people write on its page counts here too. Safe to run again; run it when the file changes."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--file",
            help="the allowed_signers file (default: the MOOD_ALLOWED_SIGNERS setting, else its environment variable)",
        )
        parser.add_argument(
            "--namespace", default=signers.NAMESPACE, help="keys for this namespace only (memory-lane's)"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would be enrolled; change nothing"
        )

    def handle(self, *args, file=None, namespace=signers.NAMESPACE, dry_run=False, **options):
        path = (
            file
            or getattr(settings, "MOOD_ALLOWED_SIGNERS", "")
            or os.environ.get("MOOD_ALLOWED_SIGNERS", "")
        )
        if not path:
            raise CommandError("no file: give --file, or set MOOD_ALLOWED_SIGNERS as memory-lane does")
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        listed, skipped = signers.read(text, namespace)
        done = signers.enroll(listed, dry_run=dry_run)
        verb = "would enroll" if dry_run else "enrolled"
        for line in done.added:
            self.stdout.write(f"{verb} {line}")
        for line in done.known:
            self.stdout.write(f"already here: {line}")
        for line in skipped + done.skipped:
            self.stdout.write(f"skipped {line}")
        self.stdout.write(
            f"{len(done.added)} {verb}, {len(done.known)} already here, {len(skipped) + len(done.skipped)} skipped"
            + (f"; new accounts: {', '.join(done.new_people)}" if done.new_people else "")
        )
