"""`manage.py scram --reason "…"` raises the scram (every agent stopped, every post and wake held);
`manage.py scram --lift` lifts it; `manage.py scram` says whether one holds."""

from __future__ import annotations

import getpass

from django.core.management.base import BaseCommand, CommandError

from motion_runner.models import Scram
from motion_runner.runner.stopping import ScramHeld, lift_scram, raise_scram


class Command(BaseCommand):
    help = "Raise the scram (every agent stopped, posts answer 423, nothing wakes), lift it, or say if one holds."

    def add_arguments(self, parser) -> None:
        what = parser.add_mutually_exclusive_group()
        what.add_argument("--reason", help="raise the scram, saying why")
        what.add_argument("--lift", action="store_true", help="lift the scram that holds")
        parser.add_argument("--by", default="", help="who does it (default: this shell's user)")

    def handle(self, *args, reason: str | None, lift: bool, by: str, **options) -> None:
        who = by.strip() or f"{getpass.getuser()} (manage.py)"
        if lift:
            if lift_scram(who) is None:
                raise CommandError("No scram holds.")
            self.stdout.write("The scram is lifted: posts and wakes go on.")
            return
        if reason is not None:
            if not reason.strip():
                raise CommandError('A scram needs a reason: --reason "why".')
            try:
                raise_scram(who, reason.strip()[:2000])
            except ScramHeld as held:
                raise CommandError(str(held)) from held
            self.stdout.write(f"Scram raised by {who}: every agent is stopped and nothing wakes.")
            return
        scram = Scram.holding()
        self.stdout.write(
            f"A scram holds: {scram.reason} ({scram.raised_by}, {scram.raised_at:%Y-%m-%d %H:%M} UTC)"
            if scram
            else "No scram holds."
        )
