"""A client's posted result line never ends or prices the runner's turn of that agent (issue 20
item 10): the stream route says it, and the turn stays the runner's."""

from __future__ import annotations

import copy

import pytest

from motion_runner.models import Message, Turn, TurnStatus
from motion_runner.runner.ending import dead_turn_cost
from tests import recorded
from tests.factories import TurnFactory
from tests.stream_support import SESSION, body, stream

pytestmark = pytest.mark.django_db


def priced(events: list[dict], cost: float) -> list[dict]:
    events = copy.deepcopy(events)
    for line in events:
        if line.get("type") == "result":
            line["total_cost_usd"] = cost
    return events


def test_a_posted_result_does_not_end_the_agents_running_turn(client, scribe, harbor):
    turn = TurnFactory(motion=harbor, agent=scribe.agent, session_id=SESSION, status=TurnStatus.RUNNING)
    answer = stream(client, scribe, body(priced(recorded.first_run(), 525.0))).json()
    assert answer["finished"] is True  # the batch held a result: said, but no Turn is its
    turn.refresh_from_db()
    assert (turn.status, turn.ended_at, turn.cost_usd) == (TurnStatus.RUNNING, None, 0)


def test_posted_lines_are_not_the_runner_turns_to_price_it_by(client, scribe, harbor):
    turn = TurnFactory(motion=harbor, agent=scribe.agent, session_id=SESSION, status=TurnStatus.RUNNING)
    stream(client, scribe, body(priced(recorded.first_run(), 0.0)))
    assert not Message.objects.filter(turn=turn).exists()
    # The sweep's figure for a lost turn reads the turn's own lines: none of the client's.
    assert dead_turn_cost(turn)["cost_source"] != "its result line (the worker died after it)"
    assert Turn.objects.get(pk=turn.pk).status == TurnStatus.RUNNING
