from __future__ import annotations

import socket

import pytest
from django.conf import settings


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
        return True
    except OSError:
        return False


def pytest_sessionstart(session):
    """In CI the suite runs against the real services or not at all."""
    if not settings.REQUIRE_REAL_SERVICES:
        return
    problems = []
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        problems.append("DATABASE_URL is not PostgreSQL")
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        problems.append("CELERY_BROKER_URL is not Redis")
    if not _answers(5432):
        problems.append("PostgreSQL does not answer on 127.0.0.1:5432")
    if not _answers(6379):
        problems.append("Redis does not answer on 127.0.0.1:6379")
    if problems:
        pytest.exit("real services required (CI): " + "; ".join(problems), returncode=3)


@pytest.fixture
def uses_real_services() -> bool:
    return settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
