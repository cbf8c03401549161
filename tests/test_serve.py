"""bin/serve as a person runs it: up on a port, then stopped by Ctrl-C or SIGTERM, once and whole.

It runs on the embedded default (SQLite and the filesystem broker) in a private data folder and
port, so it touches neither the shared PostgreSQL and Redis nor another checkout's var/.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 0.5).close()
        return True
    except OSError:
        return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.mark.timeout(180)
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_bin_serve_stops_whole_and_quietly(tmp_path, how):
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
    }
    env.update(PORT=str(port), MOTION_RUNNER_DATA_DIR=str(tmp_path / "var"), WORKERS="1", STOP_GRACE="10")
    env.pop("MOTION_RUNNER_REQUIRE_SERVICES", None)
    log = (tmp_path / "serve.log").open("w+")
    serve = subprocess.Popen(
        ["bin/serve"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while not answers(port):
            assert serve.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "bin/serve did not answer in 120 s"
            time.sleep(0.5)
        time.sleep(3)  # the worker and beat are up too

        # Ctrl-C in a terminal reaches the whole foreground group; SIGTERM (a service manager) the script.
        os.killpg(serve.pid, signal.SIGINT) if how == signal.SIGINT else serve.send_signal(how)
        began = time.monotonic()
        while group_alive(serve.pid) and time.monotonic() - began < 30:
            serve.poll()  # reaps bin/serve itself once it exits
            time.sleep(0.2)

        output = (tmp_path / "serve.log").read_text()
        left = subprocess.run(
            ["ps", "-o", "pid,args", "--no-headers", "-g", str(serve.pid)], capture_output=True, text=True
        )
        assert not group_alive(serve.pid), f"still running:\n{left.stdout}\n{output}"
        assert time.monotonic() - began < 20
        assert "RecursionError" not in output
        # Two workers (turns, housekeeping), each saying it once or twice; the old trap said it thousands of times.
        assert output.count("Warm shutdown") <= 4, output
        assert (tmp_path / "var" / "broker" / "control").is_dir()
    finally:
        if group_alive(serve.pid):
            os.killpg(serve.pid, signal.SIGKILL)
        log.close()
