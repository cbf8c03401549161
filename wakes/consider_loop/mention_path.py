"""A post's @mention of an agent: read once (`gather_mention_facts`), decided once
(`mention_verdict.decide_mention`, no database), and acted on once (`act`).

`act` is the one place the mention path writes: the `MentionWake` row, the thread's line, the
hold kept for memory-lane, and the turn queued (`mention_turns.wake_for_mention`, or a command's
maintenance turn). Each write is idempotent per (post, agent): a post handled twice (a retried
write, two workers) is decided once.
"""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction

from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Agent, Kind, Message, Turn

from ..decision.mentions import mentioned_names
from ..decision.steering import NEVER, mentions_held, scram_holds
from ..models import Dials, MentionWake, clock
from ..models.in_force import resolve
from ..turn.commands import command_in, may_run, refusal, run_command
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


def chain_facts(post: Message, agent: Agent, dials: Dials) -> ChainFacts:
    """What the chain guard reads behind an agent's post (chains.py's reads)."""
    limit = resolve(post.motion_id, agent.pk, dials, steered=False).agent_chain_turns
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


def gather_mention_facts(
    post: Message, agent: Agent, *, scram: bool | None = None, now: datetime | None = None
) -> MentionFacts:
    """Everything the verdict reads, once. What no gate reached can ask for is not read (an old
    post's chain, a command's listening): the facts stop where the verdict must stop."""
    dials = Dials.load()
    person = is_person(post)
    # Parsed whatever the gates say: a person's command is the whole post, for the loop too.
    command = command_in(post, agent) if person else None
    facts = MentionFacts(
        now=now or clock.now(),
        horizon_minutes=dials.backfill_horizon_minutes,
        terminal_delay_seconds=dials.terminal_mention_delay_seconds,
        scram=scram_holds() if scram is None else scram,
        wiki_tier=post.sign_in == WIKI_TIER,
        person=person,
        command=command,
    )
    if facts.wiki_tier or too_old(post, facts):
        return facts
    recorded = MentionWake.objects.filter(message=post, agent=agent).values_list("status", flat=True).first()
    trusted, rule = may_run(post) if command is not None and not facts.scram else (False, "")
    chain = None
    if recorded is None and not facts.scram and post.agent_id is not None:
        chain = chain_facts(post, agent, dials)
    off = None
    if recorded is None and not facts.scram and command is None and post.source in AT_ONCE_SOURCES:
        off = mentions_held(post.motion_id, agent.pk)
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
    )


def act(post: Message, agent: Agent, verdict: Verdict, *, dispatch: bool = True) -> Turn | None:
    """Write what the verdict says: the only writer of the mention path. Returns the turn queued
    (or joined) for the mention, if any."""
    now = clock.now()
    match verdict:
        case Ignore():
            return None
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
        case Command(name=name, argument=argument, rule=rule):
            if record_once(post, agent, MentionWake.Status.WOKEN, now):
                return run_command(post, agent, name, argument, rule, dispatch=dispatch)
            return None  # already run for this post
        case Refuse(kind=Because.SCRAM, reason=reason, command=name):
            if record_once(post, agent, MentionWake.Status.LET_GO, now, hold=reason):
                say(
                    post,
                    agent,
                    f"{post.sender}'s /{name} for @{agent.name} was not run: {reason}.",
                    system_uuid("command-scram", post.pk, agent.pk),
                )
            return None
        case Refuse(command=name):
            if record_once(post, agent, MentionWake.Status.WOKEN, now):
                say(
                    post, agent, refusal(post, agent, name), system_uuid("command-refused", post.pk, agent.pk)
                )
            return None
        case Hold(kind=Because.SCRAM, reason=reason):
            if record_once(post, agent, MentionWake.Status.HELD, now, hold=reason):
                show_hold(post.motion, agent, reason, None)
                say(
                    post,
                    agent,
                    f"@{agent.name} is not woken while a scram holds: {post.sender}'s mention is held and "
                    "answered once it is lifted.",
                    system_uuid("mention-scram", post.pk, agent.pk),
                )
            return None
        case Hold(kind=Because.CHAINED, reason=reason, chain=chain, once_per=once_per) if chain is not None:
            if record_once(post, agent, MentionWake.Status.CHAINED, now, hold=reason, due_at=NEVER):
                show_hold(post.motion, agent, reason, None)
                # Said once per chain (its id is the Motion's newest person's post), naming its agents.
                say(
                    post,
                    None,
                    f"{named(chain.agents)} have woken each other {chain.turns} times in a row with no "
                    f"person's post between: @{agent.name} is not woken by {post.sender}'s mention. A "
                    "person's post here lets them go on.",
                    system_uuid("agent-chain", post.motion_id, once_per),
                )
            return None
        case Hold(kind=Because.LISTENING, reason=reason, until=until):
            # Answered once its listening is back (release_held); among the Motion's holds meanwhile.
            if record_once(
                post, agent, MentionWake.Status.HELD, now, hold=reason, due_at=until or NEVER, until=until
            ):
                show_hold(post.motion, agent, reason, until)
                back = f"at {until:%Y-%m-%d %H:%M} UTC" if until else "when its listening is back on"
                say(
                    post,
                    agent,
                    f"@{agent.name} is not listening here: {post.sender}'s mention is held and answered {back}.",
                    system_uuid("mention-held", post.pk, agent.pk),
                )
            return None
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


def say(post: Message, agent: Agent | None, text: str, line_id: str) -> None:
    """The mention path's one line in the thread (idempotent by its id)."""
    post_system_message(post.motion, text, kind=Kind.WAKE, message_id=line_id, agent=agent)
