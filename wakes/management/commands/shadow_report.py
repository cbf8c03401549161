"""`manage.py shadow_report [--since …] [--motion …]`: shadow mode's decisions beside the turns
memory-lane's poller ran in the same Moods (wakes/consider_loop/shadow_report.py, docs/switch-over.md)."""

from __future__ import annotations

from datetime import UTC, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from wakes.consider_loop.shadow_report import build, render


def since_of(value: str | None):
    """An ISO time, or a span back from now: 24h, 90m, 2d. None: everything."""
    if not value:
        return None
    units = {"m": "minutes", "h": "hours", "d": "days"}
    if value[-1] in units and value[:-1].isdigit():
        return timezone.now() - timedelta(**{units[value[-1]]: int(value[:-1])})
    parsed = parse_datetime(value)
    if parsed is None:
        raise CommandError(f"--since {value!r}: an ISO time or a span like 24h, 90m, 2d")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, UTC)


class Command(BaseCommand):
    help = "Shadow mode's decisions beside the turns memory-lane's poller ran, per Mood."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--since", help="An ISO time or a span back from now (24h, 90m, 2d).")
        parser.add_argument("--motion", help="One Motion (Mood) by its slug.")

    def handle(self, *args, **options) -> None:
        reports, with_poller = build(since_of(options["since"]), options["motion"])
        for line in render(reports, with_poller):
            self.stdout.write(line)
