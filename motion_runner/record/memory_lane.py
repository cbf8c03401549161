"""The `memory_lane` binding: what the apps write lands in memory-lane's own record too.

The apps' Message table stays their working index (turns, wake lines, request cards, the consider
loop read it); each row it really inserts is written, in the same transaction and under the same
uuid, into the host's `conversations` tables as memory-lane's importer shapes them: a plain
`Message` for text, `ToolUse`/`ToolResult` subclasses for tool calls and results, a `turn-result`
content for a turn's end; `sender` the participant named after the speaker; `mood` the Mood whose
slug (or a MoodAlias) is the Motion's. A row whose id the host already has (memory-lane's own
transcript watcher brought it first) is left alone: get-or-create on the id, nothing doubled.

A Message created in the host by anything but this binding (memory-lane's composer) is handed to
the apps: its index row is written and `message_created` goes out, so a mention wakes an agent.
A row this binding wrote is never handed back (the `_writing` flag, and its index row exists).

Session ids: memory-lane's are UUIDs (Claude Code's are). A Codex or Pi session id that is not a
UUID is written as a NULL `session_id` and claims no MoodSession; the line still carries its Mood.
"""

from __future__ import annotations

import contextvars
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, models, transaction
from django.db.models.signals import post_save
from django.utils import timezone

from ..conf import app_settings as settings
from ..message_fit import announce, fit_message
from ..models import Agent, Kind, Message, Motion, Source
from .own import OwnRecord

log = logging.getLogger(__name__)

# memory-lane's mood runner marks its lines so; a host row with it came from here.
SOURCE_FILE = "ingest-mood-runner"
# The apps' index row of a post made in the host says where it came from.
HOST_POST_SOURCE_FILE = "memory-lane"
SYSTEM_SENDERS = {"runner", "system"}

_writing: contextvars.ContextVar[bool] = contextvars.ContextVar("memory_lane_writing", default=False)


@contextmanager
def writing() -> Iterator[None]:
    token = _writing.set(True)
    try:
        yield
    finally:
        _writing.reset(token)


def host_model(role: str) -> type[models.Model]:
    return apps.get_model(settings.MOTION_RUNNER_RECORD_MODELS[role])


def as_uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def content_for(message: Message) -> Any:
    """memory-lane's `content`: the harness line's own content block when the raw line has one
    (the API's content list), else the text; a turn's end as memory-lane's turn-result."""
    if message.kind == Kind.TURN_END:
        cost = str(message.cost_usd) if message.cost_usd is not None else None
        return {"type": "turn-result", "text": message.text, "cost_usd": cost, "is_error": message.is_error}
    block = own_block(message)
    return [block] if block is not None else message.text


def own_block(message: Message) -> dict | None:
    """The content block of the harness line that is this message's, if the raw line has one."""
    raw = message.raw if isinstance(message.raw, dict) else {}
    blocks = (raw.get("message") or {}).get("content") if isinstance(raw.get("message"), dict) else None
    if isinstance(blocks, list):
        wanted = {
            Kind.TEXT: "text",
            Kind.TOOL_CALL: "tool_use",
            Kind.TOOL_RESULT: "tool_result",
            Kind.THINKING: "thinking",
        }.get(message.kind)
        for block in blocks:
            if not isinstance(block, dict) or block.get("type") != wanted:
                continue
            if wanted == "tool_use" and block.get("id") != message.tool_id:
                continue
            if wanted == "tool_result" and block.get("tool_use_id") != message.tool_id:
                continue
            return block
    return None


def text_of(content: Any) -> str:
    """The words of a host Message's content: a string, a content list, or a dict with text."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return str(content.get("text") or "")
    if isinstance(content, list):
        return "\n".join(text_of(block) for block in content if isinstance(block, (dict, str))).strip()
    return ""


class MemoryLaneRecord(OwnRecord):
    shares_memory_lane_record = True

    def insert_one(self, message: Message) -> bool:
        with transaction.atomic():
            if not super().insert_one(message):
                return False
            self.mirror([message])
        return True

    def insert_batch(self, batch: list[Message]) -> list[Message]:
        with transaction.atomic():
            inserted = super().insert_batch(batch)
            self.mirror(inserted)
        return inserted

    def claim(self, session_id: str, motion: Motion) -> None:
        """memory-lane's own rule (`Mood.claim`): update_or_create, so a claim moves a session."""
        session_uuid = as_uuid(session_id)
        if session_uuid is None:
            return  # not a UUID (Codex, Pi): memory-lane cannot hold it; the lines carry their Mood
        host_model("mood_session").objects.update_or_create(
            session_id=session_uuid, defaults={"mood": self.mood_for(motion)}
        )

    # --- writing into the host ------------------------------------------------------------------

    def mood_for(self, motion: Motion) -> models.Model:
        """The Mood whose slug, or one of whose aliases, is the Motion's; made when none is."""
        mood_model = host_model("mood")
        mood = mood_model.objects.filter(slug=motion.slug).first()
        if mood is None:
            alias = host_model("mood_alias").objects.filter(slug=motion.slug).select_related("mood").first()
            mood = alias.mood if alias else None
        if mood is None:
            mood, _ = mood_model.objects.get_or_create(
                slug=motion.slug, defaults={"title": motion.title, "description": motion.description}
            )
        return mood

    def participant_for(self, message: Message) -> models.Model:
        name = message.sender[:50]
        found = host_model("participant").objects.filter(name=name).first()
        if found is not None:
            return found
        if message.agent_id is None and (message.source == Source.SYSTEM or name in SYSTEM_SENDERS):
            participant, _ = host_model("participant").objects.get_or_create(
                name=name, defaults={"participant_type": "system"}
            )
            return participant
        is_ai = message.agent_id is not None
        participant, _ = host_model("thinking_entity").objects.get_or_create(
            name=name,
            defaults={"participant_type": "ai" if is_ai else "human", "is_biological_human": not is_ai},
        )
        return participant

    def mirror(self, messages: list[Message]) -> None:
        if not messages:
            return
        host_message = host_model("message")
        have = set(host_message.objects.filter(pk__in=[m.id for m in messages]).values_list("pk", flat=True))
        moods: dict[str, models.Model] = {}
        with writing():
            for message in messages:
                if message.id in have:
                    continue  # memory-lane's watcher brought this line first: it stays as it is
                if message.motion_id not in moods:
                    moods[message.motion_id] = self.mood_for(message.motion)
                model, extra = self.shape(message)
                try:
                    with transaction.atomic():
                        model.objects.create(
                            id=message.id,
                            content=content_for(message),
                            sender=self.participant_for(message),
                            mood=moods[message.motion_id],
                            session_id=as_uuid(message.session_id) if message.session_id else None,
                            timestamp=int(message.created_at.timestamp() * 1000),
                            model_backend=message.model_backend or None,
                            effort=message.effort or None,
                            stop_reason=(message.stop_reason or None) and message.stop_reason[:50],
                            source_file=SOURCE_FILE,
                            input_tokens=message.input_tokens,
                            output_tokens=message.output_tokens,
                            cache_creation_input_tokens=message.cache_creation_input_tokens,
                            cache_read_input_tokens=message.cache_read_input_tokens,
                            is_sidechain=bool((message.raw or {}).get("isSidechain", False))
                            if isinstance(message.raw, dict)
                            else False,
                            cwd=message.cwd or None,
                            **extra,
                        )
                except IntegrityError:
                    continue  # written meanwhile under this id by another writer: get, not create

    def shape(self, message: Message) -> tuple[type[models.Model], dict[str, Any]]:
        """memory-lane's subclass for the kind, with its own fields."""
        if message.kind == Kind.TOOL_CALL:
            return host_model("tool_use"), {
                "tool_name": message.tool_name[:100],
                "tool_id": message.tool_id[:100],
            }
        if message.kind == Kind.TOOL_RESULT:
            return host_model("tool_result"), {
                "tool_use_id": message.tool_id[:100],
                "is_error": message.is_error,
            }
        if message.kind == Kind.THINKING:  # memory-lane's Thought, with the vendor's signature
            block = own_block(message) or {}
            return host_model("thought"), {"signature": str(block.get("signature") or "")}
        return host_model("message"), {}

    # --- a post made in the host --------------------------------------------------------------

    def connect(self) -> None:
        try:
            host_model("message")
        except LookupError as exc:  # say what to set, rather than a bare LookupError at start-up
            raise ImproperlyConfigured(
                f'MOTION_RUNNER_RECORD = "memory_lane" writes into the host\'s record, but {exc} Install '
                "memory-lane's conversations app, or name its models in MOTION_RUNNER_RECORD_MODELS."
            ) from exc
        post_save.connect(
            self.on_host_save, sender=host_model("message"), dispatch_uid="motion_runner.record.host"
        )

    def on_host_save(self, sender, instance, created: bool = False, raw: bool = False, **kwargs) -> None:
        if not created or raw or _writing.get():
            return
        try:
            self.hand_to_apps(instance)
        except Exception:  # the host's own save must never fail because of the apps
            log.exception("a memory-lane post %s could not reach the wakes app", instance.pk)

    def hand_to_apps(self, post: models.Model) -> Message | None:
        """Write the apps' index row of a host post and announce it (mentions, the consider loop)."""
        if post.mood_id is None or Message.objects.filter(pk=post.pk).exists():
            return None
        mood = post.mood
        slugs = [
            mood.slug,
            *host_model("mood_alias").objects.filter(mood=mood).values_list("slug", flat=True),
        ]
        motion = Motion.objects.filter(slug__in=slugs).first()
        if motion is None:
            return None  # a Mood with no Motion: no agent of the apps is in it
        sender_name = str(post.sender_id)
        stamp = post.timestamp
        message = Message(
            id=post.pk,
            motion=motion,
            sender=sender_name,
            agent=Agent.objects.filter(name=sender_name).first(),
            # A row with a session came from a harness transcript (memory-lane's own watcher): a
            # terminal line, whose mention waits to see if it is answered; else its composer (web).
            source=Source.TERMINAL if post.session_id else Source.WEB,
            kind=Kind.TEXT,
            text=text_of(post.content),
            session_id=str(post.session_id or ""),
            source_file=HOST_POST_SOURCE_FILE,
            created_at=datetime.fromtimestamp(stamp / 1000, tz=UTC) if stamp else timezone.now(),
        )
        fit_message(message)
        if not OwnRecord.insert_one(self, message):
            return None
        transaction.on_commit(lambda: announce([message]))
        return message
