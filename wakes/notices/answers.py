"""The notices a post makes (memory-lane's `views_moods.notices_for`, its two kinds), pushed after
commit to whoever subscribed:

- "answered": an agent's first post in a turn answers the people whose @mentions woke it, and,
  with no @ needed, the last person who spoke in the Motion before it (memory-lane's
  `answered_by`: how someone who asked and went elsewhere learns the agent is done);
- "mentioned you": a post, a person's or an agent's, @-mentions a person who may read the Motion
  (never its own author); once per post per person. A post that mentions the one it answers is a
  mention to them, not also an answer (memory-lane's `elif`), for the rest of its turn too.

A notice is a side effect of a write: whatever goes wrong here is logged and the write goes on.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models.functions import Lower

from motion_runner.ingest.fit import POST_KINDS, is_post
from motion_runner.lib.tasks import send_when_broker_answers
from motion_runner.models import Kind, Message, Motion, Source
from motion_runner.people.access import access

from ..decision.mentions import MENTION, strip_code
from ..models import MentionWake, Notice, clock

log = logging.getLogger(__name__)

# An agent's <silent>why</silent> chose not to speak: it answers nobody (it becomes a dot).
SILENT_START = re.compile(r"^\s*<silent\b", re.IGNORECASE)
PUSH_TASK = "wakes.push_notices"
MACHINERY_SENDERS = ("system", "tool-result")


def answers_someone(message: Message) -> bool:
    return (
        message.agent_id is not None
        and message.turn_id is not None
        and message.kind == Kind.TEXT
        and is_post(message)
        and not SILENT_START.match(message.text or "")
    )


def _create(**fields: Any) -> Notice | None:
    """One notice, or None when a concurrent write (or a second look) already made it."""
    try:
        with transaction.atomic():
            return Notice.objects.create(created_at=clock.now(), **fields)
    except IntegrityError:
        return None


def _may_read(person: Any, motion_id: str) -> bool:
    return access().readable(person, Motion.objects.filter(pk=motion_id)).exists()


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
    # A turn that @-mentions them back told them so ("mentioned you" wins, memory-lane's `elif`).
    mentioned = set(
        Notice.objects.filter(
            kind=Notice.Kind.MENTION,
            answer__turn_id=message.turn_id,
            person_id__in=[wake.message.author_id for wake in owed],
        ).values_list("person_id", flat=True)
    )
    made = []
    for wake in owed:
        if wake.message_id in told or wake.message.author_id in mentioned:
            continue
        notice = _create(
            person_id=wake.message.author_id,
            motion_id=message.motion_id,
            kind=Notice.Kind.ANSWER,
            agent_id=message.agent_id,
            mention_id=wake.message_id,
            answer=message,
        )
        if notice is not None:  # else another post of the same turn, written at once, was first
            made.append(notice)
    return made


def mentioned_people(message: Message) -> list[Any]:
    """The people a post @-mentions, by memory-lane's rule (decision/mentions.py), but never its
    author, an inactive account, or one who may not read the Motion."""
    if "@" not in (message.text or "") or not is_post(message):
        return []
    if message.sender.lower() in MACHINERY_SENDERS:
        return []
    if message.agent_id is not None and SILENT_START.match(message.text or ""):
        return []
    names: set[str] = set()
    for match in MENTION.finditer(strip_code(message.text)):
        names.update({match.group(1).lower(), match.group(1).rstrip(".-").lower()})
    if not names:
        return []
    people = (
        get_user_model()
        .objects.annotate(lowered=Lower("username"))
        .filter(lowered__in=names, is_active=True)
        .exclude(username__iexact=message.sender)
    )
    if message.author_id is not None:
        people = people.exclude(pk=message.author_id)
    return [person for person in people.order_by("pk") if _may_read(person, message.motion_id)]


def record_mentions(message: Message) -> list[Notice]:
    """ "X mentioned you": one notice per person the post names, once per post."""
    made = []
    for person in mentioned_people(message):
        notice = _create(
            person=person,
            motion_id=message.motion_id,
            kind=Notice.Kind.MENTION,
            agent_id=message.agent_id,
            mention=None,
            answer=message,
        )
        if notice is not None:
            made.append(notice)
    return made


def last_speaker(message: Message) -> Any | None:
    """The person whose words were the last a person said in the Motion before `message`
    (memory-lane's `answered_by`), or None."""
    earlier = (
        Message.objects.filter(
            motion_id=message.motion_id,
            author__isnull=False,
            kind__in=POST_KINDS,
            created_at__lte=message.created_at,
        )
        .exclude(source=Source.SYSTEM)
        .exclude(pk=message.pk)
        .select_related("author")
        .order_by("-created_at", "-pk")
        .first()
    )
    return earlier.author if earlier is not None else None


def record_last_speaker(message: Message) -> list[Notice]:
    """ "answered": the last person who spoke before an agent's reply, once per turn, unless the
    turn already told them (their mention answered, or a mention in this very post)."""
    if not answers_someone(message):
        return []
    person = last_speaker(message)
    if person is None or not person.is_active:
        return []
    told = Notice.objects.filter(person=person, answer__turn_id=message.turn_id).exists()
    if told or not _may_read(person, message.motion_id):
        return []
    notice = _create(
        person=person,
        motion_id=message.motion_id,
        kind=Notice.Kind.ANSWER,
        agent_id=message.agent_id,
        mention=None,
        answer=message,
    )
    return [notice] if notice is not None else []


def has_at(message: Message) -> bool:
    return is_post(message) and "@" in (message.text or "")


# "mentioned you" is looked for in every post of a write, the answers in its newest post only.
EVERY_POST = ("record_mentions",)
# Each recorder by name (so a test can break one), with the cheap test that says it may make any.
RECORDERS = (
    ("record_mentions", has_at),
    ("record_answers", answers_someone),
    ("record_last_speaker", answers_someone),
)


def record_notices(message: Message, *, newest_of_batch: bool = True) -> list[Notice]:
    """Every notice `message` makes, each recorder contained: one that fails is logged, rolled
    back to its own savepoint, and the others (and the write) go on. A recorder that can make
    none costs no statement (a person's post with no @, a tool call, a system line: none at all)."""
    made: list[Notice] = []
    for name, may in RECORDERS:
        if not may(message) or (name not in EVERY_POST and not newest_of_batch):
            continue
        try:
            with transaction.atomic():
                made.extend(globals()[name](message))
        except Exception:
            log.exception("notices: %s failed for message %s; the write goes on", name, message.pk)
    if made:
        ids = [notice.pk for notice in made]
        transaction.on_commit(lambda: _push(ids))
    return made


def _push(ids: list[int]) -> None:
    try:
        send_when_broker_answers(PUSH_TASK, ids)
    except Exception:
        log.exception("notices: the push of %s could not be queued", ids)


def on_message_created(sender: Any, message: Message, newest_of_batch: bool = True, **kwargs: Any) -> None:
    """`message_created` receiver. An answer is looked for in the newest post of a write only (an
    agent's reply is its batch's newest post, motion_runner/ingest/fit.py); an @ in any post of it
    (an agent may name someone in a post before its last), and the runner's hot path pays one
    cheap test, no statement, for every line with no @. Never raises: a notice is never worth a
    lost write."""
    try:
        record_notices(message, newest_of_batch=newest_of_batch)
    except Exception:
        log.exception("notices: message %s made none; the write goes on", getattr(message, "pk", None))
