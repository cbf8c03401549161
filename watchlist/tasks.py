from __future__ import annotations

from dataclasses import asdict

from celery import shared_task

from .checker import run_cycle


@shared_task(name="watchlist.check_watches", ignore_result=True, acks_late=False)
def check_watches() -> dict:
    """Check every due watch (beat, every 90 s).

    Never retried: the next tick is the retry, and a watch whose check failed is already
    rescheduled by its own back-off. Running twice at once is harmless: each run claims the
    due rows it checks (a lease other runs skip), and each line's id comes from the watch and
    the change, so a change is posted once whichever run sees it.
    """
    report = run_cycle()
    data = asdict(report)
    data.pop("http", None)
    return data
