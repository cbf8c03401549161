"""One host check run as the memory-lane tests run them: a subprocess with the host project's
settings (tests/host/settings.py, the README's block) against a database of its own, migrated, the
check module run, the database dropped after; what the check printed last, as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.motion_runner.site.test_host_project import ROOT, admin_sql, fresh_host_database


def host_check(suffix: str, module: str) -> dict:
    url, name = fresh_host_database(suffix)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
        "DJANGO_SETTINGS_MODULE": "tests.host.settings",
        "HOST_DATABASE_URL": url,
    }

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
        )

    try:
        migrate = run("-m", "django", "migrate", "--noinput")
        check = run("-m", module) if migrate.returncode == 0 else None
    finally:
        admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert check is not None and check.returncode == 0, migrate.stderr + (check.stderr if check else "")
    return json.loads(check.stdout.splitlines()[-1])
