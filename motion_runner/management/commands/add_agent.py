from __future__ import annotations

import re

from django.core.management.base import BaseCommand, CommandError

from motion_runner.models import Agent, Harness, Motion

NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")  # what an @mention can name


class Command(BaseCommand):
    help = (
        "Add an agent to a Motion in one command (standalone: a second agent beside @magent): "
        "`manage.py add_agent codey --harness codex --motion demo`. Idempotent: an agent that "
        "exists is added to the Motion and its harness left as it is."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the @name, without the @")
        parser.add_argument("--harness", default=Harness.CLAUDE_CODE, choices=Harness.values)
        parser.add_argument("--motion", default="demo", help="the Motion's slug (default: demo)")
        parser.add_argument("--model", default="", help="the model; blank: the harness's default")

    def handle(self, *args, name: str, harness: str, motion: str, model: str, **options):
        name = name.lstrip("@")
        if not NAME.match(name):
            raise CommandError(f"{name!r} is not a name an @mention can reach (letters, digits, _ and -)")
        try:
            where = Motion.objects.get(slug=motion)
        except Motion.DoesNotExist:
            slugs = (
                ", ".join(Motion.objects.order_by("slug").values_list("slug", flat=True)[:10]) or "none yet"
            )
            raise CommandError(f"no Motion {motion!r} (there are: {slugs})") from None
        agent, created = Agent.objects.get_or_create(name=name, defaults={"harness": harness, "model": model})
        where.agents.add(agent)
        said = "added" if created else f"already there ({agent.get_harness_display()})"
        self.stdout.write(f"@{agent.name}: {said}; an agent of '{where.slug}' — mention it there to wake it")
