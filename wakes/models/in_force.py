"""The dials in force for one (Motion, agent): the global row (dials.py), its overrides
(overrides.py) global → Motion → agent → pair, the room's `reads` from the thread's menu, and
under a steering source that keeps timing (memory-lane's rows) its timing and budget."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from motion_runner import signals

from . import clock
from .dials import Dials
from .overrides import OVERRIDABLE, DialOverride, overrides_for
from .steer import Steer


@dataclass
class Resolved:
    """The dials in force for one (Motion, agent)."""

    dials: Dials
    quiet_seconds: float
    idle_looks: int
    considerations_per_hour: int
    consideration_cap_usd: Decimal
    consider_effort: str
    mention_effort: str
    screen_enabled: bool
    reads: int
    mention_wakes_per_hour: int
    agent_chain_turns: int
    # (scope, limit) pairs: "all", "motion", "agent", "pair"
    daily_caps: list[tuple[str, Decimal]]

    @property
    def idle_seconds(self) -> float:
        return self.idle_looks * self.dials.tick_seconds

    @property
    def daily_budget_usd(self) -> Decimal:
        """The global daily budget in force (the "all" cap, always first)."""
        return self.daily_caps[0][1]


def resolve(
    motion_id: str,
    agent_id: int,
    dials: Dials | None = None,
    overrides: Iterable[DialOverride] | None = None,
    *,
    steered: bool = True,
) -> Resolved:
    """`overrides`: a superset of the pair's, read already (overrides_for); else they are asked.
    Then the room's `reads` from the thread (wakes/decision/steering.py's order: dials → overrides → the
    thread); `steered=False` skips that query where `reads` is not used (the loop's schedule). Under
    a steering source that keeps timing (memory-lane's rows), its timing and budget over the dials."""
    dials = dials or Dials.load()
    if overrides is None:
        overrides = overrides_for(motion_id, [agent_id])
    timing, budget = None, None
    if (source := signals.steering_source()) is not None:  # memory-lane's timing rows, under its binding
        timing, budget = source.timing(motion_id, agent_id, dials.tick_seconds), source.daily_budget()
    reads = room_reads(motion_id, agent_id) if steered else None
    return in_force(motion_id, agent_id, dials, overrides, timing=timing, host_budget=budget, reads=reads)


def in_force(
    motion_id: str,
    agent_id: int,
    dials: Dials,
    overrides: Iterable[DialOverride],
    *,
    timing: Mapping[str, tuple[Any, bool]] | None = None,
    host_budget: Decimal | None = None,
    reads: int | None = None,
) -> Resolved:
    """`resolve` over rows read already (no database): the dials, the pair's overrides (global →
    Motion → agent → pair), the host's `timing` rows and global budget (a steering source's:
    `source.timing`, `source.daily_budget`), the room's `reads` (room_reads)."""
    values = {name: getattr(dials, name) for name in OVERRIDABLE}
    caps: list[tuple[str, Decimal]] = [("all", dials.daily_budget_usd)]
    rows = [
        row
        for row in overrides
        if (row.motion_id, row.agent_id) in ((motion_id, None), (None, agent_id), (motion_id, agent_id))
    ]

    def rank(row: DialOverride) -> int:
        return 2 if row.motion_id and row.agent_id else (1 if row.agent_id else 0)

    for row in sorted(rows, key=rank):
        for name in OVERRIDABLE:
            value = getattr(row, name)
            if value is not None and value != "":
                values[name] = value
        if row.daily_budget_usd is not None:
            caps.append((("motion", "agent", "pair")[rank(row)], row.daily_budget_usd))
    for name, (value, _own) in (timing or {}).items():
        values[name] = value
    if host_budget is not None:
        caps[0] = ("all", host_budget)
    if reads is not None:
        values["reads"] = reads
    return Resolved(dials=dials, daily_caps=caps, **values)


def reads_once(pairs: list[tuple[str, int | None]]) -> AbstractContextManager:
    """Within it, resolve() for these pairs reads the steering source's rows (memory-lane's Moods,
    agents and settings rows, under its binding) once for all of them: the loop's tick."""
    source = signals.steering_source()
    return source.reads_once(pairs) if source is not None else nullcontext()


def global_daily_budget(dials: Dials) -> Decimal:
    """Dollars a day every Motion's considerations may spend: the dial, or under memory-lane's
    binding its consider_usd_per_day row (motion_runner/memory_lane/timing.py) when one counts."""
    source = signals.steering_source()
    kept = source.daily_budget() if source is not None else None
    return dials.daily_budget_usd if kept is None else kept


def room_reads(motion_id: str, agent_id: int) -> int | None:
    """The `reads` the room set in the thread's menu: its newest row while its "until" lasts;
    None when none is in force (blank is "the default", and a word from before the menu offered
    token budgets means nothing here)."""
    if (
        source := signals.steering_source()
    ) is not None:  # memory-lane's rows, under its binding (decision/steering.py)
        records = source.candidates([(motion_id, agent_id)])[(motion_id, agent_id)]
        row = next(({"value": r.value, "until": r.until} for r in records if r.setting == "reads"), None)
    else:
        row = (
            Steer.objects.filter(motion_id=motion_id, agent_id=agent_id, setting=Steer.Setting.READS)
            .order_by("-at", "-pk")
            .values("value", "until")
            .first()
        )
    if row is None or (row["until"] is not None and row["until"] <= clock.now()):
        return None
    return int(row["value"]) if row["value"].isdigit() else None
