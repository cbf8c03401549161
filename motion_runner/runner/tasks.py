from __future__ import annotations

from celery import shared_task

from .turns import execute_turn, sweep_turns


@shared_task(name="motion_runner.run_turn", ignore_result=True, acks_late=False)
def run_turn(turn_id: int) -> None:
    """Run one queued Turn.

    Never retried: a launch spends money, and a turn that reached its harness must not be
    launched twice. Delivering the task twice is harmless (the claim is a conditional
    UPDATE on status='queued'); a turn that could not be claimed because its (Motion,
    agent) pair is busy is started by that turn when it ends, and sweep_turns re-sends any
    that a lost worker left waiting.
    """
    execute_turn(turn_id)


@shared_task(name="motion_runner.sweep_turns", ignore_result=True)
def sweep_turns_task() -> dict[str, int]:
    """Periodic (beat, every 30 s); idempotent, so no retries: the next tick is the retry."""
    return sweep_turns()
