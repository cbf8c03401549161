"""The `memory_lane` binding: what the apps write lands in memory-lane's own record too.

The apps' Message table stays their working index (turns, wake lines, request cards, the consider
loop read it); each row it really inserts is written, in the same transaction and under the same
uuid, into the host's `conversations` tables as memory-lane's own writers shape them
(memory_lane/rows.py: the input dict of a ToolUse, tool output kept only up to the host's
TOOL_RESULT_CONTENT_CHARS, machinery senders for tool results and the apps' own lines, a turn's
end as memory-lane's `turn-result`); `mood` the Mood whose slug (or a MoodAlias) is the Motion's
(renames.py: a Mood is a Motion, renamed on either side).

Lines of a session nobody has claimed (`write_unclaimed`, from the transcript watcher's posts) are
written at once with `mood` NULL, as memory-lane's own importer stores them; the claim gives them
their Mood (`claim`), and the apps' index, read from its spool then, leaves those rows as they are.

A row whose id the host already has (memory-lane's own transcript watcher brought it first) is
left alone: get-or-create on the id, nothing doubled.

What else the binding hears, each in a module of its own and mixed in here: a post made in the host
(host_posts.py, its sign-in signin.py), a post taken back in either record (changes.py), a hold (held.py). It imports nothing of the write path
(pyproject.toml's contract).

Session ids: memory-lane's are UUIDs (Claude Code's are). A Codex or Pi session id that is not a
UUID is written as a NULL `session_id` and claims no MoodSession; the line still carries its Mood.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, models, transaction
from django.db.models import Q
from django.db.models.signals import post_save
from django.utils import timezone

from .. import signals
from ..models import Agent, Kind, Message, Motion
from ..record.own import OwnRecord
from .changes import HostChanges, change_model
from .held import HostHolds
from .host import SOURCE_FILE, as_uuid, host_model, writing
from .host_posts import HostPosts
from .reads import HostReads
from .renames import MoodNames
from .rows import HANDOFF_SOURCE_FILE, host_row, parent_of, turn_stop, unindexed_row
from .signin import HostSignIns
from .steering import SETTINGS, HostSteering
from .timing import BUDGET_KEY, DIALS, HostTiming

log = logging.getLogger(__name__)

# The index's fill-ins memory-lane's row has a column for (ingest/twins.py FILL_IN_FIELDS).
HOST_FILL_IN = (
    "model_backend",
    "effort",
    "cwd",
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


class MemoryLaneRecord(
    MoodNames, HostPosts, HostSignIns, HostChanges, HostHolds, HostReads, HostTiming, HostSteering, OwnRecord
):
    shares_memory_lane_record = True
    read_keys = (*SETTINGS, *DIALS, BUDGET_KEY)  # what reads_once reads for a tick
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
                for key, motion_pk in row.moods.items():  # a handoff names the other Mood by its slug
                    other = Motion.objects.filter(pk=motion_pk).first()
                    row.content[key] = self.mood_for(other).slug if other is not None else motion_pk
                if row.moods and self.host_made_event(row, moods[message.motion_id]):
                    continue  # memory-lane's own receiver made this handoff event from the reply
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

    def fill_in(self, copy: Message, stored: Message, changed: list[str]) -> None:
        """The transcript's fill-ins reach memory-lane's copy of the row: the columns the index
        just filled (cwd, effort, model, final tokens), the turn-result's cost, and the parent the
        transcript line names, where the host's row has none. One read, at most one update."""
        host_message = host_model("message")
        row = host_message.objects.filter(pk=stored.id).first()
        if row is None:
            return
        values: dict[str, Any] = {
            name: getattr(stored, name)
            for name in HOST_FILL_IN
            if name in changed and getattr(stored, name) not in (None, "")
        }
        if "cost_usd" in changed and stored.kind == Kind.TURN_END and isinstance(row.content, dict):
            values["content"] = {**row.content, "cost_usd": float(stored.cost_usd)}
        parent = parent_of(copy)
        if parent is not None and row.parent_id is None and row.looking_for_parent_id is None:
            if host_message.objects.filter(pk=parent).exists():
                values["parent_id"] = parent
            else:
                values["looking_for_parent_id"] = parent
        if values:
            with writing():
                host_message.objects.filter(pk=row.pk).update(**values)

    def order_batch(self, said: list[tuple[str, Any]], since: Any) -> None:
        """memory-lane's page orders a Mood's rows by `created_at`, which its model stamps as a row
        is written; the lines only it keeps are written after the batch's Messages. The rows this
        batch wrote (none older: a re-post's rows keep their times) get the batch's first time
        plus a microsecond per place, in the order the lines were read. One read, one update.
        `since`: when the batch began writing; a row older than that is not the batch's."""
        order = sorted(
            ((at, as_uuid(line_id)) for line_id, at in said if as_uuid(line_id)), key=lambda pair: pair[0]
        )
        if len(order) < 2:
            return
        host_message = host_model("message")
        rows = {
            row.pk: row
            for row in host_message.objects.filter(
                pk__in=[row_id for _, row_id in order], created_at__gte=since
            ).only("pk", "created_at")
        }
        if len(rows) < 2:
            return
        base = min(row.created_at for row in rows.values())
        changed = []
        for place, row_id in enumerate(row_id for _, row_id in order if row_id in rows):
            row = rows[row_id]
            if row.created_at != base + timedelta(microseconds=place):
                row.created_at = base + timedelta(microseconds=place)
                changed.append(row)
        host_message.objects.bulk_update(changed, ["created_at"])

    def stamp_turn_end(self, message: Message, mood: models.Model, session: uuid.UUID | None) -> None:
        """The turn's last line of the agent gets its stop reason (memory-lane's `finish_turn`):
        the page's activity line ends the turn there. A line stamped already keeps its own."""
        rows = host_model("message").objects.filter(sender_id=message.sender[:50], is_sidechain=False)
        rows = rows.filter(session_id=session) if session is not None else rows.filter(mood=mood)
        last = rows.exclude(pk=message.id).order_by("-created_at").first()
        if last is not None and last.stop_reason is None:
            host_model("message").objects.filter(pk=last.pk).update(stop_reason=turn_stop(message))

    def host_made_event(self, row: Any, mood: models.Model | None) -> bool:
        """memory-lane makes a handoff's events itself when the reply carrying the block lands in
        its record (its `signals.handoffs_carried` → `handoff.from_message`, on the reply's
        `post_save`); the apps' line of the same handoff is then that event: not written twice.
        Matched as memory-lane matches (`source_file`, `content.message`), with its type and Mood."""
        return (
            host_model("message")
            .objects.filter(
                source_file=row.fields.get("source_file"),
                mood=mood,
                content__type=row.content.get("type"),
                content__message=row.content.get("message"),
            )
            .exists()
        )

    def withdraw_handoff(self, sender, message: Message, name: str, pulled: bool, **kwargs) -> int:
        """The apps refused a block of `message` (wakes/turn/handoff.py): the events memory-lane's
        own hook made of it from the binding's copy of the reply (its `handoff.from_message`
        carries any agent's block into any Mood there is) go too, so its record carries nothing the
        apps refused. Found as memory-lane makes them: filed `handoff`, the reply's id in
        `content.message`, the other Mood (by memory-lane's own `by_slug` of the name) where they
        landed or named. How many went."""
        other = host_model("mood").by_slug(str(name or "").lstrip("#").strip().lower())
        if other is None:
            return 0  # memory-lane found no such Mood either: it made nothing
        rows = host_model("message").objects.filter(
            source_file=HANDOFF_SOURCE_FILE, content__message=str(message.pk)
        )
        about_it = Q(mood=other) | Q(content__to_mood=other.slug) | Q(content__from_mood=other.slug)
        with writing():
            gone, _ = rows.filter(about_it).delete()
        if gone:
            log.info(
                "memory-lane's events of the refused handoff in %s to %s withdrawn", message.pk, other.slug
            )
        return gone

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
        self.connect_steering()
        self.connect_changes()
        signals.handoff_refused.connect(
            self.withdraw_handoff, dispatch_uid="motion_runner.record.host_handoff_refused"
        )
        self.connect_sign_ins()

    def connect_changes(self) -> None:
        """memory-lane's retract reaches the apps (its MessageChange rows; the beat's sweep for any
        written where no receiver ran), and the apps' reaches memory-lane's row (changes.py)."""
        signals.message_taken_back.connect(
            self.show_taken_back, dispatch_uid="motion_runner.record.host_taken_back"
        )
        model = change_model()
        if model is None:
            log.warning("the host has no MessageChange model: a post taken back there is not heard here")
            return
        post_save.connect(self.on_change_save, sender=model, dispatch_uid="motion_runner.record.host_change")

    def connect_steering(self) -> None:
        """memory-lane's settings rows become the room's steering, its AZ5 this project's scram
        (memory_lane/steering.py). A host with no settings model keeps the apps' own steering."""
        try:
            setting = host_model("setting")
        except LookupError:
            log.warning("the host has no settings model: the room's steering stays the apps' own")
            return
        post_save.connect(
            self.on_setting_save, sender=setting, dispatch_uid="motion_runner.record.host_setting"
        )
        signals.scram_changed.connect(self.show_scram, dispatch_uid="motion_runner.record.host_scram")

    def steering_source(self) -> MemoryLaneRecord | None:
        """memory-lane's own settings rows, when the host has them (memory_lane/steering.py)."""
        try:
            host_model("setting")
        except LookupError:
            return None
        return self
