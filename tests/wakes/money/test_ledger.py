"""Every turn is in the ledger once, whatever started it; reservations whose wake never happened
are released; a turn whose worker died is settled at what it really cost."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Sum
from django.utils import timezone

from motion_runner.harnesses import Event, EventKind, pricing
from motion_runner.harnesses.claude_code import ClaudeCodeParser
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.lib.ids import system_uuid
from motion_runner.models import EndedBy, Kind, Message, Turn, TurnStatus
from motion_runner.runner.reclaim import sweep_turns
from motion_runner.runner.turns import enqueue_turn, retire_and_wake_again
from tests.factories import MessageFactory
from tests.recorded import recorded_lines
from tests.wakes_support import clock, dials, finish, loop, room, say
from wakes.consider_loop.considering import run_consideration
from wakes.consider_loop.loop import tick
from wakes.consider_loop.recovery import ORPHANED_RESERVATION, release_orphaned_reservations
from wakes.models import Consideration, ListenState, Spend, WakeRequest
from wakes.money.budget import settle_turn, spent_today
from wakes.turn.compaction import compact_after_loop
from wakes.turn.requests import grant

pytestmark = pytest.mark.django_db


def ledger_total() -> Decimal:
    return Spend.objects.exclude(turn=None).aggregate(total=Sum("amount"))["total"] or Decimal(0)


def turns_total() -> Decimal:
    return Turn.objects.aggregate(total=Sum("cost_usd"))["total"] or Decimal(0)


def a_manual_turn(room, **fields) -> Turn:
    return enqueue_turn(
        room.motion,
        room.magent,
        "hello",
        reason="manual",
        reason_detail="woken from the command line",
        dispatch=False,
        **fields,
    )


def test_a_manage_py_wake_turn_is_in_the_ledger_with_its_reason_but_not_counted(room, clock, monkeypatch):
    monkeypatch.setattr("motion_runner.management.commands.wake.execute_turn", lambda pk, on_event: None)
    with pytest.raises(CommandError, match="could not be claimed"):  # the stand-in runs nothing
        call_command("wake", room.motion.slug, "magent", "--prompt", "hello", "--sync")
    turn = Turn.objects.get(reason="manual")
    finish(turn, said="hello", cost="0.31")
    row = Spend.objects.get(turn=turn)
    assert (row.kind, row.amount, row.counted, row.settled) == ("manual", Decimal("0.31"), False, True)
    assert row.note.startswith("settled: manual")


def test_a_granted_wake_is_in_the_ledger(room, clock, monkeypatch):
    monkeypatch.setattr(
        "wakes.turn.requests.person_may_grant", lambda user, sign_in: (True, "signed in with an SSH key")
    )
    card = MessageFactory(
        motion=room.motion, sender="magent", agent=room.magent, text="<tools>deploy</tools>"
    )
    request = WakeRequest.objects.create(
        motion=room.motion, agent=room.magent, message=card, kind="tools", to="deploy"
    )
    turn = grant(request.pk, room.justin, "ssh").granted_turn
    finish(turn, said="deployed", cost="0.55")
    row = Spend.objects.get(turn=turn)
    assert (row.kind, row.amount, row.counted) == ("grant", Decimal("0.55"), False)


def test_a_compaction_turn_is_in_the_ledger_and_counted(room, clock):
    looped = a_manual_turn(room)
    Turn.objects.filter(pk=looped.pk).update(
        status=TurnStatus.KILLED,
        session_id="s-1",
        error="the tool-loop guard stopped it: the same call 3 times",
        ended_by=EndedBy.LOOP_GUARD,
    )
    looped.refresh_from_db()
    compaction = compact_after_loop(Turn, looped)
    finish(compaction, cost="0.0019")
    row = Spend.objects.get(turn=compaction)
    assert (row.kind, row.amount, row.counted) == ("compaction", Decimal("0.0019"), True)


def test_a_retry_in_a_fresh_session_holds_its_cap_while_it_runs_then_settles(room, clock, loop):
    say(room.motion, room.justin, "what do you think?", clock)
    [c] = loop.run(12)
    failed = finish(c.turn, cost="0", status=TurnStatus.FAILED)
    retry = retire_and_wake_again(failed, "gone-session")
    row = Spend.objects.get(turn=retry)
    assert (row.kind, row.amount, row.counted, row.settled) == ("consideration", Decimal("3.00"), True, False)
    assert row.consideration_id == c.pk
    finish(retry, said="here", cost="0.40")
    row.refresh_from_db()
    assert (row.amount, row.settled) == (Decimal("0.40"), True)


def test_a_turn_settled_twice_has_one_row(room, clock):
    turn = finish(a_manual_turn(room), cost="0.25")
    settle_turn(turn)
    settle_turn(turn)
    assert Spend.objects.filter(turn=turn).count() == 1


def test_the_ledger_total_is_the_turns_total_whatever_started_them(room, clock, loop):
    say(room.motion, room.justin, "what do you think?", clock)
    [c] = loop.run(12)
    finish(c.turn, said="a thought", cost="0.20")
    say(room.motion, room.justin, "@magent and you?", clock)
    mention = Turn.objects.get(reason="mention")
    finish(mention, said="me too", cost="0.07")
    finish(a_manual_turn(room), cost="0.31")
    assert Turn.objects.count() == Spend.objects.exclude(turn=None).count() == 3
    assert ledger_total() == turns_total() == Decimal("0.58")
    # The daily cap counts what agents started on their own, not what people asked for.
    assert spent_today(timezone.localdate(clock.now())) == Decimal("0.20")


def a_reservation_whose_worker_died(room, clock, loop) -> Consideration:
    """A consideration reserved its envelope, then its worker died before waking."""
    say(room.motion, room.justin, "what do you think?", clock)
    clock.advance(12)
    [c] = tick(dispatch=False)
    from wakes.consider_loop import considering

    def die(*args, **kwargs):
        raise SystemExit("the worker died")

    original = considering.wake
    considering.wake = die
    try:
        with pytest.raises(SystemExit):
            run_consideration(c.pk, dispatch=False, screen=loop.screen)
    finally:
        considering.wake = original
    return Consideration.objects.get(pk=c.pk)


def test_a_reservation_whose_wake_never_happened_is_released_with_a_line(room, clock, loop):
    c = a_reservation_whose_worker_died(room, clock, loop)
    day = timezone.localdate(clock.now())
    assert spent_today(day) == Decimal("3.01")  # the $3 cap and the screen's cent
    assert release_orphaned_reservations(clock.now()) == 0  # too soon: it may still be waking
    clock.advance((ORPHANED_RESERVATION + timedelta(seconds=1)).total_seconds())
    assert release_orphaned_reservations(clock.now()) == 1
    assert release_orphaned_reservations(clock.now()) == 0
    assert spent_today(day) == 0
    line = Message.objects.get(kind=Kind.WAKE, text__contains="was released")
    assert line.text.startswith("@magent's reserved $3.01 was released")
    c.refresh_from_db()
    assert c.status == Consideration.Status.FAILED
    state = ListenState.objects.get(pk=c.state_id)
    assert state.pending  # the posts it was about are owed again


def a_running_turn(room) -> Turn:
    """A turn whose runner died: still marked running, its lease long lapsed."""
    turn = a_manual_turn(room)
    lapsed = timezone.now() - timedelta(hours=2)
    Turn.objects.filter(pk=turn.pk).update(
        status=TurnStatus.RUNNING, started_at=lapsed, session_id="s-9", lease_until=lapsed
    )
    turn.refresh_from_db()
    return turn


def test_a_turn_whose_worker_died_after_its_result_line_is_settled_at_that_cost(room, clock):
    turn = a_running_turn(room)
    MessageFactory(
        motion=room.motion,
        sender="magent",
        agent=room.magent,
        turn=turn,
        kind=Kind.TURN_END,
        cost_usd=Decimal("0.42"),
        raw={"type": "result", "total_cost_usd": 1.42, "usage": {"input_tokens": 9}},
    )
    assert sweep_turns()["lost"] == 1
    assert sweep_turns()["lost"] == 0
    turn.refresh_from_db()
    assert (turn.status, turn.cost_usd) == (TurnStatus.FAILED, Decimal("0.42"))
    assert Spend.objects.get(turn=turn).amount == Decimal("0.42")
    line = Message.objects.get(pk=system_uuid("turn-error", turn.pk))
    assert "the worker running it was lost" in line.text and "$0.4200" in line.text


def test_a_claude_turn_whose_worker_died_mid_stream_is_settled_at_its_streamed_usage(room, clock):
    turn = a_running_turn(room)
    for block in range(2):  # one API message, two lines: priced once
        MessageFactory(
            motion=room.motion,
            sender="magent",
            agent=room.magent,
            turn=turn,
            harness_message_id="msg_1",
            model_backend="claude-opus-5-5",
            input_tokens=3000,
            cache_creation_input_tokens=1000,
            cache_read_input_tokens=5000,
            text=f"block {block}",
        )
    sweep_turns()
    turn.refresh_from_db()
    assert turn.cost_usd == Decimal("0.018")  # 3,000 × $4 + 1,000 × $5 + 5,000 × $0.20 a million
    assert turn.cost_source.startswith("streamed usage × price")


def test_a_claude_turn_whose_worker_died_after_a_message_delta_is_settled_with_its_output(room, clock):
    """The runner wrote the message's line (message_start usage, no output) and then its
    message_delta's whole usage onto it: the sweep charges the output too (room seed 144)."""
    turn = a_running_turn(room)
    writer = EventWriter(
        IngestContext(
            motion=room.motion, agent=room.magent, harness="claude-code", source="runner", turn=turn
        )
    )
    started = {"input_tokens": 3000, "cache_read_input_tokens": 5000}
    said = Event(
        EventKind.TEXT, uuid=str(uuid.uuid4()), message_id="msg_1", model="claude-opus-5-5", text="hi"
    )
    said.usage = started
    writer.write_many([said])
    writer.write_many([Event(EventKind.USAGE, message_id="msg_1", usage={**started, "output_tokens": 1000})])

    sweep_turns()

    turn.refresh_from_db()
    assert turn.cost_usd == Decimal("0.033")  # 3,000 × $4 + 1,000 × $20 + 5,000 × $0.20 a million


def test_the_sweep_settles_a_turn_whose_heartbeat_stopped_at_its_result_lines_cost(room, clock, settings):
    turn = a_running_turn(room)
    Turn.objects.filter(pk=turn.pk).update(heartbeat_at=timezone.now() - timedelta(hours=2))
    MessageFactory(
        motion=room.motion,
        sender="magent",
        agent=room.magent,
        turn=turn,
        kind=Kind.TURN_END,
        cost_usd=Decimal("0.42"),
        raw={"type": "result", "total_cost_usd": 0.42},
    )
    settings.RUNNER_TURN_TIMEOUT_SECONDS = 60
    assert sweep_turns()["lost"] == 1
    turn.refresh_from_db()
    assert (turn.status, turn.cost_usd) == (TurnStatus.FAILED, Decimal("0.42"))
    assert Spend.objects.get(turn=turn).amount == Decimal("0.42")


def test_a_claude_turn_whose_worker_died_before_a_message_delta_is_settled_at_an_estimate_said_as_such(
    room, clock
):
    """The real CLI's partials.jsonl written as the runner writes it, to a cut inside the first
    API message's tool input (its text's assistant line stored, no message_delta): the sweep
    charges the message_start usage and output estimated from the stored text (docs/money.md)."""
    turn = a_running_turn(room)
    writer = EventWriter(
        IngestContext(
            motion=room.motion, agent=room.magent, harness="claude-code", source="runner", turn=turn
        )
    )
    parser = ClaudeCodeParser()
    events = [event for line in recorded_lines("partials")[:16] for event in parser.feed(line)]
    writer.write_many(
        [event for event in events if event.kind not in (EventKind.PARTIAL, EventKind.ACTIVITY)]
    )

    sweep_turns()

    turn.refresh_from_db()
    tokens = -(-len(b"Let me read the README first.") // pricing.ESTIMATE_BYTES_PER_TOKEN)
    assert turn.cost_usd == (Decimal(1200) * 4 + Decimal(tokens) * 20) / 1_000_000
    assert "estimated" in turn.cost_source
    assert Spend.objects.get(turn=turn).amount == turn.cost_usd
