"""bin/serve as a person runs it: up on a port, one line per part, a part that dies started again,
and stopped by Ctrl-C or SIGTERM once and whole, its workers' pool children too.

It runs on the embedded default (SQLite and the filesystem broker) in a private data folder and
port, so it touches neither the shared PostgreSQL and Redis nor another checkout's var/. Every
wait is for an event (a line in its output, a port, a process gone) with a generous bound: a
busy machine makes these tests slower, never wrong.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from motion_runner.api import cursor

ROOT = Path(settings.BASE_DIR)
BOUND = 240  # seconds: generous for a loaded 2-core machine; an event ends each wait sooner


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, from /proc (the parts run in process groups of their own)."""
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def groups_of(pids: set[int]) -> set[int]:
    groups = set()
    for pid in pids:
        try:
            groups.add(os.getpgid(pid))
        except ProcessLookupError:
            pass
    return groups


@dataclass
class Serve:
    process: subprocess.Popen
    log: Path
    env: dict[str, str]

    def output(self) -> str:
        return self.log.read_text()

    def wait_for(self, pattern: str, after: int = 0) -> re.Match:
        """The first match of `pattern` in the output past `after` characters; fails if bin/serve
        exits first or the bound passes."""
        deadline = time.monotonic() + BOUND
        while True:
            if found := re.compile(pattern).search(self.output(), after):
                return found
            assert self.process.poll() is None, f"bin/serve exited:\n{self.output()}"
            assert time.monotonic() < deadline, f"no {pattern!r} in {BOUND} s:\n{self.output()}"
            time.sleep(0.2)

    def stopped_whole(self, groups: set[int]) -> bool:
        """Waits until bin/serve and every group it started are gone (True), or the bound."""
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            self.process.poll()  # reaps bin/serve itself once it exits
            if not any(group_alive(g) for g in groups | {self.process.pid}):
                return True
            time.sleep(0.2)
        return False


@contextmanager
def interruptible() -> Iterator[None]:
    """bin/serve starts as from a person's terminal, where Ctrl-C's SIGINT is not ignored. A shell
    without job control (`pytest … &` in a script) starts pytest with SIGINT ignored, and an ignored
    signal stays ignored across exec (bash cannot even trap it): caught here, it is reset to the
    default in the child instead."""
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture
def serve(tmp_path, request) -> Iterator[Serve]:
    options = getattr(request, "param", {})
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "DATABASE_URL",
            "CELERY_BROKER_URL",
            "DJANGO_SETTINGS_MODULE",
            "MOTION_RUNNER_REQUIRE_SERVICES",
        )
    }
    port = free_port()
    env.update(PORT=str(port), MOTION_RUNNER_DATA_DIR=str(tmp_path / "var"), WORKERS="1", STOP_GRACE="10")
    env.update(STANDIN_MODEL="0")  # the parts as with a key; test_a_first_run_without_a_key… turns it on
    env.update(options)
    if env["STANDIN_MODEL"] != "0":  # a newcomer's machine: no key in the environment, no `claude /login`
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
            env.pop(name, None)
        env["HOME"] = str(tmp_path / "home")
    log = tmp_path / "serve.log"
    with log.open("w") as out, interruptible():
        process = subprocess.Popen(
            ["bin/serve"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    running = Serve(process, log, env)
    try:
        running.wait_for(rf"Motion Runner is up: open http://127.0.0.1:{port}/motions/demo/")
        yield running
    finally:
        for group in groups_of(descendants(process.pid)) | {process.pid}:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        process.wait()


def part_pids(serve: Serve) -> dict[str, int]:
    return {
        name: int(pid) for name, pid in re.findall(r"bin/serve: (\w+) started \(pid (\d+)\)", serve.output())
    }


@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    "how, serve",
    [("ctrl-c", {}), ("sigterm", {}), ("cold", {"STOP_GRACE": "0"})],
    indirect=["serve"],
    ids=["ctrl-c", "sigterm", "cold"],
)
def test_bin_serve_stops_whole_and_quietly(serve, how):
    assert set(part_pids(serve)) == {"record", "turns", "housekeeping", "beat", "web"}
    groups = groups_of(descendants(serve.process.pid))
    assert len(groups) >= 4  # a group of its own for each part

    # Ctrl-C in a terminal reaches the whole foreground group; SIGTERM (a service manager) the script.
    if how == "ctrl-c":
        os.killpg(serve.process.pid, signal.SIGINT)
    else:
        serve.process.send_signal(signal.SIGTERM)

    assert serve.stopped_whole(groups), f"still running:\n{serve.output()}"
    output = serve.output()
    assert output.count("bin/serve: stopping") == 1
    assert "bin/serve: stopped" in output
    assert serve.process.returncode == (130 if how == "ctrl-c" else 143)  # 128 + SIGINT, 128 + SIGTERM
    if how == "cold":  # no grace: the groups were killed, pool children and all
        assert "killing what is left" in output
    else:  # idle workers leave at once (runner/tasks.leave_at_once_when_idle): nothing outlived the grace
        assert "killing what is left" not in output, output
    assert "RecursionError" not in output
    # One line per part: no Celery banners, no kombu warning per connection, no Ctrl-C echoes.
    for noise in ("[queues]", "celery beat v", "No hostname was supplied", "Hitting Ctrl+C again"):
        assert noise not in output, output
    assert (Path(serve.log).parent / "var" / "broker" / "control").is_dir()


# A cursor past everything the demo Motion holds: the poll waits its whole wait for news.
NOTHING_AFTER = cursor.encode(datetime(2100, 1, 1, tzinfo=UTC), uuid.UUID(int=0))


@pytest.mark.timeout(900)
def test_ctrl_c_with_a_reader_waiting_answers_it_and_stops_whole_without_killing(serve):
    """Issue 43.6: with a thread open, Ctrl-C waited for its long poll (20 s) past the 10 s grace and
    killed the web. The waiting reader is answered at once (runner's gunicorn_hooks) instead."""
    made = subprocess.run(
        [".venv/bin/python", "manage.py", "agent_key", "magent", "--label", "test"],
        cwd=ROOT,
        env=serve.env,
        capture_output=True,
        text=True,
        check=True,
    )
    key = re.search(r"mrk_\S+", made.stdout).group(0)
    groups = groups_of(descendants(serve.process.pid))
    answers: list[httpx.Response | Exception] = []

    def wait_for_news() -> None:
        try:
            answers.append(
                httpx.get(
                    f"http://127.0.0.1:{serve.env['PORT']}/api/motions/demo/messages/",
                    params={"after": NOTHING_AFTER, "wait": "25"},
                    headers={"Authorization": f"Bearer {key}"},
                    timeout=BOUND,
                )
            )
        except Exception as exc:  # noqa: BLE001 - what the reader met is the assertion below
            answers.append(exc)

    reader = threading.Thread(target=wait_for_news)
    reader.start()
    time.sleep(2)  # not a measure: lets the poll reach its wait before the Ctrl-C
    assert not answers, answers  # still waiting (its wait is 25 s)

    os.killpg(serve.process.pid, signal.SIGINT)

    assert serve.stopped_whole(groups), f"still running:\n{serve.output()}"
    reader.join(BOUND)
    assert [getattr(a, "status_code", a) for a in answers] == [200]
    assert serve.process.returncode == 130
    assert "killing what is left" not in serve.output(), serve.output()


@pytest.mark.timeout(900)
def test_a_part_that_dies_is_started_again_and_stopped_with_the_rest(serve):
    before = part_pids(serve)["housekeeping"]
    mark = len(serve.output())

    os.killpg(before, signal.SIGKILL)

    serve.wait_for(r"bin/serve: housekeeping exited with status \d+: starting it again", mark)
    again = int(serve.wait_for(r"bin/serve: housekeeping started \(pid (\d+)\)", mark).group(1))
    assert again != before
    groups = groups_of(descendants(serve.process.pid))
    assert again in groups
    serve.process.send_signal(signal.SIGTERM)
    assert serve.stopped_whole(groups), f"still running:\n{serve.output()}"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("serve", [{"MAX_RESTARTS": "0"}], indirect=True)
def test_a_part_that_keeps_dying_stops_everything_loudly(serve):
    groups = groups_of(descendants(serve.process.pid))

    os.killpg(part_pids(serve)["beat"], signal.SIGKILL)

    serve.wait_for(
        r"bin/serve: beat exited with status \d+, its death number 1 in 60s \(MAX_RESTARTS=0\): stopping everything"
    )
    assert serve.stopped_whole(groups), f"still running:\n{serve.output()}"
    assert serve.process.returncode == 1


def serve_on_taken_port(port: int, tmp_path) -> tuple[subprocess.CompletedProcess, str]:
    """bin/serve on the embedded default, asked for `port` (taken by the caller): what it did and
    printed."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(PORT=str(port), MOTION_RUNNER_DATA_DIR=str(tmp_path / "var"))
    done = subprocess.run(
        ["bin/serve"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND,
        stdin=subprocess.DEVNULL,
    )
    return done, done.stdout + done.stderr


@pytest.mark.timeout(300)
def test_a_taken_port_stops_bin_serve_at_once_saying_which_and_how_to_choose_another(tmp_path):
    """Another program on the port: bin/serve starts nothing and says so, instead of printing
    "up" with a URL that belongs to the other program while gunicorn fails to bind."""
    with socket.socket() as other_program:
        other_program.bind(("127.0.0.1", 0))
        other_program.listen()
        port = other_program.getsockname()[1]
        done, output = serve_on_taken_port(port, tmp_path)
    assert done.returncode != 0, output
    assert f"port {port} on 127.0.0.1 is taken" in output
    assert f"PORT={port + 1} bin/serve" in output  # how to choose another
    assert "started (pid" not in output and "is up" not in output
    assert not (tmp_path / "var").exists()  # nothing was set up for a service that cannot run


def two_taken_ports() -> tuple[socket.socket, socket.socket]:
    """Two listening sockets on consecutive ports: a port and the next one up, both taken."""
    while True:
        first = socket.socket()
        first.bind(("127.0.0.1", 0))
        second = socket.socket()
        try:
            second.bind(("127.0.0.1", first.getsockname()[1] + 1))
        except OSError:
            first.close()
            second.close()
            continue
        first.listen()
        second.listen()
        return first, second


@pytest.mark.timeout(120)
def test_the_port_a_taken_port_line_suggests_is_free(tmp_path):
    """Issue 43: the line suggested PORT+1 without checking it; with that one taken too, it
    suggests one bin/serve could bind."""
    first, second = two_taken_ports()
    with first, second:
        port = first.getsockname()[1]
        _, output = serve_on_taken_port(port, tmp_path)
        suggested = int(re.search(r"PORT=(\d+) bin/serve", output).group(1))
        assert suggested > port + 1, output
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", suggested))  # free: bin/serve could run there


def test_the_readme_names_every_variable_bin_serve_reads():
    script = (ROOT / "bin" / "serve").read_text()
    read = set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)(?::-|\})", script)) - {"PARTS"}
    # Its own variables (STANDIN_PORT=$(…)) are not settings; PORT=${PORT:-8000} is one.
    own = {
        name
        for name, value in re.findall(r"(?m)^\s*(?:export\s+)?([A-Z][A-Z0-9_]*)=(\S*)", script)
        if not value.startswith(f"${{{name}")
    }
    read -= own
    assert {"PORT", "WORKERS", "WEB_THREADS"} <= read  # the parse still sees what it must
    table = (ROOT / "README.md").read_text().split("## Configuration", 1)[1]
    missing = sorted(name for name in read if f"`{name}`" not in table)
    assert not missing, f"README's configuration table does not name {missing}"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("serve", [{"STANDIN_MODEL": "1"}], indirect=True, ids=["no-key"])
def test_a_first_run_without_a_key_starts_the_stand_in_and_says_so(serve):
    assert set(part_pids(serve)) == {"standin", "record", "turns", "housekeeping", "beat", "web"}
    url = serve.wait_for(r"agents answer through a local stand-in \((http://127\.0\.0\.1:\d+)\)").group(1)
    reply = httpx.post(
        f"{url}/v1/messages", json={"model": "claude-x", "messages": [], "max_tokens": 9}, timeout=30
    )
    assert reply.status_code == 200
    assert reply.json()["content"][0]["text"].startswith("(This reply is from a stand-in, not a model.)")


def serve_on_a_taken_port(tmp_path, fonts: str) -> str:
    """bin/serve's output on a machine whose fontconfig lists `fonts` (a stub fc-list), stopped at
    once by a taken port: the font line is said before anything is set up."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    fc_list = stubs / "fc-list"
    fc_list.write_text(f"#!/bin/sh\nprintf '%s' '{fonts}'\n")
    fc_list.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    with socket.socket() as other_program:
        other_program.bind(("127.0.0.1", 0))
        other_program.listen()
        env.update(
            PORT=str(other_program.getsockname()[1]),
            MOTION_RUNNER_DATA_DIR=str(tmp_path / "var"),
            PATH=f"{stubs}:{env['PATH']}",
        )
        done = subprocess.run(
            ["bin/serve"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=BOUND,
            stdin=subprocess.DEVNULL,
        )
    return done.stdout + done.stderr


@pytest.mark.timeout(120)
def test_a_machine_without_an_emoji_font_is_told_which_to_install(tmp_path):
    """Issue 43.6: ⏰ 🧹 ⛔ showed as empty boxes until the font came, and nothing said why."""
    output = serve_on_a_taken_port(tmp_path, "DejaVu Sans\nDejaVu Serif\n")

    assert "no emoji font on this machine" in output
    assert "apt-get install fonts-noto-color-emoji" in output


@pytest.mark.timeout(120)
def test_a_machine_with_an_emoji_font_is_not_told_about_fonts(tmp_path):
    output = serve_on_a_taken_port(tmp_path, "DejaVu Sans\nNoto Color Emoji\n")

    assert "emoji font" not in output
    assert "is taken" in output  # it did run as far as the port
