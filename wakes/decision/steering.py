"""How the room steers its agents from the thread (issue 24): listening, model, effort, reads,
discretion and verbosity per agent; rules and archived per Motion; and the scram that holds
every wake.

Every change is a `Steer` row (append-only: who, when, until). What is in force for one
(Motion, agent) resolves in this order, the later winning:

1. the global dials (`Dials`, the admin's one page);
2. the admin's overrides (`DialOverride`: Motion, then agent, then the pair);
3. the room's settings in the thread: the newest row of each setting, until its `until` passes
   (then the setting is back to what 1–2 say).

Listening is the exception that only narrows: an agent the admin set not listening
(`Agent.listening`) is not woken unprompted anywhere, whatever the thread says; "mentions"
stops the loop's considerations, long quiets and watch wakes for this Motion while mentions still
wake; "off" holds mentions too (`MentionWake.HELD`), and they are answered once it is back on.
An archived Motion gets no unprompted look from any agent; mentions are still answered.
A scram (`motion_runner.models.Scram`) holds everything: no mention, loop, watch or grant wakes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import F, Q

from motion_runner import signals
from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Agent, Kind, Motion, Scram
from motion_runner.runner.resume import context_fullness as runner_context_fullness

from ..conf import app_settings as wakes_settings
from ..holds import lift_hold
from ..models import ListenState, MentionWake, Steer, clock
from ..models.dials import Effort
from .listening_scopes import HERE, MOTION, WIDE
from .listening_scopes import in_force as scoped_listening
from .listening_scopes import whose as listening_whose
from .quoting import defuse

log = logging.getLogger(__name__)

S = Steer.Setting
LISTENING = {"on": "on", "mentions": "mentions only", "off": "off"}
DISCRETION = {"reserved": "reserved", "normal": "normal", "chatty": "chatty"}
VERBOSITY = {"terse": "terse", "normal": "normal", "full": "full"}
# Tokens of the record a wake quotes word for word: the `reads` dial (models.resolve applies it).
READS = {"2000": "2,000 tokens", "10000": "10,000 tokens", "40000": "40,000 tokens"}
AGENT_SETTINGS = (
    S.LISTENING,
    S.MODEL,
    S.MENTION_EFFORT,
    S.CONSIDER_EFFORT,
    S.READS,
    S.DISCRETION,
    S.VERBOSITY,
    S.ULTRACODE,
)
MOTION_SETTINGS = (S.RULES, S.ARCHIVED, S.LETTER)
# Widening trust or spend: only people who may grant full tools set these. The rules too: every
# wake says them outside the quoted frame, where the agent takes them as the room's instructions.
# Ultracode (issue 33) runs Claude Code's standing workflows on full-tools mentions: spend; the
# letter is told to every agent's first wake here, outside the frame, as the rules are.
WIDENING = (S.RULES, S.MODEL, S.MENTION_EFFORT, S.CONSIDER_EFFORT, S.READS, S.ULTRACODE, S.LETTER)
# Values of other settings that widen: a chatty agent's considerations skip the screen.
WIDENING_VALUES = {S.DISCRETION: ("chatty",)}
# The timing dials memory-lane's own page sets under its binding (motion_runner/memory_lane/timing.py),
# said as the timing API says them; changed there, the loop looks again at once.
TIMING_WORDS = {
    "quiet_seconds": "debounce",
    "idle_looks": "first unprompted look",
    "considerations_per_hour": "considerations",
}
NEVER = datetime(9999, 12, 31, tzinfo=UTC)  # a held mention with no "until"

DISCRETION_TEXT = {
    "reserved": "Be reserved here: speak only when you are asked or have something plainly needed; "
    "otherwise answer <silent>.",
    "chatty": "Be forthcoming here: the people welcome your thoughts and follow-ups.",
}
VERBOSITY_TEXT = {
    "terse": "Keep replies short here: a few sentences at most.",
    "full": "Replies here may be long and thorough.",
}


class SteerError(ValueError):
    """A setting or value the menus do not know: said back to the person, nothing written."""


@dataclass
class Steering:
    """What the room set for one (Motion, agent): blank means the admin's dials stand."""

    listening: str = "on"
    listening_until: datetime | None = None
    model: str = ""
    mention_effort: str = ""
    consider_effort: str = ""
    reads: str = ""
    discretion: str = ""
    verbosity: str = ""
    rules: str = ""
    archived: bool = False
    ultracode: str = ""  # "on", or blank/"off": off
    letter: str = ""  # the Motion's own letter; blank: the first_session_letter dial
    set_by: dict[str, str] = field(default_factory=dict)
    untils: dict[str, datetime] = field(default_factory=dict)  # settings in force that end by themselves


def steering_for(motion_id: str, agent_id: int | None, now: datetime | None = None) -> Steering:
    """One query: the newest row of each setting of the pair and of the Motion, if in force.
    With a steering source (memory-lane's settings rows, under its binding), its rows instead."""
    now = now or clock.now()
    if (source := signals.steering_source()) is not None:
        return host_steering(source.candidates([(motion_id, agent_id)])[(motion_id, agent_id)], now)
    return own_steering(motion_id, agent_id, now)


def host_steering(records: list[signals.SteerRecord], now: datetime) -> Steering:
    """The pair's steering from a steering source's rows for it (`source.candidates`, read already)."""
    return resolved(records, now, own=lambda record: True)


def own_steering(motion_id: str, agent_id: int | None, now: datetime) -> Steering:
    """The pair's steering from this project's own Steer rows (no steering source): one query."""
    everywhere = Q(motion__isnull=True, setting=S.LISTENING)  # listening's wider scopes (listening_scopes.py)
    rows = Steer.objects.filter(Q(motion_id=motion_id) | everywhere).filter(
        Q(agent_id=agent_id) | Q(agent__isnull=True)
    )
    rows = list(rows.order_by("-at", "-pk"))
    steering = resolved([row for row in rows if row.setting != S.LISTENING], now, own=owned)
    if (row := scoped_listening([row for row in rows if row.setting == S.LISTENING], now)) is not None:
        steering.listening, steering.listening_until = row.value, row.until
        steering.set_by[S.LISTENING] = f"{row.by_name}, {row.at:%Y-%m-%d %H:%M} UTC"
        if row.until is not None:
            steering.untils[S.LISTENING] = row.until
    return steering


def owned(row) -> bool:
    """A Steer row counts for a pair when it is the agent's own setting, or the Motion's own."""
    return row.setting in MOTION_SETTINGS if row.agent_id is None else row.setting in AGENT_SETTINGS


def resolved(rows, now: datetime, own) -> Steering:
    """The first row of each setting (rows come in the order they win), while its "until" lasts."""
    steering = Steering()
    seen: set[str] = set()
    for row in rows:
        if not own(row) or row.setting in seen:
            continue
        seen.add(row.setting)
        if row.until is not None and row.until <= now:
            continue  # its time ran out: back to the default
        if row.setting == S.ARCHIVED:
            steering.archived = row.value == "yes"
        elif row.setting == S.LISTENING:
            steering.listening = row.value or "on"
            steering.listening_until = row.until
        else:
            setattr(steering, row.setting, row.value)
        steering.set_by[row.setting] = f"{row.by_name}, {row.at:%Y-%m-%d %H:%M} UTC"
        if row.until is not None:
            steering.untils[row.setting] = row.until
    return steering


def hushes(motion_ids: list[str], now: datetime | None = None) -> dict[tuple[str, int | None], str]:
    """One query for a list of Motions: {(motion, agent): "mentions"/"off"} for pairs the room
    hushed, {(motion, None): "archived"} for archived Motions (the Motion list's chips)."""
    now = now or clock.now()
    if (source := signals.steering_source()) is not None:
        return source_hushes(source, motion_ids, now)
    found: dict[tuple[str, int | None], str] = {}
    seen: set[tuple[str, int | None]] = set()
    rows = Steer.objects.filter(motion_id__in=motion_ids, setting__in=(S.LISTENING, S.ARCHIVED))
    for motion_id, agent_id, setting, value, until in rows.order_by("-at", "-pk").values_list(
        "motion_id", "agent_id", "setting", "value", "until"
    ):
        key = (motion_id, agent_id)
        if key in seen or (setting == S.ARCHIVED) != (agent_id is None):
            continue
        seen.add(key)
        if until is not None and until <= now:
            continue
        if setting == S.ARCHIVED and value == "yes":
            found[key] = "archived"
        elif setting == S.LISTENING and value in ("mentions", "off"):
            found[key] = value
    return found


def source_hushes(
    source: signals.SteeringSource, motion_ids: list[str], now: datetime
) -> dict[tuple[str, int | None], str]:
    """`hushes` read from the steering source: each Motion's own and each of its agents'."""
    pairs: list[tuple[str, int | None]] = [(motion_id, None) for motion_id in motion_ids]
    pairs += list(
        Motion.agents.through.objects.filter(motion_id__in=motion_ids).values_list("motion_id", "agent_id")
    )
    found: dict[tuple[str, int | None], str] = {}
    for pair, records in source.candidates(pairs).items():
        steering = resolved(records, now, own=lambda record: True)
        if pair[1] is None and steering.archived:
            found[pair] = "archived"
        elif pair[1] is not None and steering.listening in ("mentions", "off"):
            found[pair] = steering.listening
    return found


def scram_holds() -> bool:
    return Scram.objects.filter(holds=True).exists()


def looks_unprompted(motion_id: str, agent_id: int) -> bool:
    """The loop, long quiets and watch wakes may wake this pair (mentions are asked apart)."""
    steering = steering_for(motion_id, agent_id)
    return steering.listening == "on" and not steering.archived


def unprompted_again_at(motion_id: str, agent_id: int, now: datetime) -> datetime | None:
    """When the room's hush of this pair ends by itself (its listening's or archived's "until");
    None when nothing in force ends by itself (the admin's switch, a hush without "until")."""
    steering = steering_for(motion_id, agent_id, now)
    if (steering.archived and "archived" not in steering.untils) or (
        steering.listening != "on" and "listening" not in steering.untils
    ):
        return None
    ends = [steering.untils[name] for name in ("listening", "archived") if name in steering.untils]
    return min(ends) if ends else None


def mentions_held(motion_id: str, agent_id: int) -> Steering | None:
    """The pair's steering when its listening is off (a mention is held), else None."""
    steering = steering_for(motion_id, agent_id)
    return steering if steering.listening == "off" else None


def wake_settings(motion_id: str, agent_id: int, reason: str, effort: str) -> tuple[str, str]:
    """(effort, model) for a wake: the room's choice over the dials' (step 3 above)."""
    steering = steering_for(motion_id, agent_id)
    chosen = steering.mention_effort if reason in ("mention", "grant") else steering.consider_effort
    return chosen or effort, steering.model


def prompt_piece(motion: Motion, agent: Agent) -> str:
    """What the room asked of this agent, said in every wake (wakes/turn/footer.py puts it in)."""
    steering = steering_for(motion.pk, agent.pk)
    parts = []
    if steering.rules.strip():
        parts.append(f"The rules of this Motion, as its people set them:\n{defuse(steering.rules.strip())}")
    if text := DISCRETION_TEXT.get(steering.discretion):
        parts.append(text)
    if text := VERBOSITY_TEXT.get(steering.verbosity):
        parts.append(text)
    return "\n\n".join(parts)


def context_fullness(motion_id: str, agent: Agent) -> dict | None:
    """How full the agent's context is here, for the menus and a Codex or Pi /context answer:
    the newest reading (runner/resume.context_fullness: Claude Code's own /context answer, or the
    newest API call's input against its model's window as the harness said it), else against the
    WAKES_CONTEXT_WINDOW_TOKENS setting; the percent is runner/resume.percent_full's, the one figure."""
    return runner_context_fullness(motion_id, agent.pk, wakes_settings.WAKES_CONTEXT_WINDOW_TOKENS)


# --- a change from the thread's menus ----------------------------------------------------------


def clean_value(setting: str, value: str) -> str:
    value = (value or "").strip()
    choices = {
        S.LISTENING: LISTENING,
        S.DISCRETION: DISCRETION,
        S.VERBOSITY: VERBOSITY,
        S.READS: READS,
        S.ARCHIVED: {"yes": "yes", "no": "no"},
        S.ULTRACODE: {"on": "on", "off": "off"},
        S.MENTION_EFFORT: dict(Effort.choices),
        S.CONSIDER_EFFORT: dict(Effort.choices),
    }.get(setting)
    if choices is not None and value and value not in choices:
        raise SteerError(
            f"{setting} is one of {', '.join(choices)} (or blank for the default), not {value!r}"
        )
    if setting == S.MODEL and len(value) > 100:
        raise SteerError("a model name is at most 100 characters")
    if setting == S.RULES and len(value) > 4000:
        raise SteerError("the rules are at most 4,000 characters")
    if setting == S.LETTER and len(value) > 8000:
        raise SteerError("the letter is at most 8,000 characters")
    return value


def steer_history(motion: Motion, limit: int) -> list[Steer]:
    """The Motion's newest changes, newest first, from wherever the steering is kept."""
    if (source := signals.steering_source()) is None:  # the Motion's own and the wider listening
        rows = Steer.objects.filter(Q(motion=motion) | Q(motion__isnull=True))
        return list(rows.select_related("agent")[:limit])
    agents = {agent.pk: agent for agent in motion.agents.all()}
    return [
        Steer(
            motion=motion,
            agent=agents.get(kept.agent_id),
            setting=kept.setting,
            value=kept.value,
            until=kept.until,
            by_name=kept.by_name,
            at=kept.at,
        )
        for kept in source.history(motion, limit)
    ]


def describe(row: Steer) -> str:
    whose = f"@{row.agent.name}'s" if row.agent_id else "this Motion's"
    if row.setting == S.LISTENING:
        whose = listening_whose(row)
    name = row.setting.replace("_", " ")
    if row.setting == S.RULES:
        # What they now say, not only who: the next wakes carry them as the room's instructions.
        text = (
            f"{row.by_name} cleared {whose} rules"
            if not row.value
            else f"{row.by_name} set {whose} rules to: “{row.value}”"
        )
    elif row.setting == S.ARCHIVED:
        text = f"{row.by_name} {'archived' if row.value == 'yes' else 'unarchived'} this Motion"
    elif row.setting == S.LETTER:
        text = f"{row.by_name} {'set' if row.value else 'cleared'} the letter a first wake here opens with"
    else:
        shown = {S.LISTENING: LISTENING, S.READS: READS}.get(row.setting, {}).get(row.value, row.value)
        name = TIMING_WORDS.get(row.setting, name)
        text = f"{row.by_name} set {whose} {name} here to {shown or 'the default'}"
    if row.until is not None:
        text += f" until {row.until:%Y-%m-%d %H:%M} UTC"
    return text


def change(
    motion: Motion, agent: Agent | None, setting: str, value: str, until, user, scope: str = HERE
) -> Steer:
    """Append the row, say it in the thread, and let the loop and held mentions catch up. `scope`
    (listening only, listening_scopes.py): this pair, every agent here, the agent everywhere, all."""
    if scope != HERE and setting != S.LISTENING:
        raise SteerError(f"only listening is set for more than one pair; {setting} is set here")
    if scope in (MOTION, "all"):
        agent = None
    elif setting in AGENT_SETTINGS and agent is None:
        raise SteerError(f"{setting} is set per agent: name one")
    if setting in MOTION_SETTINGS and agent is not None:
        raise SteerError(f"{setting} is the Motion's, not an agent's")
    if setting not in AGENT_SETTINGS + MOTION_SETTINGS:
        raise SteerError(f"unknown setting {setting!r}")
    if until is not None and until <= clock.now():
        raise SteerError("“until” is in the past")
    value = clean_value(setting, value)
    if (
        source := signals.steering_source()
    ) is not None:  # one source of truth: the change is kept there alone
        if scope in WIDE:  # memory-lane's rows name one Mood (or all): its own page sets the rest
            raise SteerError("under memory-lane's binding, listening past this Motion is set on its page")
        try:
            kept = source.write(motion, agent, setting, value, until, user.get_username())
        except signals.SteeringRefused as refused:
            raise SteerError(str(refused)) from refused
        row = Steer(
            motion=motion,
            agent=agent,
            setting=setting,
            value=kept.value,
            until=kept.until,
            by=user,
            by_name=kept.by_name,
            at=kept.at,
        )
        ref = kept.ref
    else:
        row = Steer.objects.create(
            motion=motion if scope in (HERE, MOTION) else None,
            agent=agent,
            setting=setting,
            value=value,
            until=until,
            by=user,
            by_name=user.get_username(),
            at=clock.now(),
        )
        ref = row.pk
    post_system_message(
        motion, describe(row), kind=Kind.WAKE, message_id=system_uuid("steer", ref), agent=agent
    )
    if setting in (S.LISTENING, S.ARCHIVED):
        catch_up(motion if row.motion_id else None, agent)
    return row


def catch_up(motion: Motion | None, agent: Agent | None) -> None:
    """After listening or archived changed: the loop looks at the pairs now (what was owed is
    owed again, or dropped by its look); every Motion's when `motion` is None (a wider scope).
    Held mentions are woken by the caller (handlers.release_held)."""
    states = ListenState.objects.all() if motion is None else ListenState.objects.filter(motion=motion)
    if agent is not None:
        states = states.filter(agent=agent)
    states.update(due_at=clock.now(), busy_until=None, version=F("version") + 1)


def let_go(sender, motion: Motion, agent_names: list[str] | None, by: str, at: datetime, **kwargs) -> None:
    """turns_stopped receiver: what was owed before the stop is not owed any more."""
    mentions = MentionWake.objects.filter(
        message__motion=motion,
        message__created_at__lte=at,
        status__in=(MentionWake.Status.WAITING, MentionWake.Status.HELD),
    )
    states = ListenState.objects.filter(motion=motion, last_post_at__lte=at)
    if agent_names is not None:
        mentions = mentions.filter(agent__name__in=agent_names)
        states = states.filter(agent__name__in=agent_names)
    held = set(mentions.exclude(hold="").values_list("agent_id", flat=True))
    owed = list(mentions.order_by("pk").values_list("pk", "agent_id", "message__sender"))
    mentions.filter(pk__in=[pk for pk, _, _ in owed]).update(
        status=MentionWake.Status.LET_GO,
        hold=f"let go: {by} stopped the agent's turns here"[:300],
        hold_until=None,
    )
    for agent in Agent.objects.filter(pk__in=held):
        lift_hold(motion, agent)  # no longer among the holds
    states.update(considered_through=F("last_post_at"), version=F("version") + 1)
    say_let_go(motion, by, owed)


def say_let_go(motion: Motion, by: str, owed: list[tuple[int, int, str]]) -> None:
    """One line an agent for the mentions a stop let go: whoever asked is told it will not be
    answered (under an id of the first of them: said once however often the stop is heard)."""
    by_agent: dict[int, list[tuple[int, str]]] = {}
    for pk, agent_id, sender in owed:
        by_agent.setdefault(agent_id, []).append((pk, sender))
    for agent in Agent.objects.filter(pk__in=by_agent):
        asked = by_agent[agent.pk]
        senders = sorted({sender for _, sender in asked})
        posts = "a post" if len(asked) == 1 else f"{len(asked)} posts"
        text = (
            f"■ {by} stopped @{agent.name}: {posts} still waiting for it ({', '.join(senders)}) let go,"
            " not to be answered; mention it again to ask anew."
        )
        post_system_message(
            motion,
            text,
            kind=Kind.WAKE,
            message_id=system_uuid("let-go", motion.pk, asked[0][0]),
            agent=agent,
        )


def changed_in_host(sender, motion: Motion, agent: Agent | None, setting: str, record, **kwargs) -> None:
    """`signals.host_steering_changed`: the host's own page changed a setting (memory-lane's
    settings rows are the steering then): said in the thread (a Mood's own change), and the loop
    looks again now."""
    if record is not None:
        row = Steer(
            motion=motion,
            agent=agent,
            setting=setting,
            value=record.value,
            until=record.until,
            by_name=f"{record.by_name} (on memory-lane's page)",
            at=record.at,
        )
        said = describe(row)
        if record.refused:  # never announced as done: what was asked, and why it does not count
            said = f"Not applied: {said} — {record.refused}"
        post_system_message(
            motion, said, kind=Kind.WAKE, message_id=system_uuid("steer", record.ref), agent=agent
        )
        if record.refused:
            return
    if setting in (S.LISTENING, S.ARCHIVED, *TIMING_WORDS):
        catch_up(motion, agent)
