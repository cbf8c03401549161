"""Every rule of the chain guard (wakes/consider_loop/chains.py's docstring) as a table over the
pure functions, with no database: who asked for each turn, which Motion a person spoke in, mixed
bursts, the bound. Issue 39: two one-line mutations of `chain_behind` (`any` -> `all` for a turn
a person and an agent asked for together; dropping the turn's Motion from the person check)
survived the suite; `test_chain_behind` catches both.

Personas: Justin (a person), @abot and @bbot (agents), the Motions "volley" (V) and "elsewhere" (E).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from wakes.consider_loop.chains import Asked, Chain, Link, Said, chain_behind, chain_in_motion, past_bound

T0 = datetime(2026, 12, 6, 18, 0, tzinfo=UTC)
V, E = "volley", "elsewhere"


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def abot(seconds: int, motion: str = V) -> Said:
    return Said("abot", True, motion, at(seconds))


def bbot(seconds: int, motion: str = V) -> Said:
    return Said("bbot", True, motion, at(seconds))


def justin(seconds: int, motion: str = V) -> Said:
    return Said("justin", False, motion, at(seconds))


def turn(turn_id: int, agent: str, *asked: Said, motion: str = V, reason: str = "mention") -> Link:
    return Link(turn_id, reason, agent, motion, tuple(asked))


# A volley: Justin asked @abot (turn 1, at 0 s); abot's post at 10 s woke @bbot (turn 2); bbot's at
# 20 s woke @abot (turn 3); abot's post at 30 s is the one being decided. Links run newest first.
VOLLEY = [turn(3, "abot", bbot(20)), turn(2, "bbot", abot(10)), turn(1, "abot", justin(0))]

BEHIND = [
    # (case, post, links, people's posts, limit, turns, agents)
    ("no turn wrote the post (a key outside any turn)", abot(30), [], [], 6, 0, ["abot"]),
    ("a volley counts the agent-woken turns", abot(30), VOLLEY, [], 6, 2, ["abot", "bbot"]),
    ("a turn a person asked for ends it", abot(30), VOLLEY[2:], [], 6, 0, ["abot"]),
    (
        "a turn a person and an agent asked for together ends it (any, not all)",
        abot(30),
        [turn(3, "abot", justin(19), bbot(20)), *VOLLEY[1:]],
        [],
        6,
        0,
        ["abot"],
    ),
    (
        "the same, the person's mention the newer of the two",
        abot(30),
        [turn(3, "abot", bbot(20), justin(21)), *VOLLEY[1:]],
        [],
        6,
        0,
        ["abot"],
    ),
    (
        "a turn no mention asked for ends it",
        abot(30),
        [turn(3, "abot"), *VOLLEY[1:]],
        [],
        6,
        0,
        ["abot"],
    ),
    (
        "a turn that is not a mention turn ends it (a consideration, a watch)",
        abot(30),
        [turn(3, "abot", bbot(20), reason="consider"), *VOLLEY[1:]],
        [],
        6,
        0,
        ["abot"],
    ),
    (
        "a turn seen twice is counted once",
        abot(30),
        [VOLLEY[0], VOLLEY[0], *VOLLEY[1:]],
        [],
        6,
        1,
        ["abot", "bbot"],
    ),
    ("a person's post in the post's Motion ends it", abot(30), VOLLEY, [justin(25)], 6, 0, ["abot"]),
    (
        "a person's post in the turn's Motion, the other Motion of a cross-Motion link, ends it",
        abot(30, E),
        [turn(3, "abot", bbot(20), motion=V), *VOLLEY[1:]],
        [justin(25, V)],
        6,
        0,
        ["abot"],
    ),
    (
        "a person's post in the other Motion of a cross-Motion link, the post's own, ends it",
        abot(30, E),
        [turn(3, "abot", bbot(20), motion=V), *VOLLEY[1:]],
        [justin(25, E)],
        6,
        0,
        ["abot"],
    ),
    (
        "a person's post in a third Motion ends nothing",
        abot(30, E),
        [turn(3, "abot", bbot(20), motion=V), *VOLLEY[1:]],
        [justin(25, "third")],
        6,
        2,
        ["abot", "bbot"],
    ),
    (
        "a person's post between two links ends it there",
        abot(30),
        VOLLEY,
        [justin(15)],
        6,
        1,
        ["abot", "bbot"],
    ),
    (
        "a person's post before the chain's first mention ends nothing",
        abot(30),
        VOLLEY,
        [justin(5)],
        6,
        2,
        ["abot", "bbot"],
    ),
    ("a person's post after the post ends nothing", abot(30), VOLLEY, [justin(31)], 6, 2, ["abot", "bbot"]),
    (
        "a person's post at the same instant as the post ends it (at or before)",
        abot(30),
        VOLLEY,
        [justin(30)],
        6,
        0,
        ["abot"],
    ),
    (
        "a burst of agents' mentions is one link, its newest leading on",
        abot(30),
        [turn(3, "abot", bbot(18), bbot(20)), turn(2, "bbot", abot(10)), *VOLLEY[2:]],
        [],
        6,
        2,
        ["abot", "bbot"],
    ),
    (
        "three agents name each other, oldest last",
        Said("cbot", True, V, at(40)),
        [
            turn(4, "cbot", bbot(30)),
            turn(3, "bbot", abot(20)),
            turn(2, "abot", Said("cbot", True, V, at(10))),
        ],
        [],
        6,
        3,
        ["cbot", "bbot", "abot"],
    ),
    (
        "the walk stops one past the bound",
        abot(30),
        [turn(n, "abot" if n % 2 else "bbot", bbot(n) if n % 2 else abot(n)) for n in range(20, 0, -1)],
        [],
        2,
        3,
        ["abot", "bbot"],
    ),
]


@pytest.mark.parametrize(
    ("post", "links", "people", "limit", "turns", "agents"),
    [case[1:] for case in BEHIND],
    ids=[case[0] for case in BEHIND],
)
def test_chain_behind(post, links, people, limit, turns, agents):
    chain = chain_behind(post, links, people, limit)
    assert (chain.turns, chain.agents) == (turns, agents)


def asked(turn_id: int, agent: str, by: Said) -> Asked:
    return Asked(turn_id, agent, by)


HERE = [
    # (case, records, since, turns, agents)
    ("nothing asked", [], None, 0, []),
    (
        "turns agents asked for count",
        [asked(2, "bbot", abot(10)), asked(3, "abot", bbot(20))],
        None,
        2,
        ["abot", "bbot"],
    ),
    ("a turn a person asked for does not count", [asked(1, "abot", justin(0))], None, 0, []),
    (
        "a turn a person and an agent asked for together does not count",
        [asked(2, "bbot", abot(10)), asked(2, "bbot", justin(11))],
        None,
        0,
        [],
    ),
    (
        "a turn a person asked for in another Motion does not count",
        [asked(2, "bbot", abot(10)), asked(2, "bbot", justin(11, E))],
        None,
        0,
        [],
    ),
    (
        "only since the Motion's newest person's post",
        [asked(2, "bbot", abot(10)), asked(3, "abot", bbot(20))],
        at(15),
        1,
        ["bbot", "abot"],
    ),
    (
        "an agent's mention in another Motion is not counted here",
        [asked(2, "bbot", abot(10, E))],
        None,
        0,
        [],
    ),
    (
        "two mentions joined in one turn count once",
        [asked(2, "bbot", abot(10)), asked(2, "bbot", abot(12))],
        None,
        1,
        ["abot", "bbot"],
    ),
]


@pytest.mark.parametrize(
    ("records", "since", "turns", "agents"), [case[1:] for case in HERE], ids=[case[0] for case in HERE]
)
def test_chain_in_motion(records, since, turns, agents):
    chain = chain_in_motion(V, records, since)
    assert (chain.turns, chain.agents) == (turns, agents)


@pytest.mark.parametrize(
    ("behind", "here", "held"),
    [
        (Chain(5, ["abot"]), Chain(5, ["bbot"]), None),
        (Chain(6, ["abot", "bbot"]), Chain(0, []), (6, ["abot", "bbot", "cbot"])),
        (Chain(0, ["abot"]), Chain(6, ["bbot", "abot"]), (6, ["abot", "bbot", "cbot"])),
        (Chain(7, ["abot"]), Chain(6, ["bbot"]), (7, ["abot", "bbot", "cbot"])),
    ],
    ids=[
        "under the bound wakes",
        "behind at the bound holds",
        "in the Motion at the bound holds",
        "the longer decides",
    ],
)
def test_past_bound(behind, here, held):
    chain = past_bound(behind, here, "cbot", 6)
    assert (None if chain is None else (chain.turns, chain.agents)) == held
