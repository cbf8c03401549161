"""The binding's reads once a tick (issue 41, item 3; docs/memory-lane.md).

tests/host/binding_reads_check.py, run with pytest inside the host project (the README's block:
the memory_lane binding; its own test database): resolve() for 200 due pairs reads memory-lane's
Moods, agents and settings rows once for all of them, pinned with django_assert_num_queries at one
statement a pair plus four (at most 3 a pair), the dials the same as read pair by pair, and a
consider-loop tick over 200 due pairs reads memory-lane's settings table once.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.motion_runner.site.test_host_project import ROOT, admin_sql, fresh_host_database


def test_the_binding_reads_once_a_tick_inside_the_host_project():
    url, name = fresh_host_database("_reads")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
        "HOST_DATABASE_URL": url,
    }
    try:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "tests/host/binding_reads_check.py",
                "--ds=tests.host.settings",
                "--confcutdir=tests/host",
                "-o",
                "python_files=*_check.py",
                "-p",
                "no:randomly",
                "-p",
                "no:cacheprovider",
                "-q",
                "--create-db",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=280,
        )
    finally:
        admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin_sql(f'DROP DATABASE IF EXISTS "test_{name}" WITH (FORCE)')
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert "4 passed" in run.stdout
