"""A post's @mention of an agent: read once (`gather_mention_facts`), decided once
(`mention_verdict.decide_mention`, no database), and acted on once (`act`).

What the core keeps (the author's first-run grant, the host's timing and steering rows, a context
reading) is read for all the post's mentions in one call (`read_for_mentions`: the core's
`read_post_facts`); this app's own rows (the decision so far, the chain, its Steer rows) beside it.

`act` is the one place the mention path writes: the `MentionWake` row, the thread's line, the
hold kept for memory-lane, and the turn queued (`mention_turns.wake_for_mention`, or a command's
maintenance turn). The core's share of a verdict that wakes nothing now (its lines, a command's
turn) is written in one call, the core's `answer_post`. Each write is idempotent per (post,
agent): a post handled twice (a retried write, two workers) is decided once.
"""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction

from motion_runner.lib.ids import system_uuid
from motion_runner.models import Agent, Message, Turn
from motion_runner.runner.post_answers import Line, TurnOrder, answer_post
from motion_runner.runner.post_facts import PostFacts, read_post_facts

from ..conf import app_settings as wakes_settings
from ..decision.mentions import mentioned_names
from ..decision.steering import NEVER, host_steering, own_steering, scram_holds
from ..models import Dials, MentionWake, clock
from ..models.in_force import in_force
from ..models.overrides import overrides_for
from ..turn.commands import command_in, first_run_asked, may_run, refusal, run_command
from ..turn.commands_elsewhere import runs_in_the_cli
from .chains import latest_person_post, links_behind, named, people_between, records_in_motion, said
from .loop import fenced_agents, is_person
from .mention_turns import show_hold, wake_for_mention
from .mention_verdict import (
    AT_ONCE_SOURCES,
    WIKI_TIER,
    Because,
    ChainFacts,
    Command,
    Hold,
    Ignore,
    MentionFacts,
    Refuse,
    Verdict,
    Wake,
    past_horizon,
    too_old,
)

# memory-lane's machinery senders (tool results, its own lines): never anyone's words.
MACHINERY_SENDERS = ("system", "tool-result")


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


def chain_facts(post: Message, agent: Agent, dials: Dials, reading: PostFacts) -> ChainFacts:
    """What the chain guard reads behind an agent's post (chains.py's reads); its bound is the
    pair's agent_chain_turns in force, over the host's timing rows read with the post."""
    overrides = overrides_for(post.motion_id, [agent.pk])
    limit = in_force(
        post.motion_id,
        agent.pk,
        dials,
        overrides,
        timing=reading.timing.get(agent.pk),
        host_budget=reading.daily_budget,
    ).agent_chain_turns
    links = links_behind(post, limit)
    since = latest_person_post(post.motion_id, post.created_at)
    return ChainFacts(
        post=said(post),
        links=tuple(links),
        people=tuple(people_between(links, post)),
        records=tuple(records_in_motion(post, since)),
        since=since and since.created_at,
        limit=limit,
        since_id=since and str(since.pk),
    )


def asked_command(post: Message, agent: Agent) -> tuple[str, str] | None:
    """A person's command for this agent, parsed whatever the gates say: it is the whole post,
    for the loop too."""
    return command_in(post, agent) if is_person(post) else None


def read_for_mentions(
    post: Message, agents: list[Agent], *, dials: Dials, scram: bool, now: datetime
) -> PostFacts:
    """The core's rows the gates of these agents' mentions can reach, read in one call: the
    author's first-run grant for a command, the host's timing behind an agent's post (the chain's
    bound), the host's listening for a mention that wakes at once, a Codex or Pi /context's
    reading. A gate no mention can reach (a wiki sign-in, an old post, a scram) reads nothing."""
    if scram or post.sign_in == WIKI_TIER or past_horizon(post, now, dials.backfill_horizon_minutes):
        return PostFacts()
    commands = {agent.pk: asked_command(post, agent) for agent in agents}
    return read_post_facts(
        post,
        first_run=first_run_asked(post) and any(commands.values()),
        timing_for=[agent.pk for agent in agents] if post.agent_id is not None else [],
        tick_seconds=dials.tick_seconds,
        steering_for=[a.pk for a in agents if commands[a.pk] is None and post.source in AT_ONCE_SOURCES],
        context_for=[
            a.pk
            for a in agents
            if commands[a.pk] is not None and commands[a.pk][0] == "context" and not runs_in_the_cli(a)
        ],
        context_window=wakes_settings.WAKES_CONTEXT_WINDOW_TOKENS,
    )


def mention_facts(post: Message, agent: Agent, *, scram: bool | None = None) -> MentionFacts:
    """One mention's facts read on their own (would_wake, the tests): the core's rows, then ours."""
    dials = Dials.load()
    scram = scram_holds() if scram is None else scram
    now = clock.now()
    reading = read_for_mentions(post, [agent], dials=dials, scram=scram, now=now)
    return gather_mention_facts(post, agent, reading, dials=dials, scram=scram, now=now)


def gather_mention_facts(
    post: Message, agent: Agent, reading: PostFacts, *, dials: Dials, scram: bool, now: datetime
) -> MentionFacts:
    """Everything the verdict reads, once: the core's rows read with the post (`reading`:
    read_for_mentions) and this app's own. What no gate reached can ask for is not read (an old
    post's chain, a command's listening): the facts stop where the verdict must stop."""
    person = is_person(post)
    command = asked_command(post, agent)
    facts = MentionFacts(
        now=now,
        horizon_minutes=dials.backfill_horizon_minutes,
        terminal_delay_seconds=dials.terminal_mention_delay_seconds,
        scram=scram,
        wiki_tier=post.sign_in == WIKI_TIER,
        person=person,
        command=command,
    )
    if facts.wiki_tier or too_old(post, facts):
        return facts
    recorded = MentionWake.objects.filter(message=post, agent=agent).values_list("status", flat=True).first()
    trusted, rule = may_run(post, reading.first_run) if command is not None and not scram else (False, "")
    chain = None
    if recorded is None and not scram and post.agent_id is not None:
        chain = chain_facts(post, agent, dials, reading)
    off = None
    if recorded is None and not scram and command is None and post.source in AT_ONCE_SOURCES:
        steering = (
            host_steering(reading.steering[agent.pk], now)
            if reading.hosted
            else own_steering(post.motion_id, agent.pk, now)
        )
        off = steering if steering.listening == "off" else None
    return MentionFacts(
        now=facts.now,
        horizon_minutes=facts.horizon_minutes,
        terminal_delay_seconds=facts.terminal_delay_seconds,
        scram=facts.scram,
        recorded=recorded,
        wiki_tier=False,
        person=person,
        command=command,
        trusted=trusted,
        trust_rule=rule,
        listening_off=off is not None,
        listening_until=off.listening_until if off is not None else None,
        chain=chain,
        context=reading.context.get(agent.pk),
    )


def act(post: Message, agent: Agent, verdict: Verdict, *, dispatch: bool = True) -> Turn | None:
    """Write what the verdict says: the only writer of the mention path. This app's rows (the
    decision's, a hold) here; the core's share (the thread's lines, a command's turn) in one call,
    `answer_post`. Returns the turn queued (or joined) for the mention, if any."""
    now = clock.now()
    match verdict:
        case Wake(after=None):
            try:
                with transaction.atomic():
                    record = MentionWake.objects.create(
                        message=post, agent=agent, status=MentionWake.Status.WOKEN, due_at=now, created_at=now
                    )
            except IntegrityError:
                return None  # already woken for this post
            return wake_for_mention(record, dispatch=dispatch)
        case Wake(after=due):
            # A terminal's mention waits to see if it gets answered (check_mentions wakes it).
            MentionWake.objects.get_or_create(
                message=post, agent=agent, defaults={"due_at": due, "created_at": now}
            )
            return None
    lines, order = answer_for(post, agent, verdict, now)
    return answer_post(post, lines, order, dispatch=dispatch, now=now)


def answer_for(
    post: Message, agent: Agent, verdict: Verdict, now: datetime
) -> tuple[list[Line], TurnOrder | None]:
    """This app's rows for a verdict that wakes nothing now, written; what the core is to write
    for it (lines, a command's turn) returned. Nothing when it was decided for this post already."""
    match verdict:
        case Ignore():
            return [], None
        case Command(name=name, argument=argument, rule=rule, context=context):
            if record_once(post, agent, MentionWake.Status.WOKEN, now):
                return run_command(post, agent, name, argument, rule, context)
            return [], None  # already run for this post
        case Refuse(kind=Because.SCRAM, reason=reason, command=name):
            if record_once(post, agent, MentionWake.Status.LET_GO, now, hold=reason):
                text = f"{post.sender}'s /{name} for @{agent.name} was not run: {reason}."
                return [Line(text, system_uuid("command-scram", post.pk, agent.pk), agent)], None
            return [], None
        case Refuse(command=name):
            if record_once(post, agent, MentionWake.Status.WOKEN, now):
                text = refusal(post, agent, name)
                return [Line(text, system_uuid("command-refused", post.pk, agent.pk), agent)], None
            return [], None
        case Hold(kind=Because.SCRAM, reason=reason):
            if record_once(post, agent, MentionWake.Status.HELD, now, hold=reason):
                show_hold(post.motion, agent, reason, None)
                text = (
                    f"@{agent.name} is not woken while a scram holds: {post.sender}'s mention is held and "
                    "answered once it is lifted."
                )
                return [Line(text, system_uuid("mention-scram", post.pk, agent.pk), agent)], None
            return [], None
        case Hold(kind=Because.CHAINED, reason=reason, chain=chain, once_per=once_per) if chain is not None:
            if record_once(post, agent, MentionWake.Status.CHAINED, now, hold=reason, due_at=NEVER):
                show_hold(post.motion, agent, reason, None)
                # Said once per chain (its id is the Motion's newest person's post), naming its agents.
                text = (
                    f"{named(chain.agents)} have woken each other {chain.turns} times in a row with no "
                    f"person's post between: @{agent.name} is not woken by {post.sender}'s mention. A "
                    "person's post here lets them go on."
                )
                return [Line(text, system_uuid("agent-chain", post.motion_id, once_per))], None
            return [], None
        case Hold(kind=Because.LISTENING, reason=reason, until=until):
            # Answered once its listening is back (release_held); among the Motion's holds meanwhile.
            if record_once(
                post, agent, MentionWake.Status.HELD, now, hold=reason, due_at=until or NEVER, until=until
            ):
                show_hold(post.motion, agent, reason, until)
                back = f"at {until:%Y-%m-%d %H:%M} UTC" if until else "when its listening is back on"
                text = f"@{agent.name} is not listening here: {post.sender}'s mention is held and answered {back}."
                return [Line(text, system_uuid("mention-held", post.pk, agent.pk), agent)], None
            return [], None
    raise ValueError(f"no act for the verdict {verdict!r}")


def record_once(
    post: Message,
    agent: Agent,
    status: str,
    now: datetime,
    *,
    hold: str = "",
    due_at: datetime | None = None,
    until: datetime | None = None,
) -> bool:
    """The decision's row for (post, agent); False when one was written already (said then)."""
    _, made = MentionWake.objects.get_or_create(
        message=post,
        agent=agent,
        defaults={
            "status": status,
            "due_at": due_at or now,
            "created_at": now,
            "hold": hold,
            "hold_until": until,
        },
    )
    return made
