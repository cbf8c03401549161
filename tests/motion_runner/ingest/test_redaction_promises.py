"""Redaction of every shape docs/security.md promises, and of every secret setting of the deployment
(issue 20 item 13; motion_runner/ingest/redaction.py)."""

from __future__ import annotations

import re

import pytest

from motion_runner.models import Message

pytestmark = pytest.mark.django_db


GITHUB_TOKEN = "ghp_" + "A1b2C3d4" * 5


@pytest.mark.parametrize(
    "text, secret",
    [
        ("DB_PASS=hunter2horse", "hunter2horse"),
        ("export OPENAI_KEY=opensesame-7781", "opensesame-7781"),
        ("PGPASSWORD=correcthorsebattery psql -h db", "correcthorsebattery"),
        ("Cookie: sessionid=k3j4h5g6f7d8s9a0; csrftoken=zz", "k3j4h5g6f7d8s9a0"),
        ("set-cookie: SESSIONID=k3j4h5g6f7d8s9a0; Path=/", "k3j4h5g6f7d8s9a0"),
        ("curl -b csrftoken=k3j4h5g6f7d8s9a0 …", "k3j4h5g6f7d8s9a0"),
        ('{"headers": "sessionid=k3j4h5g6f7d8s9a0"}', "k3j4h5g6f7d8s9a0"),
        ("SENTRY_DSN=https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42", "0123456789abcdef"),
        ("dsn: https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42", "0123456789abcdef"),
        ("posting to https://hooks.slack.com/services/T0AAAA/B0BBBB/XyZ123abcDEF456", "XyZ123abcDEF456"),
        (f"x_{GITHUB_TOKEN}", GITHUB_TOKEN),
    ],
)
def test_each_promised_shape_is_redacted(text, secret):
    from motion_runner.ingest.redaction import redact

    assert secret not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "password = form.cleaned_data['password']",
        "MAX_TOKENS=4096 is the default",
        "PASS=1 FAIL=0",  # a test summary, no secret
        "git clone https://github.com/cryptograss/memory-lane",
        "monkey=banana123",
        "my_session=abcdefgh12345 is a variable",
        "KEYBOARD_LAYOUT=us-intl-altgr",
    ],
)
def test_what_is_no_secret_is_left_alone(text):
    from motion_runner.ingest.redaction import redact

    assert redact(text) == text


SECRET_SETTING = r"(KEY|KEYS|TOKEN|PASSWORD|PASS|CREDENTIALS|SECRET|DSN)$"


NOT_SECRETS = {"DEVELOPMENT_SECRET_KEY"}  # the development default, published in the source


def test_every_secret_setting_of_the_deployment_is_redacted():

    from django.conf import settings

    from motion_runner.conf import app_settings

    named = {name for name in dir(settings) if re.search(SECRET_SETTING, name)} - NOT_SECRETS
    assert named <= set(app_settings.REDACT_SETTINGS)
    for url in ("CELERY_BROKER_URL", "CACHE_URL", "DATABASES", "SECRET_KEY_FALLBACKS"):
        assert url in app_settings.REDACT_SETTINGS


@pytest.mark.parametrize(
    "name, value, secret",
    [
        ("MOOD_RUNNER_KEYS", {"scribe": "runner-key-of-no-shape"}, "runner-key-of-no-shape"),
        ("INGEST_API_KEY", "ingest-key-of-no-shape", "ingest-key-of-no-shape"),
        ("CELERY_BROKER_URL", "redis://:brokerpass99@redis:6379/0", "brokerpass99"),
        (
            "RUNNER_EXTRA_ENV",
            {"OPENAI_API_KEY": "model-key-of-no-shape", "HOME": "/home/runner"},
            "model-key-of-no-shape",
        ),
    ],
)
def test_the_deployments_own_secrets_are_not_stored(client, scribe, settings, name, value, secret):
    setattr(settings, name, value)
    from tests.motion_runner.ingest.test_redaction import stream_text

    stream_text(client, scribe, f"the config says {secret} and home is /home/runner")
    text = Message.objects.get(kind="text", text__contains="config").text
    assert secret not in text and "/home/runner" in text


@pytest.mark.filterwarnings("ignore:Overriding setting DATABASES")
def test_the_databases_password_is_not_stored(client, scribe, settings):
    settings.DATABASES = {**settings.DATABASES}
    settings.DATABASES["default"] = {**settings.DATABASES["default"], "PASSWORD": "db-pass-of-no-shape"}
    from tests.motion_runner.ingest.test_redaction import stream_text

    stream_text(client, scribe, "psql with db-pass-of-no-shape")
    assert not Message.objects.filter(text__contains="db-pass-of-no-shape").exists()
