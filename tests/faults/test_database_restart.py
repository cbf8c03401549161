"""PostgreSQL restarts while a turn prints: the harness goes on, its lines wait in memory and are
stored once the database answers again, and the turn ends as it would have. An outage longer than
the bound ends the turn with one clear line instead of leaving it `running`.

The database is a private cluster this module starts (initdb/pg_ctl, its own port and temp dir);
the shared one is never restarted. The turn runs in a process of its own (turn_in_a_process.py),
as a worker would run it; the harness plays back the recorded Claude Code tool_call turn.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from decimal import Decimal

import psycopg

from tests.faults.private_services import DRIVER, PrivatePostgres, _env, fresh_database
from tests.faults.support import wait_for

SPOKEN = ["Let me read the README first.", "The README says the answer is 42."]


def stored_texts(url: str) -> int:
    try:
        with psycopg.connect(url, connect_timeout=2) as db:
            return db.execute("SELECT count(*) FROM motion_runner_message WHERE kind = 'text'").fetchone()[0]
    except psycopg.OperationalError:
        return 0


def run_turn(cluster: PrivatePostgres, plan: dict, during, **env: str) -> dict:
    """Start the turn in its own process; once it has stored its first words, do `during`."""
    url = fresh_database(cluster)
    driver = subprocess.Popen(
        [sys.executable, str(DRIVER)],
        env=_env(url, FAKE_HARNESS_PLAN=json.dumps(plan), **env),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for("the first words stored", lambda: stored_texts(url), seconds=60)
        during()
        out, _ = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
    return json.loads(out.strip().splitlines()[-1])


def test_a_database_restart_mid_turn_loses_nothing_and_stops_nothing(private_postgres):
    away = []

    outcome = run_turn(private_postgres, {"pace": 0.4}, lambda: away.append(private_postgres.restart()))

    assert away and away[0] < 10
    assert outcome["status"] == "finished", outcome
    assert outcome["texts"] == SPOKEN
    assert outcome["tool_calls"] == ["Read"]
    assert outcome["tool_results"] == 1
    assert outcome["turn_ends"] == 1
    assert outcome["errors"] == []


def test_an_outage_longer_than_the_bound_ends_the_turn_with_one_clear_line(private_postgres):
    def away_for_a_while():
        private_postgres.stop()
        threading.Timer(4.0, private_postgres.start).start()

    outcome = run_turn(
        private_postgres,
        {"pace": 0.4, "hang": True, "no_result": True},
        away_for_a_while,
        RUNNER_DB_OUTAGE_SECONDS="1.5",
    )

    # The harness hangs for ever without its result line: only the outage bound can have ended it
    # (the line says so).
    assert outcome["status"] == "failed", outcome
    (line,) = outcome["errors"]
    assert "the database did not answer for" in line
    assert outcome["texts"][:1] == SPOKEN[:1]


def stored_turn_ends(url: str) -> int:
    try:
        with psycopg.connect(url, connect_timeout=2) as db:
            return db.execute(
                "SELECT count(*) FROM motion_runner_message WHERE kind = 'turn_end'"
            ).fetchone()[0]
    except psycopg.OperationalError:
        return 0


def test_an_outage_bound_after_the_result_line_does_not_mark_a_finished_turn_failed(private_postgres):
    url = fresh_database(private_postgres)
    driver = subprocess.Popen(
        [sys.executable, str(DRIVER)],
        # It prints everything, its result line too, then hangs (a known Claude Code hang) for
        # longer than the outage bound takes to trip.
        env=_env(
            url,
            FAKE_HARNESS_PLAN=json.dumps({"hang": True}),
            RESERVE="3",
            RUNNER_DB_OUTAGE_SECONDS="1.5",
            RUNNER_AFTER_RESULT_GRACE_SECONDS="60",
        ),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for("the result line stored", lambda: stored_turn_ends(url), seconds=60)
        private_postgres.stop()
        threading.Timer(5.0, private_postgres.start).start()
        out, _ = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
    outcome = json.loads(out.strip().splitlines()[-1])

    assert outcome["turn_ends"] == 1
    assert outcome["status"] == "finished", outcome
    assert outcome["errors"] == []
    assert outcome["texts"] == SPOKEN
    assert Decimal(outcome["cost_usd"]) == Decimal("0.01104")  # what its result line says
    (spend,) = outcome["spends"]
    assert spend["settled"] and Decimal(spend["amount"]) == Decimal("0.01104")
