"""The runner announces every Message it writes once, in order, after its commit, but the batches
committed within `announcing.NOTE_SECONDS` go out together (motion_runner/ingest/announcing.py, the one
announcer): at 200 lines a second wakes/' per-batch
clock note (`newest_of_batch`: four queries) was most of the runner's time on its hot path, and
the lines behind it waited in the pipe (bench/stream_latency.py)."""

from __future__ import annotations

import json
import time

import pytest

from motion_runner.ingest.announcing import Announcer
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import Kind, Message
from motion_runner.runner.turn_run import TurnRun
from motion_runner.runner.turns import enqueue_turn, execute_turn
from motion_runner.signals import message_created
from tests.factories import AgentFactory, MotionFactory
from tests.paths import TESTS

FAKE_HARNESS = TESTS / "fakes" / "fake_harness.py"
SESSION = "5f0c2b8e-8a44-4c33-9a62-2f1b3c4d5e60"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Line(str):
    """A stand-in for a turn's Message: one turn's lines are all of one Motion."""

    motion_id = "the-turns-motion"


def lines(*names: str) -> list[Line]:
    return [Line(name) for name in names]


def paced(interval: float = 0.25) -> tuple[Announcer, list[list[str]], Clock]:
    batches: list[list[str]] = []
    clock = Clock()
    return Announcer(interval, announce=batches.append, clock=clock), batches, clock  # type: ignore[arg-type]


def test_the_first_batch_is_announced_at_once_and_those_within_the_interval_wait():
    announcer, batches, clock = paced()
    announcer(lines("a", "b"))
    assert batches == [["a", "b"]]
    clock.now += 0.01
    announcer(lines("c", "d"))
    clock.now += 0.01
    announcer(lines("e"))
    assert batches == [["a", "b"]]
    assert announcer.pending == ["c", "d", "e"]


def test_what_waits_goes_out_as_one_batch_once_the_interval_has_passed():
    announcer, batches, clock = paced()
    announcer(lines("a"))
    clock.now += 0.1
    announcer(lines("b"))
    announcer.flush_due()
    assert batches == [["a"]]  # not due yet
    clock.now += 0.2
    announcer.flush_due()
    assert batches == [["a"], ["b"]]
    clock.now += 0.3
    announcer(lines("c"))  # a commit after the interval: at once, with anything waiting
    announcer.flush_due()
    announcer.flush()
    assert batches == [["a"], ["b"], ["c"]]  # nothing twice


def test_a_commit_after_the_interval_takes_what_waits_before_it():
    announcer, batches, clock = paced()
    announcer(lines("a"))
    clock.now += 0.1
    announcer(lines("b"))
    clock.now += 0.2
    announcer(lines("c", "d"))
    assert batches == [["a"], ["b", "c", "d"]]
    assert not announcer.pending


def test_flush_announces_what_waits_whatever_the_time():
    announcer, batches, clock = paced()
    announcer(lines("a"))
    announcer(lines("b"))
    announcer.flush()
    assert batches == [["a"], ["b"]]


@pytest.fixture
def heard():
    said: list[tuple[str, str, bool]] = []

    def receiver(sender, message: Message, newest_of_batch: bool = True, **kwargs) -> None:
        said.append((message.kind, message.text, newest_of_batch))

    message_created.connect(receiver, dispatch_uid="test_runner_paced_notes")
    yield said
    message_created.disconnect(dispatch_uid="test_runner_paced_notes")


@pytest.mark.django_db(transaction=True)  # real commits: the announcements go out on commit
def test_a_burst_is_announced_once_each_in_order_with_few_notes_and_the_last_noted(heard, tmp_path):
    count = 40
    lines = [{"type": "system", "subtype": "init", "session_id": SESSION, "tools": [], "model": "m"}]
    for n in range(count):
        lines.append(
            {
                "type": "assistant",
                "session_id": SESSION,
                "uuid": f"00000000-0000-4000-8000-{n:012d}",
                "message": {
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"line {n}"}],
                },
            }
        )
    lines.append(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "session_id": SESSION,
            "total_cost_usd": 0.01,
        }
    )
    plan = tmp_path / "lines.jsonl"
    plan.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    motion = MotionFactory(slug="burst", workspace=str(tmp_path))
    agent = AgentFactory(
        name="burster",
        binary=str(FAKE_HARNESS),
        env={"FAKE_HARNESS_PLAN": json.dumps({"lines": str(plan), "pace": 0.005})},
    )
    turn = enqueue_turn(motion, agent, "go", dispatch=False)
    started = time.monotonic()
    execute_turn(turn.pk)
    elapsed = time.monotonic() - started

    texts = [text for kind, text, _ in heard if kind == Kind.TEXT]
    assert texts == [f"line {n}" for n in range(count)]  # each once, in order
    written = set(Message.objects.filter(motion=motion).values_list("text", flat=True))
    assert {text for _, text, _ in heard} == written  # every written message was announced
    notes = sum(1 for _, _, noted in heard if noted)
    # Unpaced, each batch (one to a few lines at this pace) was noted: about `count` notes.
    assert notes <= elapsed / 0.25 + 2
    # The clocks end at the newest post (the turn's last batch ends in its turn end, not a post).
    assert [text for _, text, noted in heard if noted][-1] == f"line {count - 1}"


@pytest.mark.django_db
def test_the_tick_keeps_what_waits_while_the_database_is_away(monkeypatch):
    motion = MotionFactory(slug="away")
    agent = AgentFactory(name="waiter")
    turn = enqueue_turn(motion, agent, "go", dispatch=False)
    run = TurnRun(
        turn=turn,
        writer=EventWriter(
            IngestContext(motion=motion, agent=agent, harness="claude-code", source="runner", turn=turn)
        ),
    )
    said: list[str] = []
    run.announcer = Announcer(0.0, announce=said.extend)  # type: ignore[arg-type]
    run.announcer.pending = lines("waiting")  # type: ignore[list-item]
    monkeypatch.setattr(run, "keep_lease", lambda: None)
    run.outage_since = time.monotonic()
    run.on_tick()
    assert said == []  # its receivers would fail and lose it: kept for the next commit or the end
    run.outage_since = None
    run.on_tick()
    assert said == ["waiting"]
