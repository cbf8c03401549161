"""The check against a reconstruction of real memory-lane (tests/host/real_check.py), run when
MEMORY_LANE_REAL names its folder (kept outside this repository: the script's docstring says what
it holds), against a PostgreSQL database of its own made and dropped here.

Without the folder it cannot run, and says so loudly: the skip names what is missing and why
tests/host/ stands in meanwhile, and the run's summary lists it under the checks that did not run
(tests/conftest.py, `reported_when_skipped`). MEMORY_LANE_REAL_REQUIRED=1 (a CI that has the
folder) turns the skip into a failure, and a MEMORY_LANE_REAL naming no such folder always fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.motion_runner.site.test_host_project import ROOT, admin_sql, fresh_host_database

NOT_RUN = (
    "NOT RUN: the check against real memory-lane's models and page needs MEMORY_LANE_REAL, a "
    "reconstruction of cryptograss/memory-lane kept outside this repository (tests/host/real_check.py "
    "says what it holds). Meanwhile tests/host/, its reconstruction here, is all the binding is "
    "checked against (tests/motion_runner/memory_lane/test_memory_lane_record.py); set "
    "MEMORY_LANE_REAL_REQUIRED=1 where the folder exists to make its absence a failure."
)


def real_memory_lane() -> str:
    """The folder to check against; a skip (or, where required, a failure) saying why not."""
    folder = os.environ.get("MEMORY_LANE_REAL", "")
    if folder:
        if not (Path(folder) / "conversations" / "models.py").is_file():
            pytest.fail(f"MEMORY_LANE_REAL={folder!r} holds no conversations/models.py (real_check.py)")
        return folder
    if os.environ.get("MEMORY_LANE_REAL_REQUIRED"):
        pytest.fail(NOT_RUN)
    pytest.skip(NOT_RUN)


@pytest.mark.reported_when_skipped
def test_the_binding_holds_against_real_memory_lanes_models_and_page():
    folder = real_memory_lane()
    url, name = fresh_host_database("_real")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}, "ML_DATABASE_URL": url}
    try:
        run = subprocess.run(
            [sys.executable, "-m", "tests.host.real_check", folder],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert json.loads(run.stdout)["failed"] == []


# --- how it says it did not run -----------------------------------------------------------------


def test_without_the_folder_the_check_skips_saying_what_is_missing(monkeypatch):
    monkeypatch.delenv("MEMORY_LANE_REAL", raising=False)
    monkeypatch.delenv("MEMORY_LANE_REAL_REQUIRED", raising=False)
    with pytest.raises(pytest.skip.Exception, match="NOT RUN: .*MEMORY_LANE_REAL"):
        real_memory_lane()


def test_where_the_check_is_required_its_absence_fails(monkeypatch):
    monkeypatch.delenv("MEMORY_LANE_REAL", raising=False)
    monkeypatch.setenv("MEMORY_LANE_REAL_REQUIRED", "1")
    with pytest.raises(pytest.fail.Exception, match="NOT RUN"):
        real_memory_lane()


def test_a_folder_that_is_not_memory_lane_fails(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMORY_LANE_REAL", str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match="conversations/models.py"):
        real_memory_lane()
