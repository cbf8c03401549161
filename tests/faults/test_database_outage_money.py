"""Money and lines when PostgreSQL goes away around a turn (a private cluster this module starts
and stops; the shared one is never touched). The turn runs in a process of its own
(turn_in_a_process.py), as a worker would run it, the harness playing back the recorded Claude
Code tool_call turn (priced at $0.01104 by its result line).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from decimal import Decimal

from tests.faults.private_services import DRIVER, PrivatePostgres, _env, fresh_database


def start_turn(cluster: PrivatePostgres, plan: dict, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(DRIVER)],
        env=_env(fresh_database(cluster), FAKE_HARNESS_PLAN=json.dumps(plan), **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


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
