"""memory-lane's clocks that rode on its poller's pulse, run from the beat (issue 40, item 3).

memory-lane's `api_pulse` (`views_moods.py`), which its poller asked for every second, did two
things besides answering: `wiki_feed.nudge()` (what is new on PickiPedia, as lines in the Moods
that follow it: at most once a minute, in the background) and `push.nudge()` (Web Push of new
"mentioned you" / "answered you" notices to closed pages: at most every 10 s). With the poller
gone nobody asks for the pulse, so both ran only while someone had a page open (its
`api_mood_turns` nudges the wiki feed, its page's own look the push). Here the beat calls each of
`MEMORY_LANE_PULSE_CALLS` (dotted paths, memory-lane's two nudges by default) every
`beat_schedule(host_pulse_seconds=…)` seconds, under the memory_lane binding only: each rate-limits
itself, as it did when the poller asked every second. A call the host does not have is said once
in the log and skipped; one that fails is logged and the next beat calls it again. A path's first
part may be an installed app's label (memory-lane's `conversations`), found wherever that app lives.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.apps import apps
from django.utils.module_loading import import_string

from ..conf import app_settings as settings
from ..record import binding

log = logging.getLogger(__name__)
_missing: set[str] = set()


def found(path: str):
    """The callable at `path`, or at the same path inside the app whose label is its first part."""
    try:
        return import_string(path)
    except ImportError:
        label, _, rest = path.partition(".")
        if not apps.is_installed(label) and label in apps.app_configs:
            return import_string(f"{apps.get_app_config(label).name}.{rest}")
        raise


@shared_task(name="motion_runner.memory_lane_pulse", ignore_result=True)
def memory_lane_pulse() -> dict[str, str]:
    """Each of memory-lane's pulse calls once: {path: what it answered, or why not}."""
    if not binding().shares_memory_lane_record:
        return {}
    done: dict[str, str] = {}
    for path in settings.MEMORY_LANE_PULSE_CALLS:
        try:
            call = found(path)
        except ImportError:
            if path not in _missing:
                _missing.add(path)
                log.warning("memory-lane's pulse call %s is not in this host: skipped", path)
            done[path] = "missing"
            continue
        try:
            done[path] = repr(call())
        except Exception:
            log.exception("memory-lane's pulse call %s failed; the next beat calls it again", path)
            done[path] = "failed"
    return done
