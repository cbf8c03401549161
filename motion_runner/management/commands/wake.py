from __future__ import annotations

from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError

from motion_runner.harnesses import Event, EventKind, HarnessError, get_adapter
from motion_runner.ingest.display import summarize_input
from motion_runner.models import Agent, Motion
from motion_runner.runner.turns import enqueue_turn, execute_turn


class Command(BaseCommand):
    help = "Wake an agent in a Motion: queue one turn, or run it here with --sync."

    def add_arguments(self, parser):
        parser.add_argument("motion", help="The Motion's slug.")
        parser.add_argument("agent", help="The agent's name (without @).")
        parser.add_argument("--prompt", required=True)
        parser.add_argument("--sync", action="store_true", help="Run the turn in this process.")
        parser.add_argument("--effort", default="", choices=["", "low", "medium", "high", "xhigh", "max"])
        parser.add_argument("--max-budget-usd", type=Decimal, default=None)
        parser.add_argument(
            "--mode",
            default="look",
            choices=["look", "full"],
            help="look (default: a command line is not a trusted post) or full tools.",
        )

    def handle(self, *args, **options):
        try:
            motion = Motion.objects.get(slug=options["motion"])
        except Motion.DoesNotExist:
            raise CommandError(f"no Motion with slug {options['motion']!r}") from None
        try:
            agent = Agent.objects.get(name__iexact=options["agent"].lstrip("@"))
        except Agent.DoesNotExist:
            raise CommandError(f"no agent named {options['agent']!r}") from None
        if options["sync"]:
            try:  # the turn runs here: its binary must be here, before any turn is queued
                get_adapter(agent.harness).binary_or_error(agent)
            except HarnessError as exc:
                raise CommandError(str(exc)) from None
        turn = enqueue_turn(
            motion,
            agent,
            options["prompt"],
            reason="manual",
            reason_detail="woken from the command line",
            mode=options["mode"],
            mode_rule="command line --mode",
            effort=options["effort"],
            max_budget_usd=options["max_budget_usd"],
            dispatch=not options["sync"],
        )
        if not options["sync"]:
            self.stdout.write(f"queued turn {turn.pk} for @{agent.name} in {motion.slug}")
            return
        turn = execute_turn(turn.pk, on_event=self.print_event)
        if turn is None:
            raise CommandError("the turn could not be claimed (another turn of this pair is running)")
        self.stdout.write(
            f"turn {turn.pk}: {turn.status} · ${turn.cost_usd:.4f}"
            + (f" · {turn.error}" if turn.error else "")
        )
        if turn.status != "finished":
            raise CommandError(f"turn {turn.pk} {turn.status}")

    def print_event(self, event: Event) -> None:
        if event.kind == EventKind.TEXT:
            self.stdout.write(event.text)
        elif event.kind == EventKind.TOOL_CALL:
            self.stdout.write(f"  ⚙ {summarize_input(event.tool_name, event.tool_input)}")
        elif event.kind == EventKind.TOOL_RESULT:
            first = (event.text.strip().splitlines() or [""])[0]
            self.stdout.write(f"    → {'error: ' if event.is_error else ''}{first[:120]}")
        elif event.kind == EventKind.ERROR:
            self.stderr.write(f"  ! {event.text}")
