"""System checks for a host project: what it must add for the apps to work, said exactly.

Warnings, not errors: a host can still migrate and serve its own pages, but until Celery is
configured no agent is ever woken and no watch is ever checked, and the check says so at start-up.
"""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Warning, register

from .schedule import beat_schedule

CELERY_HINT = (
    'Add to the settings: CELERY_BROKER_URL = "redis://127.0.0.1:6379/0" (any Celery broker), and run '
    "`celery -A motion_runner worker` and `celery -A motion_runner beat` beside the web process "
    "(README: Adding it to memory-lane)."
)


@register()
def celery_configured(app_configs, **kwargs):
    messages = []
    if not getattr(settings, "CELERY_BROKER_URL", ""):
        messages.append(
            Warning(
                "Motion Runner has no Celery broker: turns never run, agents are never woken and watches never checked.",
                hint=CELERY_HINT,
                id="motion_runner.W020",
            )
        )
    if "django_celery_beat" not in settings.INSTALLED_APPS:
        messages.append(
            Warning(
                "django_celery_beat is not installed: the consider loop, the sweeps and the watch cycle never run.",
                hint='Add "django_celery_beat" to INSTALLED_APPS and set '
                'CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler".',
                id="motion_runner.W021",
            )
        )
    scheduled = {
        entry.get("task") for entry in (getattr(settings, "CELERY_BEAT_SCHEDULE", None) or {}).values()
    }
    missing = sorted({entry["task"] for entry in beat_schedule().values()} - scheduled)
    if missing:
        messages.append(
            Warning(
                f"CELERY_BEAT_SCHEDULE lacks {', '.join(missing)}.",
                hint="Add: from motion_runner.schedule import beat_schedule; "
                "CELERY_BEAT_SCHEDULE = {**beat_schedule(), **<your own entries>}.",
                id="motion_runner.W022",
            )
        )
    return messages
