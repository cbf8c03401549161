"""`manage.py wake --sync` while PostgreSQL is away for 25 s, with a 10 s outage bound (issue 42,
item 7 and its "Done when"): the command is the runner here, and nobody else (no worker, no sweep)
is there to finish its turn. It stops the harness at the bound, keeps what the harness printed,
and once the database answers again writes those lines once, ends the turn with one line saying
why and settles its ledger row itself; it exits with the command's own error, never a traceback
(a receiver of its writes, such as the notices one, used to raise out of the write path).

The database is a private cluster this module starts; the shared one is never stopped. The
harness plays back the recorded Claude Code tool_call turn and then hangs without its result line,
so only the bound can end it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path

import psycopg

from tests.faults.private_services import DRIVER, _env, fresh_database
from tests.faults.support import wait_for
from tests.faults.test_database_restart import SPOKEN

MANAGE = Path(__file__).resolve().parents[2] / "manage.py"
OUTAGE_SECONDS = 25.0
BOUND_SECONDS = 10


def agents_words(url: str) -> int:
    """How many of the agent's own words are stored (the person's question is a text line too)."""
    try:
        with psycopg.connect(url, connect_timeout=2) as db:
            return db.execute(
                "SELECT count(*) FROM motion_runner_message WHERE kind = 'text' AND agent_id IS NOT NULL"
            ).fetchone()[0]
    except psycopg.OperationalError:
        return 0


def thread_of(url: str) -> dict:
    """What the database holds of the woken turn, read once it is back."""
    with psycopg.connect(url) as db:
        status, error, ended, cost = db.execute(
            "SELECT status, error, ended_at IS NOT NULL, cost_usd FROM motion_runner_turn"
        ).fetchone()
        kinds = db.execute("SELECT kind, text FROM motion_runner_message ORDER BY created_at, id").fetchall()
        spends = db.execute("SELECT amount, settled FROM wakes_spend").fetchall()
    return {
        "status": status,
        "error": error,
        "ended": ended,
        "cost": cost,
        "texts": [text for kind, text in kinds if kind == "text" and text in SPOKEN],
        "errors": [text for kind, text in kinds if kind == "error"],
        "spends": spends,
    }


def test_wake_sync_rides_out_a_25_s_outage_with_a_10_s_bound_and_settles_its_turn_itself(private_postgres):
    url = fresh_database(private_postgres)
    plan = {"pace": 0.5, "hang": True, "no_result": True}
    env = _env(url, FAKE_HARNESS_PLAN=json.dumps(plan), RUNNER_DB_OUTAGE_SECONDS=str(BOUND_SECONDS))
    subprocess.run(
        [sys.executable, str(DRIVER), "seed"], env=env, check=True, timeout=120, capture_output=True
    )
    wake = subprocess.Popen(
        [sys.executable, str(MANAGE), "wake", "readme-question", "magent", "--prompt", "README?", "--sync"],
        env={**env, "DJANGO_SETTINGS_MODULE": "tests.settings"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    back = threading.Timer(OUTAGE_SECONDS, private_postgres.start)
    try:
        wait_for("the agent's first words stored", lambda: agents_words(url), seconds=90)
        private_postgres.stop()
        back.start()
        out, err = wake.communicate(timeout=240)
    finally:
        back.join()
        if wake.poll() is None:
            wake.kill()
    turn = thread_of(url)

    # It ends with the command's own word for a failed turn (and what it printed says why), not a
    # traceback.
    assert wake.returncode == 1
    assert err.strip().splitlines()[-1] == "CommandError: turn 1 failed", err
    assert "the database did not answer for" in out.strip().splitlines()[-1]
    assert turn["status"] == "failed" and turn["ended"], turn
    (line,) = turn["errors"]
    away = int(re.search(r"did not answer for (\d+) s", line).group(1))
    assert away <= BOUND_SECONDS + 2  # the bound stopped the harness, not the database's return
    assert turn["texts"] == SPOKEN  # each printed line stored once, after the outage too
    assert turn["cost"] > 0
    (spend,) = turn["spends"]
    assert spend == (Decimal(turn["cost"]), True)  # settled by the command, at what was spent
