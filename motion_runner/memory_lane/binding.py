"""The `memory_lane` binding: what the apps write lands in memory-lane's own record too.

The apps' Message table stays their working index (turns, wake lines, request cards, the consider
loop read it); each row it really inserts is written, in the same transaction and under the same
uuid, into the host's `conversations` tables as memory-lane's own writers shape them
(memory_lane/rows.py: the input dict of a ToolUse, tool output kept only up to the host's
TOOL_RESULT_CONTENT_CHARS, machinery senders for tool results and the apps' own lines, a turn's
end as memory-lane's `turn-result`); `mood` the Mood whose slug (or a MoodAlias) is the Motion's.

A Mood is a Motion: a route's slug is a Motion's, or else a Mood's now or before a rename
(`Mood.by_slug`), whose Motion is made when it has none (`motion_for_slug`); a Motion with no
Mood gets one whose slug follows its title (`Mood.free_slug`), its own slug kept as an alias.
Renamed on either side, the other follows: a Motion's new title renames its Mood as memory-lane
renames one (`Mood.rename`: the slug follows, the old one an alias); a Mood renamed in
memory-lane retitles its Motion (an UPDATE, which saves no Motion, so nothing renames back).

Lines of a session nobody has claimed (`write_unclaimed`, from the transcript watcher's posts) are
written at once with `mood` NULL, as memory-lane's own importer stores them; the claim gives them
their Mood (`claim`), and the apps' index, read from its spool then, leaves those rows as they are.

A row whose id the host already has (memory-lane's own transcript watcher brought it first) is
left alone: get-or-create on the id, nothing doubled.

A Message created in the host by anything but this binding (memory-lane's composer) is handed to
the apps through the write path (`signals.host_post_made`, which the write path hears): its
index row is written and `message_created` goes out, so a mention wakes an agent. A row this
binding wrote is never handed back (the `_writing` flag, and its index row exists). This package
imports nothing of the write path (pyproject.toml's contract).

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
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, models, transaction
from django.db.models.signals import post_save
from django.utils import timezone

from .. import signals
from ..conf import app_settings as settings
from ..models import HOST_POST_SOURCE_FILE, Agent, Kind, Message, Motion, Source
from ..record.own import OwnRecord
from .rows import host_row, parent_of, turn_stop, unindexed_row

log = logging.getLogger(__name__)

# memory-lane's mood runner marks its lines so; a host row with it came from here.
SOURCE_FILE = "ingest-mood-runner"
# The apps' index row of a post made in the host says where it came from.
# memory-lane's own page (views_auth): its composer's posts (`api_say`), and its ■ (`api_interrupt`).
HOST_COMPOSER_SOURCE = "mood-web"
HOST_INTERRUPT_SOURCE = "interrupt"
HOST_WEB_CLIENT = "magenta-web"
# memory-lane's machinery senders: their rows are never anyone's words (its MACHINERY_SENDERS).
HOST_MACHINERY_SENDERS = ("system", "tool-result")
# How long memory-lane's page shows a hold after it was last said (its mood_view.HELD_FOR).
HOST_HELD_SECONDS = 600


def composer_sign_in(post: models.Model) -> str:
    """How the person who typed a composer post signed in: memory-lane's `web_client` writes
    `magenta-web[/mobile][/wiki]`, `/wiki` for a PickiPedia device; its other devices are SSH keys'.
    Anything else (no client_version, another writer) vouches for nothing."""
    client, *parts = str(getattr(post, "client_version", "") or "").split("/")
    if client != HOST_WEB_CLIENT:
        return ""
    return "wiki" if "wiki" in parts else "ssh"


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
    keeps_unindexed = True
    keeps_unclaimed = True

    def insert_one(self, message: Message) -> bool:
        with transaction.atomic():
            if not super().insert_one(message):
                return False
            self.mirror([message])
        return True

    def insert_batch(self, batch: list[Message]) -> list[Message]:
        with transaction.atomic():
            inserted = super().insert_batch(batch)
            # Written in id order (the index's locks); memory-lane orders by arrival: as said.
            self.mirror(sorted(inserted, key=lambda message: (message.created_at, message.id)))
        return inserted

    def claim(self, session_id: str, motion: Motion) -> None:
        """memory-lane's own rule (`Mood.claim`): update_or_create, so a claim moves a session."""
        session_uuid = as_uuid(session_id)
        if session_uuid is None:
            return  # not a UUID (Codex, Pi): memory-lane cannot hold it; the lines carry their Mood
        mood = self.mood_for(motion)
        host_model("mood_session").objects.update_or_create(session_id=session_uuid, defaults={"mood": mood})
        # Lines memory-lane's own watcher stored before anyone claimed the session wait with no
        # Mood ("until claimed"): the claim routes them too.
        host_model("message").objects.filter(session_id=session_uuid, mood__isnull=True).update(mood=mood)

    # --- Moods and Motions -------------------------------------------------------------------

    def mood_by_slug(self, slug: str) -> models.Model | None:
        """memory-lane's own `Mood.by_slug`: the Mood going by `slug` now, or before a rename."""
        return host_model("mood").by_slug(slug)

    def mood_slugs(self, mood: models.Model) -> list[str]:
        """Every name a Mood answers to: its slug now, then its aliases."""
        aliases = host_model("mood_alias").objects.filter(mood=mood).values_list("slug", flat=True)
        return [mood.slug, *aliases]

    def free_slug(self, title: str) -> str:
        """memory-lane's own `Mood.free_slug`: the title's slug, numbered past the names taken."""
        return host_model("mood").free_slug(title)

    def mood_for(self, motion: Motion) -> models.Model:
        """The Mood the Motion is (its slug is the Mood's, now or before a rename). A Motion with
        none gets one as memory-lane makes a Mood: its slug follows the title (`free_slug`); the
        Motion's own slug, if different, becomes one of the Mood's aliases, so both find it."""
        mood = self.mood_by_slug(motion.slug)
        if mood is not None:
            return mood
        mood = host_model("mood").objects.create(
            slug=self.free_slug(motion.title or motion.slug),
            title=motion.title,
            description=motion.description,
        )
        if mood.slug != motion.slug:
            host_model("mood_alias").objects.get_or_create(slug=motion.slug, defaults={"mood": mood})
        return mood

    def motion_for_mood(self, mood: models.Model) -> Motion:
        """The Motion that is this Mood: the one going by any of its names (the oldest, should
        there be two), else one made now under the Mood's slug and title. Nobody makes it by hand."""
        motion = Motion.objects.filter(slug__in=self.mood_slugs(mood)).order_by("created_at").first()
        if motion is None:
            motion, _ = Motion.objects.get_or_create(
                slug=mood.slug, defaults={"title": mood.title or mood.slug, "description": mood.description}
            )
        return motion

    def motion_for_slug(self, slug: str) -> Motion | None:
        """A route's Motion: by its own slug, else by the Mood going by `slug` (its slug now or
        any alias, memory-lane's `Mood.by_slug`), made for that Mood when it has none yet."""
        motion = super().motion_for_slug(slug)
        if motion is not None:
            return motion
        mood = self.mood_by_slug(slug)
        return self.motion_for_mood(mood) if mood is not None else None

    def on_motion_save(self, sender, instance, created: bool = False, raw: bool = False, **kwargs) -> None:
        """A Motion retitled (the admin, or any save): its Mood is renamed as memory-lane renames
        one (`Mood.rename`: new title, the slug follows it, the old slug kept as a MoodAlias). The
        Mood's own save then finds `_writing` set and retitles nothing back."""
        if raw or created or _writing.get():
            return
        mood = self.mood_by_slug(instance.slug)
        if mood is None or mood.title == instance.title or not instance.title:
            return  # no Mood yet (made when the first line is written), or the same title
        with writing():
            mood.rename(instance.title)

    def on_mood_save(self, sender, instance, created: bool = False, raw: bool = False, **kwargs) -> None:
        """A Mood renamed in memory-lane: its Motion (found by any of its names) takes the title."""
        if raw or created or _writing.get():
            return
        Motion.objects.filter(slug__in=self.mood_slugs(instance)).exclude(title=instance.title).update(
            title=instance.title or instance.slug
        )

    # --- writing into the host ------------------------------------------------------------------

    def participant(self, name: str, kind: str, cache: dict[str, models.Model]) -> models.Model:
        """The participant called `name`, made as memory-lane makes it: a ThinkingEntity for a
        person or an agent, a plain participant for a tool or the system."""
        if name in cache:
            return cache[name]
        found = host_model("participant").objects.filter(name=name).first()
        if found is None and kind in ("ai", "human"):
            found, _ = host_model("thinking_entity").objects.get_or_create(
                name=name, defaults={"participant_type": kind, "is_biological_human": kind == "human"}
            )
        elif found is None:
            found, _ = host_model("participant").objects.get_or_create(
                name=name, defaults={"participant_type": kind}
            )
        cache[name] = found
        return found

    def write_unclaimed(self, messages: list[Message], events: list[Any], session_id: str) -> None:
        """Lines of a session no Motion has claimed, read as any (fitted, redacted), written at once
        with `mood` NULL as memory-lane's importer stores them; the apps' index keeps none of them
        until the claim (it reads them from its spool then, and leaves these rows as they are).
        A session id memory-lane cannot hold (not a UUID) could never be routed: nothing written."""
        if as_uuid(session_id) is None:
            return
        with transaction.atomic():
            self.mirror(sorted(messages, key=lambda m: (m.created_at, m.id)), unclaimed=True)
            agent = next((m.agent for m in messages if m.agent is not None), None)
            self.write_unindexed(events, None, agent)

    def mirror(self, messages: list[Message], *, unclaimed: bool = False) -> None:
        """`unclaimed`: the lines' session has no Motion yet: `mood` NULL, as memory-lane's own."""
        if not messages:
            return
        host_message = host_model("message")
        have = set(host_message.objects.filter(pk__in=[m.id for m in messages]).values_list("pk", flat=True))
        moods: dict[str, models.Model] = {}
        people: dict[str, models.Model] = {}
        recipients = host_message._meta.get_field("recipients")
        through = recipients.remote_field.through
        links = []
        with writing():
            for message in messages:
                if message.id in have:
                    continue  # memory-lane's watcher brought this line first: it stays as it is
                if message.motion_id not in moods:
                    moods[message.motion_id] = None if unclaimed else self.mood_for(message.motion)
                row = host_row(message)
                session = as_uuid(message.session_id) if message.session_id else None
                parent = parent_of(message)
                parent_known = parent is not None and host_message.objects.filter(pk=parent).exists()
                is_sidechain = isinstance(message.raw, dict) and bool(message.raw.get("isSidechain"))
                values = {
                    "id": message.id,
                    "content": row.content,
                    "sender": self.participant(row.sender, row.sender_type, people),
                    "mood": moods[message.motion_id],
                    "session_id": session,
                    "timestamp": int(message.created_at.timestamp() * 1000),
                    "model_backend": message.model_backend or None,
                    "effort": message.effort or None,
                    "stop_reason": row.stop_reason,
                    "source_file": SOURCE_FILE,
                    "input_tokens": message.input_tokens,
                    "output_tokens": message.output_tokens,
                    "cache_creation_input_tokens": message.cache_creation_input_tokens,
                    "cache_read_input_tokens": message.cache_read_input_tokens,
                    "is_sidechain": is_sidechain,
                    "cwd": message.cwd or None,
                    "parent_id": parent if parent_known else None,
                    "looking_for_parent_id": parent if parent is not None and not parent_known else None,
                    **row.fields,
                }
                try:
                    with transaction.atomic():
                        host_model(row.role).objects.create(**values)
                except IntegrityError:
                    continue  # written meanwhile under this id by another writer: get, not create
                for name, kind in row.recipients:
                    links.append(
                        through(
                            **{
                                f"{recipients.m2m_field_name()}_id": message.id,
                                f"{recipients.m2m_reverse_field_name()}_id": self.participant(
                                    name, kind, people
                                ).pk,
                            }
                        )
                    )
                if row.ends_turn:
                    self.stamp_turn_end(message, moods[message.motion_id], session)
            if links:
                through.objects.bulk_create(links, ignore_conflicts=True)

    def write_unindexed(self, events: list[Any], motion: Motion | None, agent: Agent | None) -> None:
        """The lines memory-lane keeps and the apps' own record does not, each as memory-lane's
        importer stores it (memory_lane/rows.py): thinking as a `Thought`, the agent's to
        itself; a compaction's summary as the agent's continuation; any other prompt line as
        `system`'s. Get-or-create on the line's id, as every row. `motion` None: a session
        nobody has claimed yet (`mood` NULL)."""
        if agent is None or not events:
            return
        ids = [as_uuid(event.uuid) for event in events if event.uuid]
        have = set(
            host_model("message").objects.filter(pk__in=[i for i in ids if i]).values_list("pk", flat=True)
        )
        people: dict[str, models.Model] = {}
        mood = self.mood_for(motion) if motion is not None else None
        with writing():
            for event in events:
                row_id = as_uuid(event.uuid) if event.uuid else None
                if row_id is None or row_id in have:
                    continue
                row = unindexed_row(event, agent.name[:50])
                values = {
                    "id": row_id,
                    "content": row.content,
                    "sender": self.participant(row.sender, row.sender_type, people),
                    "mood": mood,
                    "session_id": as_uuid(event.session_id) if event.session_id else None,
                    "timestamp": int(timezone.now().timestamp() * 1000),
                    "model_backend": event.model or None,
                    "source_file": SOURCE_FILE,
                    "is_sidechain": isinstance(event.raw, dict) and bool(event.raw.get("isSidechain")),
                    **row.fields,
                }
                try:
                    with transaction.atomic():
                        written = host_model(row.role).objects.create(**values)
                except IntegrityError:
                    continue
                for name, kind in row.recipients:
                    written.recipients.add(self.participant(name, kind, people))

    def stamp_turn_end(self, message: Message, mood: models.Model, session: uuid.UUID | None) -> None:
        """The turn's last line of the agent gets its stop reason (memory-lane's `finish_turn`):
        the page's activity line ends the turn there. A line stamped already keeps its own."""
        rows = host_model("message").objects.filter(sender_id=message.sender[:50], is_sidechain=False)
        rows = rows.filter(session_id=session) if session is not None else rows.filter(mood=mood)
        last = rows.exclude(pk=message.id).order_by("-created_at").first()
        if last is not None and last.stop_reason is None:
            host_model("message").objects.filter(pk=last.pk).update(stop_reason=turn_stop(message))

    # --- how things stand, where memory-lane's page reads it ----------------------------------

    def show_hold(self, sender, motion: Motion, agent: Agent, hold: dict[str, Any] | None, **kwargs) -> None:
        """`signals.hold_changed`: memory-lane's page shows a runner's holds from Django's cache, one dict per Mood under
        `held:<slug>`: `{agent: {reason, until, at (epoch seconds)}}`, each lapsing HOST_HELD_SECONDS
        after its `at` (its `mood_view.set_held` and `held_in`). A read, a change and a write, as
        memory-lane's own writer does."""
        key = f"held:{self.mood_for(motion).slug}"
        now = timezone.now().timestamp()
        state = {
            name: entry
            for name, entry in (cache.get(key) or {}).items()
            if isinstance(entry, dict) and now - float(entry.get("at") or 0) < HOST_HELD_SECONDS
        }
        if hold is None:
            state.pop(agent.name, None)
        else:
            state[agent.name] = {"reason": hold["reason"], "until": hold["until"], "at": now}
        cache.set(key, state, HOST_HELD_SECONDS)

    # --- a post made in the host --------------------------------------------------------------

    def connect(self) -> None:
        try:
            host_model("message")
            mood = host_model("mood")
        except LookupError as exc:  # say what to set, rather than a bare LookupError at start-up
            raise ImproperlyConfigured(
                f'MOTION_RUNNER_RECORD = "memory_lane" writes into the host\'s record, but {exc} Install '
                "memory-lane's conversations app, or name its models in MOTION_RUNNER_RECORD_MODELS."
            ) from exc
        missing = [
            name for name in ("by_slug", "free_slug", "rename") if not callable(getattr(mood, name, None))
        ]
        if missing:  # memory-lane's own rules for a Mood's names (since its slugs follow titles)
            raise ImproperlyConfigured(
                f"{mood.__name__} has no {' or '.join(missing)}: the memory_lane binding finds, names and renames "
                "Moods by memory-lane's own rules (a memory-lane with migration 0016, slugs that follow titles)."
            )
        post_save.connect(
            self.on_host_save, sender=host_model("message"), dispatch_uid="motion_runner.record.host"
        )
        post_save.connect(
            self.on_mood_save, sender=host_model("mood"), dispatch_uid="motion_runner.record.host_mood"
        )
        post_save.connect(
            self.on_motion_save, sender=Motion, dispatch_uid="motion_runner.record.motion_title"
        )
        signals.hold_changed.connect(self.show_hold, dispatch_uid="motion_runner.record.host_held")

    def on_host_save(self, sender, instance, created: bool = False, raw: bool = False, **kwargs) -> None:
        if not created or raw or _writing.get():
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
            sign_in=composer_sign_in(post) if post.source_file == HOST_COMPOSER_SOURCE and not agent else "",
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
