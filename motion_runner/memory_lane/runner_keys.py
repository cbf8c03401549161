"""Runner keys as memory-lane gives them: `MOOD_RUNNER_KEYS = {"<agent name>": "<key>"}`.

memory-lane's runner (poller/mood_poller.py) proves itself with a key from the vault bound to the
agent it speaks for, in a plain `{agent: key}` setting. Such a key is accepted beside the keys this
project issues (`manage.py agent_key`), everywhere an agent key is: it stands for the same agent.
Compared in constant time against every configured key, as memory-lane does.
"""

from __future__ import annotations

import hmac

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from ..api.auth import AgentPrincipal, read_with_motion, url_motion_slug
from ..conf import app_settings
from ..models import Agent


def runner_key_agent(header: bytes) -> str | None:
    """The agent name whose runner key is in this Authorization header, or None."""
    found = None
    for name, key in app_settings.MOOD_RUNNER_KEYS.items():
        # No early exit: every configured key is compared, whichever matches.
        if key and hmac.compare_digest(header, f"Bearer {key}".encode()) and found is None:
            found = name
    return found


class RunnerKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <key>` with a key of MOOD_RUNNER_KEYS; anything else is left to the
    next authenticator (the project's own agent keys), which answers 401 for a bad key."""

    def authenticate(self, request):
        if not app_settings.MOOD_RUNNER_KEYS:
            return None
        header = authentication.get_authorization_header(request).strip()
        if not header:
            return None
        name = runner_key_agent(header)
        if name is None:
            return None
        read = None
        if (slug := url_motion_slug(request)) is not None:
            _, agent, read = read_with_motion(slug, agent_name=name.lstrip("@"))
        else:
            agent = Agent.objects.filter(name=name.lstrip("@")).first()
        if agent is None:
            raise exceptions.AuthenticationFailed(
                f"That runner key is for @{name}, who is not an agent here yet; add the agent in the admin."
            )
        return AgentPrincipal(agent, read), None

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="motion-runner"'


class RunnerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "motion_runner.memory_lane.runner_keys.RunnerKeyAuthentication"
    name = "runnerKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A runner key as memory-lane gives it (`MOOD_RUNNER_KEYS`), for the agent it names.",
        }
