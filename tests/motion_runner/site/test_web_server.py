"""The production web server as docker-compose runs it (issue 20, item 12): long polls wait in
threads, so a handful of open pages never keeps anyone else waiting.

The gunicorn command is read from docker-compose.yml, so this tests what is deployed."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml

from motion_runner.models import Message, Visibility
from tests.factories import MotionFactory
from tests.paths import ROOT

WAITING_READERS = 8  # more than the workers: with sync workers the next request would queue 25 s
OVER_THE_CAP_READERS = 60  # past what one address may hold in all of docker-compose's workers


def compose_gunicorn_args() -> list[str]:
    """The web service's gunicorn arguments, as docker-compose.yml gives them."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["web"]["command"]
    shell = command[-1] if isinstance(command, list) else command
    words = shlex.split(shell)
    if words[:2] == ["sh", "-c"]:
        words = shlex.split(words[2])
    start = words.index("gunicorn")
    end = words.index("&&", start) if "&&" in words[start:] else len(words)
    return words[start + 1 : end]


def bound_to(args: list[str], address: str) -> list[str]:
    out, skip = [], False
    for word in args:
        if skip:
            skip = False
            continue
        if word in ("-b", "--bind"):
            skip = True
            continue
        out.append(word)
    return [*out, "-b", address]


def test_the_web_server_is_threaded_with_room_for_two_hundred_waiting_readers():
    args = compose_gunicorn_args()
    worker_class = args[args.index("--worker-class") + 1] if "--worker-class" in args else "sync"
    assert worker_class in ("gthread", "gevent", "eventlet", "uvicorn.workers.UvicornWorker")
    workers = int(args[args.index("--workers") + 1]) if "--workers" in args else 1
    threads = int(args[args.index("--threads") + 1]) if "--threads" in args else 1
    assert workers * threads >= 200 + workers  # 200 waiting readers, and a thread each for the rest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def web_server(transactional_db, tmp_path, request):
    """docker-compose's gunicorn, on this test's database, on a free port (`request.param`: more
    environment, indirectly)."""
    from django.db import connection

    s = connection.settings_dict
    url = f"postgres://{s['USER'] or 'postgres'}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
    if connection.vendor != "postgresql":
        pytest.skip("the web server test needs PostgreSQL (the readers wait on its NOTIFY)")
    port = free_port()
    env = dict(
        os.environ,
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="motion_runner.settings",
        DEBUG="0",
        SECRET_KEY="web-server-test-only-" + "x" * 40,
        ALLOWED_HOSTS="127.0.0.1",
        LOG_LEVEL="WARNING",
        MOTION_RUNNER_DATA_DIR=str(tmp_path),
        **getattr(request, "param", {}),
    )
    args = bound_to(compose_gunicorn_args(), f"127.0.0.1:{port}")
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    log = open(tmp_path / "gunicorn.log", "wb")
    server = subprocess.Popen(
        [gunicorn, *args, "--log-level", "warning"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=log,
        start_new_session=True,  # its own group: the teardown can end its workers with it
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/api/motions/", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise AssertionError((tmp_path / "gunicorn.log").read_text()[-2000:]) from None
                time.sleep(0.2)
        yield base
    finally:
        server.send_signal(signal.SIGQUIT)  # gunicorn's quick shutdown: the readers' 25 s are not waited
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a loaded machine: the group is ended, not waited on
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
        log.close()


# Every reader here polls from one address: the caps on long polls (api/poll_caps.py) are lifted,
# as this test measures the threads; the next test keeps them.
UNCAPPED = {"LONG_POLLS_PER_CLIENT": "1000", "LONG_POLLS_ANONYMOUS": "1000"}


@pytest.mark.parametrize("web_server", [UNCAPPED], indirect=True)
def test_long_polls_on_a_public_motion_do_not_keep_another_request_waiting(web_server):
    motion = MotionFactory(slug="harbor", visibility=Visibility.PUBLIC)
    Message.objects.create(motion=motion, sender="magent", source="runner", kind="text", text="hello")
    first = httpx.get(f"{web_server}/api/motions/harbor/messages/", params={"since": "2000-01-01T00:00:00Z"})
    cursor = first.json()["next"]
    sent = threading.Semaphore(0)
    answers: list[int] = []

    def wait_for_news() -> None:
        with httpx.Client(timeout=60, event_hooks={"request": [lambda request: sent.release()]}) as client:
            answers.append(
                client.get(
                    f"{web_server}/api/motions/harbor/messages/", params={"after": cursor, "wait": 25}
                ).status_code
            )

    readers = [threading.Thread(target=wait_for_news, daemon=True) for _ in range(WAITING_READERS)]
    for reader in readers:
        reader.start()
    for _ in readers:
        assert sent.acquire(timeout=30)
    # The readers wait 25 s for news; anyone else is answered long before that.
    other = httpx.get(f"{web_server}/api/motions/", timeout=10)
    assert other.status_code == 200
    assert answers == []  # the readers are still waiting: the answer did not queue behind them


def test_long_polls_from_one_address_past_its_cap_are_answered_at_once_and_the_web_stays_free(web_server):
    """Issue 30 item 8: 700 anonymous long polls from one address held every thread. Now the
    address holds LONG_POLLS_PER_CLIENT a process; the rest are told 429 at once."""
    motion = MotionFactory(slug="harbor", visibility=Visibility.PUBLIC)
    Message.objects.create(motion=motion, sender="magent", source="runner", kind="text", text="hello")
    first = httpx.get(f"{web_server}/api/motions/harbor/messages/", params={"since": "2000-01-01T00:00:00Z"})
    cursor = first.json()["next"]
    answers: list[httpx.Response] = []

    def poll() -> None:
        with httpx.Client(timeout=60) as client:
            answers.append(
                client.get(f"{web_server}/api/motions/harbor/messages/", params={"after": cursor, "wait": 25})
            )

    readers = [threading.Thread(target=poll, daemon=True) for _ in range(OVER_THE_CAP_READERS)]
    for reader in readers:
        reader.start()
    workers = int(compose_gunicorn_args()[compose_gunicorn_args().index("--workers") + 1])
    held_at_most = workers * 6  # LONG_POLLS_PER_CLIENT's default, in each process
    deadline = time.monotonic() + 60  # until every poll past the caps has had its answer
    while len(answers) < OVER_THE_CAP_READERS - held_at_most and time.monotonic() < deadline:
        time.sleep(0.1)
    refused = [answer for answer in answers if answer.status_code == 429]
    assert len(refused) >= OVER_THE_CAP_READERS - held_at_most
    assert all(answer.headers["Retry-After"] == "5" for answer in refused)
    assert httpx.get(f"{web_server}/api/motions/", timeout=10).status_code == 200
