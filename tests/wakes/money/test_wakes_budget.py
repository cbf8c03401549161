"""Budgets: the hourly count, the daily dollars, the day's boundary, overrides, the ledger."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from motion_runner.models import Kind, Message, Turn
from tests.factories import MotionFactory
from tests.wakes_support import clock, dials, finish, loop, no_screen, room, say
from wakes.consider_loop.considering import run_consideration
from wakes.consider_loop.handlers import wake_for_watch
from wakes.consider_loop.loop import tick
from wakes.models import Consideration, DialOverride, Spend
from wakes.money.budget import spent_today

pytestmark = pytest.mark.django_db


def burst(room, loop, clock, text="what do you think?", who=None, motion=None):
    say(motion or room.motion, who or room.justin, text, clock)
    return loop.run(12)


def notices(text_part: str) -> int:
    return Message.objects.filter(kind=Kind.WAKE, text__contains=text_part).count()


def spend(room, clock, amount, motion=None, at=None):
    at = at or clock.now()
    return Spend.objects.create(
        kind="consideration",
        motion=motion or room.motion,
        agent=room.magent,
        day=timezone.localdate(at),
        at=at,
        amount=Decimal(amount),
        settled=True,
    )


def test_a_consideration_runs_at_medium_effort_with_a_three_dollar_cap(room, clock, loop):
    [c] = burst(room, loop, clock)
    assert (c.turn.effort, c.turn.max_budget_usd) == ("medium", Decimal("3.00"))
    envelope = Spend.objects.get(turn=c.turn)
    assert envelope.amount >= Decimal("3.00") and not envelope.settled


def test_a_finished_turn_settles_its_ledger_row_to_what_it_cost(room, clock, loop):
    [c] = burst(room, loop, clock)
    finish(c.turn, said="here is what I think", cost="0.1734")
    row = Spend.objects.get(turn=c.turn)
    assert (row.amount, row.settled) == (Decimal("0.173400"), True)
    assert spent_today(timezone.localdate(clock.now())) == Decimal("0.1734")


def test_the_seventh_consideration_in_an_hour_waits_and_the_thread_says_so_once(room, clock, loop):
    for n in range(6):
        [c] = burst(room, loop, clock, f"question {n}")
        finish(c.turn, said="answer")
        clock.advance(60)
    for n in range(3):  # three more bursts inside the same hour: all stopped, said once
        assert burst(room, loop, clock, f"more {n}")[0].status == Consideration.Status.REFUSED
    assert Turn.objects.filter(reason="new_posts").count() == 6
    assert notices("6 full considerations this hour") == 1
    considered = loop.run(3600, step=30)  # when the first of the six leaves the window
    woken = [c for c in considered if c.status == Consideration.Status.WOKEN]
    assert len(woken) == 1 and "more 2" in woken[0].turn.prompt and "more 0" in woken[0].turn.prompt


def test_the_daily_budget_stops_considerations_and_says_so_once(room, clock, loop):
    spend(room, clock, "9.00")
    [c] = burst(room, loop, clock)
    assert c.status == Consideration.Status.REFUSED
    say(room.motion, room.rosemary, "hello?", clock)
    loop.run(10 * 60, step=15)
    assert Turn.objects.count() == 0
    assert notices("the daily budget ($10.00) is spent or reserved") == 1


def test_money_freed_by_a_turn_that_settles_below_its_envelope_is_used_within_a_minute(room, clock, loop):
    spend(room, clock, "6.00")
    other = MotionFactory(slug="merch")
    other.agents.add(room.magent)
    [first] = burst(room, loop, clock, "one")  # reserves $3.01: $0.99 left
    [second] = burst(room, loop, clock, "two", motion=other)
    assert (first.status, second.status) == ("woken", "refused")
    finish(first.turn, said="done", cost="0.15")
    woken = [c for c in loop.run(70) if c.status == Consideration.Status.WOKEN]
    assert len(woken) == 1 and "two" in woken[0].turn.prompt


def test_a_new_day_brings_a_new_budget(room, clock, loop):
    clock.set(datetime(2026, 11, 30, 23, 58, 0, tzinfo=timezone.get_current_timezone()))
    spend(room, clock, "9.50")
    [c] = burst(room, loop, clock)
    assert c.status == Consideration.Status.REFUSED
    woken = [c for c in loop.run(3 * 60, step=15) if c.status == Consideration.Status.WOKEN]
    assert len(woken) == 1 and timezone.localtime(woken[0].created_at).day == 1  # just after midnight
    assert spent_today(timezone.localdate(clock.now())) >= Decimal("3.00")  # today's reservation only


def test_twenty_reservations_never_cross_the_daily_cap(room, clock, loop):
    dials(considerations_per_hour=100)
    # Nothing settles in between: $10 holds three $3.01 envelopes, not four.
    for n in range(20):
        m = MotionFactory(slug=f"l{n}")
        m.agents.add(room.magent)
        burst(room, loop, clock, f"q{n}", motion=m)
    assert Turn.objects.count() == 3
    assert spent_today(timezone.localdate(clock.now())) <= Decimal("10.00")


def test_a_motion_override_of_the_hourly_count_leaves_other_motions_alone(room, clock, loop):
    DialOverride.objects.create(motion=room.motion, considerations_per_hour=2)
    other = MotionFactory(slug="merch")
    other.agents.add(room.magent)
    for n in range(3):
        for motion in (room.motion, other):
            for c in burst(room, loop, clock, f"q{n}", motion=motion):
                if c.turn:
                    finish(c.turn, said="ok", cost="0.10")
    assert Turn.objects.filter(motion=room.motion).count() == 2
    assert Turn.objects.filter(motion=other).count() == 3


def test_an_agent_override_sets_its_cap_and_effort(room, clock, loop):
    DialOverride.objects.create(
        agent=room.magent, consideration_cap_usd=Decimal("0.50"), consider_effort="low"
    )
    [c] = burst(room, loop, clock)
    assert (c.turn.max_budget_usd, c.turn.effort) == (Decimal("0.50"), "low")


def test_a_pair_override_beats_the_agent_and_the_motion(room, clock, loop):
    DialOverride.objects.create(agent=room.magent, consider_effort="low")
    DialOverride.objects.create(motion=room.motion, consider_effort="high")
    DialOverride.objects.create(motion=room.motion, agent=room.magent, consider_effort="max")
    [c] = burst(room, loop, clock)
    assert c.turn.effort == "max"


def test_a_motion_daily_override_caps_that_motion_only(room, clock, loop):
    DialOverride.objects.create(motion=room.motion, daily_budget_usd=Decimal("2.00"))
    other = MotionFactory(slug="merch")
    other.agents.add(room.magent)
    spend(room, clock, "1.00")
    [stopped] = burst(room, loop, clock)
    [woken] = burst(room, loop, clock, motion=other)
    assert stopped.status == Consideration.Status.REFUSED
    assert notices("this Motion's daily budget ($2.00)") == 1
    assert woken.status == Consideration.Status.WOKEN


def test_an_agent_daily_override_caps_that_agent(room, clock, loop):
    DialOverride.objects.create(agent=room.magent, daily_budget_usd=Decimal("1.00"))
    [c] = burst(room, loop, clock)
    assert c.status == Consideration.Status.REFUSED


def test_a_long_quiet_is_not_considered_when_the_budget_is_spent(room, clock, loop):
    say(room.motion, room.justin, "see you", clock)
    [c] = loop.run(12)
    finish(c.turn, said="bye", cost="9.00")
    considered = loop.run(55 * 60, step=60)
    assert considered and {c.kind for c in considered} == {"quiet"}
    assert all(c.status == Consideration.Status.REFUSED for c in considered)
    assert notices("is not considering the long quiet") == 1


def test_long_quiets_spend_only_their_share_and_new_posts_keep_the_rest(room, clock, loop):
    dials(quiet_budget_share=Decimal("0.30"))  # $3 of the $10 day
    say(room.motion, room.justin, "see you", clock)
    [c] = loop.run(12)
    finish(c.turn, said="bye", cost="0.50")
    [quiet] = loop.run(52 * 60, step=60)
    assert quiet.kind == "quiet" and quiet.status == Consideration.Status.WOKEN
    finish(quiet.turn, said="<silent>still quiet</silent>", cost="2.80")  # the share is spent
    refused = loop.run(110 * 60, step=60)
    assert refused and all(r.status == Consideration.Status.REFUSED for r in refused)
    assert notices("the long quiets' share of the daily budget") == 1
    say(room.motion, room.justin, "morning! what did I miss?", clock)
    [morning] = loop.run(15)
    assert morning.kind == "new_posts" and morning.status == Consideration.Status.WOKEN
    assert spent_today(morning.turn.queued_at.date()) <= Decimal("10.00")


def test_a_share_of_one_leaves_long_quiets_to_the_daily_budget_alone(room, clock, loop):
    dials(quiet_budget_share=Decimal("1.00"))
    say(room.motion, room.justin, "see you", clock)
    [c] = loop.run(12)
    finish(c.turn, said="bye", cost="0.50")
    [quiet] = loop.run(52 * 60, step=60)
    finish(quiet.turn, said="<silent>still quiet</silent>", cost="2.80")
    [second] = loop.run(101 * 60, step=60)
    assert second.kind == "quiet" and second.status == Consideration.Status.WOKEN


# --- issue 10: `always` watch wakes are refused at the cap like any other wake -------------------


def test_an_always_watch_wake_is_refused_once_the_daily_cap_is_spent(room, clock):
    dials(daily_budget_usd=Decimal("2.00"))
    spend(room, clock, "2.00")
    line = say(room.motion, room.justin, "✎ Talk:Merch edited by skyler: prices", clock, kind="watch")

    turn = wake_for_watch(line, room.magent, dispatch=False)

    assert turn is None and not Turn.objects.exists()
    assert not Spend.objects.filter(kind="watch").exists()
    assert notices("is not woken by watches: the daily budget ($2.00) is spent or reserved") == 1


def test_the_watch_cap_notice_is_said_once_however_many_lines_come(room, clock):
    dials(daily_budget_usd=Decimal("2.00"))
    spend(room, clock, "2.00")

    for n in range(3):
        line = say(room.motion, room.justin, f"✎ Talk:Merch edit {n}", clock, kind="watch")
        wake_for_watch(line, room.magent, dispatch=False)

    assert notices("is not woken by watches") == 1


def test_an_always_watch_wake_under_the_cap_still_wakes(room, clock):
    dials(daily_budget_usd=Decimal("10.00"))
    line = say(room.motion, room.justin, "✎ Talk:Merch edited by skyler: prices", clock, kind="watch")

    assert wake_for_watch(line, room.magent, dispatch=False) is not None


def test_what_a_reservation_reads_of_the_days_spend_is_read_under_the_days_row_lock(room, clock, loop):
    """The day's row is written (and so row-locked to the transaction's end) before the spend is
    summed and the envelope written, in one transaction: racing reservations queue on it
    (docs/concurrency.md). Pinned by the statements, so it holds on SQLite and PostgreSQL alike;
    tests/wakes/consider_loop/test_wakes_races.py races real workers on PostgreSQL."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        [c] = burst(room, loop, clock)
    sqls = [q["sql"] for q in queries.captured_queries]
    lock = next(i for i, sql in enumerate(sqls) if sql.startswith('UPDATE "wakes_budgetday"'))
    summed = next(i for i, sql in enumerate(sqls) if "SUM(" in sql and '"wakes_spend"' in sql)
    reserved = next(i for i, sql in enumerate(sqls) if sql.startswith('INSERT INTO "wakes_spend"'))
    assert lock < summed < reserved
    between = sqls[lock:reserved]
    assert not any(sql.startswith(("COMMIT", "RELEASE SAVEPOINT", "ROLLBACK")) for sql in between), between
    assert Spend.objects.get(consideration=c).amount > 0


def agent_read(room, clock, *, tokens: int, model: str = "claude-opus-4-5", motion=None):
    """The agent's newest API call here read `tokens` of context (as a turn's text line records it)."""
    return Message.objects.create(
        motion=motion or room.motion,
        agent=room.magent,
        sender=room.magent.name,
        source="runner",
        kind=Kind.TEXT,
        text="I read it all.",
        session_id="5e55e55e-0000-4000-8000-000000000001",
        model_backend=model,
        input_tokens=2,
        cache_read_input_tokens=0,
        cache_creation_input_tokens=tokens - 2,
        created_at=clock.now(),
    )


def test_a_consideration_of_a_session_read_cold_may_spend_the_cap_plus_the_cold_read(room, clock, loop):
    """memory-lane's consider_wake: a cold read of a 200k-token session ($1.25 at Opus 4.5's
    $6.25 a million cache-written tokens) is never cut off after it was paid for."""
    agent_read(room, clock, tokens=200_000)
    clock.advance(minutes=5)

    [c] = burst(room, loop, clock)

    assert c.turn.max_budget_usd == Decimal("4.25")  # the $3 dial + 200,000 × $6.25 / 1M
    envelope = Spend.objects.get(turn=c.turn)
    assert envelope.reserved >= Decimal("4.25")
    assert "cold read $1.25" in envelope.note and "200,000 tokens" in envelope.note


# Everything a consideration of new posts does from its claim to its turn queued (the budget's
# reservation, the screen's skip, the posts, the prompt with its wake lines — first wake, to-dos,
# handoffs, arrivals, ultracode —, the wake): pinned so a read added twice shows.
CONSIDERATION_STATEMENTS = 48  # 49 before the prompt read its dials once (dials_held)


def test_a_consideration_reads_its_sessions_context_once(room, clock, django_assert_num_queries):
    """The envelope is reserved for the dial plus the cold read, and the turn's cap is taken from
    that reservation: the session's context is read once, not again after the screen."""
    agent_read(room, clock, tokens=200_000)
    clock.advance(minutes=5)
    say(room.motion, room.justin, "what do you think?", clock)
    claimed = []
    while not claimed:
        clock.advance(3)
        claimed = tick(dispatch=False)
    with CaptureQueriesContext(connection) as queries:
        with django_assert_num_queries(CONSIDERATION_STATEMENTS):
            run_consideration(claimed[0].pk, dispatch=False, screen=no_screen)
    context_reads = [q for q in queries if '"input_tokens" IS NOT NULL' in q["sql"]]
    assert len(context_reads) == 1
    assert Turn.objects.get(consideration=claimed[0]).max_budget_usd == Decimal("4.25")


def test_a_first_consideration_with_no_session_yet_has_the_dials_cap(room, clock, loop):
    [c] = burst(room, loop, clock)

    assert c.turn.max_budget_usd == Decimal("3.00")
    assert "cold read $0.00" in Spend.objects.get(turn=c.turn).note


def test_a_model_without_a_known_price_adds_no_cold_read_and_says_so(room, clock, loop):
    agent_read(room, clock, tokens=150_000, model="some-local-model")
    clock.advance(minutes=5)

    [c] = burst(room, loop, clock)

    assert c.turn.max_budget_usd == Decimal("3.00")
    assert "no price known for some-local-model" in Spend.objects.get(turn=c.turn).note


def test_the_cold_read_never_lets_a_consideration_cross_the_daily_budget(room, clock, loop):
    dials(daily_budget_usd=Decimal("3.50"))
    agent_read(room, clock, tokens=200_000)
    clock.advance(minutes=5)

    [c] = burst(room, loop, clock)

    assert Spend.objects.get(turn=c.turn).reserved <= Decimal("3.50")
    assert c.turn.max_budget_usd <= Decimal("3.50")
