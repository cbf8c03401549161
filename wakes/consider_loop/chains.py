"""The chain guard: agents that wake each other with @mentions, with no person's post between
them, are bounded (`agent_chain_turns`, default 6; docs/limits.md).

A chain is counted two ways, and the longer one decides:

- back along the posts (across Motions): the post that mentions an agent was written by a turn
  (the runner's, or the agent's turn running when it posted through the API, in any Motion);
  that turn was woken by other agents' posts, written by their turns, and so on, back to a turn
  a person asked for or a post no turn wrote. A person's post in either Motion of a link ends it.
- in the Motion: mention turns woken only by agents' posts since the Motion's newest person's post.

Past the bound the mention is held (`MentionWake.CHAINED`), shown among the Motion's holds, and
the thread says so once per chain, naming its agents. A person's post in the Motion wakes what
is held there (`release_chained`), counted from zero again.

The rules are pure functions over what was read once (`chain_behind`, `chain_in_motion`,
`past_bound`, tested as tables with no database in tests/wakes/test_chain_rules.py); the mention
path reads (`links_behind`, `people_between`, `records_in_motion`: mention_path.chain_facts) and
asks them (mention_verdict.decide_mention); its `act` holds the mention and says the line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q

from motion_runner.models import Agent, Kind, Message, Source, Turn, TurnStatus

from ..decision.steering import scram_holds
from ..holds import lift_hold
from ..models import MentionWake, clock
from .loop import is_person
from .mention_turns import MENTION, wake_for_mention

# Who counts as a person asking, for the chain (the loop's rule: words not from an agent, the
# runner or a watch).
PERSON_POST = Q(agent__isnull=True, kind=Kind.TEXT) & ~Q(
    source__in=(Source.WATCH, Source.SYSTEM, Source.RUNNER)
)


@dataclass
class Chain:
    """Agent-woken turns in a row behind a post, and the agents in them (oldest last)."""

    turns: int = 0
    agents: list[str] = field(default_factory=list)


# --- the rules, over what was read (no database) -----------------------------------------------


@dataclass(frozen=True)
class Said:
    """A post as the chain sees it: who wrote it (an agent or not), where and when."""

    sender: str
    by_agent: bool
    motion_id: str
    at: datetime


@dataclass(frozen=True)
class Link:
    """A turn behind a post: its reason, agent and Motion, and the mentions that asked for it
    (oldest first; none for a turn no mention asked for)."""

    turn_id: int
    reason: str
    agent: str
    motion_id: str
    asked: tuple[Said, ...] = ()


@dataclass(frozen=True)
class Asked:
    """A mention that asked for a turn (`turn_id`, of the agent `agent`)."""

    turn_id: int
    agent: str
    by: Said


def chain_behind(post: Said, links: Sequence[Link], people: Sequence[Said], limit: int) -> Chain:
    """Agent-woken turns in a row behind `post` (at most `limit`+1). `links[0]` is the turn that
    wrote `post`, `links[1]` the one that wrote `links[0]`'s newest asking mention, and so on;
    `people` are persons' posts in the Motions of those links. The walk ends at a turn that is not
    a mention turn, one seen before, one no mention asked for, one a person asked for (alone or
    with agents), or a person's post in either Motion of the link since its first asking mention."""
    chain = Chain(agents=[post.sender])
    current, seen = post, set()
    for turn in links:
        if chain.turns > limit or turn.reason != MENTION or turn.turn_id in seen:
            break
        seen.add(turn.turn_id)
        asked = turn.asked
        if not asked or any(not message.by_agent for message in asked):
            break  # a person asked for it: the chain starts after it
        if person_between(people, {current.motion_id, turn.motion_id}, asked[0].at, current.at):
            break
        chain.turns += 1
        chain.agents += [turn.agent, *(message.sender for message in asked)]
        current = asked[-1]
    chain.agents = list(dict.fromkeys(chain.agents))
    return chain


def person_between(people: Sequence[Said], motion_ids: set[str], after: datetime, before: datetime) -> bool:
    return any(p.motion_id in motion_ids and after < p.at <= before for p in people)


def chain_in_motion(motion_id: str, records: Sequence[Asked], since: datetime | None) -> Chain:
    """Mention turns in the Motion woken only by agents' posts since its newest person's post
    (`since`). `records` are the asking mentions of the turns in question, in every Motion: a
    turn any person asked for is not counted."""
    asked_by_people = {record.turn_id for record in records if not record.by.by_agent}
    counted = [
        record
        for record in records
        if record.by.by_agent
        and record.by.motion_id == motion_id
        and (since is None or record.by.at > since)
        and record.turn_id not in asked_by_people
    ]
    names = [name for record in counted for name in (record.by.sender, record.agent)]
    return Chain(turns=len({record.turn_id for record in counted}), agents=list(dict.fromkeys(names)))


def past_bound(behind: Chain, here: Chain, agent: str, limit: int) -> Chain | None:
    """The longer count decides; at the bound the mention is held (None: it may wake)."""
    longest = max(behind, here, key=lambda chain: chain.turns)
    if longest.turns < limit:
        return None
    return Chain(turns=longest.turns, agents=list(dict.fromkeys([*behind.agents, *here.agents, agent])))


# --- what the rules read ----------------------------------------------------------------------


def said(message: Message) -> Said:
    return Said(message.sender, message.agent_id is not None, message.motion_id, message.created_at)


def writer_turn(post: Message) -> Turn | None:
    """The turn that wrote an agent's post: its own, or (a post through the API, which names no
    turn) the agent's turn that was running then, in any Motion."""
    if post.turn_id is not None:
        return post.turn
    if post.agent_id is None:
        return None
    at = post.created_at
    return (
        Turn.objects.filter(agent_id=post.agent_id, started_at__lte=at)
        .filter(Q(status=TurnStatus.RUNNING) | Q(ended_at__gte=at))
        .order_by("-started_at")
        .first()
    )


def links_behind(post: Message, limit: int) -> list[Link]:
    """The turns behind `post`, back along the posts (at most `limit`+2 of them)."""
    links: list[Link] = []
    current, seen = post, set()
    while len(links) <= limit + 1:
        turn = writer_turn(current)
        if turn is None or turn.pk in seen:
            break
        seen.add(turn.pk)
        asked = [
            record.message
            for record in MentionWake.objects.filter(turn=turn)
            .select_related("message")
            .order_by("message__created_at", "pk")
        ]
        links.append(Link(turn.pk, turn.reason, turn.agent.name, turn.motion_id, tuple(map(said, asked))))
        if turn.reason != MENTION or not asked:
            break
        current = asked[-1]
    return links


def people_between(links: Sequence[Link], post: Message) -> list[Said]:
    """Persons' posts in the links' Motions since the oldest asking mention (one read)."""
    asked = [message for link in links for message in link.asked]
    if not asked:
        return []
    motions = {post.motion_id, *(link.motion_id for link in links)}
    posts = Message.objects.filter(
        PERSON_POST,
        motion_id__in=motions,
        created_at__gt=min(message.at for message in asked),
        created_at__lte=post.created_at,
    )
    return [said(message) for message in posts.only("sender", "agent_id", "motion_id", "created_at")]


def latest_person_post(motion_id: str, before) -> Message | None:
    return (
        Message.objects.filter(PERSON_POST, motion_id=motion_id, created_at__lte=before)
        .order_by("-created_at", "-id")
        .first()
    )


def records_in_motion(post: Message, since: Message | None) -> list[Asked]:
    """The asking mentions of the mention turns agents' posts in the post's Motion woke since its
    newest person's post (every asking mention of those turns, in any Motion)."""
    here = MentionWake.objects.filter(
        message__motion_id=post.motion_id, turn__isnull=False, message__agent__isnull=False
    )
    if since is not None:
        here = here.filter(message__created_at__gt=since.created_at)
    rows = (
        MentionWake.objects.filter(turn__in=here.values("turn"))
        .order_by("message__created_at", "pk")
        .values_list(
            "turn",
            "turn__agent__name",
            "message__sender",
            "message__agent",
            "message__motion",
            "message__created_at",
        )
    )
    return [
        Asked(turn, agent, Said(sender, by is not None, motion_id, at))
        for turn, agent, sender, by, motion_id, at in rows
    ]


def named(agents: list[str]) -> str:
    tagged = [f"@{name}" for name in agents]
    return tagged[0] if len(tagged) == 1 else ", ".join(tagged[:-1]) + " and " + tagged[-1]


def release_chained(message: Message, *, dispatch: bool = True) -> list[Turn]:
    """A person posted: the mentions the chain guard held in this Motion are answered now."""
    if not is_person(message) or scram_holds():
        return []
    held = MentionWake.objects.filter(
        status=MentionWake.Status.CHAINED, message__motion_id=message.motion_id
    ).select_related("message", "message__motion", "agent")
    woken = []
    for record in held:
        won = MentionWake.objects.filter(pk=record.pk, status=MentionWake.Status.CHAINED).update(
            status=MentionWake.Status.WOKEN, hold="", hold_until=None, due_at=clock.now()
        )
        if won != 1:
            continue  # another post let it go on
        lift_hold(record.message.motion, record.agent)
        if turn := wake_for_mention(record, dispatch=dispatch, late=f" (let go on by {message.sender})"):
            woken.append(turn)
    return woken


def let_chains_go(sender, motion, agent_names: list[str] | None, by: str, at, **kwargs) -> None:
    """turns_stopped receiver: a stop ends a held chain too (what was owed before it is not)."""
    held = MentionWake.objects.filter(
        message__motion=motion, message__created_at__lte=at, status=MentionWake.Status.CHAINED
    )
    if agent_names is not None:
        held = held.filter(agent__name__in=agent_names)
    agents = set(held.values_list("agent_id", flat=True))
    held.update(status=MentionWake.Status.LET_GO, hold="", hold_until=None)
    for agent in Agent.objects.filter(pk__in=agents):
        lift_hold(motion, agent)
