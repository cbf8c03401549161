#!/usr/bin/env python3
"""Run one wake of magent (the fake harness playing back the recorded tool_call turn) in this
process, against the database DATABASE_URL names, and print what the thread holds afterwards as
one JSON line. The database fault tests run it against their private cluster and restart that
cluster while the turn prints. `migrate` as the first argument only migrates.

  FAKE_HARNESS_PLAN='{"pace": 0.5}' DATABASE_URL=postgres://… turn_in_a_process.py [migrate]

`seed` only makes the Motion (with a person's question in it) and magent, for a test that wakes
magent with `manage.py wake … --sync` in a process of its own.

`sweep 0.3` instead reclaims lapsed leases every 0.3 s until killed, as beat's reclaim task would
in a housekeeping worker, retrying while the database is away.

RESERVE=3: the turn holds a $3 reservation in the ledger, as a consideration's wake does.
PAUSE_BEFORE_END_ANNOUNCED=<path>: once the turn's end is saved, print {"ended": true} and wait for
<path> to exist before its end is announced (settled), so a test can take the database away there.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from datetime import date
from decimal import Decimal
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
if sys.argv[1:2] == ["sweep"]:
    from django.db import DatabaseError, connection

    from motion_runner.runner.reclaim import reclaim_lapsed_turns

    while True:
        try:
            if ended := reclaim_lapsed_turns():
                print(json.dumps({"reclaimed": ended}), flush=True)
        except DatabaseError:
            connection.close()  # the database is away: the next round tries again
        time.sleep(float(sys.argv[2]))

from django.utils import timezone  # noqa: E402

from motion_runner.models import Kind, Message, Turn  # noqa: E402
from motion_runner.runner import ending  # noqa: E402
from motion_runner.runner.turns import enqueue_turn, execute_turn  # noqa: E402
from tests.factories import AgentFactory, MotionFactory  # noqa: E402
from tests.recorded import recording_path  # noqa: E402
from wakes.models import Spend  # noqa: E402

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
if sys.argv[1:] == ["seed"]:
    from tests.factories import MessageFactory, UserFactory

    motion.agents.add(magent)
    asker = UserFactory(username="justin")
    # The last person who spoke before the agent: its first post answers them (a notice), so the
    # notices receiver is on this turn's write path.
    MessageFactory(motion=motion, sender="justin", author=asker, text="What does the README say?")
    print(json.dumps({"motion": motion.slug, "agent": magent.name}), flush=True)
    sys.exit(0)
turn = enqueue_turn(motion, magent, "What does the README say?", dispatch=False)
if os.environ.get("RESERVE"):
    reserved = Decimal(os.environ["RESERVE"])
    Spend.objects.create(
        kind=Spend.Kind.CONSIDERATION,
        motion=motion,
        agent=magent,
        turn=turn,
        day=date.today(),
        at=timezone.now(),
        amount=reserved,
        reserved=reserved,
    )
if pause := os.environ.get("PAUSE_BEFORE_END_ANNOUNCED"):
    announce_end = ending._announce_end

    def paused_announce_end(ended: Turn) -> None:
        print(json.dumps({"ended": True}), flush=True)
        while not os.path.exists(pause):
            time.sleep(0.05)
        announce_end(ended)

    ending._announce_end = paused_announce_end
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
            "cost_usd": str(turn.cost_usd),
            "spends": [
                {"amount": str(spend.amount), "settled": spend.settled}
                for spend in Spend.objects.filter(turn=turn).order_by("pk")
            ],
        }
    ),
    flush=True,
)
