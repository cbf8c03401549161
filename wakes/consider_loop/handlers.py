"""What wakes/ does when a message is written and when a turn ends."""

from __future__ import annotations

import logging
import re

from motion_runner.conf import app_settings as runner_settings  # the runner's settings (conf.py)
from motion_runner.models import Kind, Message, Source, Turn, TurnStatus
from motion_runner.runner.db_retry import retry_outages

from ..decision.steering import changed_in_host, mentions_held, scram_holds
from ..holds import lift_hold
from ..models import Consideration, Dials, MentionWake, clock
from ..models.dials import reading_dials_once
from ..money.budget import reserve_for_retry, resettle_turn, settle_turn
from ..turn.wake import human_duration
from .chains import release_chained
from .considering import free_pair, post_dot
from .loop import answered_since, due_mention_wakes
from .mention_path import act, gather_mention_facts, mentioned_agents, read_for_mentions
from .mention_turns import renew_holds, wake_for_mention
from .mention_verdict import SCRAM_HOLD, Because, Hold, MentionFacts, Verdict, decide_mention
from .noting import note_post

# watchlist/checker.py's entry (read, decided, acted on once: watch_path.py), kept here for its callers.
from .watch_path import wake_for_watch as wake_for_watch

log = logging.getLogger(__name__)

SILENT = re.compile(r"^\s*<silent(?:\s+by=\"[^\"]*\")?\s*>(.*?)</silent>\s*$", re.DOTALL | re.IGNORECASE)


@reading_dials_once  # every gate of a post's handling reads the dials once (issue 39.5)
def on_message_created(sender, message: Message, newest_of_batch: bool = True, **kwargs) -> None:
    """message_created receiver. Never raises: the writer that sent it must not lose its turn."""
    try:
        handle_message(message, note=newest_of_batch)
    except Exception:
        log.exception("wakes could not handle message %s", message.pk)


def handle_message(message: Message, *, dispatch: bool = True, note: bool = True) -> list[Turn]:
    """Mentions in the post (each read, decided and acted on once: mention_path), then the
    loop's clocks. `note=False` for all but the newest of a batch written together: the clocks
    only need the newest, once (the runner writes a burst of an agent's lines in one go, and
    this runs on its path)."""
    if message.kind not in (Kind.TEXT, Kind.WATCH) or message.source == Source.SYSTEM:
        return []
    if message.source == Source.WATCH and (message.raw or {}).get("wake") in ("never", "always"):
        # `never` is display only; `always` already woke its agents (wake_for_watch): neither
        # is a post for the consider loop.
        return []
    woken: list[Turn] = []
    consumed: set[int] = set()
    command = False
    if message.kind == Kind.TEXT and "@" in message.text:
        scram, dials, now = scram_holds(), Dials.load(), clock.now()
        agents = mentioned_agents(message)
        reading = read_for_mentions(message, agents, dials=dials, scram=scram, now=now)  # the core's, once
        for agent in agents:
            facts = gather_mention_facts(message, agent, reading, dials=dials, scram=scram, now=now)
            verdict = decide_mention(message, agent, facts)
            turn = act(message, agent, verdict, dispatch=dispatch)
            if turn is not None:
                woken.append(turn)
            command = command or facts.command is not None
            if turn is not None or held_by_chain(verdict, facts):
                consumed.add(agent.pk)  # a chained mention is not the loop's to consider either
        if scram:
            # Held, each said as held (issue 39.4): the post is answered after the lift.
            return woken
    if command:
        # `@agent /usage` is the whole post: run or refused, it is no post for any agent's loop
        # (a refused one once woke a paid consideration 14 s later, issue 34).
        return woken
    woken += release_chained(message, dispatch=dispatch)  # a person's post lets a held chain go on
    if note or consumed:
        note_post(message, consumed_by=consumed)
    return woken


def held_by_chain(verdict: Verdict, facts: MentionFacts) -> bool:
    return (isinstance(verdict, Hold) and verdict.kind == Because.CHAINED) or (
        facts.recorded == MentionWake.Status.CHAINED
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
