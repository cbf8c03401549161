"""`manage.py would_wake [--all] [--post MESSAGE_ID]`: what the consider loop would wake now, or
what a post's mentions (or an `always` watch line) would, and why. Wakes nothing, writes nothing."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from motion_runner.models import Message
from wakes.consider_loop.dry_run import would_answer, would_wake


class Command(BaseCommand):
    help = "Print what the loop would wake now and why, without waking anything."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--all", action="store_true", help="Every listening pair, not only those due.")
        parser.add_argument(
            "--post",
            metavar="MESSAGE_ID",
            help="What this post's mentions (or an always watch line) would wake, agent by agent.",
        )

    def handle(self, *args, **options) -> None:
        if options["post"]:
            try:
                verdicts = would_answer(options["post"])
            except (Message.DoesNotExist, ValidationError):
                raise CommandError(f"No post has the id {options['post']!r}.") from None
            if not verdicts:
                self.stdout.write("The post names no agent that its mentions could wake.")
            for verdict in verdicts:
                self.stdout.write(str(verdict))
            return
        verdicts = would_wake(every_pair=options["all"])
        if not verdicts:
            self.stdout.write("Nothing is due: the loop would wake nobody now.")
        for verdict in verdicts:
            self.stdout.write(str(verdict))
