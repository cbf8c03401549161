"""The one way in (ingest/entry.py): a producer's lines are written once, a line that cannot be
written costs only itself, each Message counts for the first line that said it, a session the
producer may not claim stops the whole post, and no producer prepares events itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from motion_runner.harnesses import Event, EventKind, get_adapter
from motion_runner.ingest.entry import Line, Producer, write_stream
from motion_runner.ingest.sessions import SessionRefused, claim_session
from motion_runner.ingest.writer import IngestContext
from motion_runner.models import Message, Source
from tests import recorded
from tests.factories import MotionFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()
ROOT = Path(__file__).resolve().parents[3] / "motion_runner"


def scribes_producer(harbor, scribe) -> Producer:
    return Producer(
        IngestContext(
            motion=harbor, agent=scribe.agent, harness="claude-code", source=Source.API, session_id=SESSION
        )
    )


def said(text: str, uuid: str) -> Event:
    return Event(EventKind.TEXT, uuid=uuid, session_id=SESSION, text=text)


def test_a_line_that_cannot_be_written_costs_only_itself(harbor, scribe):
    good = said("the tide is in", "8f0a3f4e-1f7e-4a8e-9d41-6a3c2b9e0c11")
    written = scribes_producer(harbor, scribe).write([Line(0, [said("nope", "not-a-uuid")]), Line(1, [good])])
    assert [index for index, _ in written.errors] == [0]
    assert written.wrote == {1}
    assert list(Message.objects.values_list("text", flat=True)) == ["the tide is in"]


def test_a_message_said_twice_counts_for_the_first_line_that_said_it(harbor, scribe):
    line = said("the tide is in", "8f0a3f4e-1f7e-4a8e-9d41-6a3c2b9e0c11")
    written = scribes_producer(harbor, scribe).write([Line(3, [line]), Line(4, [line])])
    assert (written.imported, written.wrote) == (1, {3})
    again = scribes_producer(harbor, scribe).write([Line(0, [line])])
    assert (again.imported, again.skipped, again.wrote) == (0, 1, set())


def test_a_post_under_another_agents_session_writes_nothing(harbor, scribe, rival):
    claim_session(SESSION, harbor, rival.agent, "claude-code")
    with pytest.raises(SessionRefused):
        write_stream(
            get_adapter("claude-code"),
            MotionFactory(slug="elsewhere"),
            scribe.agent,
            harness="claude-code",
            source=Source.API,
            session_id=SESSION,
            lines=recorded.first_run(),
            may_move=lambda came_from, to: True,
        )
    assert not Message.objects.exists()


@pytest.mark.parametrize("package", ["api", "transcripts", "record"])
def test_no_producer_prepares_events_itself(package):
    preparing = re.compile(r"prepared=|\.prepare\(")
    found = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / package).rglob("*.py"))
        if preparing.search(path.read_text())
    ]
    assert found == []
