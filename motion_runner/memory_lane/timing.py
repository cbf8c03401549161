"""memory-lane's timing knobs are the dials' twins under the binding (issue 32, item 3): one source.

memory-lane keeps, beside its steering keys (steering.py), when each agent looks in each Mood as
`Setting` rows of the same slots and order; this project keeps them as dials (wakes/models/dials.py)
that a Motion's granters set at /api/motions/<slug>/timing/. Under the binding memory-lane's rows
are read over the admin's dials and overrides (as the room's steering is) and the timing API
writes them, never a `DialOverride`, so its page and this project can never disagree.

Mapped, each meaning the same thing on both sides (memory-lane's `KNOBS` help and `clean()`):
- consider_after (whole seconds, 0–3600) ↔ quiet_seconds: quiet, nobody typing, before the new
  posts are considered. A fraction of a second is refused here: memory-lane keeps whole seconds.
- idle_after (seconds, 0–7 days; 0 never; doubled after each silent look) ↔ idle_looks (looks of the
  consider loop, `tick_seconds` each; 0 never; doubled alike): converted by the tick, a short
  idle_after never rounded to 0 (which would mean never).
- considers_per_hour (0–60, per agent and Mood) ↔ considerations_per_hour (per agent and Motion).
- consider_usd_per_day (global, 0–500 dollars: screens and considerations, not mentions) ↔ the
  daily budget (`Dials.daily_budget_usd`: the same, and watch wakes, which memory-lane has none of).
A value past memory-lane's bounds is refused, not clamped: it is what a person asked to spend.

Trust: every timing row changes what agents spend (the timing API asks a granter), so a row
written on memory-lane's side counts only when its `set_by` is a person here holding an SSH key.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Q

from .. import signals
from ..models import Agent, Motion
from ..signals import SteeringRefused
from . import reads
from .host import host_model, writing

# memory-lane's key of each dial, its bounds (its clean()) and its default (its KNOBS).
KEYS = {
    "quiet_seconds": "consider_after",
    "idle_looks": "idle_after",
    "considerations_per_hour": "considers_per_hour",
}
DIALS = {key: dial for dial, key in KEYS.items()}
BUDGET_KEY = "consider_usd_per_day"
BOUNDS = {"consider_after": (0, 3600), "idle_after": (0, 7 * 86400), "considers_per_hour": (0, 60)}
BUDGET_BOUNDS = (Decimal(0), Decimal(500))
DEFAULTS = {"consider_after": 10, "idle_after": 3000, "considers_per_hour": 6}
UNITS = {"consider_after": "seconds", "idle_after": "seconds of silence", "considers_per_hour": "an hour"}


def dial_value(key: str, value: Any, tick_seconds: float) -> Any:
    """memory-lane's stored value as the dial holds it; None for one its clean() never stores."""
    if key == BUDGET_KEY:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        amount = Decimal(str(value)).quantize(Decimal("0.01"))
        return amount if BUDGET_BOUNDS[0] <= amount <= BUDGET_BOUNDS[1] else None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    low, high = BOUNDS[key]
    if not low <= value <= high:
        return None
    if key == "idle_after":
        return 0 if value == 0 else max(1, round(value / tick_seconds))
    return float(value) if key == "consider_after" else value


def knob_value(dial: str, value: Any, tick_seconds: float) -> Any:
    """The dial's value as memory-lane's row holds it, or SteeringRefused when it cannot keep it."""
    if dial == BUDGET_KEY:
        amount = Decimal(str(value)).quantize(Decimal("0.01"))
        if not BUDGET_BOUNDS[0] <= amount <= BUDGET_BOUNDS[1]:
            raise SteeringRefused(f"memory-lane keeps {BUDGET_KEY} from $0 to $500")
        return float(amount)
    key = KEYS[dial]
    if key == "consider_after":
        if float(value) != int(float(value)):
            raise SteeringRefused("memory-lane keeps the debounce in whole seconds")
        stored = int(float(value))
    elif key == "idle_after":
        stored = round(int(value) * tick_seconds)
    else:
        stored = int(value)
    low, high = BOUNDS[key]
    if not low <= stored <= high:
        raise SteeringRefused(f"memory-lane keeps {key} from {low} to {high}")
    return stored


class HostTiming(signals.SteeringSource):
    """Mixed into `MemoryLaneRecord` beside `HostSteering` (whose moods_of, vouched, entity it uses)."""

    def timing(
        self, motion_id: str, agent_id: int | None, tick_seconds: float
    ) -> dict[str, tuple[Any, bool]]:
        """{dial: (value, set for this Mood)} for what memory-lane's rows keep in force for the pair
        (agent None: every agent of the Motion), by its slot order; a dial with no row is absent."""
        snapshot = reads.current()
        if snapshot is not None and snapshot.covers([motion_id], [agent_id]):  # read once this tick
            name = snapshot.names.get(agent_id) if agent_id else None
            mood = snapshot.moods.get(motion_id)
            rows, vouched = snapshot.rows_for(DIALS, [motion_id], [agent_id]), snapshot.vouched
        else:
            name = (
                Agent.objects.filter(pk=agent_id).values_list("name", flat=True).first() if agent_id else None
            )
            mood = self.moods_of([motion_id]).get(motion_id)
            rows = list(
                host_model("setting")
                .objects.filter(key__in=list(DIALS))
                .filter((Q(mood=mood) | Q(mood__isnull=True)) if mood is not None else Q(mood__isnull=True))
                .filter(Q(agent_id=name) | Q(agent__isnull=True))
                .order_by("-created_at")
            )
            vouched = self.vouched({row.set_by_id for row in rows})
        mood_pk = getattr(mood, "pk", None)
        slots = list(dict.fromkeys([(mood_pk, name), (mood_pk, None), (None, name), (None, None)]))
        found: dict[str, tuple[Any, bool]] = {}
        for slot in slots:
            for row in rows:
                dial = DIALS[row.key]
                if dial in found or (row.mood_id, row.agent_id) != slot or row.set_by_id not in vouched:
                    continue
                value = dial_value(row.key, row.value, tick_seconds)
                if value is not None:
                    found[dial] = (value, mood_pk is not None and row.mood_id == mood_pk)
        return found

    def timing_changed(self, row: Any) -> None:
        """A timing row memory-lane wrote (its page): said in the Mood's thread and looked at again
        now (`signals.host_steering_changed`), when it counts (a granter's, a value it keeps)."""
        value = dial_value(row.key, row.value, 1)
        if value is None:
            return
        refused = self.why_not(row.set_by_id)
        motions = [self.motion_for_mood(row.mood)] if row.mood_id else list(Motion.objects.all())
        agent = Agent.objects.filter(name=row.agent_id).first() if row.agent_id else None
        for motion in motions:
            said = None  # a row for every Mood at once is said in no thread
            if row.mood_id:
                said = signals.SteerRecord(
                    motion_id=motion.pk,
                    agent_id=agent.pk if agent else None,
                    setting=DIALS[row.key],
                    value=f"{row.value} {UNITS[row.key]}",
                    until=None,
                    by_name=row.set_by_id,
                    at=row.created_at,
                    ref=str(row.pk),
                    refused=refused,
                )
            elif refused:
                continue  # not counted, and a row for every Mood is said in no thread
            signals.host_steering_changed.send_robust(
                sender=Motion, motion=motion, agent=agent, setting=DIALS[row.key], record=said
            )

    def write_timing(self, motion: Any, dial: str, value: Any, tick_seconds: float, by_name: str) -> None:
        """One change from the timing API, as a row for the Mood and every agent (None: memory-lane's
        default)."""
        key = KEYS[dial]
        stored = DEFAULTS[key] if value is None else knob_value(dial, value, tick_seconds)
        with writing():
            host_model("setting").objects.create(
                mood=self.mood_for(motion),
                agent=None,
                key=key,
                value=stored,
                set_by=self.entity(by_name),
                note="from Motion Runner's timing",
            )

    def daily_budget(self) -> Decimal | None:
        """memory-lane's global consider_usd_per_day in force (its `global_value`), if a granter's."""
        snapshot = reads.current()
        if snapshot is not None:  # read once this tick: the global rows are in every snapshot
            rows = [
                r for r in snapshot.rows if r.key == BUDGET_KEY and r.mood_id is None and r.agent_id is None
            ]
            rows, vouched = rows[:50], snapshot.vouched
        else:
            rows = list(
                host_model("setting")
                .objects.filter(key=BUDGET_KEY, mood=None, agent=None)
                .order_by("-created_at")[:50]
            )
            vouched = self.vouched({row.set_by_id for row in rows})
        for row in rows:
            if row.set_by_id in vouched and (value := dial_value(BUDGET_KEY, row.value, 1)) is not None:
                return value
        return None

    def write_daily_budget(self, value: Decimal, by_name: str) -> None:
        with writing():
            host_model("setting").objects.create(
                mood=None,
                agent=None,
                key=BUDGET_KEY,
                value=knob_value(BUDGET_KEY, value, 1),
                set_by=self.entity(by_name),
                note="from Motion Runner's timing",
            )
