"""The periodic tasks the three apps need, for a project's CELERY_BEAT_SCHEDULE.

The standalone settings use it, and a host project adds `CELERY_BEAT_SCHEDULE = beat_schedule()`
(or merges it into its own); the system check motion_runner.W022 names any entry missing.
"""

from __future__ import annotations

from typing import Any


def beat_schedule(
    tick_seconds: float = 3.0,
    watch_every_seconds: float = 90.0,
    transcript_import_seconds: float = 60.0,
    host_pulse_seconds: float = 5.0,
) -> dict[str, dict[str, Any]]:
    return {
        # Ends turns whose lease lapsed (RUNNER_LEASE_SECONDS): a lost worker's turn is ended within
        # lease + this period (one indexed query when nothing lapsed).
        "reclaim-turns": {
            "task": "motion_runner.reclaim_turns",
            "schedule": 2.0,
            "options": {"expires": 2.0},
        },
        # The rest of the runner's safety net (and the reclaim again): orphans, waiting turns.
        "sweep-turns": {"task": "motion_runner.sweep_turns", "schedule": 15.0},
        # The consider loop's look; its other numbers are dials in the admin (wakes.Dials).
        "wakes-tick": {"task": "wakes.tick", "schedule": tick_seconds, "options": {"expires": tick_seconds}},
        "wakes-check-mentions": {"task": "wakes.check_mentions", "schedule": 30.0},
        "wakes-settle": {"task": "wakes.settle", "schedule": 300.0},
        "sweep-abilities": {"task": "wakes.sweep_abilities", "schedule": 60.0},
        "check-watches": {"task": "watchlist.check_watches", "schedule": watch_every_seconds},
        # Posts taken back in memory-lane's record where no receiver heard it (memory_lane/changes.py).
        "sweep-taken-back": {"task": "motion_runner.sweep_taken_back", "schedule": 60.0},
        "import-transcripts": {
            "task": "motion_runner.import_transcripts",
            "schedule": transcript_import_seconds,
        },
        # memory-lane's push and wiki-feed clocks, which rode on its poller's pulse (nothing
        # standalone; memory_lane/pulse.py). Each nudge rate-limits itself.
        "memory-lane-pulse": {
            "task": "motion_runner.memory_lane_pulse",
            "schedule": host_pulse_seconds,
            "options": {"expires": host_pulse_seconds},
        },
    }
