"""What wakes/ does when a message is written and when a turn ends."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta

from django.db import IntegrityError, transaction

from motion_runner.conf import app_settings as runner_settings  # the runner's settings (conf.py)
from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Agent, Kind, Message, Source, Turn, TurnStatus
from motion_runner.runner.db_retry import retry_outages

from ..decision.mentions import mentioned_names
from ..decision.steering import NEVER, changed_in_host, looks_unprompted, mentions_held, scram_holds
from ..holds import lift_hold
from ..models import Consideration, Dials, MentionWake, Spend, clock
from ..models.dials import reading_dials_once
from ..models.in_force import resolve
from ..money.budget import day_of, reserve_for_retry, resettle_turn, settle_turn, watch_wake_refusal
from ..turn.commands import command_in, run_command
from ..turn.context import watch_prompt
from ..turn.wake import human_duration, wake
from .chains import chain_for, hold_chained, release_chained
from .considering import free_pair, post_dot
from .loop import answered_since, due_mention_wakes, fenced_agents, is_person, mark_busy
from .mention_turns import renew_holds, show_hold, wake_for_mention
from .noting import note_post

log = logging.getLogger(__name__)

# A person signed in with the wiki (the lowest tier: anyone with a wiki account) mentions no agent
# awake: mentions are unbudgeted, and memory-lane skips them (views_moods.api_mentions).
WIKI_TIER = "wiki"
SILENT = re.compile(r"^\s*<silent(?:\s+by=\"[^\"]*\")?\s*>(.*?)</silent>\s*$", re.DOTALL | re.IGNORECASE)
# memory-lane's machinery senders (tool results, its own lines): never anyone's words.
MACHINERY_SENDERS = ("system", "tool-result")
# Mentions that wake at once: a person's in the web or through the API, an agent's turn's words
# (the runner's) and an agent's posts through the API (the stream API's included).
AT_ONCE_SOURCES = (Source.WEB, Source.API, Source.RUNNER)


@reading_dials_once  # every gate of a post's handling reads the dials once (issue 39.5)
def on_message_created(sender, message: Message, newest_of_batch: bool = True, **kwargs) -> None:
    """message_created receiver. Never raises: the writer that sent it must not lose its turn."""
    try:
        handle_message(message, note=newest_of_batch)
    except Exception:
        log.exception("wakes could not handle message %s", message.pk)


def handle_message(message: Message, *, dispatch: bool = True, note: bool = True) -> list[Turn]:
    """Mentions in the post, then the loop's clocks. `note=False` for all but the newest of a
    batch written together: the clocks only need the newest, once (the runner writes a burst
    of an agent's lines in one go, and this runs on its path)."""
    if message.kind not in (Kind.TEXT, Kind.WATCH) or message.source == Source.SYSTEM:
        return []
    if message.source == Source.WATCH and (message.raw or {}).get("wake") in ("never", "always"):
        # `never` is display only; `always` already woke its agents (wake_for_watch): neither
        # is a post for the consider loop.
        return []
    woken: list[Turn] = []
    consumed: set[int] = set()
    command = False
    if message.kind == Kind.TEXT and "@" in message.text and scram_holds():
        # A terminal's or an agent's mention during a scram (people's posts answer 423): held,
        # said as held, and answered once after the lift (issue 39.4, as memory-lane does).
        for agent in mentioned_agents(message):
            hold_in_scram(message, agent)
        return woken
    if message.kind == Kind.TEXT and "@" in message.text:
        for agent in mentioned_agents(message):
            turn = mention(message, agent, dispatch=dispatch)
            if turn is not None:
                woken.append(turn)
            command = command or commanded(message, agent)
            if turn is not None or chained(message, agent):
                # A chained mention is not the loop's to consider either.
                consumed.add(agent.pk)
    if command:
        # `@agent /usage` is the whole post: run or refused, it is no post for any agent's loop
        # (a refused one once woke a paid consideration 14 s later, issue 34).
        return woken
    woken += release_chained(message, dispatch=dispatch)  # a person's post lets a held chain go on
    if note or consumed:
        note_post(message, consumed_by=consumed)
    return woken


def commanded(message: Message, agent: Agent) -> bool:
    """`@agent /compact`, `/context`, `/usage` from a person: run or refused, it is said in full."""
    return is_person(message) and command_in(message, agent) is not None


def mentioned_agents(message: Message) -> list[Agent]:
    """The agents a post names, but never the one who wrote it (memory-lane's rule: any sender's @
    but the agent's own), and none for the machinery's lines."""
    if message.sender.lower() in MACHINERY_SENDERS:
        return []
    known = list(Agent.objects.values_list("name", flat=True))
    names = mentioned_names(message.text, known)
    # Another decider wakes these (memory-lane's poller, POLLER_AGENTS): one decider per agent.
    agents = {a.name: a for a in Agent.objects.filter(name__in=names).exclude(name__in=fenced_agents())}
    return [
        agents[n]
        for n in names
        if n in agents and agents[n].pk != message.agent_id and n.lower() != message.sender.lower()
    ]


def chained(message: Message, agent: Agent) -> bool:
    return MentionWake.objects.filter(
        message=message, agent=agent, status=MentionWake.Status.CHAINED
    ).exists()


def mention(message: Message, agent: Agent, *, dispatch: bool = True) -> Turn | None:
    """A post in the web or through the API (a person's, or an agent's: its turn's words, its API
    posts) wakes now; a terminal post waits to see if it gets answered. An agent's mention of
    another agent lengthens a chain, which the chain guard bounds (wakes/consider_loop/chains.py)."""
    if message.sign_in == WIKI_TIER:
        return None  # memory-lane's `from_wiki_tier`: a wiki sign-in's @agent is just text
    now = clock.now()
    dials = Dials.load()
    if message.created_at < now - timedelta(minutes=dials.backfill_horizon_minutes):
        return None  # an old post imported late: its moment has passed
    if message.agent_id is not None and (chain := chain_for(message, agent)) is not None:
        hold_chained(message, agent, chain)
        return None
    if message.source == Source.TERMINAL:
        delay = dials.terminal_mention_delay_seconds
        MentionWake.objects.get_or_create(
            message=message,
            agent=agent,
            defaults={"due_at": message.created_at + timedelta(seconds=delay), "created_at": now},
        )
        return None
    if message.source not in AT_ONCE_SOURCES:
        return None
    if is_person(message) and (asked := command_in(message, agent)) is not None:  # @agent /compact, …
        if not MentionWake.objects.get_or_create(
            message=message,
            agent=agent,
            defaults={"status": MentionWake.Status.WOKEN, "due_at": now, "created_at": now},
        )[1]:
            return None  # already run for this post
        return run_command(message, agent, *asked, dispatch=dispatch)
    if (off := mentions_held(message.motion_id, agent.pk)) is not None:
        return hold(message, agent, off.listening_until, now)
    try:
        with transaction.atomic():
            record = MentionWake.objects.create(
                message=message, agent=agent, status=MentionWake.Status.WOKEN, due_at=now, created_at=now
            )
    except IntegrityError:
        return None  # already woken for this post
    return wake_for_mention(record, dispatch=dispatch)


def hushed(until: datetime | None) -> str:
    """A held mention's reason among the Motion's holds (`/holds/`, memory-lane's `…/held/`)."""
    if until is None:
        return "hushed until its listening is back on"
    return f"hushed until {until.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def hold(message: Message, agent: Agent, until, now) -> None:
    """The agent's listening is off here: the mention waits, and is answered once it is back.
    It is among the Motion's holds meanwhile (renew_holds keeps memory-lane's copy shown)."""
    reason = hushed(until)
    _, made = MentionWake.objects.get_or_create(
        message=message,
        agent=agent,
        defaults={
            "status": MentionWake.Status.HELD,
            "due_at": until or NEVER,
            "created_at": now,
            "hold": reason,
            "hold_until": until,
        },
    )
    if made:
        show_hold(message.motion, agent, reason, until)
        back = f"at {until:%Y-%m-%d %H:%M} UTC" if until else "when its listening is back on"
        post_system_message(
            message.motion,
            f"@{agent.name} is not listening here: {message.sender}'s mention is held and answered {back}.",
            kind=Kind.WAKE,
            message_id=system_uuid("mention-held", message.pk, agent.pk),
            agent=agent,
        )
    return None


SCRAM_HOLD = "a scram holds: answered once it is lifted"


SCRAM_COMMAND_NOT_RUN = "a scram holds every wake; type it again once it is lifted"


def hold_in_scram(message: Message, agent: Agent) -> None:
    """A mention made during a scram waits for the lift (check_mentions wakes it then, once)."""
    if message.sign_in == WIKI_TIER:
        return  # a wiki sign-in's @agent is just text
    now = clock.now()
    if message.created_at < now - timedelta(minutes=Dials.load().backfill_horizon_minutes):
        return
    if is_person(message) and (command := command_in(message, agent)) is not None:
        # A command is not kept for later (what it would show is of now), but it is answered:
        # let go, with the reason said, so nobody waits for it after the lift.
        _, made = MentionWake.objects.get_or_create(
            message=message,
            agent=agent,
            defaults={
                "status": MentionWake.Status.LET_GO,
                "due_at": now,
                "created_at": now,
                "hold": SCRAM_COMMAND_NOT_RUN,
            },
        )
        if made:
            post_system_message(
                message.motion,
                f"{message.sender}'s /{command[0]} for @{agent.name} was not run: {SCRAM_COMMAND_NOT_RUN}.",
                kind=Kind.WAKE,
                message_id=system_uuid("command-scram", message.pk, agent.pk),
                agent=agent,
            )
        return
    _, made = MentionWake.objects.get_or_create(
        message=message,
        agent=agent,
        defaults={"status": MentionWake.Status.HELD, "due_at": now, "created_at": now, "hold": SCRAM_HOLD},
    )
    if made:
        show_hold(message.motion, agent, SCRAM_HOLD, None)
        post_system_message(
            message.motion,
            f"@{agent.name} is not woken while a scram holds: {message.sender}'s mention is held and "
            "answered once it is lifted.",
            kind=Kind.WAKE,
            message_id=system_uuid("mention-scram", message.pk, agent.pk),
            agent=agent,
        )


def release_held(*, motion_id: str | None = None, now=None) -> int:
    """Held mentions whose agent listens again wake, once: a Motion's after its menus changed
    (`motion_id`), or those whose "until" has passed (`now`, the beat's check)."""
    if scram_holds():
        return 0
    held = MentionWake.objects.filter(status=MentionWake.Status.HELD).select_related(
        "message", "message__motion", "agent"
    )
    if motion_id is not None:
        held = held.filter(message__motion_id=motion_id)
    if now is not None:
        held = held.filter(due_at__lte=now)
    woken = 0
    for record in held:
        if mentions_held(record.message.motion_id, record.agent_id):
            continue
        won = MentionWake.objects.filter(pk=record.pk, status=MentionWake.Status.HELD).update(
            status=MentionWake.Status.WOKEN, hold="", hold_until=None
        )
        if won == 1:
            lift_hold(record.message.motion, record.agent)
            late = (
                " (held during a scram)"
                if record.hold == SCRAM_HOLD
                else " (held while its listening here was off)"
            )
            wake_for_mention(record, late=late)
            woken += 1
    return woken


def wake_for_watch(
    message: Message,
    agent: Agent,
    *,
    prompt: str | None = None,
    reason_detail: str | None = None,
    ability: dict | None = None,
    dispatch: bool = True,
) -> Turn | None:
    """A watch line whose policy is `always` wakes the agent (watchlist/checker.py calls this).

    Counted in the day's ledger and refused like any other wake once a daily cap is reached
    (None, and the thread says so once per cap window): `always` was chosen by a person, but
    the cap is the operator's. Watches with policy `consider` need nothing from here: their
    lines are posts, and the loop considers them like any other. The watchlist writes the
    prompt (the watched content quoted as data) and any ability the wake carries.
    """
    now = clock.now()
    if scram_holds() or not looks_unprompted(message.motion_id, agent.pk):
        return None  # a scram, or the room set it to mentions only / off, or archived the Motion
    dials = resolve(message.motion_id, agent.pk)
    with transaction.atomic():
        refusal = watch_wake_refusal(message.motion_id, agent.pk, dials, now)
        if refusal is not None:
            post_system_message(
                message.motion,
                f"@{agent.name} is not woken by watches: {refusal.text}. Mentions still wake it.",
                kind=Kind.WAKE,
                message_id=system_uuid("watch-cap", message.motion_id, agent.pk, refusal.window),
                agent=agent,
            )
            return None
        mark_busy(message.motion, agent, message.created_at, now)
        turn = wake(
            message.motion,
            agent,
            prompt=watch_prompt(message.motion, agent, message, prompt),
            reason="watch",
            why=f"a watch: {message.text[:120]}",
            effort=dials.consider_effort,
            cap=dials.consideration_cap_usd,
            woken_by=message,
            dispatch=dispatch,
            reason_detail=reason_detail,
            ability=ability,
        )
        if turn is None:
            return None  # shadow mode: decided and recorded, nothing reserved
        Spend.objects.create(
            kind=Spend.Kind.WATCH,
            motion_id=message.motion_id,
            agent=agent,
            turn=turn,
            day=day_of(now),
            at=now,
            amount=turn.max_budget_usd or 0,
            reserved=turn.max_budget_usd or 0,
            note="watch (always)",
        )
    return turn


def check_mentions(*, dispatch: bool = True) -> dict[str, int]:
    """Terminal mentions whose wait ran out: answered ones close, the rest wake (each once)."""
    now = clock.now()
    counts = {"answered": 0, "woken": 0}
    if scram_holds():
        return counts
    counts["woken"] += release_held(now=now)
    for record in due_mention_wakes(now).select_related("message", "message__motion", "agent"):
        if answered_since(record.message, record.agent):
            status = MentionWake.Status.ANSWERED
        else:
            status = MentionWake.Status.WOKEN
        won = MentionWake.objects.filter(pk=record.pk, status=MentionWake.Status.WAITING).update(
            status=status,
            hold="",
            hold_until=None,  # answered, or its turn is being decided now
        )
        if won != 1:
            continue  # another worker took it
        if status == MentionWake.Status.ANSWERED:
            counts["answered"] += 1
            continue
        waited = human_duration(now - record.message.created_at)
        wake_for_mention(record, dispatch=dispatch, late=f" in a terminal session, unanswered for {waited}")
        counts["woken"] += 1
    renew_holds()
    return counts


# --- a turn ended ---------------------------------------------------------------------------


def on_turn_finished(sender, turn: Turn, **kwargs) -> None:
    """The turn's settle (and what else its end does) is tried again while the database is away,
    so a reservation is never left held until the settle job; every step is idempotent."""
    try:
        retry_outages(
            lambda: handle_turn_finished(turn),
            seconds=runner_settings.RUNNER_END_RETRY_SECONDS,
            what=f"turn {turn.pk}'s settle",
        )
    except Exception:
        log.exception("wakes could not finish turn %s", turn.pk)


def on_turn_repriced(sender, turn: Turn, **kwargs) -> None:
    """The ledger's row takes the turn's raised cost (the runner stored more after the sweep
    ended and settled it)."""
    retry_outages(
        lambda: resettle_turn(turn),
        seconds=runner_settings.RUNNER_END_RETRY_SECONDS,
        what=f"turn {turn.pk}'s settle",
    )


def on_turn_retried(sender, failed: Turn, retry: Turn, **kwargs) -> None:
    reserve_for_retry(failed, retry)


def silence_of(turn: Turn) -> tuple[bool, str, Message | None]:
    """(silent, reason, the <silent> message if the agent wrote one)."""
    texts = list(
        turn.messages.filter(kind=Kind.TEXT).exclude(source=Source.SYSTEM).order_by("created_at", "id")
    )
    said = [m for m in texts if m.text.strip()]
    if not said:
        return True, "nothing said", None
    if len(said) == 1 and (match := SILENT.match(said[0].text)):
        return True, match.group(1).strip() or "silent", said[0]
    return False, "", None


def handle_turn_finished(turn: Turn) -> None:

    settle_turn(turn)
    silent, reason, silent_message = (False, "", None)
    if turn.status == TurnStatus.FINISHED:
        silent, reason, silent_message = silence_of(turn)
        if silent and silent_message is not None:
            # The agent's own <silent>why</silent>: the message itself becomes the dot.
            Message.objects.filter(pk=silent_message.pk).update(kind=Kind.DOT)
        elif silent:
            post_dot(turn.motion, turn.agent, reason, by_screen=False, key=("turn", turn.pk), turn=turn)
    consideration = Consideration.objects.filter(turn=turn).first()
    if consideration is not None:
        if turn.status != TurnStatus.FINISHED:
            status = Consideration.Status.FAILED
        else:
            status = Consideration.Status.SILENT if silent else Consideration.Status.SPOKE
        Consideration.objects.filter(pk=consideration.pk).update(status=status)
        free_pair(consideration, silent=silent or turn.status != TurnStatus.FINISHED)
    elif turn.reason in ("mention", "watch", "arrival"):
        free_pair(None, silent=silent, motion_id=turn.motion_id, agent_id=turn.agent_id)


def on_host_steering_changed(sender, motion, agent, setting: str, record=None, **kwargs) -> None:
    """`signals.host_steering_changed`: memory-lane's page changed a setting; said, looked at
    again now, and mentions held while listening was off woken if it is back on."""
    changed_in_host(sender, motion=motion, agent=agent, setting=setting, record=record)
    if setting in ("listening", "archived"):
        release_held(motion_id=motion.pk)
