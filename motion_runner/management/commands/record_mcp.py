from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from motion_runner.recall.server import serve


class Command(BaseCommand):
    help = (
        "The record MCP server over stdio (search, read, remember), for the turn whose pass is in "
        "MOTION_RUNNER_RECORD_PASS; started by the harness from a wake's generated MCP config."
    )

    def handle(self, *args, **options):
        sys.exit(serve())
