from __future__ import annotations

import logging
from dataclasses import asdict

from celery import shared_task
from django.db import transaction

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


log = logging.getLogger(__name__)


def check_soon() -> None:
    """A cycle now (once the caller's transaction commits), not at beat's next tick: "check now"
    and a new watch are checked within seconds. Without a broker, beat's next cycle does it."""

    def send() -> None:
        try:
            check_watches.delay()
        except Exception as exc:  # noqa: BLE001 - the broker is away: the next cycle checks it
            log.warning("watchlist: could not send a check now (%s); the next cycle checks it", exc)

    transaction.on_commit(send)
