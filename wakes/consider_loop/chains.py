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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Agent, Kind, Message, Source, Turn, TurnStatus

from ..decision.steering import NEVER, scram_holds
from ..holds import lift_hold
from ..models import MentionWake, clock
from ..models.dials import resolve
from .loop import is_person
from .mention_turns import MENTION, show_hold, wake_for_mention

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


def person_posted(motion_ids: set[str], after, before) -> bool:
    return Message.objects.filter(
        PERSON_POST, motion_id__in=motion_ids, created_at__gt=after, created_at__lte=before
    ).exists()


def chain_behind(post: Message, limit: int) -> Chain:
    """Agent-woken turns in a row behind `post`, followed back across Motions (at most `limit`+1)."""
    chain = Chain(agents=[post.sender])
    current, seen = post, set()
    while chain.turns <= limit:
        turn = writer_turn(current)
        if turn is None or turn.reason != MENTION or turn.pk in seen:
            break
        seen.add(turn.pk)
        asked = [
            record.message
            for record in MentionWake.objects.filter(turn=turn)
            .select_related("message")
            .order_by("message__created_at", "pk")
        ]
        if not asked or any(message.agent_id is None for message in asked):
            break  # a person asked for it: the chain starts after it
        if person_posted({current.motion_id, turn.motion_id}, asked[0].created_at, current.created_at):
            break
        chain.turns += 1
        chain.agents += [turn.agent.name, *(message.sender for message in asked)]
        current = asked[-1]
    chain.agents = list(dict.fromkeys(chain.agents))
    return chain


def latest_person_post(motion_id: str, before) -> Message | None:
    return (
        Message.objects.filter(PERSON_POST, motion_id=motion_id, created_at__lte=before)
        .order_by("-created_at", "-id")
        .first()
    )


def chain_in_motion(post: Message) -> Chain:
    """Mention turns in the post's Motion woken only by agents' posts since its newest person's post."""
    since = latest_person_post(post.motion_id, post.created_at)
    # Only records with a turn: a NULL in the list would make `NOT IN (…, NULL)` never true, and
    # the count 0 from the first command, waiting mention or scram-held mention on (issue 39).
    asked_by_people = MentionWake.objects.filter(message__agent__isnull=True, turn__isnull=False).values(
        "turn"
    )
    records = MentionWake.objects.filter(
        message__motion_id=post.motion_id, turn__isnull=False, message__agent__isnull=False
    ).exclude(turn__in=asked_by_people)
    if since is not None:
        records = records.filter(message__created_at__gt=since.created_at)
    rows = list(records.values_list("turn", "turn__agent__name", "message__sender"))
    names = [name for _, agent, sender in rows for name in (sender, agent)]
    return Chain(turns=len({turn for turn, _, _ in rows}), agents=list(dict.fromkeys(names)))


def chain_for(post: Message, agent: Agent) -> Chain | None:
    """The chain an agent's mention would lengthen past its bound (None: it may wake)."""
    if post.agent_id is None:
        return None
    limit = resolve(post.motion_id, agent.pk, steered=False).agent_chain_turns
    behind = chain_behind(post, limit)
    here = chain_in_motion(post)
    longest = max(behind, here, key=lambda chain: chain.turns)
    if longest.turns < limit:
        return None
    names = list(dict.fromkeys([*behind.agents, *here.agents, agent.name]))
    return Chain(turns=longest.turns, agents=names)


def named(agents: list[str]) -> str:
    tagged = [f"@{name}" for name in agents]
    return tagged[0] if len(tagged) == 1 else ", ".join(tagged[:-1]) + " and " + tagged[-1]


def hold_chained(message: Message, agent: Agent, chain: Chain) -> MentionWake:
    """Hold the mention until a person posts here; the thread says so once per chain."""
    now = clock.now()
    reason = (
        f"{named(chain.agents)} woke each other {chain.turns} times in a row; a person's post lets them go on"
    )
    record, made = MentionWake.objects.get_or_create(
        message=message,
        agent=agent,
        defaults={
            "status": MentionWake.Status.CHAINED,
            "due_at": NEVER,
            "created_at": now,
            "hold": reason[:300],
        },
    )
    if made:
        show_hold(message.motion, agent, reason[:300], None)
        since = latest_person_post(message.motion_id, message.created_at)
        post_system_message(
            message.motion,
            f"{named(chain.agents)} have woken each other {chain.turns} times in a row with no person's "
            f"post between: @{agent.name} is not woken by {message.sender}'s mention. A person's post "
            "here lets them go on.",
            kind=Kind.WAKE,
            message_id=system_uuid("agent-chain", message.motion_id, since.pk if since else "start"),
        )
    return record


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
