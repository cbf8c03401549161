"""The apps' settings: every one has a default, read lazily, overridden by a setting of the same name.

A host project (memory-lane) adds the apps with a short settings block and sets only what differs
from the defaults here; nothing is required. As DRF's `api_settings` does, each app has one object
(`motion_runner.conf.app_settings`, `wakes.conf.app_settings`, `watchlist.conf.app_settings`) that
looks a name up on `django.conf.settings` at every read, so `override_settings` and pytest-django's
`settings` fixture work, and falls back to the app's default. A default given as a callable is
computed at the read (paths that depend on where the app is installed).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .lib.http.base import HTTP_DEFAULTS
from .lib.settings import AppSettings  # noqa: F401  (wakes' and watchlist's conf.py build theirs with it)

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent


def data_dir() -> Path:
    """Where the apps keep files of their own (the ingest spool): MOTION_RUNNER_DATA_DIR, else
    ./var beside the project (the standalone site), created on first use."""
    path = Path(os.environ.get("MOTION_RUNNER_DATA_DIR", PROJECT_DIR / "var"))
    path.mkdir(parents=True, exist_ok=True)
    return path


DEFAULTS: dict[str, Any] = {
    # Only checked against SECRET_KEY by the deploy check; a host never has to set it.
    "DEVELOPMENT_SECRET_KEY": "dev-only-not-secret-motion-runner",
    # The first run's account (bin/serve's `demo`) may use the commands and widening menus; only
    # while DEBUG is on, and a DEBUG=0 start with it set is refused (people/first_run.py).
    "MOTION_RUNNER_FIRST_RUN_GRANTS": [],
    "DATA_DIR": data_dir,
    # Where harness CLIs are found when an Agent names no binary: ./node_modules/.bin, then $PATH.
    "HARNESS_BIN_DIRS": lambda: [str(PROJECT_DIR / "node_modules" / ".bin")],
    # A look-only turn's wall clock. A full-tools turn has none (RUNNER_FULL_TOOLS_TIMEOUT_SECONDS,
    # None) and is ended by RUNNER_SILENCE_SECONDS without a line (runner/limits.py); wakes' dials
    # of the same meaning answer instead when wakes is installed.
    "RUNNER_TURN_TIMEOUT_SECONDS": 15 * 60.0,
    "RUNNER_FULL_TOOLS_TIMEOUT_SECONDS": None,
    "RUNNER_SILENCE_SECONDS": 1500.0,
    "RUNNER_MAX_LINE_BYTES": 4 * 1024 * 1024,
    "RUNNER_MAX_OUTPUT_BYTES": 64 * 1024 * 1024,
    "RUNNER_STDERR_TAIL_BYTES": 16 * 1024,
    "RUNNER_KILL_GRACE_SECONDS": 3.0,
    "RUNNER_AFTER_RESULT_GRACE_SECONDS": 10.0,
    "RUNNER_EXTRA_ENV": dict,
    # MOTION_RUNNER_TURN_CLOCKS and MOTION_RUNNER_TOOL_POLICY (dotted paths: the one answer to a
    # turn's clocks and tool policy) are declared with their defaults beside the other seams, in
    # motion_runner/signals.py (`ChosenBySetting`), which reads them.
    # The deployment's record server (`manage.py serve_record`, MCP over streamable HTTP), e.g.
    # "http://127.0.0.1:8765/mcp": a turn's harness connects to it with the turn's pass as bearer
    # token. Empty (or not answering at a turn's start): each turn starts its own over stdio.
    "RECORD_SERVER_URL": "",
    # Set by bin/serve when it started the stand-in model for a first run without a key.
    "STANDIN_MODEL_URL": "",
    # A running turn renews its lease every third of this; a lapsed lease is reclaimed by the sweep.
    "RUNNER_LEASE_SECONDS": 6.0,
    # A queued turn whose task the broker may have lost is sent again after this, once a period.
    "RUNNER_RESEND_AFTER_SECONDS": 60.0,
    # How long a turn waits out a database outage (its lines kept in memory) before it gives up.
    "RUNNER_DB_OUTAGE_SECONDS": 60.0,
    # How long a turn's end (turn_finished: the ledger's settle) is tried again while the database
    # is away, before it is left to the settle job.
    "RUNNER_END_RETRY_SECONDS": 600.0,
    "TRANSCRIPT_DIRS": lambda: [str(Path.home() / ".claude" / "projects")],
    # memory-lane's client contract (docs/memory-lane.md).
    "MOOD_RUNNER_KEYS": dict,
    # The keys an agent endpoint accepts, by dotted path, in order: memory-lane's runner keys
    # (MOOD_RUNNER_KEYS; none by default, so standalone they pass every request on), then ours.
    "AGENT_AUTHENTICATION_CLASSES": lambda: [
        "motion_runner.memory_lane.runner_keys.RunnerKeyAuthentication",
        "motion_runner.api.auth.AgentKeyAuthentication",
    ],  # {"agent name": "key"}, as memory-lane's vault gives them
    "INGEST_API_KEY": lambda: os.environ.get("INGEST_API_KEY", ""),  # memory-lane reads the env
    # memory-lane's watcher re-sends a refused batch whole, up to 5,000 queued lines plus what came
    # meanwhile: the cap sits far above that, so it only stops a runaway client.
    "INGEST_MAX_LINES": 20_000,
    # The one record (motion_runner/record/, docs/memory-lane.md): "own" (the apps' tables, the
    # standalone default) or "memory_lane" (also memory-lane's conversations tables), or a class path.
    "MOTION_RUNNER_RECORD": "own",
    # The host models the memory_lane binding writes, by label (memory-lane's own by default).
    "MOTION_RUNNER_RECORD_MODELS": lambda: {
        "mood": "conversations.Mood",
        "mood_alias": "conversations.MoodAlias",
        "mood_session": "conversations.MoodSession",
        "participant": "conversations.ConversationParticipant",
        "thinking_entity": "conversations.ThinkingEntity",
        "message": "conversations.Message",
        "thought": "conversations.Thought",
        "tool_use": "conversations.ToolUse",
        "tool_result": "conversations.ToolResult",
        "setting": "conversations.Setting",  # its settings rows: the room's steering (memory_lane/steering.py)
        "message_change": "conversations.MessageChange",  # its retract's rows (memory_lane/changes.py)
        "device": "conversations.Device",  # its sign-ins (a device cookie; memory_lane/signin.py)
    },
    # Agents memory-lane's poller still wakes: under the memory_lane binding the wakes app never
    # wakes them by a mention or the consider loop (docs/memory-lane.md, the switch-over).
    "POLLER_AGENTS": list,
    # What memory-lane's poller made happen by asking for its pulse every second (its api_pulse's
    # nudges): called from the beat under the memory_lane binding (memory_lane/pulse.py).
    "MEMORY_LANE_PULSE_CALLS": lambda: [
        "conversations.services.push.nudge",
        "conversations.services.wiki_feed.nudge",
    ],
    "INGEST_SPOOL_DIR": lambda: str(data_dir() / "ingest"),
    # A runner's hold lapses unless renewed (memory-lane: services/mood_view.py, HELD_FOR).
    "MOOD_HELD_SECONDS": 15 * 60,
    # Who may read, post, watch, type and answer (motion_runner/people/access.py, docs/security.md).
    "MOTION_RUNNER_ACCESS": "motion_runner.people.access.MotionAccess",
    # Secrets taken out of what is stored and served (motion_runner/ingest/redaction.py): the values of
    # these settings wherever they appear, and the shapes of keys, tokens and passwords.
    "REDACT_SECRETS": True,
    "REDACT_SETTINGS": [
        "SECRET_KEY",
        "WATCH_GITHUB_TOKEN",
        "WAKES_SCREEN_API_KEY",
        "WAKES_VAPID_PRIVATE_KEY",
        "WIKI_BOT_PASSWORD",
        "WIKI_BOT_CREDENTIALS",
        "WATCH_ETH_RPC_URL",
        "MOOD_RUNNER_KEYS",
        "INGEST_API_KEY",
        "RUNNER_EXTRA_ENV",
        "CELERY_BROKER_URL",
        "CACHE_URL",
        "DATABASES",
        "EMAIL_HOST_PASSWORD",
        "SECRET_KEY_FALLBACKS",
    ],
    "API_MAX_JSON_DEPTH": 64,
    "MESSAGE_TEXT_MAX_CHARS": 100_000,
    "MESSAGE_TOOL_RESULT_MAX_CHARS": 64 * 1024,
    "THREAD_TOOL_RESULT_SHOWN_CHARS": 0,
    # A post longer than this is served as plain text, not Markdown (a bound on the render's work);
    # a rendering is kept this long in the shared cache, by content hash.
    "THREAD_MARKDOWN_MAX_CHARS": 20_000,
    "THREAD_MARKDOWN_CACHE_SECONDS": 7 * 24 * 3600,
    # A look-only Codex turn reads anywhere (its sandbox confines writes only): refused unless "allow".
    "RUNNER_CODEX_LOOK_ONLY": "refuse",
    # How long the thread page's long poll waits for news before it asks again.
    "THREAD_POLL_WAIT_SECONDS": 20.0,
    # The hand-written fast paths of motion_runner/sql/ (PostgreSQL with psycopg 3 only); off, the
    # ORM reference path beside each runs everywhere.
    "MOTION_RUNNER_SQL_FAST_PATHS": True,
    # Long-poll readers woken by PostgreSQL NOTIFY (motion_runner/thread/bell.py).
    "MESSAGES_LISTEN": True,
    "MESSAGES_FALLBACK_POLL_SECONDS": 1.0,
    "MESSAGES_WOKEN_READERS_AT_ONCE": 10,
    # Long polls one client holds at once in a web process (an agent's key, a signed-in person,
    # else an address), and anonymous readers together; past either, 429 with Retry-After
    # (motion_runner/api/poll_caps.py). TRUSTED_PROXIES: addresses or networks whose
    # X-Forwarded-For is believed (none: REMOTE_ADDR is the client).
    "LONG_POLLS_PER_CLIENT": 6,
    "LONG_POLLS_ANONYMOUS": 24,
    "LONG_POLL_RETRY_AFTER_SECONDS": 5,
    "TRUSTED_PROXIES": list,
    # The one outbound HTTP wrapper (motion_runner/lib/http/) and its SSRF guard's allowlist.
    **HTTP_DEFAULTS,
}

app_settings = AppSettings("motion_runner", DEFAULTS)
