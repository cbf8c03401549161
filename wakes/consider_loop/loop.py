"""The consider loop: every tick, one look at the pairs that are due; each due pair is either
rescheduled (people still typing, quiet not long enough, resting) or claimed for exactly one
consideration, which a worker then runs (budget → screen → wake).

Why `due_at`: a (Motion, agent) pair only ever needs a look at one known moment (its last post +
the quiet, its long quiet's end, the recheck of an in-flight wake, a budget retry). Keeping that
moment in one indexed column makes the look `WHERE due_at <= now`: its cost follows the pairs
that are due, never the number of Motions.

Why `version`: every write to a state row bumps it, and a claim is `UPDATE … WHERE version = v`
with its row count checked. Two ticks, or two workers, that saw the same state: one claims it,
the other's UPDATE matches nothing. A post that lands between the look and the claim also
bumps it, so a claim never covers posts it did not see.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F, Max, Q

from motion_runner import signals
from motion_runner.conf import app_settings as runner_settings  # the runner's settings (conf.py)
from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.lib.tasks import send_when_broker_answers
from motion_runner.models import Agent, Kind, Message, Motion, Source, Turn, TurnStatus

from ..decision.steering import looks_unprompted, scram_holds, unprompted_again_at
from ..models import Consideration, Dials, ListenState, MentionWake, TypingPing, clock
from ..models.in_force import Resolved, reads_once, resolve
from ..models.listening import WakeKind
from ..turn.wake import human_duration
from .recovery import CONSIDER, recover_considerations

log = logging.getLogger(__name__)


# What counts as a post someone might answer: words and watch lines, not tool calls, turn ends,
# dots or the runner's own lines.
def is_person(message: Message) -> bool:
    return (
        message.agent_id is None
        and message.kind == Kind.TEXT
        and message.source
        not in (
            Source.WATCH,
            Source.SYSTEM,
            Source.RUNNER,
        )
    )


def busy_span() -> timedelta:
    """How long a claimed wake may be in flight before the loop re-checks it itself."""
    return timedelta(seconds=runner_settings.RUNNER_TURN_TIMEOUT_SECONDS + 300)


def schedule(state: ListenState, dials: Resolved) -> datetime | None:
    """The next moment this pair needs a look (None: never, until a post)."""
    if state.busy_until:
        return state.busy_until
    if state.pending:
        return state.last_post_at + timedelta(seconds=dials.quiet_seconds)
    if state.rested or dials.idle_looks == 0:  # 0: never look unprompted (memory-lane's idle_after)
        return None
    quiet_due = quiet_base(state) + timedelta(seconds=dials.idle_seconds * 2**state.idle_level)
    # Never past the moment it would rest: the look then declares the rest on time.
    return min(quiet_due, rest_at(state, dials.dials))


def rest_at(state: ListenState, dials: Dials) -> datetime:
    return (state.last_person_at or state.created_at) + timedelta(hours=dials.rest_after_hours)


def quiet_base(state: ListenState) -> datetime:
    return max(t for t in (state.last_said_at, state.considered_at, state.created_at) if t is not None)


def ensure_states(motion: Motion, now: datetime) -> None:
    # The listening agents without a state, in one query (an anti-join): every post asks it.
    missing = list(
        motion.agents.filter(listening=True)
        .exclude(pk__in=ListenState.objects.filter(motion=motion).values("agent_id"))
        .values_list("pk", flat=True)
    )
    if missing:
        ListenState.objects.bulk_create(
            [ListenState(motion=motion, agent_id=pk, created_at=now, last_person_at=None) for pk in missing],
            ignore_conflicts=True,
        )


def mark_busy(motion: Motion, agent: Agent, through: datetime | None, now: datetime) -> None:
    """A wake outside the loop (a mention, a watch) is in flight for this pair."""
    ensure_states(motion, now)
    with transaction.atomic():
        state = ListenState.objects.select_for_update().filter(motion=motion, agent=agent).first()
        if state is None:  # not a listening agent of this Motion: nothing to keep in step
            return
        if through is not None:
            state.considered_through = max(filter(None, (state.considered_through, through)))
        state.busy_until = now + busy_span()
        state.due_at = state.busy_until
        state.version += 1
        state.save()


# --- the look -------------------------------------------------------------------------------


def look(now: datetime, limit: int) -> list[ListenState]:
    """The one query of a tick: the pairs that are due (partial index on due_at)."""
    return list(ListenState.objects.filter(due_at__lte=now).order_by("due_at")[:limit])


def tick(*, dispatch: bool = True) -> list[Consideration]:
    if scram_holds():  # nothing wakes; the pairs stay due and are looked at once it is lifted
        return []
    now = clock.now()
    dials = Dials.load()
    recover_considerations(now, dispatch=dispatch)
    claimed = []
    due = look(now, dials.look_batch)
    with reads_once([(state.motion_id, state.agent_id) for state in due]):  # the binding's, once a tick
        for state in due:
            consideration = evaluate(state, now, dials)
            if consideration is not None:
                claimed.append(consideration)
    if dispatch:
        for consideration in claimed:
            transaction.on_commit(
                lambda pk=consideration.pk: send_when_broker_answers(CONSIDER, pk), robust=True
            )
    return claimed


# --- wakes that survive the broker -----------------------------------------------------------


def _reschedule(state: ListenState, **changes) -> bool:
    """Write a state the look decided on, unless someone wrote it since (then it is theirs)."""
    changes.setdefault("version", F("version") + 1)
    return ListenState.objects.filter(pk=state.pk, version=state.version).update(**changes) == 1


def typing_until(motion_id: str, now: datetime, ttl: float) -> datetime | None:
    latest = TypingPing.objects.filter(motion_id=motion_id, at__gt=now - timedelta(seconds=ttl)).aggregate(
        latest=Max("at")
    )["latest"]
    return latest + timedelta(seconds=ttl) if latest else None


def fenced_agents() -> set[str]:
    """The agents another decider wakes (`signals.fenced_agent_providers`: memory-lane's poller
    under a binding that shares its record, POLLER_AGENTS): no mention or consider loop here
    wakes them. One decider per agent."""
    return set().union(*(provider() for provider in signals.fenced_agent_providers))


def still_listening(state: ListenState) -> bool:
    # An agent another decider wakes (memory-lane's poller) is not the consider loop's.
    return (
        Motion.agents.through.objects.filter(
            motion_id=state.motion_id, agent_id=state.agent_id, agent__listening=True
        )
        .exclude(agent__name__in=fenced_agents())
        .exists()
    ) and looks_unprompted(state.motion_id, state.agent_id)  # the room's "mentions only", archived


@dataclass(frozen=True)
class Decision:
    """What the look decides for one due pair, read from the record with nothing written: the
    loop acts on it (`evaluate`), `manage.py would_wake` says it (wakes/consider_loop/dry_run.py)."""

    action: str  # one of the names below
    # WAIT_POSTS: when the quiet (or the typing) ends; LATER: the next look; BUSY: the recheck.
    due_at: datetime | None = None
    typing_until: datetime | None = None  # WAIT_POSTS: someone is typing until then
    quiet_for: timedelta | None = None  # QUIET: how long nothing was said

    NOT_LISTENING = "not listening"  # left the Motion, stopped listening, fenced
    BUSY = "busy"  # a turn of the pair is queued or running
    WAIT_POSTS = "wait posts"  # new posts, still in their quiet (or someone types)
    NEW_POSTS = "new posts"  # claim a consideration of the new posts
    RESTED = "rested"  # resting: only a person's post wakes it
    REST_NOW = "rest now"  # no person for a long while: rest from now
    LATER = "later"  # nothing new; look again at due_at
    QUIET = "quiet"  # claim a long-quiet consideration


def decide(state: ListenState, now: datetime, dials: Dials) -> Decision:
    """The look's decision for a due pair. A wake in flight whose finish hook never came (no
    turn of the pair queued or running) frees the pair on `state` here, as the loop then writes."""
    if not still_listening(state):
        return Decision(Decision.NOT_LISTENING)
    resolved = resolve(state.motion_id, state.agent_id, dials)
    if state.busy_until:
        live = Turn.objects.filter(
            motion_id=state.motion_id,
            agent_id=state.agent_id,
            status__in=(TurnStatus.QUEUED, TurnStatus.RUNNING),
        ).exists()
        if live:  # the turn is still going: its finish hook will reschedule; recheck later
            return Decision(Decision.BUSY, due_at=now + timedelta(seconds=60))
        state.busy_until = None  # lost (no finish hook came): the pair is free again
    if state.pending:
        ready = state.last_post_at + timedelta(seconds=resolved.quiet_seconds)
        typing = typing_until(state.motion_id, now, dials.typing_ttl_seconds)
        if typing and typing > ready:
            return Decision(Decision.WAIT_POSTS, due_at=typing, typing_until=typing)
        if ready > now:  # still talking: a burst is one consideration
            return Decision(Decision.WAIT_POSTS, due_at=ready)
        return Decision(Decision.NEW_POSTS)
    if state.rested:
        return Decision(Decision.RESTED)
    if rest_at(state, dials) <= now:
        return Decision(Decision.REST_NOW)
    due = schedule(state, resolved)
    if due and due > now:
        return Decision(Decision.LATER, due_at=due)
    return Decision(Decision.QUIET, quiet_for=now - (state.last_said_at or state.created_at))


def evaluate(state: ListenState, now: datetime, dials: Dials) -> Consideration | None:
    """The look's decision for a due pair, acted on: rescheduled, rested, or claimed once."""
    decision = decide(state, now, dials)
    action = decision.action
    if action == Decision.NOT_LISTENING:  # nothing is owed
        # Until the room's "until", if it set one: then the loop looks again by itself.
        _reschedule(state, due_at=unprompted_again_at(state.motion_id, state.agent_id, now), busy_until=None)
        return None
    if action == Decision.BUSY:
        _reschedule(state, due_at=decision.due_at)
        return None
    if action == Decision.NEW_POSTS:
        return claim(state, WakeKind.NEW_POSTS, now)
    if action == Decision.QUIET:
        return claim(state, WakeKind.QUIET, now, quiet_for=decision.quiet_for)
    if action == Decision.REST_NOW:
        # Twelve hours without a person: rest until someone comes back.
        person_seen = state.last_person_at or state.created_at
        if _reschedule(state, due_at=None, busy_until=None, rested=True):
            post_system_message(
                state.motion,
                f"@{state.agent.name} rests here: no person for {human_duration(now - person_seen)}. "
                "It listens again when someone posts.",
                kind=Kind.WAKE,
                message_id=system_uuid("wakes-rest", state.pk, person_seen.isoformat()),
                agent=state.agent,
            )
        return None
    # WAIT_POSTS, LATER: look again then; RESTED: only a post makes it due again.
    _reschedule(state, due_at=decision.due_at, busy_until=None)
    return None


def claim(
    state: ListenState, kind: str, now: datetime, *, quiet_for: timedelta | None = None
) -> Consideration | None:
    """Exactly one consideration per state: a conditional UPDATE on the state's version."""
    in_flight = now + busy_span()
    with transaction.atomic():
        changes = {
            "version": state.version + 1,
            "busy_until": in_flight,
            "due_at": in_flight,
        }
        if kind == WakeKind.NEW_POSTS:
            changes["considered_through"] = state.last_post_at
        won = ListenState.objects.filter(pk=state.pk, version=state.version).update(**changes)
        if won != 1:
            return None
        return Consideration.objects.create(
            state=state,
            motion_id=state.motion_id,
            agent_id=state.agent_id,
            kind=kind,
            claim_version=state.version + 1,
            through=state.last_post_at if kind == WakeKind.NEW_POSTS else None,
            previous_through=state.considered_through,
            quiet_seconds=quiet_for.total_seconds() if quiet_for else None,
            created_at=now,
        )


# --- a claimed consideration ------------------------------------------------------------------


def due_mention_wakes(now: datetime):
    return MentionWake.objects.filter(status=MentionWake.Status.WAITING, due_at__lte=now)


def answered_since(message: Message, agent: Agent) -> bool:
    return (
        Message.objects.filter(motion_id=message.motion_id, kind=Kind.TEXT, created_at__gt=message.created_at)
        .filter(Q(agent=agent) | Q(sender__iexact=agent.name))
        .exclude(source=Source.SYSTEM)
        .exists()
    )
