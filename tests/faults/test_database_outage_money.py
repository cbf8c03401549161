"""Money and lines when PostgreSQL goes away around a turn (a private cluster this module starts
and stops; the shared one is never touched). The turn runs in a process of its own
(turn_in_a_process.py), as a worker would run it, the harness playing back the recorded Claude
Code tool_call turn (priced at $0.01104 by its result line).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from decimal import Decimal

from tests.faults.private_services import DRIVER, PrivatePostgres, _env, fresh_database
from tests.faults.support import wait_for
from tests.faults.test_database_restart import SPOKEN, stored_texts


def start_turn(cluster: PrivatePostgres, plan: dict, **env: str) -> subprocess.Popen:
    url = fresh_database(cluster)
    driver = subprocess.Popen(
        [sys.executable, str(DRIVER)],
        env=_env(url, FAKE_HARNESS_PLAN=json.dumps(plan), **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    driver.database_url = url
    return driver


def said_next(driver: subprocess.Popen) -> dict:
    line = driver.stdout.readline()
    assert line, "the turn's process ended early"
    return json.loads(line)


def test_a_database_restart_right_after_a_turn_ends_still_settles_its_reservation(private_postgres, tmp_path):
    go_on = tmp_path / "go-on"
    driver = start_turn(private_postgres, {}, RESERVE="3", PAUSE_BEFORE_END_ANNOUNCED=str(go_on))
    back = threading.Timer(3.0, private_postgres.start)
    try:
        assert "turn" in said_next(driver)
        assert said_next(driver) == {"ended": True}  # its end is saved; the ledger not yet told
        private_postgres.stop()
        go_on.touch()
        back.start()
        out, logged = driver.communicate(timeout=180)
    finally:
        back.join()
        if driver.poll() is None:
            driver.kill()
    outcome = json.loads(out.strip().splitlines()[-1])

    assert outcome["status"] == "finished", outcome
    assert Decimal(outcome["cost_usd"]) == Decimal("0.01104")
    (spend,) = outcome["spends"]
    assert spend["settled"], "the $3 reservation is still held"
    assert Decimal(spend["amount"]) == Decimal(outcome["cost_usd"])
    assert "receiver failed" not in logged  # every receiver of its end ran, once it was back


def test_an_outage_past_the_bound_stops_the_harness_on_time_and_keeps_what_it_printed(private_postgres):
    """The issue's 25 s outage with a 10 s bound, scaled: 12 s away, a 3 s bound and a 3 s lease.
    The bound acts on the runner's own clock (it acted at 29 s, behind the pool's 30 s getconn,
    after the database was back); every line printed before it is written once the database is
    back, and the turn is charged what those lines cost. The harness never prints its result line
    here (one printed before the bound ends the turn by its own word: test_database_restart)."""
    driver = start_turn(
        private_postgres,
        {"pace": 0.5, "hang": True, "no_result": True},
        RESERVE="3",
        RUNNER_DB_OUTAGE_SECONDS="3",
        RUNNER_LEASE_SECONDS="3",
    )
    back = threading.Timer(12.0, private_postgres.start)
    try:
        assert "turn" in said_next(driver)
        wait_for("the first words stored", lambda: stored_texts(driver.database_url), seconds=60)
        private_postgres.stop()
        back.start()
        out, _ = driver.communicate(timeout=180)
    finally:
        back.join()
        if driver.poll() is None:
            driver.kill()
    outcome = json.loads(out.strip().splitlines()[-1])

    assert outcome["status"] == "failed", outcome
    (line,) = outcome["errors"]
    away = int(re.search(r"did not answer for (\d+) s", line).group(1))
    assert away <= 3 + 2  # the bound, and a tick or two
    assert outcome["texts"] == SPOKEN
    assert outcome["tool_calls"] == ["Read"]
    assert outcome["turn_ends"] == 0
    assert Decimal(outcome["cost_usd"]) > 0  # its streamed calls, priced
    (spend,) = outcome["spends"]
    assert spend["settled"] and Decimal(spend["amount"]) == Decimal(outcome["cost_usd"])


def test_a_database_restart_longer_than_the_lease_does_not_end_a_live_turn_as_lost(private_postgres):
    """Every lease lapses while the database is away; once it is back the reclaim (a housekeeping
    process of its own, without a pool, so it is the first to be back) waits for the runners to
    renew theirs instead of ending each live turn as lost and stopping its harness."""
    driver = start_turn(
        private_postgres, {"pace": 0.5}, RUNNER_LEASE_SECONDS="3", RUNNER_DB_OUTAGE_SECONDS="60"
    )
    sweeper = subprocess.Popen(
        [sys.executable, str(DRIVER), "sweep", "0.2"],
        env=_env(driver.database_url, DATABASE_POOL_SIZE="0", RUNNER_LEASE_SECONDS="3"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    back = threading.Timer(8.0, private_postgres.start)
    try:
        assert "turn" in said_next(driver)
        wait_for("the first words stored", lambda: stored_texts(driver.database_url), seconds=60)
        private_postgres.stop()
        back.start()
        out, _ = driver.communicate(timeout=180)
    finally:
        back.join()
        sweeper.kill()
        sweeper.wait(10)
        if driver.poll() is None:
            driver.kill()
    outcome = json.loads(out.strip().splitlines()[-1])

    assert outcome["status"] == "finished", outcome
    assert outcome["errors"] == []
    assert outcome["texts"] == SPOKEN
    assert sweeper.stdout.read() == ""  # it reclaimed nothing
