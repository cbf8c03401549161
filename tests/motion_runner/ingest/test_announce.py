"""ingest/fit.py `announce`: every `message_created` receiver on the write path is contained; one
that raises (the notices receiver with the database gone, a bug) is logged and never takes the
writer down: the line is stored, and the receivers after it still hear of it."""

from __future__ import annotations

import uuid

import pytest

from motion_runner.ingest.fit import insert_one
from motion_runner.models import Message
from motion_runner.signals import message_created
from tests.factories import MotionFactory

pytestmark = pytest.mark.django_db


def test_a_raising_receiver_leaves_the_line_stored_and_the_writer_standing(
    django_capture_on_commit_callbacks, caplog
):
    heard = []

    def broken(sender, message, **kwargs):
        raise RuntimeError("the database went away")

    def listening(sender, message, **kwargs):
        heard.append(message.pk)

    message_created.connect(broken, dispatch_uid="test-broken")
    message_created.connect(listening, dispatch_uid="test-listening")
    try:
        line = Message(id=uuid.uuid4(), motion=MotionFactory(), sender="justin", source="web", text="hi")
        with django_capture_on_commit_callbacks(execute=True):
            assert insert_one(line) is True
    finally:
        message_created.disconnect(dispatch_uid="test-broken")
        message_created.disconnect(dispatch_uid="test-listening")

    assert Message.objects.filter(pk=line.pk).exists()
    assert heard == [line.pk]
    assert "the database went away" in caplog.text
