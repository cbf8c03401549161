"""The turn's record pass, and the server config the harness is handed.

A pass is random, shown once (in the generated MCP config), and kept only as its sha256 on the
turn (`Turn.record_pass`): the server finds the turn by it and answers only while that turn runs,
so a config copied out of a finished turn opens nothing (docs/security.md).

Where RECORD_SERVER_URL names the deployment's record server (`manage.py serve_record`, up for
every turn: recall/http.py), the harness is handed its URL with the pass as a bearer token; else,
or when it does not answer at the turn's start (said in the thread), a server of the turn's own
over stdio (`python -m motion_runner.recall`).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import secrets
import socket
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from django.db import connection

from ..conf import app_settings
from ..ingest.system_lines import post_system_message
from ..lib.ids import system_uuid
from ..models import Kind, Turn, TurnStatus
from ..sql.server import url_for

log = logging.getLogger(__name__)

PASS_VARIABLE = "MOTION_RUNNER_RECORD_PASS"
SERVER_NAME = "motion-record"
# Its tools (recall/server.py registers exactly these; a test pins it), for a harness that names
# tools one by one (Pi's --tools).
TOOLS: tuple[str, ...] = ("search", "read", "remember")
# Where the `motion_runner` package is importable from (this checkout, or site-packages in a host).
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue_pass(turn: Turn) -> str:
    """A new pass for `turn` (replacing any earlier one: a turn launches once)."""
    token = "mrp_" + secrets.token_urlsafe(32)
    Turn.objects.filter(pk=turn.pk).update(record_pass=digest(token))
    return token


def running_turn_for(token: str | None) -> Turn | None:
    """The running turn `token` was issued to, or None (no pass, a wrong one, a turn ended)."""
    if not token:
        return None
    turns = Turn.objects.select_related("motion", "agent")
    return turns.filter(record_pass=digest(token), status=TurnStatus.RUNNING).first()


# How long a turn's start waits for the record server's health answer before it says so and
# starts one of its own.
PROBE_SECONDS = 1.0
HEALTH_PATH = "/health"  # recall/http.py's: answered without a pass, holding no record


def server_config(turn: Turn) -> tuple[dict, tuple[Path, ...]]:
    """The record server for `turn` as the harness is handed it, and the files the runner removes
    when the turn ends: the deployment's HTTP server where one is named and answers, else one of
    the turn's own over stdio."""
    if url := app_settings.RECORD_SERVER_URL:
        if healthy(url):
            return http_config(turn, url), ()
        say_unreachable(turn, url)
    config, pass_file = stdio_config(turn)
    return config, (pass_file,)


def http_config(turn: Turn, url: str) -> dict:
    """The HTTP server's entry (Claude Code's `type: http` form; Codex's and Pi's adapters read the
    same): the pass travels only as the Authorization header, in a file or an environment only the
    worker's user reads, never on a command line."""
    return {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {issue_pass(turn)}"}}


def reachable(url: str, timeout: float = PROBE_SECONDS) -> bool:
    """Whether the server at `url` takes a connection (a connect, no request: cheap on one host)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def health_url(url: str) -> str:
    """`/health` beside the MCP path (`…/mcp` → `…/health`, under any prefix a proxy adds)."""
    parts = urlsplit(url)
    base = parts.path.rstrip("/").rsplit("/", 1)[0]
    return parts._replace(path=base + HEALTH_PATH, query="", fragment="").geturl()


def healthy(url: str, timeout: float = PROBE_SECONDS) -> bool:
    """Whether the record server at `url` answers its health check: a connection taken is not
    enough (a hung server, or another process on its port, takes one and never answers a tool)."""
    parts = urlsplit(health_url(url))
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    try:
        conn.request("GET", parts.path)
        answer = conn.getresponse()
        return answer.status == 200 and json.loads(answer.read(4096)).get("server") == SERVER_NAME
    except (OSError, http.client.HTTPException, ValueError, AttributeError):
        return False  # AttributeError: a body that is JSON but not an object
    finally:
        conn.close()


def say_unreachable(turn: Turn, url: str) -> None:
    """Said in the thread, once a turn: the record server did not answer, and this turn's record
    starts in a process of its own (its first line comes seconds later)."""
    log.warning("the record server at %s did not answer at turn %s's start", url, turn.pk)
    post_system_message(
        turn.motion,
        f"@{turn.agent.name}: the record server ({url}) did not answer at this turn's start; its "
        "record runs in a process of its own this turn, which takes a few seconds longer to start",
        kind=Kind.WAKE,
        message_id=system_uuid("record-unreachable", turn.pk),
        turn=turn,
        agent=turn.agent,
    )


def say_gone(turn: Turn, url: str) -> None:
    """Said in the thread, once a turn: the record server stopped answering mid-turn (a record
    tool failed and its health check did too); the agent's record calls fail until it is back."""
    log.warning("the record server at %s stopped answering during turn %s", url, turn.pk)
    post_system_message(
        turn.motion,
        f"@{turn.agent.name}: the record server ({url}) stopped answering during this turn; its "
        "record tools (search, read, remember) fail until the server is back",
        kind=Kind.WAKE,
        message_id=system_uuid("record-gone", turn.pk),
        turn=turn,
        agent=turn.agent,
    )


def stdio_config(turn: Turn) -> tuple[dict, Path]:
    """The harness-neutral launch of the record server for `turn` (`command`, `args`, `env`), and
    the file it reads its pass and database from (the runner removes it when the turn ends, like
    the generated MCP config). The harness's environment is an allowlist without the database
    (harnesses/env.py), and a command line is read by anyone on the host (`ps`), so both go in a
    file only the worker's user reads, named on the command line."""
    lines = {
        PASS_VARIABLE: issue_pass(turn),
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "motion_runner.settings"),
        "DATABASE_URL": url_for(connection),
    }
    if data_dir := os.environ.get("MOTION_RUNNER_DATA_DIR"):
        lines["MOTION_RUNNER_DATA_DIR"] = data_dir
    handle = tempfile.NamedTemporaryFile("w", prefix="wake-record-", suffix=".json", delete=False)
    with handle:  # NamedTemporaryFile makes it 0600
        json.dump(lines, handle)
    config = {
        "command": sys.executable,
        "args": ["-m", "motion_runner.recall", handle.name],
        "env": {"PYTHONPATH": str(PACKAGE_ROOT)},
    }
    return config, Path(handle.name)
