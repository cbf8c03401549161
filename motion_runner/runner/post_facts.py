"""What the core knows of one post for wakes' decision on its mentions, read in one call.

wakes keeps the rules (who may run a command, the chain's bound, whether a mention is held) and
asks the core once per post for the rows those rules read that the core keeps: whether the post's
author is the first run's account, the host's timing and steering rows for the named agents
(memory-lane's, under its binding: `signals.steering_source`) and how full an agent's context is
here. Plain data back; nothing is written. Only what is asked for is read, so a plain mention
without a steering source costs no statement here.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .. import signals
from ..models import Message
from ..people.first_run import has_first_run_grant
from .resume import context_fullness


@dataclass(frozen=True)
class PostFacts:
    """The core's rows for one post's mentions, keyed by agent id."""

    hosted: bool = False  # a steering source keeps the room's settings and timing (its rows below)
    first_run: bool = False  # the post's author is the first run's account
    timing: dict[int, dict[str, tuple[Any, bool]]] = field(default_factory=dict)  # source.timing's
    daily_budget: Decimal | None = None  # the source's global consider budget, if it keeps one
    steering: dict[int, list[signals.SteerRecord]] = field(default_factory=dict)  # source.candidates'
    context: dict[int, dict | None] = field(default_factory=dict)  # resume.context_fullness's


def read_post_facts(
    post: Message,
    *,
    first_run: bool = False,
    timing_for: Collection[int] = (),
    tick_seconds: float = 0,
    steering_for: Collection[int] = (),
    context_for: Collection[int] = (),
    context_window: int | None = None,
) -> PostFacts:
    """The rows asked for: `first_run` (the author's grant), the host's timing (`tick_seconds`:
    the dial its rows convert by) and steering rows of (post's Motion, agent), each agent's context
    fullness here (`context_window`: the window of a reading that named none). Without a steering
    source the host's rows are none (wakes reads its own)."""
    source = signals.steering_source() if timing_for or steering_for else None
    timing = {a: source.timing(post.motion_id, a, tick_seconds) for a in timing_for} if source else {}
    pairs = [(post.motion_id, a) for a in steering_for]
    steering = (
        {a: records for (_, a), records in source.candidates(pairs).items()} if source and pairs else {}
    )
    return PostFacts(
        hosted=source is not None,
        first_run=first_run and post.author_id is not None and has_first_run_grant(post.author),
        timing=timing,
        daily_budget=source.daily_budget() if source is not None and timing_for else None,
        steering=steering,
        context={a: context_fullness(post.motion_id, a, context_window) for a in context_for},
    )
