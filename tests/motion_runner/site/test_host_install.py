"""Installable into a host project: every setting has a default, nothing crashes under DEBUG=False
when the host lacks a setting, the routes mount under any prefix, and a host without Celery is told
exactly what to add."""

from __future__ import annotations

import re

import pytest
from django.conf import global_settings
from django.core.management import call_command
from django.urls import resolve, reverse

from motion_runner import urls
from motion_runner.checks import celery_configured, harness_binaries, production_settings
from motion_runner.conf import app_settings as runner_settings
from tests import recorded
from tests.factories import AgentFactory
from tests.paths import ROOT
from wakes.conf import app_settings as wakes_settings
from watchlist.conf import app_settings as watchlist_settings

APPS = {"motion_runner": runner_settings, "wakes": wakes_settings, "watchlist": watchlist_settings}
EVERY_SETTING = [(app, name) for app, conf in APPS.items() for name in conf.names()]


def ids(messages) -> set[str]:
    return {m.id for m in messages}


@pytest.fixture
def bare_host(settings):
    """memory-lane's settings: DEBUG off, its own secret and hosts, none of the apps' settings, no Celery."""
    settings.DEBUG = False
    settings.SECRET_KEY = "memory-lane-secret-from-its-vault"
    settings.ALLOWED_HOSTS = ["memory-lane.example"]
    for _, name in EVERY_SETTING:
        if hasattr(settings, name):
            delattr(settings, name)
    for name in ("CELERY_BROKER_URL", "CELERY_BEAT_SCHEDULE"):
        if hasattr(settings, name):
            delattr(settings, name)
    settings.INSTALLED_APPS = [app for app in settings.INSTALLED_APPS if app != "django_celery_beat"]
    return settings


@pytest.mark.parametrize("app, name", EVERY_SETTING)
def test_every_setting_has_a_default_when_the_host_sets_none(bare_host, app, name):
    assert getattr(APPS[app], name) == APPS[app].default(name)


def test_a_hosts_own_value_wins_over_the_default(settings):
    settings.WATCH_MAX_WORKERS = 3
    assert watchlist_settings.WATCH_MAX_WORKERS == 3


def test_the_deploy_checks_run_under_debug_false_without_the_apps_settings(bare_host):
    # memory-lane's database is PostgreSQL; a run on the embedded SQLite is rightly warned of it.
    on_sqlite = bare_host.DATABASES["default"]["ENGINE"].endswith("sqlite3")
    assert ids(production_settings(None)) == ({"motion_runner.W002"} if on_sqlite else set())


@pytest.mark.django_db
def test_the_harness_check_runs_without_harness_bin_dirs_once_an_agent_exists(bare_host):
    AgentFactory(name="scribe", binary="/no/such/claude")
    assert ids(harness_binaries(None)) == {"motion_runner.W011"}


@pytest.mark.django_db
def test_manage_py_check_passes_on_a_bare_host(bare_host):
    AgentFactory(name="scribe")
    call_command("check", "--database", "default")


def test_a_host_without_celery_is_told_exactly_what_to_add(bare_host):
    messages = {m.id: m for m in celery_configured(None)}
    assert set(messages) == {"motion_runner.W020", "motion_runner.W021", "motion_runner.W022"}
    assert 'CELERY_BROKER_URL = "redis://' in messages["motion_runner.W020"].hint
    assert '"django_celery_beat" to INSTALLED_APPS' in messages["motion_runner.W021"].hint
    assert "beat_schedule()" in messages["motion_runner.W022"].hint


def test_the_standalone_settings_need_no_celery_message():
    assert celery_configured(None) == []


# --- urls ---------------------------------------------------------------------------------------

STANDALONE = {
    "/": "motion-list",
    "/motions/harbor/": "motion-thread",
    "/sign-in/": "sign-in",
    "/admin/": "index",
    "/api/schema/": "api-schema",
    "/api/docs/": "api-docs",
    "/api/motions/": "api-motions",
    "/api/motions/harbor/": "api-motion",
    "/api/motions/harbor/messages/": "api-messages",
    "/api/motions/harbor/stream/": "api-stream",
    "/api/motions/harbor/quiet/": "api-quiet",
    "/api/motions/harbor/typing/": "api-typing",
    "/api/motions/harbor/holds/": "api-holds",
    "/api/hooks/claude-code/": "api-hooks-claude-code",
    "/api/turns/": "api-turns",
    "/api/turns/1/": "api-turn",
    "/api/requests/1/approve/": "api-request-answer",
    "/api/watches/": "watch-list",
    "/api/moods/harbor/stream/": "api-mood-stream",
    "/api/ingest/": "api-ingest",
}


@pytest.mark.parametrize("path, name", STANDALONE.items())
def test_the_standalone_site_keeps_every_url(path, name):
    assert resolve(path).url_name == name


def test_the_apps_urls_hold_no_admin_and_no_api_docs():
    names = {getattr(p, "name", None) for p in urls.urlpatterns}
    namespaces = {getattr(p, "namespace", None) for p in urls.urlpatterns}
    assert "admin" not in namespaces
    assert not {"api-schema", "api-docs"} & names


@pytest.mark.urls("tests.host.urls")
def test_mounted_under_a_prefix_the_host_keeps_its_root_and_its_own_routes(client, db):
    assert resolve("/").url_name == "host-home"
    assert reverse("api-mood-stream", args=["harbor"]) == "/runner/api/moods/harbor/stream/"
    assert resolve("/api/moods/harbor/stream/").url_name == "host-mood-stream"


@pytest.mark.urls("tests.host.urls")
def test_a_stream_post_works_under_the_prefix(client, scribe):
    body = {"session_id": recorded.session_id(), "events": recorded.first_run()}
    response = client.post(
        "/runner/api/moods/harbor/stream/", body, content_type="application/json", **scribe.headers
    )
    assert response.status_code == 200
    assert response.json()["imported"] == 5


def test_every_setting_the_apps_read_has_a_default():
    """Scans the apps' code: a name read as `settings.NAME` is Django's own or has an app default."""
    root = ROOT
    read = set()
    for app in APPS:
        for path in (root / app).rglob("*.py"):
            if path.name not in ("settings.py", "conf.py"):
                read |= set(re.findall(r"\bsettings\.([A-Z][A-Z0-9_]+)", path.read_text()))
    defaulted = {name for _, name in EVERY_SETTING} | set(dir(global_settings))
    assert read - defaulted == set()
