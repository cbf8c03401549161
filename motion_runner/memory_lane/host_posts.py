"""A post made on memory-lane's own page (or by its own transcript watcher) reaches the apps.

A Message created in the host by anything but the binding is handed to the write path through
`signals.host_post_made` (which the write path hears: its index row is written and
`message_created` goes out, so a mention wakes an agent); a row the binding wrote is never handed
back (the writing flag, and its index row exists). memory-lane's ■ (`api_interrupt`: an
`interrupt` row naming the agent and who pressed it) is told to the runner through
`signals.host_stop_pressed`. Its other event rows (a dict with no words) and its machinery
senders' rows are nobody's post. Mixed into `MemoryLaneRecord` (binding.py), which connects it.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from django.db import models
from django.utils import timezone

from .. import signals
from ..models import HOST_POST_SOURCE_FILE, Agent, Kind, Message, Motion, Source
from .host import is_writing
from .signin import composer_sign_in, typed_by_a_person

log = logging.getLogger(__name__)

HOST_INTERRUPT_SOURCE = "interrupt"
# memory-lane's machinery senders: their rows are never anyone's words (its MACHINERY_SENDERS).
HOST_MACHINERY_SENDERS = ("system", "tool-result")


def text_of(content: Any) -> str:
    """The words of a host Message's content: a string, a content list, or a dict with text."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return str(content.get("text") or "")
    if isinstance(content, list):
        return "\n".join(text_of(block) for block in content if isinstance(block, (dict, str))).strip()
    return ""


class HostPosts:
    def on_host_save(self, sender, instance, created: bool = False, raw: bool = False, **kwargs) -> None:
        if not created or raw or is_writing():
            return
        try:
            self.hand_to_apps(instance)
        except Exception:  # the host's own save must never fail because of the apps
            log.exception("a memory-lane post %s could not reach the wakes app", instance.pk)

    def hand_to_apps(self, post: models.Model) -> Message | None:
        """The apps' index row of a host post, handed to the write path (`signals.host_post_made`),
        which writes and announces it (mentions, the consider loop)."""
        if post.mood_id is None or Message.objects.filter(pk=post.pk).exists():
            return None
        content = post.content
        if post.source_file == HOST_INTERRUPT_SOURCE and isinstance(content, dict):
            motion = self.motion_for_mood(post.mood)
            signals.host_stop_pressed.send(
                sender=Motion,
                motion=motion,
                agent_name=str(content.get("agent") or ""),
                by=str(content.get("by") or ""),
            )
            return None
        words = text_of(content)
        if not words.strip() or str(post.sender_id) in HOST_MACHINERY_SENDERS:
            # memory-lane's event rows (a deploy, a rename, a sign-in: a dict, no words) and its
            # watcher's tool lines are nobody's post: handed over, an empty "post" would start
            # considerations.
            return None
        motion = self.motion_for_mood(post.mood)
        sender_name = str(post.sender_id)
        stamp = post.timestamp
        agent = Agent.objects.filter(name=sender_name).first()
        message = Message(
            id=post.pk,
            motion=motion,
            sender=sender_name,
            agent=agent,
            # A row with a session came from a harness transcript (memory-lane's own watcher): a
            # terminal line, whose mention waits to see if it is answered; else its composer (web).
            source=Source.TERMINAL if post.session_id else Source.WEB,
            # A person's sign-in: an agent's entity posting through a device vouches for nothing.
            sign_in=composer_sign_in(post) if typed_by_a_person(post) and not agent else "",
            kind=Kind.TEXT,
            text=words,
            session_id=str(post.session_id or ""),
            source_file=HOST_POST_SOURCE_FILE,
            created_at=datetime.fromtimestamp(stamp / 1000, tz=UTC) if stamp else timezone.now(),
        )
        # Through the write path (fitted, redacted, inserted once, announced after commit); its
        # mirror finds the host row there already and leaves it.
        answers = signals.host_post_made.send(sender=Message, message=message)
        return message if any(inserted for _receiver, inserted in answers) else None
