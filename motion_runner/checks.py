"""System checks that refuse a misconfigured start instead of failing at the first wake."""

from __future__ import annotations

from django.conf import settings as django_settings  # the host's own, for what it must add
from django.core.checks import Error, Tags, Warning, register
from django.db import DatabaseError

from .conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .harnesses import HARNESSES
from .models import Agent
from .schedule import beat_schedule
from .signals import SEAMS_CHOSEN_BY_SETTING


@register(Tags.security, deploy=False)
def production_settings(app_configs, **kwargs):
    errors = []
    if settings.DEBUG:
        return errors
    if settings.SECRET_KEY == settings.DEVELOPMENT_SECRET_KEY:
        errors.append(
            Error(
                "SECRET_KEY is the development default while DEBUG is off.",
                hint="Set SECRET_KEY in the environment.",
                id="motion_runner.E001",
            )
        )
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        errors.append(
            Warning(
                "DEBUG is off but the database is the embedded SQLite default.",
                hint="Set DATABASE_URL to a PostgreSQL database for production.",
                id="motion_runner.W002",
            )
        )
    if getattr(settings, "CELERY_BROKER_URL", "").startswith("filesystem://"):
        errors.append(
            Warning(
                "DEBUG is off but the Celery broker is the embedded filesystem default.",
                hint="Set CELERY_BROKER_URL to a Redis URL for production.",
                id="motion_runner.W003",
            )
        )
    if settings.MOTION_RUNNER_FIRST_RUN_GRANTS:
        errors.append(
            Error(
                "MOTION_RUNNER_FIRST_RUN_GRANTS is set while DEBUG is off.",
                hint="It is bin/serve's local first-run default; unset it in production "
                "(name trusted people in full_tools_for instead).",
                id="motion_runner.E005",
            )
        )
    if not settings.ALLOWED_HOSTS or "*" in settings.ALLOWED_HOSTS:
        errors.append(
            Error(
                "ALLOWED_HOSTS is empty or '*' while DEBUG is off.",
                hint="Set ALLOWED_HOSTS to the host names the site is served on.",
                id="motion_runner.E004",
            )
        )
    return errors


@register()
def seams_chosen_by_setting(app_configs, **kwargs):
    """Each one-answer seam's dotted path (MOTION_RUNNER_TOOL_POLICY, MOTION_RUNNER_TURN_CLOCKS)
    loads and is callable: a typo stops the start, not the first turn's launch."""
    errors = []
    for seam in SEAMS_CHOSEN_BY_SETTING:
        path = seam.path()
        try:
            answer = seam.load()
        except Exception as error:  # an ImportError, or whatever the named module raises on import
            errors.append(
                Error(
                    f"{seam.setting} = {path!r} cannot be loaded: {type(error).__name__}: {error}",
                    hint=f"Name a callable by its dotted path, or unset {seam.setting} for the "
                    f"default ({seam.default_path()!r}).",
                    id="motion_runner.E030",
                )
            )
            continue
        if not callable(answer):
            errors.append(Error(f"{seam.setting} = {path!r} is not callable.", id="motion_runner.E031"))
    return errors


@register(Tags.database)
def harness_binaries(app_configs, databases=None, **kwargs):
    """Every agent's harness binary should be found where the runner will look for it.

    A warning, not an error: a server that only receives streams from agents on other machines
    has no binaries, and `agent_key`, `migrate` and the web must still run there. Where a turn
    is launched the missing binary is an error: `manage.py wake --sync` refuses, and a worker's
    turn fails before launch with a line in the thread. Runs with every command's checks
    (agents live in the database).
    """
    errors = []
    try:
        agents = list(Agent.objects.all())
    except DatabaseError:
        return errors  # not migrated yet: migrate reports that itself
    for agent in agents:
        adapter = HARNESSES.get(agent.harness)
        if adapter is None:
            errors.append(
                Error(f"@{agent.name} uses unknown harness {agent.harness!r}.", id="motion_runner.E010")
            )
        elif adapter.resolve_binary(agent) is None:
            errors.append(
                Warning(
                    f"@{agent.name}'s {agent.harness} binary "
                    f"{agent.binary or adapter.default_binary!r} cannot be found: its turns cannot "
                    "be launched on this machine.",
                    hint="Run `npm ci` in the project folder, or set the agent's binary path "
                    "(nothing to do if this machine only receives its stream).",
                    id="motion_runner.W011",
                )
            )
    return errors


# --- What a host project must add (warnings: a host can still migrate and serve its own pages,
# but until Celery is configured no agent is ever woken and no watch is ever checked) ----------

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
    if "django_celery_beat" not in django_settings.INSTALLED_APPS:
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
