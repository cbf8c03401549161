from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from motion_runner.harnesses.claude_code_hooks import hooks_settings


class Command(BaseCommand):
    help = (
        "Print the `hooks` block for a user's ~/.claude/settings.json that posts UserPromptSubmit, "
        "PostToolUse and Stop to this server, so a terminal session shows up in its Motion live."
    )

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="This server's base URL.")

    def handle(self, *args, url: str, **options):
        self.stdout.write(json.dumps(hooks_settings(url), indent=2))
