"""The stream API while PostgreSQL is stopped: 503 with Retry-After in the body each route's
clients read ({"error": "<text>"} on memory-lane's), never Django's HTML 500 (11 of 307 requests
during a restart were); the same batch sent again once it is back is stored, once. Once it
answers again, no request is answered 503 (the pool used to hand out each dead connection once).

The web process is gunicorn serving the app against a private cluster this module starts; the
shared database is never stopped.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.faults.private_services import _env, free_port, fresh_database
from tests.faults.support import wait_for
from tests.recorded import fresh_stream_events

SEED = Path(__file__).with_name("seed_in_a_process.py")
GUNICORN = str(Path(sys.executable).parent / "gunicorn")
ROUTES = {"motion": "/api/motions/harbor/stream/", "memory-lane": "/api/moods/harbor/stream/"}


@pytest.fixture
def served(private_postgres, tmp_path):
    with serving(private_postgres, tmp_path, "-w", "1") as client:
        yield client


@contextmanager
def serving(private_postgres, tmp_path, *gunicorn: str) -> Iterator[httpx.Client]:
    """gunicorn (with these options) serving the app against a fresh database of the cluster."""
    url = fresh_database(private_postgres)
    seeded = subprocess.run(
        [sys.executable, str(SEED)], env=_env(url), capture_output=True, text=True, check=True, timeout=120
    )
    key = json.loads(seeded.stdout.strip().splitlines()[-1])["key"]
    port = free_port()
    web = subprocess.Popen(
        [GUNICORN, "motion_runner.wsgi", "-b", f"127.0.0.1:{port}", *gunicorn, "--timeout", "120"],
        cwd=Path(__file__).resolve().parents[2],
        env=_env(url, DJANGO_SETTINGS_MODULE="tests.settings"),
        stdout=(tmp_path / "web.log").open("ab"),
        stderr=subprocess.STDOUT,
    )
    client = httpx.Client(
        base_url=f"http://127.0.0.1:{port}", timeout=90, headers={"Authorization": f"Bearer {key}"}
    )

    def up() -> bool:
        try:
            return client.get("/api/motions/harbor/").status_code < 500
        except httpx.TransportError:
            return False

    try:
        wait_for("gunicorn answering", up, seconds=60, every=0.3)
        client.database_url = url
        yield client
    finally:
        client.close()
        web.terminate()
        web.wait(30)


def post(client: httpx.Client, route: str, batch: list[dict], session_id: str) -> httpx.Response:
    return client.post(
        ROUTES[route], json={"harness": "claude-code", "session_id": session_id, "events": batch}
    )


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_stream_post_while_the_database_is_stopped_is_told_to_come_back(served, private_postgres, route):
    session_id = str(uuid.uuid4())
    first, second = fresh_stream_events(20, session_id)[:10], fresh_stream_events(20, session_id)[10:]
    assert post(served, route, first, session_id).status_code == 200

    private_postgres.stop()
    try:
        away = [post(served, route, second, session_id) for _ in range(2)]
    finally:
        private_postgres.start()

    for answer in away:
        assert answer.status_code == 503, answer.text[:300]
        assert int(answer.headers["Retry-After"]) > 0
        assert answer.headers["Content-Type"].startswith("application/json")
        error = answer.json()["error"]
        text = error if route == "memory-lane" else error["detail"]
        assert "database" in text
    wait_for(
        "the batch taken once the database is back",
        lambda: post(served, route, second, session_id).status_code == 200,
        seconds=60,
        every=0.5,
    )
    with psycopg.connect(served.database_url) as database:
        stored = database.execute(
            "SELECT id::text FROM motion_runner_message WHERE session_id = %s", [session_id]
        ).fetchall()
    assert sorted(row[0] for row in stored) == sorted(line["uuid"] for line in first + second)


def test_a_page_while_the_database_is_stopped_says_so_with_a_503(served, private_postgres):
    assert served.get("/").status_code < 500
    private_postgres.stop()
    try:
        answer = served.get("/")
    finally:
        private_postgres.start()

    assert answer.status_code == 503
    assert int(answer.headers["Retry-After"]) > 0
    assert "database" in answer.text


def database_answers(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=2) as database:
            return database.execute("SELECT 1").fetchone() == (1,)
    except psycopg.OperationalError:
        return False


def test_once_a_restarted_database_answers_no_request_is_answered_503(private_postgres, tmp_path):
    # Threads, as bin/serve runs it: parallel requests fill the pool with several connections.
    with serving(private_postgres, tmp_path, "-w", "1", "--worker-class", "gthread", "--threads", "8") as web:
        with ThreadPoolExecutor(8) as parallel:
            warm = list(parallel.map(lambda _: web.get("/api/motions/harbor/").status_code, range(32)))
        assert set(warm) == {200}

        private_postgres.restart()  # every pooled connection is cut
        wait_for("the database answering", lambda: database_answers(web.database_url), seconds=60)
        answers = [web.get("/api/motions/harbor/").status_code for _ in range(20)]

    assert answers.count(503) == 0, answers
    assert set(answers) == {200}


def test_once_a_database_asked_while_away_answers_again_no_request_is_answered_503(
    private_postgres, tmp_path
):
    with serving(private_postgres, tmp_path, "-w", "1", "--worker-class", "gthread", "--threads", "8") as web:
        assert web.get("/api/motions/harbor/").status_code == 200
        private_postgres.stop()
        try:
            # Asked while it is away: the pool tries to reconnect, backing off, and gives up.
            away = [web.get("/api/motions/harbor/").status_code for _ in range(3)]
            time.sleep(20)  # past the back-off of a minute-long outage (1, 2, 4… 32 s)
        finally:
            private_postgres.start()
        wait_for("the database answering", lambda: database_answers(web.database_url), seconds=60)
        answers = [web.get("/api/motions/harbor/").status_code for _ in range(20)]

    assert away == [503, 503, 503]
    assert answers.count(503) == 0, answers
    assert set(answers) == {200}
