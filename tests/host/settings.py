"""A foreign host project's settings, shaped like memory-lane's, plus exactly the README's block.

Run by tests/motion_runner/site/test_host_project.py in subprocesses against its own PostgreSQL database
(HOST_DATABASE_URL, created and dropped by the test): DEBUG off, its own secret, hosts, root urls,
base.html and `conversations` app; none of the apps' settings but what the README's "Adding it to
memory-lane" block adds, read out of README.md itself so the two cannot drift apart.
"""

import json
import os
import re
import textwrap
from pathlib import Path

import dj_database_url

HERE = Path(__file__).resolve().parent
SECRET_KEY = "memory-lane-secret-from-its-vault-0123456789-abcdefghijklmnopqrstuvwxyz"
DEBUG = False
ALLOWED_HOSTS = ["memory-lane.example"]
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "tests.host.conversations.apps.ConversationsConfig",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "tests.host.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],  # the host's own, first, as memory-lane lists its own
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
DATABASES = {"default": dj_database_url.parse(os.environ["HOST_DATABASE_URL"])}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
STATIC_URL = "/static/"
USE_TZ = True
# A production host behind TLS: check --deploy has nothing to say about the host itself either.
SECURE_SSL_REDIRECT = True
SECURE_HSTS_SECONDS = 31_536_000
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
# memory-lane's own moderation setting: who may press its AZ5 (views_admin.api_admin).
MOOD_ADMINS = ("justin",)

# memory-lane's own logging: its `conversations` logger and a handler for `django.request`, which
# the README's block keeps (redacted_logging adds the redaction, replaces nothing).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"verbose": {"format": "memory-lane {levelname} {name}: {message}", "style": "{"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "verbose"},
        "requests": {"class": "logging.StreamHandler"},
    },
    "loggers": {
        "conversations": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "django.request": {"handlers": ["requests"], "level": "ERROR", "propagate": False},
    },
}

README = HERE.parent.parent / "README.md"
_section = README.read_text().split("## Adding it to memory-lane", 1)[1]
README_BLOCK = textwrap.dedent(re.search(r"```python\n(.*?)```", _section, re.S).group(1))
exec(README_BLOCK)  # noqa: S102  the README's block, exactly as a host pastes it

# What differs on this test machine only: the test's own broker (no worker runs here: a wake's task
# stays in memory, its Turn row is the proof) and the fake model the real harness CLI talks to.
CELERY_BROKER_URL = "memory://"
RUNNER_EXTRA_ENV = json.loads(os.environ.get("HOST_RUNNER_EXTRA_ENV", "{}"))
