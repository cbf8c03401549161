"""One import_all announces every Message it writes once, in order, after its commit, but what it
commits within `announcing.NOTE_SECONDS` of its last announcement (motion_runner/ingest/announcing.py, the
one announcer) goes out together, a batch per
Motion: wakes/' clock note (`newest_of_batch`: a handful of statements) ran once per file, and a
directory of transcripts in one Motion paid it for every file (bench/importer.py)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from motion_runner.ingest import announcing
from motion_runner.ingest.announcing import Announcer
from motion_runner.ingest.sessions import claim_session
from motion_runner.models import Message
from motion_runner.signals import message_created
from motion_runner.transcripts.importer import import_all
from tests import recorded
from tests.factories import AgentFactory, MotionFactory


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def said(motion: str, name: str) -> SimpleNamespace:
    return SimpleNamespace(motion_id=motion, name=name)


def paced(interval: float = 0.25) -> tuple[Announcer, list[list[str]], Clock]:
    batches: list[list[str]] = []
    clock = Clock()

    def announce(messages: list[SimpleNamespace]) -> None:
        batches.append([f"{m.motion_id}:{m.name}" for m in messages])

    return Announcer(interval, announce=announce, clock=clock), batches, clock  # type: ignore[arg-type]


def test_the_first_commit_is_announced_at_once_and_those_within_the_interval_wait():
    announcer, batches, clock = paced()
    announcer([said("a", "1")])
    assert batches == [["a:1"]]
    clock.now += 0.1
    announcer([said("a", "2")])
    announcer([said("b", "1")])
    assert batches == [["a:1"]]
    clock.now += 0.2
    announcer([said("a", "3")])  # past the interval: with everything that waited
    assert batches == [["a:1"], ["a:2", "a:3"], ["b:1"]]


def test_what_waits_goes_out_a_batch_per_motion_each_once_in_order():
    announcer, batches, clock = paced()
    announcer([said("a", "1")])
    announcer([said("b", "1"), said("a", "2")])
    announcer([said("b", "2"), said("c", "1"), said("a", "3")])
    announcer.flush()
    announcer.flush()  # nothing twice
    assert batches == [["a:1"], ["b:1", "b:2"], ["a:2", "a:3"], ["c:1"]]


@pytest.fixture
def heard():
    notes: list[tuple[uuid.UUID, str, bool]] = []

    def receiver(sender, message: Message, newest_of_batch: bool = True, **kwargs) -> None:
        notes.append((message.id, message.motion_id, newest_of_batch))

    message_created.connect(receiver, dispatch_uid="test_transcripts_announce")
    yield notes
    message_created.disconnect(dispatch_uid="test_transcripts_announce")


@pytest.fixture
def six_files(tmp_path, settings) -> dict[str, str]:
    """Six terminal transcripts, three claimed by each of two Motions: {session: motion}."""
    projects = tmp_path / "projects"
    (projects / "-tmp-work").mkdir(parents=True)
    settings.TRANSCRIPT_DIRS = [str(projects)]
    agent = AgentFactory(name="typist")
    motions = [MotionFactory(slug="north"), MotionFactory(slug="south")]
    sessions: dict[str, str] = {}
    for n in range(6):
        session_id = str(uuid.uuid4())
        recorded.fresh_terminal_transcript(projects / "-tmp-work" / f"{session_id}.jsonl", session_id)
        motion = motions[n % 2]
        claim_session(session_id, motion, agent, "claude-code")
        sessions[session_id] = motion.pk
    return sessions


def assert_each_message_once_and_each_motions_newest_noted(heard) -> list[tuple[uuid.UUID, str, bool]]:
    stored = {m.id: m for m in Message.objects.all()}
    assert len(stored) > 6
    assert sorted(message_id for message_id, _, _ in heard) == sorted(stored)
    for motion in {m.motion_id for m in stored.values()}:
        announced = [
            (stored[message_id], noted) for message_id, motion_id, noted in heard if motion_id == motion
        ]
        # Each file's Messages announced in the order they were written (files commit in any order).
        for session in {message.session_id for message, _ in announced}:
            written = [message.created_at for message, _ in announced if message.session_id == session]
            assert written == sorted(written)
        last_post = [message for message, _ in announced if message.kind == "text"][-1]
        assert (last_post, True) in announced  # the clocks hear of the newest post
    return [note for note in heard if note[2]]


@pytest.mark.django_db(transaction=True)  # real commits: the announcements go out on commit
def test_one_import_notes_each_motion_once_for_what_waits_not_once_per_file(heard, six_files, monkeypatch):
    monkeypatch.setattr(announcing, "NOTE_SECONDS", 3600.0)
    import_all()
    notes = assert_each_message_once_and_each_motions_newest_noted(heard)
    # The first file's commit at once, then the rest together, one batch per Motion: not six.
    assert len(notes) == 3


@pytest.mark.django_db
def test_inside_a_callers_transaction_nothing_is_announced_before_its_commit_nor_lost(
    heard, six_files, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        import_all()
        assert heard == []
    assert_each_message_once_and_each_motions_newest_noted(heard)
