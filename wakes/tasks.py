"""Celery tasks of wakes/. Each takes ids (or nothing), is idempotent, and says why its retries
are what they are."""

from __future__ import annotations

from celery import shared_task

from .abilities.runner import perform, sweep
from .consider_loop.considering import run_consideration
from .consider_loop.handlers import check_mentions as check
from .consider_loop.loop import tick as look
from .consider_loop.recovery import release_orphaned_reservations
from .money.budget import settle_turn, unsettled_of_ended_turns
from .notices.push import push_notices as push


@shared_task(name="wakes.tick", ignore_result=True)
def tick() -> int:
    """One look of the consider loop (beat, every WAKES_TICK_SECONDS).

    No retries: the next tick is the retry, and a claim is a conditional UPDATE, so two ticks
    at once (a slow one overlapping the next) claim each due pair once between them.
    """
    return len(look())


@shared_task(name="wakes.consider", ignore_result=True, acks_late=False)
def consider(consideration_id: int) -> None:
    """Run one claimed consideration: budget, screen, wake.

    Never retried: it may pay for a screen and queue a turn. Delivered twice, the second
    finds it no longer `claimed` and does nothing. A task the broker lost is sent again once by
    the tick (`recover_considerations`); one whose worker died before the wake is given up there,
    its reservation released and its posts owed again.
    """
    run_consideration(consideration_id)


@shared_task(name="wakes.check_mentions", ignore_result=True)
def check_mentions() -> dict[str, int]:
    """Terminal @mentions unanswered after their wait (beat, every 30 s).

    No retries: each wake is claimed by a conditional UPDATE, the next run retries the rest.
    """
    return check()


@shared_task(name="wakes.settle", ignore_result=True)
def settle() -> int:
    """Safety net (beat, every 5 min): reservations whose turn ended without the finish hook
    (a lost worker) take the turn's recorded cost, and reservations whose wake never happened
    are released with a line in the thread. Idempotent (each row is claimed by a conditional
    UPDATE); no retries: the next run is the retry."""
    count = 0
    for spend in unsettled_of_ended_turns().select_related("turn"):
        settle_turn(spend.turn)
        count += 1
    return count + release_orphaned_reservations()


@shared_task(name="wakes.run_ability", ignore_result=True, acks_late=False)
def run_ability(turn_id: int) -> None:
    """Act on a finished turn's ability (post its reply on the wiki page its wake fixed).

    Not Celery's own retries: the attempts are counted on the AbilityRun row, bounded by
    ABILITY_MAX_ATTEMPTS, because a redelivered or re-sent task must not reset the count. Only a
    wiki that asked us to wait (maxlag, 429/503 with Retry-After, read-only) or did not answer is
    tried again, after what it asked or a doubling back-off; a refusal (protected page, block,
    failed login or assert) is final at once, since asking again cannot change the answer and
    would only hammer the wiki. Delivered twice is harmless: the claim is a conditional UPDATE,
    and a try after a lost answer looks for its own edit first.
    """
    perform(turn_id)


@shared_task(name="wakes.sweep_abilities", ignore_result=True)
def sweep_abilities() -> int:
    """Periodic (beat, every 60 s): re-sends abilities whose task was lost. Idempotent, so no
    retries: the next tick is the retry."""
    return sweep()


@shared_task(name="wakes.push_notices", ignore_result=True, acks_late=False)
def push_notices(notice_ids: list[int]) -> dict[str, int]:
    """Web Push of new notices, sent after their commit (wakes/notices/answers.py).

    No retries: each notice is claimed once by a conditional UPDATE, so a redelivered task sends
    nothing twice; a push that failed is missed, and the page's header still shows the notice.
    """
    return push(notice_ids)
