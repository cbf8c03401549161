from __future__ import annotations

from celery import shared_task

from .abilities.runner import perform, sweep


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
