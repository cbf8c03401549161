"""A worker asked to stop (bin/serve's Ctrl-C, a deploy's SIGTERM) stops the turns it runs, as ■
does: the flag and the ring, so each runner ends its turn with what was drained kept and priced,
and no harness (in a process group of its own) outlives the worker. Found by the newcomer walk:
after "bin/serve: stopped" the agent's CLI was still running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from motion_runner.models import Turn, TurnStatus
from motion_runner.runner import tasks
from motion_runner.runner.process import TURN_MARKER, marked_processes
from motion_runner.runner.turns import enqueue_turn, turn_marker
from tests.factories import AgentFactory, MotionFactory
from tests.faults.support import alive, database_url, start_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)  # asked from a thread of its own connection


@pytest.fixture
def harnesses():
    started: list[subprocess.Popen] = []

    def start(marker: str) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"],
            env={**os.environ, TURN_MARKER: marker},
            start_new_session=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()
        process.wait()


def running_turn(motion, agent, prompt: str) -> Turn:
    turn = enqueue_turn(motion, agent, prompt, dispatch=False)
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.RUNNING)
    return turn


def test_a_stopping_worker_asks_the_turns_it_runs_to_stop(harnesses):
    harbor, magent = MotionFactory(slug="harbor"), AgentFactory(name="magent")
    here = running_turn(harbor, magent, "working here")
    process = harnesses(turn_marker(here.pk))
    wait_for("the marker visible", lambda: process.pid in marked_processes())

    tasks.stop_turns_at_shutdown(sig="SIGTERM", how="Warm", exitcode=0)

    here.refresh_from_db()
    assert here.stop_requested_at is not None and here.stopped_by == "the worker stopping"


def test_turns_running_elsewhere_and_other_databases_turns_are_left_alone(harnesses):
    harbor = MotionFactory(slug="harbor")
    magent, codey = AgentFactory(name="magent"), AgentFactory(name="codey")
    elsewhere = running_turn(harbor, magent, "its harness runs on another host")
    mine = running_turn(harbor, codey, "its harness runs here, in another deployment's database")
    stranger = harnesses(f"another-database/{mine.pk}")
    wait_for("the marker visible", lambda: stranger.pid in marked_processes())

    tasks.stop_turns_at_shutdown(sig="SIGTERM", how="Warm", exitcode=0)

    assert Turn.objects.filter(pk__in=[elsewhere.pk, mine.pk], stop_requested_at__isnull=False).count() == 0
    assert stranger.poll() is None  # asked, never killed: its own runner ends it


def pool_children(pid: int) -> set[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        return {int(child) for child in handle.read().split()}


@pytest.mark.timeout(300)
def test_an_idle_worker_asked_to_stop_leaves_at_once_with_its_pool(tmp_path):
    """bin/serve's Ctrl-C waited ~7 s for Celery's own shutdown of idle workers, then killed
    them (issue 43.6): an idle prefork worker leaves at once, status 0, no pool child left."""
    log = tmp_path / "worker.log"
    worker = start_worker(
        "housekeeping",
        database=database_url(),
        broker="filesystem://localhost/",
        log=log,
        MOTION_RUNNER_DATA_DIR=str(tmp_path),
        pool="prefork",
    )
    try:
        wait_for("the worker ready", lambda: " ready." in log.read_text(), seconds=120)
        children = wait_for(
            "its pool of two", lambda: len(pool_children(worker.pid)) == 2 and pool_children(worker.pid)
        )

        worker.send_signal(signal.SIGTERM)

        assert worker.wait(timeout=120) == 0
        assert "nothing running or waiting here: leaving at once" in log.read_text()
        assert not [child for child in children if alive(child)]
    finally:
        worker.kill()
        worker.wait()
