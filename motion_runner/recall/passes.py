"""The turn's record pass, and the server config the harness is handed.

A pass is random, shown once (in the generated MCP config), and kept only as its sha256 on the
turn (`Turn.record_pass`): the server finds the turn by it and answers only while that turn runs,
so a config copied out of a finished turn opens nothing (docs/security.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sys
import tempfile
from pathlib import Path

from django.db import connection

from ..models import Turn, TurnStatus
from ..sql.server import url_for

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


def server_config(turn: Turn) -> tuple[dict, Path]:
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
