"""The wakes app's settings, each with a default (see motion_runner/conf.py for how they are read).

The wiki settings the watchlist reads too are defined here, the lower of the two apps, so the
watchlist takes them from here rather than the wakes app reading the watchlist's.
"""

from __future__ import annotations

from typing import Any

from motion_runner.conf import AppSettings

DEFAULT_WIKI_API = "https://pickipedia.xyz/api.php"

WIKI_DEFAULTS: dict[str, Any] = {
    "WATCH_WIKI_API": DEFAULT_WIKI_API,
    # Talk pages on these wikis wake an agent "to reply on that talk page".
    "WATCH_TALK_REPLY_WIKIS": lambda: [app_settings.WATCH_WIKI_API],
    "WATCH_WIKI_MAXLAG": 5,
}

DEFAULTS: dict[str, Any] = {
    **WIKI_DEFAULTS,
    # The screen (wakes/turn/screen.py): the Anthropic Messages API. No key: every screen passes.
    "WAKES_SCREEN_API_BASE": "https://api.anthropic.com",
    "WAKES_SCREEN_API_KEY": "",
    # No key: the screen and the digest run through the agent's own CLI login (wakes/turn/screen_cli.py),
    # "auto"; "off": every post passes unscreened, as before. The small model per harness (blank:
    # the agent's own), and a bound well inside WAKES_CONSIDERATION_RUN_SECONDS.
    "WAKES_SCREEN_CLI": "auto",
    "WAKES_SCREEN_CLI_MODELS": lambda: {"claude-code": "haiku"},
    "WAKES_SCREEN_CLI_TIMEOUT_SECONDS": 20.0,
    # The `turns` workers' concurrency: a mention past it is held, "all N turn slots are busy".
    "WAKES_TURN_SLOTS": 4,
    "WAKES_TICK_SECONDS": 3.0,
    # A claimed consideration not started within this long is sent again, once; see settings.py.
    "WAKES_CONSIDERATION_START_SECONDS": 30.0,
    # A started consideration not woken within this long (and twice the screen's timeout) lost its
    # worker; see settings.py.
    "WAKES_CONSIDERATION_RUN_SECONDS": 40.0,
    # Bot passwords per wiki api.php URL: a password is never sent to a wiki it is not for.
    "WIKI_BOT_CREDENTIALS": dict,
    "WIKI_REPLY_ASSERT": "user",
    "WIKI_REPLY_MAX_CHARS": 10000,
    "WIKI_REPLY_SIGNATURE": "— @{agent}, an AI agent, replying through Motion Runner ~~~~",
    "ABILITY_MAX_ATTEMPTS": 5,
    "ABILITY_RETRY_BASE_SECONDS": 30.0,
    "ABILITY_RETRY_MAX_SECONDS": 900.0,
    "ABILITY_CLAIM_LEASE_SECONDS": 300,
    # A page on how to speak in a Motion, linked in every wake's footer (wakes/turn/footer.py);
    # none on a standalone install. memory-lane names its own ("Speaking in a Motion").
    "WAKES_ETIQUETTE_URL": "",
    # How many tokens an agent's context holds, for "how full" in the thread's menus.
    "WAKES_CONTEXT_WINDOW_TOKENS": 200_000,
    # Web Push of notices (wakes/notices/push.py): no private key, no push.
    "WAKES_VAPID_PRIVATE_KEY": "",
    "WAKES_VAPID_CONTACT": "mailto:admin@localhost",
    # Only the tests' fake push service is on this machine: a real endpoint never is.
    "WAKES_PUSH_LOOPBACK_OK": False,
    # Shadow mode: every wake is decided and recorded (ShadowDecision) with its reason, and nothing
    # is launched: no turn, no harness, no money reserved. `manage.py shadow_report` compares them
    # with memory-lane's poller's turns before switching over (docs/switch-over.md).
    "WAKES_SHADOW": False,
}

app_settings = AppSettings("wakes", DEFAULTS)
