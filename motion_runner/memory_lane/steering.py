"""memory-lane's own settings rows are the room's steering here (issue 32, item 3): one source.

memory-lane keeps how each agent carries itself in each Mood as append-only `Setting` rows
(its `services/settings.py`: key, JSON value, Mood or none, agent or none, `set_by`, `note`,
`created_at`); the newest row of a slot is in force, the most specific slot winning whatever its
age: (Mood, agent) > (Mood, every agent) > (every Mood, agent) > (all). Under this binding those
rows are the only steering: wakes/decision/steering.py reads them (`candidates`) and writes its
menus' changes as new rows (`write`), so memory-lane's page and this project's menus can never
disagree. Its scram (AZ5, the global `scram` row) is this project's scram, both ways.

The keys read, and how (memory-lane's value → the menus' value):
listening `{mode, until}` → listening and its until; model, mention_effort, consider_effort,
discretion as they are; verbosity brief/normal/thorough → terse/normal/full; catch_up_tokens →
reads (tokens); rules; archived (the Mood's own, true/false → yes/no); ultracode (true/false → on/off).
Its timing knobs (consider_after, idle_after, considers_per_hour, the global consider_usd_per_day)
are the dials' twins, read and written by timing.py.

Trust (docs/security.md): a row that widens what an agent may spend or read (rules, model, effort,
reads, ultracode, a chatty discretion) counts only when its `set_by` is a person here who holds an SSH key
(who may grant full tools); else the next row of the slot order stands.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Q

from .. import signals
from ..models import Agent, Motion, Scram, SshKey
from ..signals import SteeringRefused, SteerRecord
from . import reads
from .host import host_model, is_writing, writing
from .timing import DIALS as TIMING_KEYS

log = logging.getLogger(__name__)

# memory-lane's key of each of the menus' settings.
KEYS = {
    "listening": "listening",
    "model": "model",
    "mention_effort": "mention_effort",
    "consider_effort": "consider_effort",
    "reads": "catch_up_tokens",
    "discretion": "discretion",
    "verbosity": "verbosity",
    "rules": "rules",
    "archived": "archived",
    "ultracode": "ultracode",
}
SETTINGS = {key: setting for setting, key in KEYS.items()}
VERBOSITY_IN = {"brief": "terse", "normal": "normal", "thorough": "full"}
VERBOSITY_OUT = {mine: theirs for theirs, mine in VERBOSITY_IN.items()}
# memory-lane's bounds on catch_up_tokens (its clean()).
READS_BOUNDS = (1000, 24000)
# memory-lane's defaults, written when the menus set a setting back to "the default".
DEFAULTS = {
    "listening": {"mode": "on", "until": None},
    "model": "",
    "mention_effort": "high",
    "consider_effort": "medium",
    "catch_up_tokens": 10_000,
    "discretion": "normal",
    "verbosity": "normal",
    "rules": "",
    "archived": False,
    "ultracode": False,
}
WIDENING_KEYS = ("rules", "model", "mention_effort", "consider_effort", "catch_up_tokens", "ultracode")
MOOD_KEYS = ("archived",)


def widens(row: Any) -> bool:
    return row.key in WIDENING_KEYS or (row.key == "discretion" and row.value == "chatty")


def record(
    motion_id: str, agent_id: int | None, row: Any, shown: tuple[str, datetime | None], refused: str = ""
) -> SteerRecord:
    return SteerRecord(
        motion_id=motion_id,
        agent_id=agent_id,
        setting=SETTINGS[row.key],
        value=shown[0],
        until=shown[1],
        by_name=row.set_by_id or "memory-lane",
        at=row.created_at,
        ref=str(row.pk),
        refused=refused,
    )


def parse_until(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def value_here(key: str, value: Any) -> tuple[str, datetime | None] | None:
    """memory-lane's value as the menus hold it, with its end; None for a value it could not
    have stored (read past, as its own resolve would never have been given it)."""
    if key == "listening":
        if isinstance(value, str):
            value = {"mode": value, "until": None}
        if not isinstance(value, dict) or value.get("mode") not in ("on", "mentions", "off"):
            return None
        return value["mode"], parse_until(value.get("until"))
    if key == "verbosity":
        return (VERBOSITY_IN[value], None) if value in VERBOSITY_IN else None
    if key == "archived":
        return ("yes" if value is True else "no"), None
    if key == "ultracode":  # its clean() stores only true or false
        return ({True: "on", False: "off"}[value], None) if isinstance(value, bool) else None
    if key == "catch_up_tokens":
        return (str(int(value)), None) if isinstance(value, int | float) else None
    return (str(value), None) if isinstance(value, str) else None


def value_there(setting: str, value: str, until: datetime | None) -> Any:
    """The menus' value as memory-lane's row holds it (blank: memory-lane's default)."""
    key = KEYS[setting]
    if until is not None and key != "listening":
        raise SteeringRefused("memory-lane keeps an end time only for listening")
    if not value:
        default = DEFAULTS[key]
        return dict(default) if isinstance(default, dict) else default
    if key == "listening":
        return {"mode": value, "until": until.isoformat() if until else None}
    if key == "verbosity":
        return VERBOSITY_OUT[value]
    if key == "archived":
        return value == "yes"
    if key == "ultracode":
        return value == "on"
    if key == "catch_up_tokens":
        low, high = READS_BOUNDS
        return min(max(int(value), low), high)
    return value


class HostSteering(signals.SteeringSource):
    """Mixed into `MemoryLaneRecord`: memory-lane's settings rows as the room's steering, its
    scram as this project's (connected by the binding's `connect` when the host has them)."""

    def setting_rows(self, moods: list[Any], names: list[str]):
        setting = host_model("setting")
        return (
            setting.objects.filter(key__in=list(SETTINGS))
            .filter(Q(mood__in=moods) | Q(mood__isnull=True))
            .filter(Q(agent_id__in=names) | Q(agent__isnull=True))
            .order_by("-created_at")
        )

    def candidates(
        self, pairs: list[tuple[str, int | None]]
    ) -> dict[tuple[str, int | None], list[SteerRecord]]:
        """At most five queries for any number of pairs (agents, Moods, aliases, rows, setters):
        every row that may be in force for each pair, memory-lane's slot order first, newest first
        within a slot."""
        motion_ids = sorted({motion_id for motion_id, _ in pairs})
        snapshot = reads.current()
        if snapshot is not None and snapshot.covers(motion_ids, [a for _, a in pairs]):
            names, moods, vouched = snapshot.names, snapshot.moods, snapshot.vouched
            rows = snapshot.rows_for(SETTINGS, motion_ids, [a for _, a in pairs])
        else:
            names = dict(Agent.objects.filter(pk__in={a for _, a in pairs if a}).values_list("pk", "name"))
            moods = self.moods_of(motion_ids)
            rows = list(self.setting_rows(list(moods.values()), list(names.values())))
            vouched = self.vouched({row.set_by_id for row in rows if widens(row)})
        found: dict[tuple[str, int | None], list[SteerRecord]] = {}
        for motion_id, agent_id in pairs:
            mood_pk = getattr(moods.get(motion_id), "pk", None)
            name = names.get(agent_id)
            slots = dict.fromkeys([(mood_pk, name), (mood_pk, None), (None, name), (None, None)])
            records = []
            for slot in slots:
                for row in rows:
                    if (row.mood_id, row.agent_id) != slot:
                        continue
                    if row.key in MOOD_KEYS and (row.mood_id is None or row.agent_id is not None):
                        continue  # a Mood's own flag: set for one Mood, no agent
                    if widens(row) and row.set_by_id not in vouched:
                        continue  # widening, by nobody here who may grant full tools
                    shown = value_here(row.key, row.value)
                    if shown is not None:
                        records.append(record(motion_id, agent_id, row, shown))
            found[(motion_id, agent_id)] = records
        return found

    def moods_of(self, motion_ids: list[str]) -> dict[str, Any]:
        """The Mood each Motion is (by its slug now, else an alias: `Mood.by_slug`'s rule), in two
        queries for any number; a Motion with no Mood yet has none (made only when written)."""
        mood = host_model("mood")
        found = {m.slug: m for m in mood.objects.filter(slug__in=motion_ids)}
        missing = [motion_id for motion_id in motion_ids if motion_id not in found]
        if missing:
            for alias in host_model("mood_alias").objects.filter(slug__in=missing).select_related("mood"):
                found[alias.slug] = alias.mood
        return found

    def vouched(self, names: set[str | None]) -> set[str]:
        """Those of `names` who may widen: a person here holding an SSH key (a key's sign-in)."""
        names = {name for name in names if name}
        if not names:
            return set()
        users = get_user_model().objects.filter(username__in=names)
        return set(
            SshKey.objects.filter(user__in=users).values_list(
                f"user__{get_user_model().USERNAME_FIELD}", flat=True
            )
        )

    def why_not(self, name: str | None) -> str:
        """Why a widening row by `name` does not count here ('' when it does): memory-lane lets only
        key-signed devices change settings, and its keys are brought here by `enroll_signers`."""
        if name and name in self.vouched({name}):
            return ""
        enroll = (
            "an admin here runs manage.py enroll_signers to bring memory-lane's MOOD_ALLOWED_SIGNERS keys"
        )
        if not name:
            return f"the row names nobody who set it, and only a person with an SSH key here may widen ({enroll})"
        if not get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: name}).exists():
            return f"no one here is named {name}, and only a person with an SSH key here may widen ({enroll})"
        return f"{name} holds no SSH key here, and only a person with one may widen ({enroll})"

    def write(
        self, motion: Motion, agent: Agent | None, setting: str, value: str, until, by_name: str
    ) -> SteerRecord:
        key = KEYS[setting]
        stored = value_there(setting, value, until)
        with writing():
            row = host_model("setting").objects.create(
                mood=self.mood_for(motion),
                agent=self.entity(agent.name, "ai") if agent else None,
                key=key,
                value=stored,
                set_by=self.entity(by_name),
                note="from Motion Runner's menus",
            )
        return record(motion.pk, agent.pk if agent else None, row, value_here(key, stored) or (value, until))

    def entity(self, name: str, kind: str = "human") -> Any:
        """memory-lane's `set_by` is a ThinkingEntity: the person's, made as a person's post makes
        it; None when the name belongs to a participant of another kind (the note names them)."""
        name = (name or "")[:50]
        entities = host_model("thinking_entity")
        found = entities.objects.filter(name=name).first()
        if found is None and not host_model("participant").objects.filter(name=name).exists():
            found = self.participant(name, kind, {})
        return found

    def history(self, motion: Motion, limit: int) -> list[SteerRecord]:
        mood = self.mood_by_slug(motion.pk)
        if mood is None:
            return []
        agents = dict(motion.agents.values_list("name", "pk"))
        rows = host_model("setting").objects.filter(mood=mood, key__in=list(SETTINGS)).order_by("-created_at")
        records = []
        for row in rows[:limit]:
            shown = value_here(row.key, row.value)
            if shown is not None:
                records.append(record(motion.pk, agents.get(row.agent_id), row, shown))
        return records

    # --- the scram, both ways ---------------------------------------------------------------------

    def show_scram(self, sender, scram: Scram, holds: bool, by: str, **kwargs) -> None:
        """`signals.scram_changed`: memory-lane's page shows the scram in force from its newest
        global `scram` row (its `settings.scram()`); written unless it already says so."""
        setting = host_model("setting")
        newest = setting.objects.filter(key="scram", mood=None, agent=None).order_by("-created_at").first()
        if newest is not None and bool(newest.value) == holds:
            return  # raised or lifted there first: it says so already
        with writing():
            setting.objects.create(
                key="scram",
                value=holds,
                mood=None,
                agent=None,
                set_by=self.entity(by),
                note=(scram.reason if holds else f"lifted by {by}")[:200],
            )

    def az5_refused(self, row: Any) -> str:
        """Why memory-lane's AZ5 row is not obeyed here ('' when it is): memory-lane writes it only
        for a name in its `MOOD_ADMINS` signing with their key (`views_admin.api_admin`), a person;
        a row by anyone else (an AI entity, nobody, a name not an admin) was not written by it."""
        name = row.set_by_id
        if not name:
            return "it names nobody who wrote it"
        if name not in getattr(settings, "MOOD_ADMINS", ()):
            return f"{name} is not one of memory-lane's admins (MOOD_ADMINS)"
        entity = host_model("thinking_entity").objects.filter(name=name).first()
        if entity is None or not getattr(entity, "is_biological_human", False):
            return f"{name} is not a person there"
        return ""

    def scram_row(self, row: Any) -> None:
        """memory-lane's AZ5 or its lift: obeyed only from one of its admins, and said with who
        wrote it; a row by anyone else is said in every thread as not obeyed, and why."""
        holds = bool(row.value)
        refused = self.az5_refused(row)
        if refused:
            log.warning("memory-lane's scram row %s is not obeyed: %s", row.pk, refused)
        signals.host_scram_pressed.send(
            sender=Scram,
            holds=holds,
            by=f"{row.set_by_id} (AZ5 on memory-lane's page)" if not refused else (row.set_by_id or ""),
            reason=row.note or "",
            refused=refused,
            ref=str(row.pk),
        )

    def on_setting_save(self, sender, instance, created: bool = False, raw: bool = False, **kwargs) -> None:
        """A row memory-lane wrote (its settings page, its admin's AZ5): the scram is raised or
        lifted here; a steering change is said to wakes, which looks again at once."""
        if raw or not created:
            return
        reads.forget()  # what was read once no longer stands
        if is_writing():
            return
        if instance.key == "scram" and instance.mood_id is None and instance.agent_id is None:
            self.scram_row(instance)
            return
        if instance.key in TIMING_KEYS:
            self.timing_changed(instance)
            return
        if instance.key not in SETTINGS:
            return
        motions = [self.motion_for_mood(instance.mood)] if instance.mood_id else list(Motion.objects.all())
        agent = Agent.objects.filter(name=instance.agent_id).first() if instance.agent_id else None
        shown = value_here(instance.key, instance.value)
        refused = self.why_not(instance.set_by_id) if widens(instance) else ""
        for motion in motions:
            said = None  # a row for every Mood at once is said in no thread
            if shown is not None and instance.mood_id:
                said = record(motion.pk, agent.pk if agent else None, instance, shown, refused)
            for _receiver, error in signals.host_steering_changed.send_robust(
                sender=Motion, motion=motion, agent=agent, setting=SETTINGS[instance.key], record=said
            ):
                if isinstance(error, Exception):
                    log.error(
                        "memory-lane's %s change was not taken up in %s: %r", instance.key, motion.pk, error
                    )
