"""Shared set-up for the wakes benches: Django on a dedicated PostgreSQL database."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _figures import tree  # noqa: E402

ROOT = tree()  # this checkout, or the one bench/against.py names (BENCH_TREE)
sys.path.insert(0, str(ROOT))

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/motion_runner_bench_wakes"


def setup(url: str | None = None) -> str:
    """Point Django at the bench database (made anew for each run), migrate it, return its URL."""
    url = url or os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("CELERY_BROKER_URL", "memory://")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "motion_runner.settings")
    if url.startswith("postgres"):
        import psycopg

        name = url.rsplit("/", 1)[1]
        admin = url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            # A fresh database each run: an old one may hold another schema's migrations.
            conn.execute(f'drop database if exists "{name}" with (force)')
            conn.execute(f'create database "{name}"')
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return url
