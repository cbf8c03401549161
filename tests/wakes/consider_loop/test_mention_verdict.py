"""Every gate of a post's @mention (wakes/consider_loop/mention_verdict.py) as a table over the pure
`decide_mention`, with no database: one row per gate outcome, named after its rule, and rows for
which gate goes first where two would answer.

Personas: Justin (a person), @abot and @bbot (agents) in the Motion "volley" (V).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest

from wakes.consider_loop.chains import Asked, Chain, Link, Said
from wakes.consider_loop.mention_verdict import (
    AFTER_WAIT,
    NOW,
    SCRAM_COMMAND_NOT_RUN,
    SCRAM_HOLD,
    Because,
    ChainFacts,
    Command,
    Hold,
    Ignore,
    MentionFacts,
    Refuse,
    Wake,
    decide_mention,
)

NOW_AT = datetime(2026, 12, 6, 18, 0, tzinfo=UTC)
V = "volley"
UNTIL = NOW_AT + timedelta(hours=2)


@dataclass(frozen=True)
class Post:
    """What the verdict reads of a post: who, from where, when."""

    sender: str = "justin"
    source: str = "web"
    created_at: datetime = NOW_AT


@dataclass(frozen=True)
class Named:
    name: str = "bbot"


def facts(**changes) -> MentionFacts:
    """A person's plain mention, read a moment ago: it wakes now (changes make each gate answer)."""
    return replace(
        MentionFacts(now=NOW_AT, horizon_minutes=60, terminal_delay_seconds=120, scram=False), **changes
    )


def said(sender: str, seconds: int) -> Said:
    return Said(sender, sender.endswith("bot"), V, NOW_AT - timedelta(seconds=seconds))


def volley(turns: int, limit: int = 6) -> ChainFacts:
    """An agent's post behind `turns` agent-woken turns in a row (abot and bbot, after Justin)."""
    links, names = [], ["abot", "bbot"]
    for n in range(turns):
        # Newest first: turn n was woken by the other agent's post before it.
        links.append(Link(100 - n, "mention", names[n % 2], V, (said(names[(n + 1) % 2], 10 * (n + 1)),)))
    links.append(Link(1, "mention", names[turns % 2], V, (said("justin", 10 * (turns + 1)),)))
    return ChainFacts(
        post=said("abot", 0), links=tuple(links), people=(), records=(), since=None, limit=limit
    )


def keys_outside_turns(turns: int) -> ChainFacts:
    """Agents' key posts that no turn wrote (no links behind), but that woke `turns` mention turns
    in the Motion since Justin last posted: the Motion's own count holds them."""
    records = tuple(
        Asked(n, ("abot", "bbot")[n % 2], said(("bbot", "abot")[n % 2], 100 - n)) for n in range(turns)
    )
    return ChainFacts(post=said("abot", 0), links=(), people=(), records=records, since=None, limit=6)


AGENT = Post(sender="abot", source="api")
OLD = Post(created_at=NOW_AT - timedelta(minutes=61))

ROWS = [
    # (rule, post, facts, verdict)
    ("a wiki sign-in's @ is just text", Post(), facts(wiki_tier=True), Ignore),
    ("a post older than the backfill horizon wakes nothing", OLD, facts(), Ignore),
    (
        "a post at the horizon still wakes",
        Post(created_at=NOW_AT - timedelta(minutes=60)),
        facts(),
        Wake(NOW, "mentioned by justin"),
    ),
    ("a mention decided already is not decided again", Post(), facts(recorded="woken"), Ignore),
    (
        "a mention during a scram is held for the lift",
        Post(),
        facts(scram=True),
        Hold(Because.SCRAM, SCRAM_HOLD),
    ),
    (
        "a command during a scram is refused, not kept",
        Post(),
        facts(scram=True, command=("context", "")),
        Refuse(Because.SCRAM, SCRAM_COMMAND_NOT_RUN, "context"),
    ),
    ("an agent's post past the chain's bound is held", AGENT, facts(chain=volley(6)), Because.CHAINED),
    (
        "agents' key posts outside their turns are counted in the Motion",
        AGENT,
        facts(chain=keys_outside_turns(6)),
        Because.CHAINED,
    ),
    (
        "five key posts outside turns still wake",
        AGENT,
        facts(chain=keys_outside_turns(5)),
        Wake(NOW, "mentioned by abot"),
    ),
    (
        "an agent's post below the chain's bound wakes",
        AGENT,
        facts(chain=volley(5)),
        Wake(NOW, "mentioned by abot"),
    ),
    (
        "a terminal's mention waits to see if it is answered",
        Post(source="terminal"),
        facts(),
        Wake(
            AFTER_WAIT,
            "a terminal mention by justin, unless answered meanwhile",
            after=NOW_AT + timedelta(seconds=120),
        ),
    ),
    ("a hook's or an import's post wakes nothing by its mentions", Post(source="hook"), facts(), Ignore),
    (
        "a trusted person's command is run",
        Post(),
        facts(command=("usage", ""), trusted=True, trust_rule="ssh"),
        Command("usage", "", "ssh"),
    ),
    (
        "an untrusted person's command is refused",
        Post(),
        facts(command=("compact", "keep the dates")),
        Refuse(Because.UNTRUSTED, "justin's post may not grant full tools", "compact"),
    ),
    (
        "a mention while the agent's listening here is off is held until it is back",
        Post(),
        facts(listening_off=True, listening_until=UNTIL),
        Hold(Because.LISTENING, "hushed until 2026-12-06 20:00 UTC", UNTIL),
    ),
    ("a person's mention through the web wakes now", Post(), facts(), Wake(NOW, "mentioned by justin")),
    ("an agent's post through its key wakes now", AGENT, facts(), Wake(NOW, "mentioned by abot")),
    # Which gate answers first where two would:
    ("the wiki tier before the scram", Post(), facts(wiki_tier=True, scram=True), Ignore),
    ("the horizon before the scram", OLD, facts(scram=True), Ignore),
    ("decided already before the scram", Post(), facts(recorded="held", scram=True), Ignore),
    (
        "the scram before the chain guard",
        AGENT,
        facts(scram=True, chain=volley(6)),
        Hold(Because.SCRAM, SCRAM_HOLD),
    ),
    (
        "the chain guard before a terminal's wait",
        Post(sender="abot", source="terminal"),
        facts(chain=volley(6)),
        Because.CHAINED,
    ),
    (
        "a command before the listening hold",
        Post(),
        facts(command=("usage", ""), trusted=True, listening_off=True),
        Command("usage", "", ""),
    ),
]


@pytest.mark.parametrize(
    ("post", "given", "expected"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS]
)
def test_decide_mention(post, given, expected):
    verdict = decide_mention(post, Named(), given)
    if isinstance(expected, Because):  # the chain's holds: their words are tested below
        assert isinstance(verdict, Hold) and verdict.kind == expected, verdict
    elif isinstance(expected, type):  # an Ignore: its reason is for people, not a rule
        assert isinstance(verdict, expected), verdict
    else:
        assert verdict == expected


def test_a_held_chain_names_its_agents_and_turns():
    verdict = decide_mention(AGENT, Named(), facts(chain=volley(6)))
    assert verdict == Hold(
        Because.CHAINED,
        "@abot and @bbot woke each other 6 times in a row; a person's post lets them go on",
        chain=Chain(turns=6, agents=["abot", "bbot"]),
        once_per="start",
    )


def test_a_held_chains_line_is_said_once_per_persons_post():
    chain = replace(volley(6), since_id="justins-post")
    assert decide_mention(AGENT, Named(), facts(chain=chain)).once_per == "justins-post"


def test_the_chain_bound_is_the_pairs_dial():
    assert decide_mention(AGENT, Named(), facts(chain=volley(3, limit=3))).kind == Because.CHAINED
