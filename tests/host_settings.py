"""A foreign host project's settings, shaped like memory-lane's, plus exactly the README's block.

Used by tests/test_host_install.py in a subprocess (its own throwaway SQLite database, given in
HOST_DATABASE_PATH): DEBUG off, its own secret and hosts, its own root urls, none of the apps'
settings but what the README's "Adding it to memory-lane" block adds, read from the README itself
so the two cannot drift apart.
"""

import os
import re
import textwrap
from pathlib import Path

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
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "tests.host_urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
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
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["HOST_DATABASE_PATH"]}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
STATIC_URL = "/static/"
USE_TZ = True

README = Path(__file__).resolve().parent.parent / "README.md"
_section = README.read_text().split("## Adding it to memory-lane", 1)[1]
README_BLOCK = textwrap.dedent(re.search(r"```python\n(.*?)```", _section, re.S).group(1))
exec(README_BLOCK)  # noqa: S102  the README's block, exactly as a host pastes it
