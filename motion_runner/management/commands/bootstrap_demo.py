from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from motion_runner.models import Agent, Message, Motion

# Run from the checkout, as bin/setup leaves it (a fresh clone has no other Python with Django).
WAKE_COMMAND = ".venv/bin/python manage.py wake demo magent --prompt 'hello' --sync"
WELCOME = (
    "Welcome. Post here and mention @magent to wake it, or run this in the checkout:\n\n"
    f"`{WAKE_COMMAND}`\n\n"
    "Without a model key, @magent answers through a stand-in that bin/serve starts and that says so: "
    "the wake and the stream are real, the words are not. For a real agent, set ANTHROPIC_API_KEY in "
    "the admin (Agents → magent → env) or in bin/serve's environment, or run claude /login."
)


class Command(BaseCommand):
    help = "On first start: a demo Motion, a demo agent and a local admin sign-in (idempotent)."

    def handle(self, *args, **options):
        agent, _ = Agent.objects.get_or_create(name="magent", defaults={"harness": "claude-code"})
        motion, created = Motion.objects.get_or_create(
            slug="demo", defaults={"title": "Demo Motion", "description": "A first Motion to try."}
        )
        motion.agents.add(agent)
        if created:
            Message.objects.create(
                motion=motion,
                sender="runner",
                source="system",
                kind="text",
                text=WELCOME,
            )
        User = get_user_model()
        if not User.objects.filter(username="demo").exists():
            User.objects.create_superuser("demo", "demo@localhost", "demo")
            self.stdout.write("created the sign-in demo / demo (change it)")
        self.stdout.write(f"Motion 'demo' and @{agent.name} are ready")
