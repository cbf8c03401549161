"""The service's log lines as bin/serve's terminal shows them (issue 43.6)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
SAY_FORBIDDEN = """
import logging, django
django.setup()
logging.getLogger("django.request").warning("Forbidden: /motions/demo/")
"""


@pytest.mark.parametrize("debug", ["1", "0"])
def test_a_refused_request_is_said_once_in_the_terminal(debug):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "motion_runner.settings",
        "DEBUG": debug,
        "PYTHONPATH": str(ROOT),
        "SECRET_KEY": "a-test-key-long-enough-for-the-deploy-checks-" * 2,
    }
    done = subprocess.run(
        [sys.executable, "-c", SAY_FORBIDDEN], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr
    assert done.stderr.count("Forbidden: /motions/demo/") == 1, done.stderr
