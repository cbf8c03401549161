"""The check against a reconstruction of real memory-lane (tests/host/real_check.py), run when
MEMORY_LANE_REAL names its folder (kept outside this repository: the script's docstring says what
it holds), against a PostgreSQL database of its own made and dropped here. Skipped without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.motion_runner.site.test_host_project import ROOT, admin_sql, fresh_host_database


def test_the_binding_holds_against_real_memory_lanes_models_and_page():
    folder = os.environ.get("MEMORY_LANE_REAL")
    if not folder:
        pytest.skip("set MEMORY_LANE_REAL to a reconstruction of real memory-lane (tests/host/real_check.py)")
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
