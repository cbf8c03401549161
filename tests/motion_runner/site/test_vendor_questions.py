"""The database's vendor is asked in motion_runner/sql/ (issue 31, "What to build" 5): a caller asks
the function of the table's module, which picks the fast path or its ORM reference path, and the
bells ask `sql.channels.carrier`. What is left elsewhere, and why, is listed here."""

from __future__ import annotations

import re

from tests.paths import ROOT

APPS = ("motion_runner", "wakes", "watchlist")
VENDOR_QUESTION = re.compile(r"\.vendor\b|\bis_postgresql\(|\bis_sqlite\(|\bfast_paths\(|\[\"ENGINE\"\]")
LEFT_OUTSIDE = {
    # The settings pick (and set) the backend and SQLite's options from DATABASES before any
    # connection exists.
    "motion_runner/settings.py": 3,
    # A production check reads the same setting: no connection is asked.
    "motion_runner/checks.py": 1,
}


def test_the_vendor_is_asked_only_in_sql_and_where_listed():
    asked = {}
    for app in APPS:
        for file in sorted((ROOT / app).rglob("*.py")):
            relative = file.relative_to(ROOT).as_posix()
            if relative.startswith("motion_runner/sql/") or "/migrations/" in relative:
                continue
            code = "\n".join(line.split("#")[0] for line in file.read_text().splitlines())
            if count := len(VENDOR_QUESTION.findall(code)):
                asked[relative] = count
    assert asked == LEFT_OUTSIDE
