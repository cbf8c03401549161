"""Listening by scope, as memory-lane's `services/settings.py` resolves a knob: (Motion, agent) >
(Motion, every agent) > (every Motion, agent) > everyone everywhere; each with its "until".

"hush @magent everywhere until 18:00" is one row with no Motion; "hush every agent here" one with
no agent. In each scope the newest row speaks; one whose "until" passed, or a blank one (back to
the default), leaves it to the wider scope. Only listening is scoped: the other settings are a
pair's or a Motion's (wakes/decision/steering.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db.models import Q

from ..models import Steer

# The thread's menus name them so (api_steer.py); the order is precedence, narrowest first.
HERE, MOTION, AGENT, ALL = "here", "motion", "agent", "all"
SCOPES = (HERE, MOTION, AGENT, ALL)
SCOPE_WORDS = {
    HERE: "",
    MOTION: "every agent here",
    AGENT: "everywhere",
    ALL: "every agent everywhere",
}
# Scopes past one Motion reach Motions the setter may not read: only people who may grant set them.
WIDE = (AGENT, ALL)


def scope_of(row: Steer) -> str:
    if row.motion_id is not None:
        return HERE if row.agent_id is not None else MOTION
    return AGENT if row.agent_id is not None else ALL


def in_force(rows: Iterable[Steer], now: datetime) -> Steer | None:
    """Of one pair's listening rows (any order), the row that decides, or None: the default."""
    newest: dict[str, Steer] = {}
    for row in sorted(rows, key=lambda r: (r.at, r.pk), reverse=True):
        newest.setdefault(scope_of(row), row)
    for scope in SCOPES:
        row = newest.get(scope)
        if row is None or (row.until is not None and row.until <= now) or not row.value:
            continue
        return row
    return None


def whose(row: Steer) -> str:
    """How describe() names what a listening row is about."""
    scope = scope_of(row)
    if scope == HERE:
        return f"@{row.agent.name}'s"
    if scope == MOTION:
        return "every agent's"
    if scope == AGENT:
        return f"@{row.agent.name}'s (everywhere)"
    return "every agent's (everywhere)"


def listening_by_pair(pairs: list[tuple[str, int]], now: datetime) -> dict[tuple[str, int], str]:
    """{(motion, agent): "mentions"/"off"} for the pairs whose listening is not on, every scope
    counted, in one query (the Motion list's chips)."""
    if not pairs:
        return {}
    motion_ids = {motion for motion, _ in pairs}
    agent_ids = {agent for _, agent in pairs}
    rows = list(
        Steer.objects.filter(setting=Steer.Setting.LISTENING)
        .filter(Q(motion_id__in=motion_ids) | Q(motion__isnull=True))
        .filter(Q(agent_id__in=agent_ids) | Q(agent__isnull=True))
    )
    found = {}
    for motion, agent in pairs:
        row = in_force(
            [r for r in rows if r.motion_id in (motion, None) and r.agent_id in (agent, None)], now
        )
        if row is not None and row.value in ("mentions", "off"):
            found[(motion, agent)] = row.value
    return found
