"""Who may do what in a Motion: the one seam every endpoint and page asks.

The answer comes from the class named by the setting MOTION_RUNNER_ACCESS (a dotted path), so
a host project (memory-lane) can put its own rules in place of these without touching a view.
Every method takes the request's user as `actor` (a Django user, the anonymous user, or an
`AgentPrincipal` for a request made with an agent key) and the Motion; docs/security.md
describes the default rules and the arguments.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404
from django.utils.module_loading import import_string

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..models import Agent, Motion, Visibility
from ..record import binding


def actor_agent(actor: Any) -> Agent | None:
    """The agent an agent key speaks for, or None for a person or nobody."""
    return getattr(actor, "agent", None) if getattr(actor, "is_agent", False) else None


def is_person(actor: Any) -> bool:
    return bool(actor is not None and actor.is_authenticated and actor_agent(actor) is None)


class MotionAccess:
    """The default rules.

    - Reading: a `public` Motion is read by anyone; a `signed_in` one (the default) by signed-in
      people and its own agents; a `members` one by its people and its own agents.
    - Posting, typing and answering a request: whoever may read it, if a person; posting also
      by its own agents (an agent never types, nor answers a request).
    - Watches: its own agents, and people holding the watch permissions (`watchlist.add_watch`,
      `change_watch`, `delete_watch`) who may read the Motion.
    """

    def readable(self, actor: Any, motions: QuerySet[Motion]) -> QuerySet[Motion]:
        """`motions` narrowed to those `actor` may read (lists, and the detail lookups)."""
        if agent := actor_agent(actor):
            return motions.filter(Q(visibility=Visibility.PUBLIC) | Q(agents=agent)).distinct()
        if is_person(actor):
            return motions.filter(
                Q(visibility__in=[Visibility.PUBLIC, Visibility.SIGNED_IN]) | Q(people=actor)
            ).distinct()
        return motions.filter(visibility=Visibility.PUBLIC)

    def can_read(self, actor: Any, motion: Motion) -> bool:
        if motion.visibility == Visibility.PUBLIC:
            return True
        if agent := actor_agent(actor):
            return motion.agents.filter(pk=agent.pk).exists()
        if not is_person(actor):
            return False
        return motion.visibility == Visibility.SIGNED_IN or motion.people.filter(pk=actor.pk).exists()

    def readers_may_read(self, motion: Motion, target: Motion) -> bool:
        """Every reader of `motion` may read `target`: what a wake of `motion` quotes from
        `target` is shown to all of them (the wake preview), not only to who linked it. Its
        agents are readers like its people (a `signed_in` or `members` Motion's own agents read
        it): an agent woken there must not be shown what another of its agents may not read."""
        if target.visibility == Visibility.PUBLIC:
            return True
        if motion.visibility == Visibility.PUBLIC:
            return False  # anyone reads it, signed in or not
        if motion.agents.exclude(pk__in=target.agents.values("pk")).exists():
            return False  # one of its agents may not read `target`
        if target.visibility == Visibility.SIGNED_IN:
            return True
        if motion.visibility != Visibility.MEMBERS:
            return False
        return not motion.people.exclude(pk__in=target.people.values("pk")).exists()

    def readers_may_read_among(self, motion: Motion, targets: QuerySet[Motion]) -> QuerySet[Motion]:
        """`targets` narrowed to those `readers_may_read(motion, target)` allows, as one query (the
        record server's search scope, motion_runner/recall). A policy that answers
        `readers_may_read` its own way is asked it Motion by Motion."""
        if type(self).readers_may_read is not MotionAccess.readers_may_read:
            allowed = [t.slug for t in targets if self.readers_may_read(motion, t)]
            return targets.filter(slug__in=allowed)
        public = Q(visibility=Visibility.PUBLIC)
        if motion.visibility == Visibility.PUBLIC:
            return targets.filter(public)
        held = holding_all(Motion.agents.through, "agent_id", motion)
        if motion.visibility != Visibility.MEMBERS:
            return targets.filter(public | (Q(visibility=Visibility.SIGNED_IN) & held))
        people = holding_all(Motion.people.through, "user_id", motion)
        return targets.filter(public | (Q(visibility=Visibility.SIGNED_IN) & held) | (people & held))

    def is_member_agent(self, actor: Any, motion: Motion) -> bool:
        agent = actor_agent(actor)
        return agent is not None and motion.agents.filter(pk=agent.pk).exists()

    def can_post(self, actor: Any, motion: Motion) -> bool:
        if actor_agent(actor):
            return self.is_member_agent(actor, motion)
        return is_person(actor) and self.can_read(actor, motion)

    def can_type(self, actor: Any, motion: Motion) -> bool:
        return is_person(actor) and self.can_read(actor, motion)

    def can_answer_request(self, actor: Any, motion: Motion) -> bool:
        return is_person(actor) and self.can_read(actor, motion)

    def can_write_watch(self, actor: Any, motion: Motion, action: str) -> bool:
        """`action` is one of add, change, delete (pause and resume are changes)."""
        if actor_agent(actor):
            return self.is_member_agent(actor, motion)
        return (
            is_person(actor) and actor.has_perm(f"watchlist.{action}_watch") and self.can_read(actor, motion)
        )


def holding_all(through: type, member: str, motion: Motion) -> Q:
    """The Motions whose memberships (`through`, `member`: the people's or agents' table and
    column) hold every one of `motion`'s: none of `motion`'s is missing from theirs (a subquery,
    so the narrowing stays one query)."""
    theirs = through.objects.filter(motion_id=OuterRef(OuterRef("pk"))).values(member)
    missing = through.objects.filter(motion_id=motion.pk).exclude(**{f"{member}__in": theirs})
    return ~Q(Exists(missing))


@cache
def _policy(path: str) -> MotionAccess:
    return import_string(path)()


def access() -> MotionAccess:
    """The configured policy (settings.MOTION_RUNNER_ACCESS), made once per path."""
    return _policy(settings.MOTION_RUNNER_ACCESS)


def readable_motion(actor: Any, slug: str) -> Motion:
    """The Motion, or a 404 alike for one that does not exist and one the actor may not read."""
    motion = binding().motion_for_slug(slug)  # the record's other names too (a Mood's, its aliases)
    if motion is None or not access().can_read(actor, motion):
        raise Http404("No such Motion.")
    return motion
