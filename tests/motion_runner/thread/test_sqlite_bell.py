"""Issue 25: on the embedded default (SQLite) a message written by one process wakes a reader
waiting in another at once: the message bell rings over Unix datagram sockets
(motion_runner/thread/socket_bell.py), not a 1 s poll. Real processes on a real SQLite file, the way
bin/serve runs them (a worker writes, the web process's long poll waits)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

SCRIPT = """
import json, os, sys, time
sys.path.insert(0, {root!r})
import django
django.setup()
from django.core.management import call_command
from django.db import transaction
from motion_runner.thread.bell import bell
from motion_runner.models import Message, Motion

role = sys.argv[1]
if role == "setup":
    call_command("migrate", verbosity=0)
    Motion.objects.create(slug="harbor", title="Harbor")
elif role == "reader":
    bell.start()
    if not bell._listening.wait(60):
        sys.exit("the bell never listened")
    looks = []

    def has_news():
        found = Message.objects.filter(motion_id="harbor").exists()
        looks.append(found)
        if len(looks) == 1:  # waiting, and the first look found nothing: now the writer writes
            print("waiting", flush=True)
        return found

    woken = bell.wait("harbor", has_news, 120)
    print(json.dumps({{"woken": woken, "rings": bell.rings, "looks": looks}}), flush=True)
elif role == "writer":
    with transaction.atomic():  # rung on commit, not at the insert: the reader finds the row
        Message.objects.create(motion_id="harbor", sender="justin", text="hello")
        Message.objects.filter(motion_id="harbor").count()
"""


@pytest.fixture
def embedded(tmp_path) -> tuple[Path, dict]:
    script = tmp_path / "bell.py"
    script.write_text(SCRIPT.format(root=str(settings.BASE_DIR)))
    env = dict(
        os.environ,
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        DJANGO_SETTINGS_MODULE="motion_runner.settings",
        MOTION_RUNNER_DATA_DIR=str(tmp_path / "var"),
        # No fallback poll worth the name: only the bell can wake the reader within the test.
        MESSAGES_FALLBACK_POLL_SECONDS="600",
    )
    subprocess.run([sys.executable, str(script), "setup"], env=env, check=True, timeout=300)
    return script, env


def test_a_message_written_by_another_process_wakes_a_waiting_reader_by_the_bell(embedded):
    script, env = embedded
    reader = subprocess.Popen(
        [sys.executable, str(script), "reader"], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert reader.stdout.readline().strip() == "waiting"
        subprocess.run([sys.executable, str(script), "writer"], env=env, check=True, timeout=300)
        answer = json.loads(reader.stdout.readline())
    finally:
        reader.kill()
        reader.wait()

    assert answer == {"woken": True, "rings": 1, "looks": [False, True]}


def test_a_bell_whose_reader_is_gone_is_tidied_and_a_write_still_succeeds(embedded, tmp_path):
    from motion_runner.thread import socket_bell

    script, env = embedded
    folder = socket_bell.folder_for(str(tmp_path / "db.sqlite3"))
    folder.mkdir(parents=True, exist_ok=True)
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as gone:
        gone.bind(str(folder / "1-dead.sock"))
    # The socket file stays, its process does not: a ring is refused there.

    subprocess.run([sys.executable, str(script), "writer"], env=env, check=True, timeout=300)

    assert not (folder / "1-dead.sock").exists()


MIGRATE_THEN_WRITE = """
import sys
sys.path.insert(0, {root!r})
import django
django.setup()
from django.core.management import call_command
from django.db import connection
from motion_runner.models import Message, Motion

connection.ensure_connection()  # opened before the message table exists
call_command("migrate", verbosity=0)
Motion.objects.create(slug="harbor", title="Harbor")
print("migrated", flush=True)
sys.stdin.readline()  # once the reader waits
Message.objects.create(motion_id="harbor", sender="justin", text="hello")
"""


def test_a_connection_opened_before_migrate_still_rings(tmp_path):
    # bench/stream_latency.py's writer: its connection made the tables, then wrote on them.
    env = dict(
        os.environ,
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        DJANGO_SETTINGS_MODULE="motion_runner.settings",
        MOTION_RUNNER_DATA_DIR=str(tmp_path / "var"),
        MESSAGES_FALLBACK_POLL_SECONDS="600",
    )
    (tmp_path / "writer.py").write_text(MIGRATE_THEN_WRITE.format(root=str(settings.BASE_DIR)))
    (tmp_path / "bell.py").write_text(SCRIPT.format(root=str(settings.BASE_DIR)))
    writer = subprocess.Popen(
        [sys.executable, str(tmp_path / "writer.py")],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    reader = None
    try:
        assert writer.stdout.readline().strip() == "migrated"
        reader = subprocess.Popen(
            [sys.executable, str(tmp_path / "bell.py"), "reader"], env=env, stdout=subprocess.PIPE, text=True
        )
        assert reader.stdout.readline().strip() == "waiting"
        writer.stdin.write("go\n")
        writer.stdin.flush()
        answer = json.loads(reader.stdout.readline())
    finally:
        for process in (writer, reader):
            if process is not None:
                process.kill()
                process.wait()

    assert answer == {"woken": True, "rings": 1, "looks": [False, True]}
