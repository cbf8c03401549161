"""Shared set-up for benchmarks: Django on a fresh throwaway database.

Uses DATABASE_URL when set (PostgreSQL in CI and on these machines), SQLite otherwise; the
database is created for the run with Django's test-database machinery and dropped after.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")


@contextmanager
def bench_database(suffix: str = "bench"):
    import django

    django.setup()
    from django.db import connection

    settings_dict = connection.settings_dict
    settings_dict["TEST"] = dict(settings_dict.get("TEST") or {})
    if connection.vendor == "sqlite":
        settings_dict["TEST"]["NAME"] = str(ROOT / "var" / f"{suffix}.sqlite3")
    else:
        settings_dict["TEST"]["NAME"] = f"{suffix}_{os.getpid()}"
    settings_dict["CONN_MAX_AGE"] = 0  # server threads close theirs after each request
    old_name = settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield connection
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0, keepdb=False)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]
