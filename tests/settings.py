"""Test settings: the real PostgreSQL and Redis when the environment names them (CI always
does, through bin/test), the embedded defaults otherwise."""

import os

os.environ.setdefault("CELERY_BROKER_URL", "memory://")

from motion_runner.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
RUNNER_TURN_TIMEOUT_SECONDS = 60
RUNNER_KILL_GRACE_SECONDS = 1.0
CELERY_TASK_ALWAYS_EAGER = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not memory: the e2e tests' Celery worker thread and the harness read it too.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-db.sqlite3")}  # noqa: F405
# A browser test's page leaves its long poll running on the live server when it closes: a short
# wait ends it before the next test, instead of 20 s later against a database already torn down.
THREAD_POLL_WAIT_SECONDS = 1.0
# The screen's CLI route (wakes/turn/screen_cli.py) runs a real harness CLI: only the tests that
# point it at a fake model server turn it on.
WAKES_SCREEN_CLI = "off"
if not CACHE_URL:  # noqa: F405
    # One test process (its live server's threads included): its own memory, nothing left over
    # from an earlier run, where the embedded default keeps files every process shares.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
