"""What one @mention of one agent asks for, decided once over what was read (no database, no I/O).

`decide_mention(post, agent, facts)` answers one `Verdict`:

- `Ignore`: a wiki sign-in's @ (just text), a post older than the backfill horizon, a post this
  agent's mention was decided for already, a source that wakes nothing (a hook's, an import's);
- `Hold`: a scram holds (answered once it is lifted), the chain guard (a person's post lets it go
  on), the agent's listening here is off (answered when it is back);
- `Refuse`: a person's command during a scram, or by someone who may not grant full tools;
- `Command`: a person's `@agent /compact`, `/context`, `/usage`;
- `Wake`: now (the web, the API, an agent's turn) or, a terminal's, once its wait ran out unanswered.

The gates run in that order (`GATES` names them for the table tests in
tests/wakes/test_mention_verdict.py). `mention_path.gather_mention_facts` reads the facts and
`mention_path.act` is the one place that writes what the verdict says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from motion_runner.models import Agent, Message, Source

from .chains import Asked, Chain, Link, Said, chain_behind, chain_in_motion, named, past_bound

# A person signed in with the wiki (the lowest tier: anyone with a wiki account) mentions no agent
# awake: mentions are unbudgeted, and memory-lane skips them (views_moods.api_mentions).
WIKI_TIER = "wiki"
# Mentions that wake at once: a person's in the web or through the API, an agent's turn's words
# (the runner's) and an agent's posts through the API (the stream API's included).
AT_ONCE_SOURCES = (Source.WEB, Source.API, Source.RUNNER)
SCRAM_HOLD = "a scram holds: answered once it is lifted"
SCRAM_COMMAND_NOT_RUN = "a scram holds every wake; type it again once it is lifted"


class Because(StrEnum):
    """The kind of a Hold or a Refuse (act writes each its own way)."""

    SCRAM = "scram"
    CHAINED = "chained"
    LISTENING = "listening"
    UNTRUSTED = "untrusted"
    CAP = "cap"  # a watch wake refused by a daily cap (watch_verdict.py)


@dataclass(frozen=True)
class ChainFacts:
    """What the chain guard reads for an agent's post (chains.py's rules are asked with them)."""

    post: Said
    links: tuple[Link, ...]
    people: tuple[Said, ...]
    records: tuple[Asked, ...]
    since: datetime | None  # the Motion's newest person's post at or before this one
    limit: int  # agent_chain_turns for the pair
    since_id: str | None = None  # that post's id: the chain's line is said once per person's post


@dataclass(frozen=True)
class MentionFacts:
    """One post's mention of one agent, as read once (`mention_path.gather_mention_facts`)."""

    now: datetime
    horizon_minutes: int  # backfill_horizon_minutes
    terminal_delay_seconds: int  # terminal_mention_delay_seconds
    scram: bool
    recorded: str | None = None  # the status of a decision written already for this post and agent
    wiki_tier: bool = False
    person: bool = False  # loop.is_person: words not from an agent, the runner or a watch
    command: tuple[str, str] | None = None  # a person's (command, argument) for this agent
    trusted: bool = False  # the post may run a command (full tools, or the first run's account)
    trust_rule: str = ""  # why it may (wakes/decision/trust.py), read for a command only
    listening_off: bool = False
    listening_until: datetime | None = None
    chain: ChainFacts | None = None  # only for an agent's post
    context: dict | None = None  # a Codex or Pi /context: its context_fullness, read with the post


# When a Wake wakes: now, or (a terminal's mention) once its wait ran out unanswered. The turn's
# tools (full or look-only) are the trust rules' to choose when it is queued (turn/wake.py).
NOW = "now"
AFTER_WAIT = "after its wait"


@dataclass(frozen=True)
class Wake:
    mode: str
    reason: str
    after: datetime | None = None  # AFTER_WAIT: due then, unless answered meanwhile


@dataclass(frozen=True)
class Hold:
    kind: Because
    reason: str
    until: datetime | None = None
    chain: Chain | None = None  # CHAINED: the agents and turns the line names
    once_per: str = ""  # CHAINED: the line is said once per chain (the person's post it follows)


@dataclass(frozen=True)
class Refuse:
    kind: Because
    reason: str
    command: str = ""  # the command refused; "" for a watch wake refused by a cap
    once_per: str = ""  # CAP: the line is said once per cap window


@dataclass(frozen=True)
class Command:
    name: str
    argument: str
    rule: str
    context: dict | None = None  # what a /context answered from the record says (read with the post)


@dataclass(frozen=True)
class Ignore:
    reason: str


Verdict = Wake | Hold | Refuse | Command | Ignore

GATES = (
    "wiki tier",
    "backfill horizon",
    "decided already",
    "scram",
    "chain guard",
    "terminal source",
    "at-once sources",
    "commands",
    "listening held",
    "wake",
)


def hushed(until: datetime | None) -> str:
    """A held mention's reason among the Motion's holds (`/holds/`, memory-lane's `…/held/`)."""
    if until is None:
        return "hushed until its listening is back on"
    return f"hushed until {until.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def chain_past_bound(chain: ChainFacts, agent: str) -> Chain | None:
    """chains.py's rules over what was read: the chain this mention would lengthen past its bound."""
    behind = chain_behind(chain.post, chain.links, chain.people, chain.limit)
    here = chain_in_motion(chain.post.motion_id, chain.records, chain.since)
    return past_bound(behind, here, agent, chain.limit)


def chain_reason(chain: Chain) -> str:
    return (
        f"{named(chain.agents)} woke each other {chain.turns} times in a row; a person's post lets them go on"
    )


def too_old(post: Message, facts: MentionFacts) -> bool:
    """An old post imported late (a backfill): its moment has passed."""
    return past_horizon(post, facts.now, facts.horizon_minutes)


def past_horizon(post: Message, now: datetime, horizon_minutes: int) -> bool:
    return post.created_at < now - timedelta(minutes=horizon_minutes)


def decide_mention(post: Message, agent: Agent, facts: MentionFacts) -> Verdict:
    """The verdict on `post`'s mention of `agent`; reads the post's source, sender and time only."""
    if facts.wiki_tier:
        return Ignore("a wiki sign-in's @ is just text")
    if too_old(post, facts):
        return Ignore("older than the backfill horizon: its moment has passed")
    if facts.recorded is not None:
        return Ignore(f"decided already for this post ({facts.recorded})")
    if facts.scram:
        if facts.command is not None:
            # Not kept for later (what it would show is of now), but answered: nobody waits for it.
            return Refuse(Because.SCRAM, SCRAM_COMMAND_NOT_RUN, facts.command[0])
        return Hold(Because.SCRAM, SCRAM_HOLD)
    if facts.chain is not None and (chain := chain_past_bound(facts.chain, agent.name)) is not None:
        once_per = facts.chain.since_id or "start"
        return Hold(Because.CHAINED, chain_reason(chain)[:300], chain=chain, once_per=once_per)
    if post.source == Source.TERMINAL:
        due = post.created_at + timedelta(seconds=facts.terminal_delay_seconds)
        return Wake(AFTER_WAIT, f"a terminal mention by {post.sender}, unless answered meanwhile", after=due)
    if post.source not in AT_ONCE_SOURCES:
        return Ignore(f"a {post.source} post wakes nothing by its mentions")
    if facts.command is not None:
        name, argument = facts.command
        if not facts.trusted:
            return Refuse(Because.UNTRUSTED, f"{post.sender}'s post may not grant full tools", name)
        return Command(name, argument, facts.trust_rule, facts.context)
    if facts.listening_off:
        return Hold(Because.LISTENING, hushed(facts.listening_until), facts.listening_until)
    return Wake(NOW, f"mentioned by {post.sender}")
