#!/usr/bin/env python3
"""Run one wake of magent (the fake harness playing back the recorded tool_call turn) in this
process, against the database DATABASE_URL names, and print what the thread holds afterwards as
one JSON line. The database fault tests run it against their private cluster and restart that
cluster while the turn prints. `migrate` as the first argument only migrates.

  FAKE_HARNESS_PLAN='{"pace": 0.5}' DATABASE_URL=postgres://… turn_in_a_process.py [migrate]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

if sys.argv[1:] == ["migrate"]:
    call_command("migrate", verbosity=0)
    sys.exit(0)

from motion_runner.models import Kind, Message, Turn  # noqa: E402
from motion_runner.runner.turns import enqueue_turn, execute_turn  # noqa: E402
from tests.factories import AgentFactory, MotionFactory  # noqa: E402
from tests.recorded import recording_path  # noqa: E402

FAKE_HARNESS = ROOT / "tests" / "fakes" / "fake_harness.py"

motion = MotionFactory(slug="readme-question", workspace=tempfile.mkdtemp())
magent = AgentFactory(
    name="magent",
    binary=str(FAKE_HARNESS),
    env={
        "FAKE_HARNESS_LINES": str(recording_path("tool_call")),
        "FAKE_HARNESS_PLAN": os.environ.get("FAKE_HARNESS_PLAN", "{}"),
    },
)
turn = enqueue_turn(motion, magent, "What does the README say?", dispatch=False)
print(json.dumps({"turn": turn.pk}), flush=True)
execute_turn(turn.pk)
turn = Turn.objects.get(pk=turn.pk)
thread = Message.objects.filter(motion=motion).order_by("created_at", "id")
print(
    json.dumps(
        {
            "status": turn.status,
            "error": turn.error,
            "texts": [m.text for m in thread.filter(kind=Kind.TEXT)],
            "tool_calls": [m.tool_name for m in thread.filter(kind=Kind.TOOL_CALL)],
            "tool_results": thread.filter(kind=Kind.TOOL_RESULT).count(),
            "turn_ends": thread.filter(kind=Kind.TURN_END).count(),
            "errors": [m.text for m in thread.filter(kind=Kind.ERROR)],
        }
    ),
    flush=True,
)
