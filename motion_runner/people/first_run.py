"""The first run's account may use what the README shows (issue 34, item 5): `/context`, `/usage`,
`/compact` and the thread's model, effort and reads menus.

`bin/serve` names its `demo` account in MOTION_RUNNER_FIRST_RUN_GRANTS; production never sets
it. A local-only default (docs/security.md, "The first run's account"):
- honoured only while DEBUG is on (the embedded default), and the system check
  motion_runner.E005 fails `check` and `migrate` with DEBUG off and the setting set;
- it grants the maintenance commands (look-only turns in the agent's own session) and the menus
  that widen spend or reads; never full tools, never an answer to a request, never the rules
  (each wake obeys them), all of which still need an SSH sign-in or `full_tools_for`.
"""

from __future__ import annotations

from ..conf import app_settings as settings


def first_run_names() -> set[str]:
    """The names granted, or none at all when DEBUG is off (production)."""
    if not settings.DEBUG:
        return set()
    # Compared as the user model compares usernames (exactly): `Justin` is another account.
    return {name.strip() for name in settings.MOTION_RUNNER_FIRST_RUN_GRANTS if name.strip()}


def has_first_run_grant(user) -> bool:
    """May this signed-in person use the commands and widening menus by the first-run default?"""
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    return user.get_username() in first_run_names()
