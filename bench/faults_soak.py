#!/usr/bin/env python3
"""Fault soak: a real Celery worker killed with SIGKILL mid-turn, N times, counting what the thread
lost, what it holds twice, which turns are stuck `running` and which harness processes are left
running, and how long recovery took. Baseline, in the same run: the same faults, answered the way
the runner did before leases (a sweep that ends a turn only once its heartbeat is older than the
turn timeout + 120 s, and never reads the transcript or kills anything).

  DATABASE_URL=postgres://postgres@127.0.0.1:5432/somedb .venv/bin/python bench/faults_soak.py [--faults N]

A throwaway database (faults_soak_<pid>) and a private, non-persistent redis-server on its own port
are made for the run. The harness is tests/fakes/fake_harness.py playing back what the real Claude
Code CLI printed and kept in its transcript (tests/recordings/claude-code/tool_call.*), with fresh
ids for every turn, one line every 0.3–0.8 s, carrying on when its reader dies, as the real CLI did.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

from _django import ROOT, bench_database

LEASE_SECONDS = 3
RECORDINGS = ROOT / "tests" / "recordings" / "claude-code"
FAKE_HARNESS = ROOT / "tests" / "fakes" / "fake_harness.py"


def fresh_turn_files(folder: Path, home: Path) -> tuple[Path, dict]:
    """The recorded tool_call turn with new ids: its stdout lines, and the plan that keeps its
    transcript where Claude Code would."""
    from ingest import fresh_copy

    session_id = str(uuid.uuid4())
    ids: dict[str, str] = {}
    stream = [json.loads(x) for x in (RECORDINGS / "tool_call.jsonl").read_text().splitlines() if x]
    kept = [json.loads(x) for x in (RECORDINGS / "tool_call.transcript.jsonl").read_text().splitlines() if x]
    lines = folder / f"{session_id}.stream.jsonl"
    lines.write_text(
        "".join(json.dumps(fresh_copy(x, ids, session_id, transcript=False)) + "\n" for x in stream)
    )
    transcript = folder / f"{session_id}.transcript.jsonl"
    transcript.write_text(
        "".join(json.dumps(fresh_copy(x, ids, session_id, transcript=True)) + "\n" for x in kept)
    )
    plan = {
        "pace": round(random.uniform(0.3, 0.8), 2),
        "hang": True,
        "survive_lost_stdout": True,
        "child": str(folder / f"{session_id}.child"),
        "transcript": {
            "from": str(transcript),
            "to": str(home / ".claude" / "projects" / "-w" / f"{session_id}.jsonl"),
        },
    }
    return lines, plan


def old_sweep(now) -> int:
    """What the runner did before leases: end a running turn only once its heartbeat is older
    than the turn timeout + 120 s; nothing killed, nothing recovered."""
    from django.conf import settings

    from motion_runner.models import Turn, TurnStatus

    stale = now - timedelta(seconds=settings.RUNNER_TURN_TIMEOUT_SECONDS + 120)
    return Turn.objects.filter(status=TurnStatus.RUNNING, heartbeat_at__lt=stale).update(
        status=TurnStatus.FAILED
    )


def one_fault(arm: str, index: int, work: Path, broker_url: str, log: Path) -> dict:
    from django.conf import settings
    from django.utils import timezone

    from motion_runner.models import Kind, Message, Turn, TurnStatus
    from motion_runner.runner import tasks
    from motion_runner.runner.process import marked_processes
    from motion_runner.runner.reclaim import reclaim_lapsed_turns
    from motion_runner.runner.turns import enqueue_turn, turn_marker
    from tests.factories import AgentFactory, MotionFactory
    from tests.faults.support import alive, database_url, start_worker, wait_for

    folder = work / f"{arm}-{index}"
    folder.mkdir()
    home = folder / "home"
    lines, plan = fresh_turn_files(folder, home)
    motion = MotionFactory(slug=f"{arm}-{index}", workspace=str(folder))
    agent = AgentFactory(
        name=f"{arm}{index}",
        binary=str(FAKE_HARNESS),
        env={"FAKE_HARNESS_LINES": str(lines), "FAKE_HARNESS_PLAN": json.dumps(plan), "HOME": str(home)},
    )
    turn = enqueue_turn(motion, agent, "What does the README say?", dispatch=False)
    worker = start_worker(
        settings.TURNS_QUEUE,
        database=database_url(),
        broker=broker_url,
        log=log,
        RUNNER_LEASE_SECONDS=str(LEASE_SECONDS),
    )
    said = Message.objects.filter(motion=motion, kind__in=[Kind.TEXT, Kind.TOOL_CALL, Kind.TOOL_RESULT])
    try:
        tasks.run_turn.apply_async([turn.pk], queue=settings.TURNS_QUEUE)
        wait_for("a first line stored", lambda: said.exists(), seconds=60, every=0.05)
        time.sleep(random.uniform(0, 1.5))  # somewhere mid-turn
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()
    killed_at = time.monotonic()
    recovered_in = None
    while time.monotonic() - killed_at < LEASE_SECONDS + 15:  # the sweep runs every 15 s
        ended = reclaim_lapsed_turns() if arm == "leases" else old_sweep(timezone.now())
        if ended:
            recovered_in = time.monotonic() - killed_at
            break
        time.sleep(0.5)
    time.sleep(0.5)
    turn.refresh_from_db()
    texts = list(said.values_list("kind", "text"))
    expected = {
        (Kind.TEXT, "Let me read the README first."),
        (Kind.TEXT, "The README says the answer is 42."),
    }
    lost = len(expected - set(texts)) + (0 if said.filter(kind=Kind.TOOL_CALL).exists() else 1)
    lost += 0 if said.filter(kind=Kind.TOOL_RESULT).exists() else 1
    doubled = len(texts) - len(set(texts))
    marker = turn_marker(turn.pk)
    left = [pid for pid, mark in marked_processes().items() if mark == marker and alive(pid)]
    result = {
        "lost": lost,
        "doubled": doubled,
        "stuck": int(turn.status == TurnStatus.RUNNING),
        "orphans": len(left),
        "recovered_in": recovered_in,
    }
    for pid in left:  # the baseline leaves them: clean up after measuring
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    Turn.objects.filter(pk=turn.pk, status=TurnStatus.RUNNING).update(status=TurnStatus.FAILED)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", type=int, default=6)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    random.seed(args.seed)
    sys.path.insert(0, str(ROOT / "bench"))
    from tests.faults.private_services import PrivateRedis

    broker = PrivateRedis().start()
    os.environ["CELERY_BROKER_URL"] = broker.url()  # this process sends there, the workers read there
    work = Path(tempfile.mkdtemp(prefix="faults-soak-"))
    log = work / "workers.log"
    try:
        with bench_database("faults_soak"):
            totals = {}
            for arm in ("baseline", "leases"):
                totals[arm] = [one_fault(arm, i, work, broker.url(), log) for i in range(args.faults)]
    finally:
        broker.stop()
    print(f"(worker logs: {log})")
    print(f"{args.faults} SIGKILLs of a worker mid-turn per arm (seed {args.seed}, lease {LEASE_SECONDS} s)")
    print(f"{'arm':<10} {'lost lines':>10} {'doubled':>8} {'stuck':>6} {'orphans':>8} {'recovery max':>13}")
    for arm, results in totals.items():
        times = [r["recovered_in"] for r in results if r["recovered_in"] is not None]
        worst = f"{max(times):.1f} s" if len(times) == len(results) else "never (in 18 s)"
        print(
            f"{arm:<10} {sum(r['lost'] for r in results):>10} {sum(r['doubled'] for r in results):>8} "
            f"{sum(r['stuck'] for r in results):>6} {sum(r['orphans'] for r in results):>8} {worst:>13}"
        )
    base, new = (
        sum(r["lost"] + r["stuck"] + r["orphans"] for r in totals[a]) for a in ("baseline", "leases")
    )
    print(f"faults left behind (lost + stuck + orphans): baseline {base}, leases {new}")


if __name__ == "__main__":
    main()
