"""Queues by kind: a turn holds its worker for minutes, so it never shares a queue with the loop's
housekeeping (a post due after 1 s was claimed after 40.8 s behind four long turns)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from motion_runner.celery import app

HOUSEKEEPING = [
    "wakes.tick",
    "wakes.consider",
    "wakes.check_mentions",
    "wakes.settle",
    "wakes.run_ability",
    "wakes.sweep_abilities",
    "watchlist.check_watches",
    "motion_runner.sweep_turns",
    "motion_runner.reclaim_turns",
    "motion_runner.import_transcripts",
]


def queue_of(task_name: str) -> str:
    return app.amqp.router.route({}, task_name)["queue"].name


def test_a_turn_goes_to_the_turns_queue():
    assert queue_of("motion_runner.run_turn") == "turns"


@pytest.mark.parametrize("task_name", HOUSEKEEPING)
def test_housekeeping_never_waits_in_the_turns_queue(task_name):
    assert queue_of(task_name) == "housekeeping"


@pytest.mark.parametrize("launcher", ["bin/serve", "docker-compose.yml"])
def test_the_launchers_start_a_worker_for_each_queue(launcher):
    text = (Path(settings.BASE_DIR) / launcher).read_text()
    assert "worker -Q turns" in text
    assert "worker -Q housekeeping" in text
