"""`manage.py would_wake [--all]`: what the consider loop would wake now, and why. Wakes nothing."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from wakes.consider_loop.dry_run import would_wake


class Command(BaseCommand):
    help = "Print what the loop would wake now and why, without waking anything."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--all", action="store_true", help="Every listening pair, not only those due.")

    def handle(self, *args, **options) -> None:
        verdicts = would_wake(every_pair=options["all"])
        if not verdicts:
            self.stdout.write("Nothing is due: the loop would wake nobody now.")
        for verdict in verdicts:
            self.stdout.write(str(verdict))
