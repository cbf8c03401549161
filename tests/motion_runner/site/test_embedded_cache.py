"""The embedded default's cache is one every process shares: bin/serve's web and its worker are
separate processes, and the worker writes what the web reads (a runner's hold, the holds shown, an
agent's words as they are typed: thread/typed.py). Read from motion_runner.settings as a newcomer's
first run loads it, with none of the production variables set."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.paths import ROOT


def embedded_cache(tmp_path, **extra: str) -> dict:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("CACHE_URL", "CELERY_BROKER_URL", "DATABASE_URL", "DJANGO_SETTINGS_MODULE")
    }
    env.update(MOTION_RUNNER_DATA_DIR=str(tmp_path), **extra)
    shown = subprocess.run(
        [sys.executable, "-c", "import json, motion_runner.settings as s; print(json.dumps(s.CACHES))"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(shown.stdout)["default"]


def test_the_first_run_keeps_its_cache_in_files_every_process_reads(tmp_path):
    cache = embedded_cache(tmp_path)
    assert cache["BACKEND"] == "django.core.cache.backends.filebased.FileBasedCache"
    assert cache["LOCATION"] == str(tmp_path / "cache")


def test_a_redis_broker_is_the_cache_too(tmp_path):
    cache = embedded_cache(tmp_path, CELERY_BROKER_URL="redis://127.0.0.1:6379/3")
    assert cache == {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:6379/3",
    }
