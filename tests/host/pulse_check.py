"""What tests/motion_runner/memory_lane/test_memory_lane_pulse.py does inside the host project
(issue 40, item 3): memory-lane's push and wiki-feed clocks run from the beat with no page open
and no poller. Prints one JSON object.

`python -m tests.host.pulse_check` with DJANGO_SETTINGS_MODULE=tests.host.settings.
"""

from __future__ import annotations

import json

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from motion_runner.celery import app  # noqa: E402
from tests.host.conversations.services import push, wiki_feed  # noqa: E402


def beat_once(name: str) -> dict:
    """The beat's entry, run as a worker runs it (by its task's name, no request, no page)."""
    return app.tasks[name].apply().get()


def main() -> dict:
    (entry,) = [
        e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "motion_runner.memory_lane_pulse"
    ]
    seen: dict = {"every": entry["schedule"]}
    with CaptureQueriesContext(connection) as queries:
        first = beat_once(entry["task"])
    seen["first"] = first
    seen["queries"] = len(queries)
    seen["looks_after_first"] = [push.looks(), wiki_feed.looks()]
    beat_once(entry["task"])  # a second beat within 10 s: each nudge's own lock says no
    seen["looks_after_second"] = [push.looks(), wiki_feed.looks()]
    cache.delete("push:lock")  # 10 s on: push looks again, the wiki feed not before its minute
    beat_once(entry["task"])
    seen["looks_after_ten_seconds"] = [push.looks(), wiki_feed.looks()]
    return seen


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
