from __future__ import annotations

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "The record MCP server over streamable HTTP (search, read, remember) for every turn at once, "
        "each request carrying its turn's pass as its bearer token (motion_runner/recall/http.py). "
        "Workers hand it to their turns where RECORD_SERVER_URL names it (bin/serve, docker-compose.yml)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)"
        )
        parser.add_argument("--port", type=int, default=8765, help="the port to listen on (default 8765)")

    def handle(self, *args, host: str, port: int, **options):
        import uvicorn

        from motion_runner.recall.http import app

        self.stderr.write(f"serve_record: the record on http://{host}:{port}/mcp")
        uvicorn.run(app(), host=host, port=port, log_level="warning", access_log=False)
