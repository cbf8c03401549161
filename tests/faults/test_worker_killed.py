"""A Celery worker killed with SIGKILL mid-turn: within its lease the turn is ended, once, with
one line in the thread; the harness and the child it started are killed; every line it printed
is stored once (those nobody read, from its transcript); its reservation settled; and the pair's
next queued turn sent.

The harness is tests/fakes/fake_harness.py playing back what the real Claude Code CLI printed
(tests/recordings/claude-code/tool_call.jsonl) and its transcript (tool_call.transcript.jsonl),
one line a second, and carrying on when its reader dies, as the real CLI did.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import date
from decimal import Decimal

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner import tasks
from motion_runner.runner.process import TURN_MARKER, marked_processes
from motion_runner.runner.reclaim import reclaim_lapsed_turns
from motion_runner.runner.turns import enqueue_turn, turn_marker
from tests.factories import AgentFactory, MotionFactory
from tests.faults.support import alive, database_url, start_turns_worker, start_worker, wait_for
from tests.recorded import CLAUDE_RECORDINGS, recorded_lines, recording_path
from wakes.models import Spend

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"
SPOKEN = ["Let me read the README first.", "The README says the answer is 42."]
LEASE_SECONDS = 3

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="a worker in another process needs the real PostgreSQL and Redis (CI always has them)",
)


def said(motion, kind):
    return list(Message.objects.filter(motion=motion, kind=kind).order_by("created_at", "id"))


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_turn_loses_nothing_and_leaves_nothing_running(tmp_path, monkeypatch):
    home = tmp_path / "home"
    session_id = recorded_lines("tool_call")[0]["session_id"]
    plan = {
        "pace": 1.0,
        "hang": True,
        "survive_lost_stdout": True,
        "child": str(tmp_path / "child.pid"),
        "transcript": {
            "from": str(CLAUDE_RECORDINGS / "tool_call.transcript.jsonl"),
            "to": str(home / ".claude" / "projects" / "-work" / f"{session_id}.jsonl"),
        },
    }
    motion = MotionFactory(slug="readme-question", workspace=str(tmp_path))
    magent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={
            "FAKE_HARNESS_LINES": str(recording_path("tool_call")),
            "FAKE_HARNESS_PLAN": json.dumps(plan),
            "HOME": str(home),
        },
    )
    turn = enqueue_turn(motion, magent, "What does the README say?", dispatch=False)
    waiting = enqueue_turn(motion, magent, "And then?", dispatch=False)
    reservation = Spend.objects.create(
        kind=Spend.Kind.CONSIDERATION,
        motion=motion,
        agent=magent,
        turn=turn,
        day=date.today(),
        at=timezone.now(),
        amount=Decimal("3"),
        reserved=Decimal("3"),
    )
    worker = start_turns_worker(tmp_path, LEASE_SECONDS)
    try:
        tasks.run_turn.apply_async([turn.pk], queue="turns")
        wait_for("the first words stored", lambda: said(motion, Kind.TEXT), seconds=60)
        worker.send_signal(signal.SIGKILL)
        worker.wait(60)
    finally:
        if worker.poll() is None:
            worker.kill()
    turn.refresh_from_db()
    assert turn.status == TurnStatus.RUNNING and alive(turn.pid)  # orphaned: nobody runs it
    child = int((tmp_path / "child.pid").read_text())
    sent = []
    monkeypatch.setattr(tasks.run_turn, "delay", lambda turn_id: sent.append(turn_id))

    # Reclaimed once the lease lapsed: waited for with a bound generous for a busy machine (the
    # time it takes on a quiet one is measured in bench/faults_soak.py, not asserted here).
    wait_for("the lapsed lease reclaimed", reclaim_lapsed_turns, seconds=LEASE_SECONDS + 120, every=0.2)
    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED
    assert "the worker running it was lost" in turn.error
    (line,) = said(motion, Kind.ERROR)
    assert "the worker running it was lost" in line.text
    assert wait_for("the harness killed", lambda: not alive(turn.pid), seconds=60)
    assert wait_for("its child killed", lambda: not alive(child), seconds=60)
    assert [m.text for m in said(motion, Kind.TEXT)] == SPOKEN
    assert [m.tool_name for m in said(motion, Kind.TOOL_CALL)] == ["Read"]
    assert len(said(motion, Kind.TOOL_RESULT)) == 1
    reservation.refresh_from_db()
    assert reservation.settled
    assert sent == [waiting.pk]
    assert reclaim_lapsed_turns() == 0  # ended once


@pytest.mark.django_db(transaction=True)
def test_a_starting_worker_reaps_harness_processes_whose_turn_ended(tmp_path):
    """The lost worker's host: its turn was ended elsewhere, its processes are still here."""
    motion = MotionFactory(slug="elsewhere")
    magent = AgentFactory(name="magent")
    ended = enqueue_turn(motion, magent, "done already", dispatch=False)
    Turn.objects.filter(pk=ended.pk).update(status=TurnStatus.FAILED)
    running = enqueue_turn(motion, magent, "still going", dispatch=False)
    Turn.objects.filter(pk=running.pk).update(status=TurnStatus.RUNNING)

    def harness(turn) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"],
            env={**os.environ, TURN_MARKER: turn_marker(turn.pk)},
            start_new_session=True,
        )

    orphan, live = harness(ended), harness(running)
    stranger = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        env={**os.environ, TURN_MARKER: f"another-database/{ended.pk}"},
    )
    try:
        wait_for("the markers visible", lambda: {orphan.pid, live.pid} <= set(marked_processes()))

        tasks.reap_orphans_at_start()

        assert orphan.wait(60) == -signal.SIGKILL
        assert live.poll() is None
        assert stranger.poll() is None
    finally:
        for process in (orphan, live, stranger):
            process.kill()
            process.wait()


@pytest.mark.django_db(transaction=True)
def test_a_worker_asked_to_stop_ends_its_turn_and_leaves_no_harness_running(tmp_path):
    """bin/serve's Ctrl-C (SIGTERM to the worker): the turn it runs is stopped as ■ stops it, its
    words kept, and its harness, in a process group of its own, does not outlive the worker."""
    home = tmp_path / "home"
    plan = {"pace": 1.0, "hang": True, "survive_lost_stdout": True}
    motion = MotionFactory(slug="closing-time", workspace=str(tmp_path))
    magent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={
            "FAKE_HARNESS_LINES": str(recording_path("tool_call")),
            "FAKE_HARNESS_PLAN": json.dumps(plan),
            "HOME": str(home),
        },
    )
    turn = enqueue_turn(motion, magent, "What does the README say?", dispatch=False)
    worker = start_worker(
        "turns", database=database_url(), broker=settings.CELERY_BROKER_URL, log=tmp_path / "worker.log"
    )
    try:
        tasks.run_turn.apply_async([turn.pk], queue="turns")
        wait_for("the first words stored", lambda: said(motion, Kind.TEXT), seconds=60)
        turn.refresh_from_db()
        harness = turn.pid
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(120) == 0  # a warm stop: the turn ended, the worker left on its own
    finally:
        if worker.poll() is None:
            worker.kill()
    turn.refresh_from_db()
    assert turn.status != TurnStatus.RUNNING and turn.stopped_by == "the worker stopping"
    assert wait_for("the harness gone", lambda: not alive(harness), seconds=30)
    assert said(motion, Kind.TEXT)[0].text == SPOKEN[0]
