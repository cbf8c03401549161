"""Workers are supervised: a worker that dies on a Redis loss (kombu raised out of its consumer in
1 of 6 double Redis restarts) is started again by docker-compose instead of leaving queued turns
re-sent forever to nobody; and a worker waits for its broker however long it is away."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.conf import settings

from motion_runner.celery import app

COMPOSE = yaml.safe_load((Path(settings.BASE_DIR) / "docker-compose.yml").read_text())
RESTARTED = {"always", "unless-stopped", "on-failure"}


@pytest.mark.parametrize("service", sorted(COMPOSE["services"]))
def test_every_docker_compose_service_is_restarted_when_it_dies(service):
    policy = str(COMPOSE["services"][service].get("restart", "no"))
    assert policy.split(":")[0] in RESTARTED, f"{service} has restart: {policy}"


def test_a_worker_never_gives_up_waiting_for_its_broker():
    assert app.conf.broker_connection_max_retries is None
    assert app.conf.broker_connection_retry_on_startup is True
