"""An agent's first post in a mention turn answers the people whose @mentions woke it: one Notice
each (memory-lane's `notices_for` "answered you"), pushed after commit to whoever subscribed."""

from __future__ import annotations

import re
from typing import Any

from django.db import IntegrityError, transaction

from motion_runner.ingest.fit import is_post
from motion_runner.lib.tasks import send_when_broker_answers
from motion_runner.models import Kind, Message

from ..models import MentionWake, Notice, clock

# An agent's <silent>why</silent> chose not to speak: it answers nobody (it becomes a dot).
SILENT_START = re.compile(r"^\s*<silent\b", re.IGNORECASE)
PUSH_TASK = "wakes.push_notices"


def answers_someone(message: Message) -> bool:
    return (
        message.agent_id is not None
        and message.turn_id is not None
        and message.kind == Kind.TEXT
        and is_post(message)
        and not SILENT_START.match(message.text or "")
    )


def record_answers(message: Message) -> list[Notice]:
    """The notices `message` makes: one per person whose mention its turn answers, once."""
    if not answers_someone(message):
        return []
    owed = MentionWake.objects.filter(
        turn_id=message.turn_id,
        agent_id=message.agent_id,
        message__author__isnull=False,
        message__motion_id=message.motion_id,
    ).select_related("message")
    owed = [wake for wake in owed if wake.message.author_id]
    if not owed:
        return []
    told = set(
        Notice.objects.filter(
            agent_id=message.agent_id, mention_id__in=[wake.message_id for wake in owed]
        ).values_list("mention_id", flat=True)
    )
    made = []
    for wake in owed:
        if wake.message_id in told:
            continue
        try:
            with transaction.atomic():
                made.append(
                    Notice.objects.create(
                        person_id=wake.message.author_id,
                        motion_id=message.motion_id,
                        agent_id=message.agent_id,
                        mention_id=wake.message_id,
                        answer=message,
                        created_at=clock.now(),
                    )
                )
        except IntegrityError:  # another post of the same turn, written at once, was first
            continue
    if made:
        ids = [notice.pk for notice in made]
        transaction.on_commit(lambda: send_when_broker_answers(PUSH_TASK, ids))
    return made


def on_message_created(sender: Any, message: Message, newest_of_batch: bool = True, **kwargs: Any) -> None:
    """`message_created` receiver. Only the newest post of a write is looked at: an agent's reply
    is its batch's newest post (motion_runner/ingest/fit.py), and the runner's hot path pays one
    cheap test for every other line."""
    if newest_of_batch:
        record_answers(message)
