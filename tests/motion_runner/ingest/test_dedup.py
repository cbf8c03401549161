"""One event, written once: the runner, the stream API and the transcript importer, in every order,
and the same batch posted twice at the same moment."""

from __future__ import annotations

import shutil
import threading
from itertools import permutations

import pytest
from django.db import connection
from django.test import Client

from motion_runner.harnesses import get_adapter
from motion_runner.ingest.sessions import claim_session
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import Message
from motion_runner.transcripts.importer import import_file
from tests import recorded

SESSION = recorded.session_id()
# The three `claude -p` runs of the recording: 2 × (text, call, result, text, turn end), then a
# compaction and its turn end.
EXPECTED = {"text": 4, "tool_call": 2, "tool_result": 2, "turn_end": 3, "compact": 1}


@pytest.fixture
def projects(tmp_path, settings):
    root = tmp_path / "projects"
    (root / "-tmp-work").mkdir(parents=True)
    settings.TRANSCRIPT_DIRS = [str(root)]
    path = root / "-tmp-work" / f"{SESSION}.jsonl"
    shutil.copy(recorded.RECORDINGS / "read-then-reply.transcript.jsonl", path)
    return path


def by_runner(motion, agent) -> None:
    """What the runner does with a harness's stdout (runner/turn_run.py TurnRun.handle_line)."""
    writer = EventWriter(IngestContext(motion=motion, agent=agent, harness="claude-code", source="runner"))
    parser = get_adapter("claude-code").new_parser()
    for line in recorded.lines("stream"):
        for event in parser.feed(line):
            writer.write(event)


def by_stream_api(client, persona) -> list[dict]:
    answers = []
    lines = recorded.lines("stream")
    for start in range(0, len(lines), 10):
        body = {"harness": "claude-code", "session_id": SESSION, "events": lines[start : start + 10]}
        response = client.post(
            "/api/motions/harbor/stream/", body, content_type="application/json", **persona.headers
        )
        assert response.status_code == 200, response.content
        answers.append(response.json())
    return answers


def kinds() -> dict[str, int]:
    out: dict[str, int] = {}
    for kind in Message.objects.values_list("kind", flat=True):
        out[kind] = out.get(kind, 0) + 1
    return out


@pytest.mark.django_db
@pytest.mark.parametrize("order", list(permutations(["runner", "api", "importer"])), ids="-".join)
def test_every_order_writes_each_event_once(order, client, harbor, scribe, projects):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    for writer in order:
        if writer == "runner":
            by_runner(harbor, scribe.agent)
        elif writer == "api":
            by_stream_api(client, scribe)
        else:
            import_file(projects)
    assert kinds() == EXPECTED
    # Whoever came first, the transcript's effort and cwd are on the replies.
    replies = Message.objects.filter(kind="text")
    assert {m.effort for m in replies} == {"medium"}
    assert all(m.cwd.endswith("/work") for m in replies)


@pytest.mark.django_db
def test_the_importer_after_the_runner_only_fills_in(harbor, scribe, projects):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    by_runner(harbor, scribe.agent)
    ids = set(Message.objects.values_list("id", flat=True))
    result = import_file(projects)
    assert result.imported == 0 and result.skipped == 9
    assert set(Message.objects.values_list("id", flat=True)) == ids
    assert set(
        Message.objects.exclude(kind__in=["turn_end", "compact"]).values_list("source", flat=True)
    ) == {"runner"}


def _concurrently(*jobs) -> list:
    """Run the jobs in threads that start together; each thread closes its own connection."""
    barrier = threading.Barrier(len(jobs))
    results: list = [None] * len(jobs)
    errors: list = []

    def run(index, job):
        try:
            barrier.wait()
            results[index] = job()
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    return results


@pytest.mark.django_db(transaction=True)
def test_the_same_batch_posted_twice_at_once_lands_once(harbor, scribe):
    body = {"harness": "claude-code", "session_id": SESSION, "events": recorded.first_run()}

    def post():
        response = Client().post(
            "/api/motions/harbor/stream/", body, content_type="application/json", **scribe.headers
        )
        assert response.status_code == 200, response.content
        return response.json()

    first, second = _concurrently(post, post)
    assert Message.objects.count() == 5
    assert first["imported"] + second["imported"] == 5
    # Each post counts all its events: what the other post wrote, and what writes nothing, is skipped.
    assert first["skipped"] + second["skipped"] == 2 * len(recorded.first_run()) - 5


@pytest.mark.django_db(transaction=True)
def test_the_runner_and_the_importer_at_once_write_once(harbor, scribe, projects):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    _concurrently(lambda: by_runner(harbor, scribe.agent), lambda: import_file(projects))
    assert kinds() == EXPECTED


@pytest.mark.django_db(transaction=True)
def test_hooks_and_the_importer_at_once_write_once(harbor, scribe, projects):
    """The hook knows no line uuid: the per-session lock keeps the twin check honest."""
    claim_session(SESSION, harbor, scribe.agent, "claude-code")

    def hooks():
        client = Client()
        for payload in recorded.lines("hooks"):
            if payload["hook_event_name"] == "PostToolUse":
                client.post(
                    "/api/hooks/claude-code/", payload, content_type="application/json", **scribe.headers
                )

    _concurrently(hooks, lambda: import_file(projects))
    assert Message.objects.filter(kind="tool_call").count() == 2
    assert Message.objects.filter(kind="tool_result").count() == 2


@pytest.mark.django_db
def test_the_runners_write_path_skips_a_malformed_event_and_keeps_the_rest(harbor, scribe):
    from motion_runner.harnesses import Event, EventKind

    writer = EventWriter(
        IngestContext(motion=harbor, agent=scribe.agent, harness="claude-code", source="runner")
    )
    outcome = writer.write_many(
        [
            Event(EventKind.TEXT, uuid="not-a-uuid", text="lost?"),
            Event(EventKind.TEXT, uuid="1b2c3d4e-0000-4000-8000-00000000000a", text="kept"),
        ]
    )
    assert outcome.imported == 1 and len(outcome.errors) == 1
    assert list(Message.objects.values_list("text", flat=True)) == ["kept"]
