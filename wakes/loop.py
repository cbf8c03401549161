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

from motion_runner.conf import app_settings as runner_settings  # the runner's settings (conf.py)
from motion_runner.lib.ids import system_uuid
from motion_runner.lib.tasks import send_when_broker_answers
from motion_runner.message_fit import POST_KINDS
from motion_runner.models import Agent, Kind, Message, Motion, Source, Turn, TurnStatus
from motion_runner.record import poller_fenced_agents
from motion_runner.system_lines import post_system_message

from . import clock
from .budget import Refusal, release, reserve, turn_cap
from .conf import app_settings as wakes_settings  # the app's settings, with defaults (conf.py)
from .context import new_posts_prompt, quiet_prompt
from .models import (
    Consideration,
    Dials,
    ListenState,
    MentionWake,
    Resolved,
    Spend,
    TypingPing,
    WakeKind,
    resolve,
)
from .screen import screen_posts
from .steering import looks_unprompted, scram_holds, unprompted_again_at
from .wake import human_duration, wake

log = logging.getLogger(__name__)

# The task that runs one claimed consideration (wakes/tasks.py), by its name: motion_runner/lib/tasks.py.
CONSIDER = "wakes.consider"


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
    if state.rested:
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
    for state in look(now, dials.look_batch):
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


def recover_considerations(now: datetime, *, dispatch: bool = True) -> dict[str, int]:
    """The database is the record of what is owed: a consideration whose task the broker lost
    is sent again, exactly once (the conditional UPDATE on `resent_at` is the claim of the
    re-send); one that still did not start, or started and never woke (its worker died between
    the reservation and the wake), is given up: its reservation goes back, its posts are owed
    again and the pair is looked at now."""
    bound = timedelta(seconds=wakes_settings.WAKES_CONSIDERATION_START_SECONDS)
    resent = []
    lost = Consideration.objects.filter(
        status=Consideration.Status.CLAIMED, resent_at__isnull=True, created_at__lt=now - bound
    ).values_list("pk", flat=True)
    for pk in lost:
        won = Consideration.objects.filter(
            pk=pk, status=Consideration.Status.CLAIMED, resent_at__isnull=True
        ).update(resent_at=now)
        if won == 1:
            resent.append(pk)
    if dispatch and resent:
        for pk in resent:
            transaction.on_commit(lambda pk=pk: send_when_broker_answers(CONSIDER, pk), robust=True)
    # A run is its screen (bounded by its timeout) and a few queries: one running much longer
    # lost its worker.
    run_bound = timedelta(
        seconds=max(wakes_settings.WAKES_CONSIDERATION_RUN_SECONDS, 2 * Dials.load().screen_timeout_seconds)
    )
    stuck = Consideration.objects.filter(
        Q(status=Consideration.Status.CLAIMED, resent_at__lt=now - bound)
        | Q(status=Consideration.Status.RUNNING, turn__isnull=True, started_at__lt=now - run_bound)
        # Started before started_at was kept.
        | Q(
            status=Consideration.Status.RUNNING,
            turn__isnull=True,
            started_at__isnull=True,
            created_at__lt=now - 10 * bound,
        )
    ).select_related("motion", "agent")
    abandoned = sum(1 for c in stuck if abandon(c, now))
    return {"resent": len(resent), "abandoned": abandoned}


def abandon(c: Consideration, now: datetime) -> bool:
    """A consideration whose wake never started: give its reservation back, owe its posts again."""
    with transaction.atomic():
        won = Consideration.objects.filter(
            pk=c.pk,
            status__in=(Consideration.Status.CLAIMED, Consideration.Status.RUNNING),
            turn__isnull=True,
        ).update(status=Consideration.Status.FAILED, detail="its wake never started (a lost task or worker)")
        if won != 1:
            return False
        for envelope in Spend.objects.filter(consideration=c, turn__isnull=True, settled=False):
            release(envelope, "released: the wake never started")
        state = ListenState.objects.select_for_update().get(pk=c.state_id)
        if c.kind == WakeKind.NEW_POSTS and state.considered_through == c.through:
            state.considered_through = c.previous_through  # those posts are still owed
        state.busy_until = None
        state.due_at = now
        state.version += 1
        state.save()
    log.warning("consideration %s of %s in %s never started; looking again", c.pk, c.agent_id, c.motion_id)
    return True


def _reschedule(state: ListenState, **changes) -> bool:
    """Write a state the look decided on, unless someone wrote it since (then it is theirs)."""
    changes.setdefault("version", F("version") + 1)
    return ListenState.objects.filter(pk=state.pk, version=state.version).update(**changes) == 1


def typing_until(motion_id: str, now: datetime, ttl: float) -> datetime | None:
    latest = TypingPing.objects.filter(motion_id=motion_id, at__gt=now - timedelta(seconds=ttl)).aggregate(
        latest=Max("at")
    )["latest"]
    return latest + timedelta(seconds=ttl) if latest else None


def still_listening(state: ListenState) -> bool:
    # An agent memory-lane's poller still wakes (POLLER_AGENTS) is not the consider loop's.
    return (
        Motion.agents.through.objects.filter(
            motion_id=state.motion_id, agent_id=state.agent_id, agent__listening=True
        )
        .exclude(agent__name__in=poller_fenced_agents())
        .exists()
    ) and looks_unprompted(state.motion_id, state.agent_id)  # the room's "mentions only", archived


def evaluate(state: ListenState, now: datetime, dials: Dials) -> Consideration | None:
    if not still_listening(state):  # left the Motion, or stopped listening: nothing is owed
        # Until the room's "until", if it set one: then the loop looks again by itself.
        _reschedule(state, due_at=unprompted_again_at(state.motion_id, state.agent_id, now), busy_until=None)
        return None
    resolved = resolve(state.motion_id, state.agent_id, dials)
    if state.busy_until:
        live = Turn.objects.filter(
            motion_id=state.motion_id,
            agent_id=state.agent_id,
            status__in=(TurnStatus.QUEUED, TurnStatus.RUNNING),
        ).exists()
        if live:  # the turn is still going: its finish hook will reschedule; recheck later
            _reschedule(state, due_at=now + timedelta(seconds=60))
            return None
        state.busy_until = None  # lost (no finish hook came): the pair is free again
    if state.pending:
        ready = state.last_post_at + timedelta(seconds=resolved.quiet_seconds)
        typing = typing_until(state.motion_id, now, dials.typing_ttl_seconds)
        if typing and typing > ready:
            ready = typing
        if ready > now:  # still talking, or typing: a burst is one consideration
            _reschedule(state, due_at=ready, busy_until=None)
            return None
        return claim(state, WakeKind.NEW_POSTS, now)
    if state.rested:
        _reschedule(state, due_at=None, busy_until=None)
        return None
    person_seen = state.last_person_at or state.created_at
    due = schedule(state, resolved)
    if rest_at(state, dials) <= now:
        # Twelve hours without a person: rest until someone comes back.
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
    if due and due > now:
        _reschedule(state, due_at=due, busy_until=None)
        return None
    return claim(state, WakeKind.QUIET, now, quiet_for=now - (state.last_said_at or state.created_at))


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


@dataclass
class Outcome:
    status: str
    turn: Turn | None = None


def new_posts(consideration: Consideration) -> list[Message]:
    posts = Message.objects.filter(
        motion_id=consideration.motion_id, kind__in=POST_KINDS, created_at__lte=consideration.through
    ).exclude(source=Source.SYSTEM)
    posts = posts.exclude(agent_id=consideration.agent_id)
    if consideration.previous_through:
        posts = posts.filter(created_at__gt=consideration.previous_through)
    return list(posts.order_by("created_at", "id"))


def run_consideration(consideration_id: int, *, dispatch: bool = True, screen=None) -> Outcome | None:
    """Budget, screen, wake. Idempotent: a consideration runs once (claimed → running)."""
    if (
        Consideration.objects.filter(pk=consideration_id, status=Consideration.Status.CLAIMED).update(
            status=Consideration.Status.RUNNING, started_at=clock.now()
        )
        != 1
    ):
        return None
    c = Consideration.objects.select_related("motion", "agent").get(pk=consideration_id)
    now = clock.now()
    dials = resolve(c.motion_id, c.agent_id)
    screening = c.kind == WakeKind.NEW_POSTS and dials.screen_enabled
    envelope = reserve(c, dials, now, screen=screening)
    if isinstance(envelope, Refusal):
        return refuse(c, envelope)
    posts = new_posts(c) if c.kind == WakeKind.NEW_POSTS else []
    screen_cost = None
    screen_note = ""
    if screening:
        result = (screen or screen_posts)(c.motion, c.agent, posts, dials.dials)
        screen_cost = result.cost
        if result.answered:
            Spend.objects.create(
                kind=Spend.Kind.SCREEN,
                motion_id=c.motion_id,
                agent_id=c.agent_id,
                consideration=c,
                day=envelope.day,
                at=now,
                amount=result.cost,
                settled=True,
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
                note=f"{result.verdict}: {result.reason}"[:300],
            )
            Spend.objects.filter(pk=envelope.pk).update(amount=F("amount") - result.cost)
        c.screen_verdict = result.verdict if not result.failed else "FAILED"
        c.screen_reason = result.reason[:300]
        if not result.off:  # the default setup has no screen: nothing to say on every wake line
            screen_note = f"screen {c.screen_verdict}: {result.reason} · ${result.cost:.4f}"
        if result.dismissed:
            release(envelope, f"screened: {result.reason}"[:300])
            c.status = Consideration.Status.SCREENED
            c.save(update_fields=["status", "screen_verdict", "screen_reason"])
            post_dot(c.motion, c.agent, result.reason, by_screen=True, key=("screen", c.pk))
            free_pair(c, silent=True)
            return Outcome(c.status)
    cap = turn_cap(envelope, screen_cost or 0, dials.consideration_cap_usd)
    if c.kind == WakeKind.NEW_POSTS:
        count = len(posts)
        why = f"{count} new post{'s' if count != 1 else ''}" + (f" ({screen_note})" if screen_note else "")
        prompt = new_posts_prompt(c.motion, c.agent, posts, c.previous_through)
        woken_by = posts[-1] if posts else None
    else:
        quiet = timedelta(seconds=c.quiet_seconds or 0)
        why = f"a long quiet: nothing said for {human_duration(quiet)}"
        prompt = quiet_prompt(c.motion, c.agent, human_duration(quiet))
        woken_by = None
    if not Consideration.objects.filter(pk=c.pk, status=Consideration.Status.RUNNING).exists():
        return None  # given up as lost meanwhile (its screen outlasted the bound): its posts are owed again
    turn = wake(
        c.motion,
        c.agent,
        prompt=prompt,
        reason=c.kind,
        why=why,
        effort=dials.consider_effort,
        cap=cap,
        woken_by=woken_by,
        dispatch=dispatch,
        posts=posts if c.kind == WakeKind.NEW_POSTS else None,
    )
    Spend.objects.filter(pk=envelope.pk).update(turn=turn)
    c.turn = turn
    c.status = Consideration.Status.WOKEN
    c.detail = why[:300]
    c.save(update_fields=["turn", "status", "detail", "screen_verdict", "screen_reason"])
    return Outcome(c.status, turn)


def refuse(c: Consideration, refusal: Refusal) -> Outcome:
    c.status = Consideration.Status.REFUSED
    c.detail = refusal.text[:300]
    c.save(update_fields=["status", "detail"])
    with transaction.atomic():
        state = ListenState.objects.select_for_update().get(pk=c.state_id)
        if c.kind == WakeKind.NEW_POSTS and state.considered_through == c.through:
            state.considered_through = c.previous_through  # those posts are still owed
        state.busy_until = None
        state.due_at = refusal.retry_at
        state.version += 1
        state.save()
    what = "new posts" if c.kind == WakeKind.NEW_POSTS else "the long quiet"
    # Said once per cap window (the id is the window's), not on every retry.
    post_system_message(
        c.motion,
        f"@{c.agent.name} is not considering {what}: {refusal.text}. Mentions still wake it.",
        kind=Kind.WAKE,
        message_id=system_uuid("wakes-cap", c.motion_id, c.agent_id, refusal.window),
        agent=c.agent,
    )
    return Outcome(c.status)


def free_pair(c: Consideration | None, *, silent: bool, motion_id=None, agent_id=None) -> None:
    """A wake of the pair ended: clear in-flight, back off after a silent long quiet, reschedule."""
    motion_id = c.motion_id if c else motion_id
    agent_id = c.agent_id if c else agent_id
    with transaction.atomic():
        state = ListenState.objects.select_for_update().filter(motion_id=motion_id, agent_id=agent_id).first()
        if state is None:
            return
        if c is not None and c.kind == WakeKind.QUIET and silent:
            state.idle_level += 1  # each long quiet that ends silent doubles the next wait
        if c is not None:
            state.considered_at = clock.now()  # a long quiet is counted from here
        state.busy_until = None
        state.due_at = schedule(state, resolve(motion_id, agent_id))
        state.version += 1
        state.save()


def post_dot(motion: Motion, agent: Agent, reason: str, *, by_screen: bool, key: tuple, turn=None) -> None:
    attr = ' by="screen"' if by_screen else ""
    post_system_message(
        motion,
        f"<silent{attr}>{reason}</silent>",
        kind=Kind.DOT,
        message_id=system_uuid("wakes-dot", *key),
        agent=agent,
        turn=turn,
    )


def due_mention_wakes(now: datetime):
    return MentionWake.objects.filter(status=MentionWake.Status.WAITING, due_at__lte=now)


def answered_since(message: Message, agent: Agent) -> bool:
    return (
        Message.objects.filter(motion_id=message.motion_id, kind=Kind.TEXT, created_at__gt=message.created_at)
        .filter(Q(agent=agent) | Q(sender__iexact=agent.name))
        .exclude(source=Source.SYSTEM)
        .exists()
    )


# A consideration reserves, screens (at most the screen's timeout) and queues its turn within
# seconds: a reservation still without a turn after this long belongs to a wake that never
# happened (its worker died between reserving and waking, the broker lost the task).
ORPHANED_RESERVATION = timedelta(minutes=5)


def release_orphaned_reservations(now: datetime | None = None) -> int:
    """Safety net (wakes.settle): release reservations whose wake never happened, say so in
    the thread once, and give the pair's posts back to the loop. Each release is claimed by a
    conditional UPDATE (still unsettled, still without a turn), so two sweeps release it once."""
    now = now or clock.now()
    released = 0
    stale = Spend.objects.filter(
        kind=Spend.Kind.CONSIDERATION, settled=False, turn__isnull=True, at__lt=now - ORPHANED_RESERVATION
    ).select_related("consideration", "agent", "motion")
    for spend in stale:
        claimed = Spend.objects.filter(pk=spend.pk, settled=False, turn__isnull=True).update(
            amount=0, settled=True, note="released: its wake never happened"
        )
        if not claimed:
            continue
        released += 1
        c = spend.consideration
        if c is not None and c.status in (Consideration.Status.CLAIMED, Consideration.Status.RUNNING):
            Consideration.objects.filter(pk=c.pk).update(
                status=Consideration.Status.FAILED, detail="its wake never happened; reservation released"
            )
            with transaction.atomic():
                state = ListenState.objects.select_for_update().get(pk=c.state_id)
                if c.kind == WakeKind.NEW_POSTS and state.considered_through == c.through:
                    state.considered_through = c.previous_through  # those posts are still owed
                state.busy_until = None
                state.due_at = now
                state.version += 1
                state.save()
        post_system_message(
            spend.motion,
            f"@{spend.agent.name}'s reserved ${spend.reserved:.2f} was released: the wake it was "
            "reserved for never happened (its worker stopped before waking)",
            kind=Kind.WAKE,
            message_id=system_uuid("wakes-orphan", spend.pk),
            agent=spend.agent,
        )
    return released
