"""Claude Code's files on disk and its dollar figures: where a session's transcript is filed, the
running total its last cost-state line holds (what a `--resume` starts from), and the working
directory its project folder stands for. Kept apart from the stream parser (claude_code.py)."""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

MICRO = Decimal("0.000001")


def dollars(value: Any) -> Decimal | None:
    """Dollars to the micro-dollar (the CLI sums floats: 0.022000000000000002)."""
    if value is None:
        return None
    try:
        return Decimal(str(value)).quantize(MICRO)
    except ArithmeticError:
        return None


COST_STATE = b'"type":"cost-state"'
TAIL_BYTES = 4 * 1024 * 1024


def last_cost_state(path: Path) -> Decimal | None:
    """totalCostUSD of the transcript's last cost-state line: the running total a `--resume`
    starts from. The tail is read first (cost-state is written as a process exits)."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            for start in (max(0, size - TAIL_BYTES), 0):
                handle.seek(start)
                lines = [line for line in handle.read().splitlines() if COST_STATE in line]
                if lines or start == 0:
                    break
    except OSError:
        return None
    for line in reversed(lines):
        try:
            value = json.loads(line).get("totalCostUSD")
        except ValueError:
            continue
        return dollars(value)
    return None


def transcript_file(env: dict[str, str], session_id: str) -> Path | None:
    """`<config dir>/projects/<munged cwd>/<session>.jsonl` for the harness env a turn runs with."""
    config = env.get("CLAUDE_CONFIG_DIR") or (str(Path(env["HOME"]) / ".claude") if env.get("HOME") else "")
    if not config or not session_id or "/" in session_id:
        return None
    found = sorted(Path(config).glob(f"projects/*/{session_id}.jsonl"))
    return found[0] if found else None


def project_folder_name(cwd: str) -> str:
    """The folder Claude Code files a working directory's sessions under."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def filed_cwd(path: Path) -> str | None:
    """The working directory whose project folder holds this transcript (a session's lines may
    name other directories too: a worktree, a scratch folder), if it still exists."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if '"cwd"' not in line:
                    continue
                try:
                    cwd = json.loads(line).get("cwd")
                except (ValueError, AttributeError):
                    continue
                if isinstance(cwd, str) and project_folder_name(cwd) == path.parent.name:
                    return cwd if Path(cwd).is_dir() else None
    except OSError:
        return None
    return None
