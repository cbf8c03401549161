"""The binding's reads once a tick (issue 41, item 3).

Under the binding every `wakes.models.in_force.resolve()` asked memory-lane's tables three times for
one pair (the Mood, the agent's name and the settings rows in `timing`, the budget rows in
`daily_budget`, and all of them again in `candidates` for the room's `reads`): 8 statements a
pair where the apps' own record runs 2. `HostReads.reads_once(pairs)` reads the Moods, the agents'
names, every settings row any of the pairs may read (the steering keys, the timing knobs, the
global budget) and who of their setters may widen, once, in at most five statements; inside it,
`candidates`, `timing` and `daily_budget` answer the pairs it covers from that, with no statement.
A pair it does not cover is read as before. Settings rows written meanwhile (the menus, memory-lane's
page) end it: the next read asks the tables again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from ..models import Agent
from .host import host_model


@dataclass
class Snapshot:
    motion_ids: set[str]
    names: dict[int, str]  # agent pk → name
    moods: dict[str, Any]  # Motion id → Mood (a Motion with no Mood yet: absent)
    rows: list[Any]  # newest first
    vouched: set[str]

    def covers(self, motion_ids: Iterable[str], agent_ids: Iterable[int | None]) -> bool:
        return set(motion_ids) <= self.motion_ids and {a for a in agent_ids if a} <= set(self.names)

    def rows_for(self, keys: Iterable[str], motion_ids: Iterable[str], agent_ids: Iterable[int | None]):
        keys = set(keys)
        moods = {self.moods[m].pk for m in motion_ids if m in self.moods}
        names = {self.names[a] for a in agent_ids if a in self.names}
        return [
            row
            for row in self.rows
            if row.key in keys
            and (row.mood_id is None or row.mood_id in moods)
            and (row.agent_id is None or row.agent_id in names)
        ]


_current: ContextVar[Snapshot | None] = ContextVar("memory_lane_reads", default=None)


def current() -> Snapshot | None:
    return _current.get()


def forget() -> None:
    """A settings row was written: what was read once no longer stands."""
    _current.set(None)


class HostReads:
    """Mixed into `MemoryLaneRecord` with `HostSteering` and `HostTiming` (moods_of, vouched)."""

    read_keys: tuple[str, ...] = ()  # every key the steering and timing read (set by the binding)

    @contextmanager
    def reads_once(self, pairs: list[tuple[str, int | None]]) -> Iterator[None]:
        if _current.get() is not None or not pairs:
            yield  # inside one already (or nothing to read): it stands
            return
        motion_ids = {motion_id for motion_id, _ in pairs}
        names = dict(Agent.objects.filter(pk__in={a for _, a in pairs if a}).values_list("pk", "name"))
        moods = self.moods_of(sorted(motion_ids))
        rows = list(
            host_model("setting")
            .objects.filter(key__in=list(self.read_keys))
            .filter(Q(mood__in=list(moods.values())) | Q(mood__isnull=True))
            .filter(Q(agent_id__in=list(names.values())) | Q(agent__isnull=True))
            .order_by("-created_at")
        )
        vouched = self.vouched({row.set_by_id for row in rows})
        token = _current.set(Snapshot(motion_ids, names, moods, rows, vouched))
        try:
            yield
        finally:
            _current.reset(token)
