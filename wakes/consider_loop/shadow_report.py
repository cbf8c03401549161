"""`manage.py shadow_report`: shadow mode's decisions (`ShadowDecision`) beside the turns memory-lane's
poller actually ran in the same Moods (docs/switch-over.md).

The poller's turns are read from memory-lane's own tables, under the memory_lane binding: each run
it streams ends in one row memory-lane's `views_runner.finish_turn` writes, a Message sent by
`system` whose content is `{"type": "turn-result", "agent": …}`, in the Mood, under the forked
session's id; the turn's first row of that session is when it woke. A turn-result this project
wrote itself (its id is in the apps' index) is not the poller's. Standalone there is no poller:
the decisions alone.

A shadow decision not to wake (held by a cap, dismissed by the screen) is listed, never counted
as a wake: a poller turn beside it is "poller only". Two wakes agree when the same agent is woken in the same Mood by both within `WINDOW` of each
other (the poller waits 10 minutes for a terminal mention; it decides on its own pace).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.apps import apps
from django.db.models import Min

from motion_runner.conf import app_settings as runner_settings
from motion_runner.models import Message, Motion

from ..models import ShadowDecision

WINDOW = timedelta(minutes=15)


@dataclass
class Wake:
    at: datetime
    agent: str
    by: str  # "shadow" or "poller"
    why: str = ""
    matched: bool = False

    verdict: str = "wake"  # a shadow decision's: "wake", "held" or "screened"

    def line(self) -> str:
        if self.by == "shadow" and self.verdict != "wake":
            return f"{self.at:%Y-%m-%d %H:%M:%S} shadow: would not wake @{self.agent} ({self.why})"
        if self.by == "shadow":
            return f"{self.at:%Y-%m-%d %H:%M:%S} shadow: would wake @{self.agent} ({self.why})"
        return f"{self.at:%Y-%m-%d %H:%M:%S} poller: woke @{self.agent} at {self.at:%H:%M:%S}" + (
            f" ({self.why})" if self.why else ""
        )


@dataclass
class MoodReport:
    slug: str
    wakes: list[Wake]

    @property
    def agreed(self) -> int:
        return sum(1 for w in self.wakes if w.by == "shadow" and w.matched)

    def only(self, by: str) -> list[Wake]:
        """The wakes only one side made (a shadow decision not to wake is no wake)."""
        return [w for w in self.wakes if w.by == by and w.verdict == "wake" and not w.matched]


def bound() -> bool:
    return runner_settings.MOTION_RUNNER_RECORD == "memory_lane"


def host(role: str):
    return apps.get_model(runner_settings.MOTION_RUNNER_RECORD_MODELS[role])


def shadow_wakes(since: datetime | None, motion: str | None) -> dict[str, list[Wake]]:
    rows = ShadowDecision.objects.select_related("motion", "agent").order_by("at", "pk")
    if since is not None:
        rows = rows.filter(at__gte=since)
    if motion:
        rows = rows.filter(motion__slug=motion)
    found: dict[str, list[Wake]] = {}
    for d in rows:
        found.setdefault(d.motion.slug, []).append(
            Wake(d.at, d.agent.name, "shadow", d.reason, verdict=d.verdict)
        )
    return found


def poller_wakes(since: datetime | None, motion: str | None) -> dict[str, list[Wake]]:
    """The poller's turns by Motion slug, from memory-lane's turn-result rows."""
    mood_model, message_model = host("mood"), host("message")
    results = message_model.objects.filter(
        sender_id="system", content__type="turn-result", mood__isnull=False
    )
    if since is not None:
        results = results.filter(created_at__gte=since)
    if motion:
        mood = mood_model.by_slug(motion) if hasattr(mood_model, "by_slug") else None
        results = results.filter(mood=mood) if mood is not None else results.none()
    results = list(results.select_related("mood").order_by("created_at"))
    ours = {
        str(pk)
        for pk in Message.objects.filter(pk__in=[str(r.pk) for r in results]).values_list("pk", flat=True)
    }
    sessions = [r.session_id for r in results if r.session_id]
    starts = dict(
        message_model.objects.filter(session_id__in=sessions)
        .values_list("session_id")
        .annotate(first=Min("created_at"))
    )
    slugs = motion_slugs({r.mood for r in results})
    found: dict[str, list[Wake]] = {}
    for r in results:
        if str(r.pk) in ours:
            continue  # this project's own turn, not the poller's
        content = r.content if isinstance(r.content, dict) else {}
        at = starts.get(r.session_id) or r.created_at
        cost = content.get("cost_usd")
        why = f"${cost:.2f}" if isinstance(cost, int | float) else ""
        found.setdefault(slugs[r.mood.pk], []).append(Wake(at, str(content.get("agent", "?")), "poller", why))
    return found


def motion_slugs(moods) -> dict[int, str]:
    """Each Mood's Motion slug: the Motion going by one of its names (its slug or an alias), else
    the Mood's own slug (a Mood this project has not seen yet)."""
    alias_model = host("mood_alias")
    names: dict[str, int] = {m.slug: m.pk for m in moods}
    for slug, mood_id in alias_model.objects.filter(mood__in=moods).values_list("slug", "mood_id"):
        names.setdefault(slug, mood_id)
    chosen = {m.pk: m.slug for m in moods}
    for slug in Motion.objects.filter(slug__in=list(names)).values_list("slug", flat=True):
        chosen[names[slug]] = slug
    return chosen


def match(wakes: list[Wake]) -> None:
    """Each shadow wake agrees with the nearest unmatched poller wake of the same agent in WINDOW."""
    pollers = [w for w in wakes if w.by == "poller"]
    for s in (w for w in wakes if w.by == "shadow" and w.verdict == "wake"):
        near = [p for p in pollers if not p.matched and p.agent == s.agent and abs(p.at - s.at) <= WINDOW]
        if near:
            best = min(near, key=lambda p: abs(p.at - s.at))
            best.matched = s.matched = True


def build(since: datetime | None = None, motion: str | None = None) -> tuple[list[MoodReport], bool]:
    """(a report per Mood, whether the poller's turns were read)."""
    shadow = shadow_wakes(since, motion)
    poller = poller_wakes(since, motion) if bound() else {}
    reports = []
    for slug in sorted(set(shadow) | set(poller)):
        wakes = sorted(shadow.get(slug, []) + poller.get(slug, []), key=lambda w: (w.at, w.by))
        match(wakes)
        reports.append(MoodReport(slug, wakes))
    return reports, bound()


def render(reports: list[MoodReport], with_poller: bool) -> list[str]:
    lines: list[str] = []
    if not with_poller:
        lines.append("Standalone (no memory-lane binding): no poller to compare with; the decisions alone.")
    totals = {"agreed": 0, "shadow": 0, "poller": 0}
    for report in reports:
        lines.append(f"== {report.slug}")
        lines += [f"  {w.line()}" for w in report.wakes]
        if with_poller:
            shadow_only, poller_only = report.only("shadow"), report.only("poller")
            lines.append(
                f"  agreed {report.agreed} · shadow only {len(shadow_only)} · poller only {len(poller_only)}"
            )
            totals["agreed"] += report.agreed
            totals["shadow"] += len(shadow_only)
            totals["poller"] += len(poller_only)
        else:
            lines.append(f"  {len(report.wakes)} decision(s)")
    if with_poller:
        lines.append(
            f"Summary: {len(reports)} Mood(s) · agreed {totals['agreed']} · shadow only {totals['shadow']}"
            f" (would have woken, the poller did not) · poller only {totals['poller']}"
            " (the poller woke, this project would not have)"
        )
    elif not reports:
        lines.append("No shadow decisions yet.")
    return lines
