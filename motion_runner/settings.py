"""Settings, read from the environment.

Every default is the embedded one a newcomer's first run needs (SQLite, a broker on the
filesystem, DEBUG on); production sets DATABASE_URL, CELERY_BROKER_URL, SECRET_KEY,
ALLOWED_HOSTS and DEBUG=0, and the system checks in motion_runner/checks.py refuse to
start a DEBUG=0 deployment that left any of them at its development value.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import dj_database_url

from motion_runner.schedule import beat_schedule

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else default


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEVELOPMENT_SECRET_KEY = "dev-only-not-secret-motion-runner"
DATA_DIR = Path(os.environ.get("MOTION_RUNNER_DATA_DIR", BASE_DIR / "var"))
DATA_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = os.environ.get("SECRET_KEY", DEVELOPMENT_SECRET_KEY)
DEBUG = env_bool("DEBUG", True)
# bin/serve names its demo account here (motion_runner/people/first_run.py); production never does.
MOTION_RUNNER_FIRST_RUN_GRANTS = env_list("MOTION_RUNNER_FIRST_RUN_GRANTS", [])
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "motion_runner",
    "wakes",
    "watchlist",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "motion_runner.api.bounds.RefuseNulInQuery",
    # The database away: 503 + Retry-After in the API's error body, never an HTML 500.
    "motion_runner.api.outage.DatabaseAwayMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "motion_runner.site_urls"
WSGI_APPLICATION = "motion_runner.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # The apps' own templates come from motion_runner/templates (a link to ./templates), as in
        # a host; this site lists the folder too only so its admin/base_site.html wins over admin's.
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "motion_runner.people.context.viewer",
                "wakes.notices.context.notices",
            ],
        },
    },
]

DEFAULT_DATABASE_URL = f"sqlite:///{DATA_DIR / 'db.sqlite3'}"
DATABASES = {
    "default": dj_database_url.parse(os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL), conn_max_age=60)
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend with faster timestamp loading and array dumping (motion_runner/sql/backend).
    DATABASES["default"]["ENGINE"] = "motion_runner.sql.backend"
    # A process's threads share DATABASE_POOL_SIZE connections (Django's "pool", psycopg-pool)
    # instead of each opening its own per request: a long poll gives its connection back while
    # it waits, and opening a new one was most of a poll's cost (bench/waiting_readers.py,
    # bench/stream_latency.py). 0: no pool.
    pool_size = env_int("DATABASE_POOL_SIZE", 10)
    if pool_size > 0:
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # a pool and persistent connections exclude each other
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": min(2, pool_size),
            "max_size": pool_size,
            "timeout": 30,
            # A connection that cannot be opened is retried with a growing back-off (1, 2, 4… s)
            # for this long, then given up and opened anew on the next request: after a long
            # outage the pool tries again at once instead of a minute after the database is back.
            "reconnect_timeout": 5,
        }
        # A pooled connection is checked as it is taken, by motion_runner/sql/backend (not with
        # psycopg-pool's `check`, whose back-off outlasts the pool's timeout after a restart).
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
    else:
        # A persistent connection is checked before a request reuses it: after a database restart a
        # dead one is replaced instead of failing its request with a 503.
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The runner writes from a worker while the web process reads: WAL and a busy
    # timeout keep the embedded default from failing with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            # BEGIN IMMEDIATE: a read-then-write transaction (the importer, the runner) waits for
            # the write lock up front instead of failing with "database is locked" on upgrade.
            "transaction_mode": "IMMEDIATE",
        }
    )
    DATABASES["default"]["CONN_MAX_AGE"] = 0

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
# ./static is found as the app's static folder (motion_runner/static links to it), as in a host.
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", DATA_DIR / "static"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Served from the app folders in development, from STATIC_ROOT after collectstatic in production.
WHITENOISE_USE_FINDERS = DEBUG
LOGIN_URL = "/admin/login/"

# --- Celery -------------------------------------------------------------------------------
# The embedded default is kombu's filesystem transport: a worker and beat on one machine
# exchange messages through a folder, with no server to install.
# With a host named: without one kombu warns "No hostname was supplied" at every connection.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://localhost/")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _queue_dir = DATA_DIR / "broker"
    for _folder in ("queue", "processed", "control"):
        (_queue_dir / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # kombu's default is ./control in the working directory: the agents would see it in git status
        "control_folder": str(_queue_dir / "control"),
        "data_folder_in": str(_queue_dir / "queue"),
        "data_folder_out": str(_queue_dir / "queue"),
        "processed_folder": str(_queue_dir / "processed"),
        "store_processed": False,
    }
# How long the thread page's long poll waits for something new (the API caps it at 25 s).
THREAD_POLL_WAIT_SECONDS = float(os.environ.get("THREAD_POLL_WAIT_SECONDS", "20"))
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
# A turn is launched once; a lost worker is found by the sweeper, never by redelivery
# of a task that may already have spent money.
CELERY_TASK_ACKS_LATE = False
# A worker whose broker went away waits for it however long it takes (kombu's default gives up
# after 100 tries and the worker exits); docker-compose restarts one that exits anyway.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Queues by kind: a turn holds its worker for up to the turn timeout, so turns have a queue (and
# workers) of their own, and the loop's tick, considerations, sweeps and settles are never stuck
# behind four long turns. bin/serve and docker-compose.yml start a worker for each.
TURNS_QUEUE = "turns"
HOUSEKEEPING_QUEUE = "housekeeping"
CELERY_TASK_DEFAULT_QUEUE = HOUSEKEEPING_QUEUE
CELERY_TASK_ROUTES = {"motion_runner.run_turn": {"queue": TURNS_QUEUE}}
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# The consider loop's look; its other numbers are dials in the admin (wakes.Dials).
WAKES_TICK_SECONDS = env_float("WAKES_TICK_SECONDS", 3.0)
# A claimed consideration not started within this long is sent again, once (the broker may have
# lost its task); one still not started after as long again is given up: its reservation released
# and its posts owed again.
WAKES_CONSIDERATION_START_SECONDS = env_float("WAKES_CONSIDERATION_START_SECONDS", 30.0)
# A started consideration not woken within this long (and twice the screen's timeout) lost its
# worker: it is given up the same way.
WAKES_CONSIDERATION_RUN_SECONDS = env_float("WAKES_CONSIDERATION_RUN_SECONDS", 40.0)
# --- REST framework -----------------------------------------------------------------------
# Who may read, post, watch, type and answer in a Motion: a class with MotionAccess's methods
# (motion_runner/people/access.py, docs/security.md). A host project names its own here.
# Secrets are taken out of what is stored and served (motion_runner/ingest/redaction.py): the values of
# these settings wherever they appear, and the shapes of keys, tokens and passwords.
REDACT_SECRETS = env_bool("REDACT_SECRETS", True)
# REDACT_SETTINGS (which settings' values are secrets) keeps the apps' default (motion_runner/conf.py).
# The admin shows a new agent key once, as a message: kept in the session (server side), never
# in the default cookie storage, which is signed but not encrypted.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"
API_MAX_JSON_DEPTH = env_int("API_MAX_JSON_DEPTH", 64)
# The most of one message's text that is kept and served (a person's post is refused past it).
MESSAGE_TEXT_MAX_CHARS = env_int("MESSAGE_TEXT_MAX_CHARS", 100_000)
MESSAGE_TOOL_RESULT_MAX_CHARS = env_int("MESSAGE_TOOL_RESULT_MAX_CHARS", 64 * 1024)
# How much of a tool's output a reader of the thread is served (0: all that is kept).
THREAD_TOOL_RESULT_SHOWN_CHARS = env_int("THREAD_TOOL_RESULT_SHOWN_CHARS", 0)
# A post longer than this is shown as plain text, not rendered as Markdown (a bound on one text's work).
THREAD_MARKDOWN_MAX_CHARS = env_int("THREAD_MARKDOWN_MAX_CHARS", 20_000)
MOTION_RUNNER_ACCESS = os.environ.get("MOTION_RUNNER_ACCESS", "motion_runner.people.access.MotionAccess")

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Agent keys first: their WWW-Authenticate header makes a missing or bad key a 401.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "motion_runner.memory_lane.runner_keys.RunnerKeyAuthentication",
        "motion_runner.api.auth.AgentKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "EXCEPTION_HANDLER": "motion_runner.api.errors.exception_handler",
    # JSON only (no form bodies), depth-capped and NUL-free: motion_runner/api/bounds.py.
    "DEFAULT_PARSER_CLASSES": ["motion_runner.api.bounds.BoundedJSONParser"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Motion Runner API",
    "DESCRIPTION": "Motions, their messages, the harness stream and turns.",
    "VERSION": "1.0.0",
    # The docs page's Swagger UI is served from drf-spectacular-sidecar: it works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Every operation's error answers documented in the one error body (motion_runner/api/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "motion_runner.api.schema.add_error_responses",
    ],
}

# --- The runner ---------------------------------------------------------------------------
# Where harness CLIs are found when an Agent names no binary: ./node_modules/.bin first
# (what `npm ci` installs from package.json), then $PATH.
HARNESS_BIN_DIRS = env_list("HARNESS_BIN_DIRS", [str(BASE_DIR / "node_modules" / ".bin")])
# Codex's read-only sandbox reads anywhere (~/.ssh too): a look-only Codex turn is refused
# unless this says "allow" (docs/security.md).
RUNNER_CODEX_LOOK_ONLY = os.environ.get("RUNNER_CODEX_LOOK_ONLY", "refuse")
RUNNER_TURN_TIMEOUT_SECONDS = env_float("RUNNER_TURN_TIMEOUT_SECONDS", 15 * 60)

# Long-poll readers are woken by PostgreSQL NOTIFY (motion_runner/thread/bell.py); while the
# channel is down (or on SQLite) they look again at this pace instead.
MESSAGES_LISTEN = env_bool("MESSAGES_LISTEN", True)
# motion_runner/sql/: off, the ORM reference path of every hand-written fast path runs.
MOTION_RUNNER_SQL_FAST_PATHS = env_bool("MOTION_RUNNER_SQL_FAST_PATHS", True)
MESSAGES_FALLBACK_POLL_SECONDS = env_float("MESSAGES_FALLBACK_POLL_SECONDS", 1.0)
MESSAGES_WOKEN_READERS_AT_ONCE = env_int("MESSAGES_WOKEN_READERS_AT_ONCE", 10)
# A web process's threads held by long polls: at most this many by one client (an agent's key, a
# signed-in person, else an address) and by anonymous readers together; past either, 429 with
# Retry-After (motion_runner/api/poll_caps.py, docs/security.md). Behind a reverse proxy, name it
# in TRUSTED_PROXIES (comma-separated addresses or networks) or every reader is the proxy's address.
LONG_POLLS_PER_CLIENT = env_int("LONG_POLLS_PER_CLIENT", 6)
LONG_POLLS_ANONYMOUS = env_int("LONG_POLLS_ANONYMOUS", 24)
LONG_POLL_RETRY_AFTER_SECONDS = env_int("LONG_POLL_RETRY_AFTER_SECONDS", 5)
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])
RUNNER_MAX_LINE_BYTES = env_int("RUNNER_MAX_LINE_BYTES", 4 * 1024 * 1024)
RUNNER_MAX_OUTPUT_BYTES = env_int("RUNNER_MAX_OUTPUT_BYTES", 64 * 1024 * 1024)
RUNNER_STDERR_TAIL_BYTES = env_int("RUNNER_STDERR_TAIL_BYTES", 16 * 1024)
RUNNER_KILL_GRACE_SECONDS = env_float("RUNNER_KILL_GRACE_SECONDS", 3.0)
# A harness that printed its result line but does not exit is stopped after this long.
RUNNER_AFTER_RESULT_GRACE_SECONDS = env_float("RUNNER_AFTER_RESULT_GRACE_SECONDS", 10.0)
# A running turn renews its lease this often ÷ 3; a turn whose lease lapsed has lost its runner
# and is reclaimed by the sweep (its processes killed, its printed lines recovered, its pair freed).
RUNNER_LEASE_SECONDS = env_float("RUNNER_LEASE_SECONDS", 6.0)
# A queued turn whose pair is free but that no worker started this long after it was queued (or
# last sent) is sent again: the broker lost its task.
RUNNER_RESEND_AFTER_SECONDS = env_float("RUNNER_RESEND_AFTER_SECONDS", 60.0)
# While the database does not answer, a running turn keeps its harness going and its lines in
# memory for up to this long, retrying with back-off; then it stops the harness and says so.
RUNNER_DB_OUTAGE_SECONDS = env_float("RUNNER_DB_OUTAGE_SECONDS", 60.0)
# What the harness printed before it was stopped (or before it ended) waits this long for the
# database to come back, and a turn's end (turn_finished: the ledger's settle) is tried again as long.
RUNNER_END_RETRY_SECONDS = env_float("RUNNER_END_RETRY_SECONDS", 600.0)
# Extra environment for every harness process (tests point the CLIs at a fake model).
RUNNER_EXTRA_ENV: dict[str, str] = {}
# bin/serve's stand-in model, for a first run with no model key (motion_runner/lib/standin_model.py):
# a Claude Code agent with no key of its own talks to it (harnesses/env.py).
STANDIN_MODEL_URL = os.environ.get("STANDIN_MODEL_URL", "")
# The record server every turn connects to (bin/serve and docker-compose.yml start it): conf.py.
RECORD_SERVER_URL = os.environ.get("RECORD_SERVER_URL", "")

# The screen (wakes/turn/screen.py): the Anthropic Messages API. No key: every screen passes.
WAKES_SCREEN_API_BASE = os.environ.get("WAKES_SCREEN_API_BASE", "https://api.anthropic.com")
WAKES_SCREEN_API_KEY = os.environ.get("WAKES_SCREEN_API_KEY", os.environ.get("ANTHROPIC_API_KEY", ""))
# Web Push of "answered you" notices (wakes/notices/push.py; `manage.py vapid_key` makes a key).
WAKES_VAPID_PRIVATE_KEY = os.environ.get("WAKES_VAPID_PRIVATE_KEY", "")
WAKES_VAPID_CONTACT = os.environ.get("WAKES_VAPID_CONTACT", "mailto:admin@localhost")
# The `turns` workers' concurrency (bin/serve's WORKERS): a mention past it says the slots are busy.
WAKES_TURN_SLOTS = env_int("WAKES_TURN_SLOTS", env_int("WORKERS", 4))
# Shadow mode: wakes decided and recorded, nothing launched (docs/switch-over.md).
WAKES_SHADOW = env_bool("WAKES_SHADOW", False)

# Tests and CI set this so a missing PostgreSQL or Redis fails loudly.
REQUIRE_REAL_SERVICES = env_bool("MOTION_RUNNER_REQUIRE_SERVICES", False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Every line is redacted of secrets (motion_runner/ingest/redaction.py) before it is written.
    "formatters": {"redacted": {"()": "motion_runner.ingest.redaction.RedactingFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "redacted"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # httpx logs every request at INFO: a watch cycle makes hundreds of them.
    # "django": Django's own console handler is dropped, so that a request's warning ("Forbidden:
    # /…", a 423) is said once, by the root's (it printed twice under DEBUG: issue 43.6).
    "loggers": {
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        "django": {"handlers": [], "level": "INFO", "propagate": True},
    },
}

# --- The watchlist (watchlist/) -----------------------------------------------------------
WATCH_CHECK_EVERY_SECONDS = env_float("WATCH_CHECK_EVERY_SECONDS", 90.0)
WATCH_MIN_INTERVAL_SECONDS = env_int("WATCH_MIN_INTERVAL_SECONDS", 90)
WATCH_CYCLE_BUDGET_SECONDS = env_float("WATCH_CYCLE_BUDGET_SECONDS", 75.0)
WATCH_CLAIM_LEASE_SECONDS = env_int("WATCH_CLAIM_LEASE_SECONDS", 300)
WATCH_MAX_PER_CYCLE = env_int("WATCH_MAX_PER_CYCLE", 20000)
WATCH_MAX_WORKERS = env_int("WATCH_MAX_WORKERS", 8)
WATCH_FAILURES_BEFORE_NOTICE = env_int("WATCH_FAILURES_BEFORE_NOTICE", 3)
WATCH_BACKOFF_MAX_SECONDS = env_int("WATCH_BACKOFF_MAX_SECONDS", 3600)
# The one outbound HTTP wrapper (motion_runner/lib/http/): limits and the SSRF guard's allowlist
# (CIDRs, optionally with :port, e.g. "10.1.2.0/24,127.0.0.1:8545"; empty = public only).
WATCH_HTTP_TIMEOUT_SECONDS = env_float("WATCH_HTTP_TIMEOUT_SECONDS", 10.0)
WATCH_HTTP_MAX_BYTES = env_int("WATCH_HTTP_MAX_BYTES", 2 * 1024 * 1024)
WATCH_HTTP_PER_HOST_CONCURRENCY = env_int("WATCH_HTTP_PER_HOST_CONCURRENCY", 4)
WATCH_HTTP_PER_HOST_INTERVAL = env_float("WATCH_HTTP_PER_HOST_INTERVAL", 0.02)
WATCH_HTTP_MAX_REDIRECTS = env_int("WATCH_HTTP_MAX_REDIRECTS", 5)
WATCH_HTTP_ALLOW_NETWORKS = env_list("WATCH_HTTP_ALLOW_NETWORKS", [])
WATCH_WIKI_API = os.environ.get("WATCH_WIKI_API", "https://pickipedia.xyz/api.php")
# Talk pages on these wikis wake an agent "to reply on that talk page".
WATCH_TALK_REPLY_WIKIS = env_list("WATCH_TALK_REPLY_WIKIS", [WATCH_WIKI_API])
WATCH_WIKI_MAXLAG = env_int("WATCH_WIKI_MAXLAG", 5)
WATCH_GITHUB_API = os.environ.get("WATCH_GITHUB_API", "https://api.github.com")
WATCH_GITHUB_TOKEN = os.environ.get("WATCH_GITHUB_TOKEN", "")
WATCH_ETH_RPC_URL = os.environ.get("WATCH_ETH_RPC_URL", "https://ethereum-rpc.publicnode.com")
WATCH_ETH_MAX_RANGE = env_int("WATCH_ETH_MAX_RANGE", 5000)
WATCH_ETH_MAX_CHUNKS = env_int("WATCH_ETH_MAX_CHUNKS", 20)
WATCH_ETH_EXPLORER = os.environ.get("WATCH_ETH_EXPLORER", "https://etherscan.io/tx/{tx}")

# --- Abilities (wakes/abilities): the runner posts a woken agent's reply on the talk page ---
# Bot passwords (Special:BotPasswords), per wiki api.php URL. The single pair from the
# environment is for the default wiki only: a password is never sent to a wiki it is not for.
WIKI_BOT_USERNAME = os.environ.get("WIKI_BOT_USERNAME", "")  # e.g. "MotionBot@runner"
WIKI_BOT_PASSWORD = os.environ.get("WIKI_BOT_PASSWORD", "")
WIKI_BOT_CREDENTIALS: dict[str, tuple[str, str]] = {WATCH_WIKI_API: (WIKI_BOT_USERNAME, WIKI_BOT_PASSWORD)}
WIKI_REPLY_ASSERT = os.environ.get("WIKI_REPLY_ASSERT", "user")  # "bot" if the account is a bot
WIKI_REPLY_MAX_CHARS = env_int("WIKI_REPLY_MAX_CHARS", 10000)
WIKI_REPLY_SIGNATURE = os.environ.get(
    "WIKI_REPLY_SIGNATURE", "— @{agent}, an AI agent, replying through Motion Runner ~~~~"
)
ABILITY_MAX_ATTEMPTS = env_int("ABILITY_MAX_ATTEMPTS", 5)
ABILITY_RETRY_BASE_SECONDS = env_float("ABILITY_RETRY_BASE_SECONDS", 30.0)
ABILITY_RETRY_MAX_SECONDS = env_float("ABILITY_RETRY_MAX_SECONDS", 900.0)
ABILITY_CLAIM_LEASE_SECONDS = env_int("ABILITY_CLAIM_LEASE_SECONDS", 300)

# A stream post carries up to 500 harness events, tool results included (up to 64 KiB each).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 32 * 1024 * 1024)

# --- memory-lane's clients (docs/memory-lane.md) ------------------------------------------
# A runner's hold (api/moods/<slug>/held/), the holds shown and an agent's words as they are typed
# (thread/typed.py, written by the worker, read by the web) are kept in the cache, which every
# process must share: Redis (CACHE_URL, else the broker's Redis) in production, files under the
# data folder for the embedded default (bin/serve's web and worker are separate processes).
CACHE_URL = os.environ.get("CACHE_URL") or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith("redis") else ""
)
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL
        else {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(DATA_DIR / "cache"),
        }
    )
}
# Its runner's keys as its vault gives them, a JSON object {"agent name": "key"}; and the key its
# transcript watcher sends to /api/ingest/ (unset: the endpoint answers 503).
MOOD_RUNNER_KEYS: dict[str, str] = json.loads(os.environ.get("MOOD_RUNNER_KEYS") or "{}")
INGEST_API_KEY = os.environ.get("INGEST_API_KEY", "")

# --- Transcript import --------------------------------------------------------------------
# Where Claude Code keeps its transcripts; the importer reads `<dir>/<cwd-munged>/<session>.jsonl`.
TRANSCRIPT_DIRS = env_list("TRANSCRIPT_DIRS", [str(Path.home() / ".claude" / "projects")])
TRANSCRIPT_IMPORT_SECONDS = env_float("TRANSCRIPT_IMPORT_SECONDS", 60.0)

CELERY_BEAT_SCHEDULE = beat_schedule(
    tick_seconds=WAKES_TICK_SECONDS,
    watch_every_seconds=WATCH_CHECK_EVERY_SECONDS,
    transcript_import_seconds=TRANSCRIPT_IMPORT_SECONDS,
)
