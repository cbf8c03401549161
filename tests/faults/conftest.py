"""The fault tests' private PostgreSQL cluster (one per test module that asks for it), migrated
once into a template database each test copies."""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest

from tests.faults.private_services import DRIVER, PrivatePostgres, _env


@pytest.fixture(scope="module")
def private_postgres():
    cluster = PrivatePostgres().init()
    try:
        with psycopg.connect(cluster.url(), autocommit=True) as admin:
            admin.execute("CREATE DATABASE migrated")
        subprocess.run(
            [sys.executable, str(DRIVER), "migrate"],
            env={**_env(cluster.url("migrated"))},
            check=True,
            timeout=300,
        )
        yield cluster
    finally:
        cluster.destroy()
