#!/usr/bin/env python3
"""Seed the database DATABASE_URL names for a fault test that serves it from another process:
the Motion `harbor`, its agent `scribe` and scribe's API key, printed as one JSON line.

  DATABASE_URL=postgres://… seed_in_a_process.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django  # noqa: E402

django.setup()

from motion_runner.api.auth import create_key  # noqa: E402
from tests.factories import AgentFactory, MotionFactory  # noqa: E402

motion = MotionFactory(slug="harbor")
scribe = AgentFactory(name="scribe")
motion.agents.add(scribe)
print(json.dumps({"key": create_key(scribe)[1]}), flush=True)
