"""The web process moves what it loaded at start out of the cyclic collector's sight (wsgi.py):
in a process of its own, as gunicorn imports it, so this test process keeps its collector."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.paths import ROOT

PROBE = """
import gc, sys
import motion_runner.wsgi
print(gc.get_freeze_count(), "motion_runner.api.agent_views" in sys.modules, len(gc.get_objects()))
"""


def test_the_web_process_freezes_what_it_loaded_with_its_views():
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="tests.settings", CELERY_BROKER_URL="memory://")
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    frozen, views_loaded, tracked = int(out[0]), out[1] == "True", int(out[2])
    assert views_loaded  # the URLconf was loaded before the freeze
    assert frozen > 50_000 and tracked < frozen / 10
