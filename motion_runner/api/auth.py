"""Agent keys: `Authorization: Bearer <key>`, bound to one agent, checked in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.db import connections, router
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from ..models import Agent, AgentKey
from ..people.principal import AgentPrincipal, MotionRead
from ..sql import agent_keys

KEY_PREFIX = "mrk_"
# last_used_at is written at most this often per key: every request would be a write.
LAST_USED_RESOLUTION = timedelta(seconds=60)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(agent: Agent, label: str = "") -> tuple[AgentKey, str]:
    """A new key for `agent`; the plain key is returned once and never stored."""
    prefix = secrets.token_hex(4)
    key = f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    record = AgentKey.objects.create(agent=agent, prefix=prefix, hashed=hash_key(key), label=label)
    return record, key


def revoke_key(prefix: str) -> int:
    return AgentKey.objects.filter(prefix=prefix, revoked_at__isnull=True).update(revoked_at=timezone.now())


def read_with_motion(
    slug: str, *, prefix: str | None = None, agent_name: str | None = None
) -> tuple[AgentKey | None, Agent | None, MotionRead | None]:
    """(the key by its prefix, or None; its agent, or the agent by name; the Motion `slug` as that
    agent may reach it), read by motion_runner/sql/agent_keys.py. Nothing of it outlives the
    request."""
    connection = connections[router.db_for_read(AgentKey)]
    key, agent, motion, member = agent_keys.read_with_motion(
        connection, slug, prefix=prefix, agent_name=agent_name
    )
    if agent is None:
        return None, None, None
    return key, agent, MotionRead(slug, agent.pk, motion, member)


def url_motion_slug(request) -> str | None:
    """The Motion slug in the URL of a view that reads its Motion with the key
    (`motion_url_kwarg`), or None."""
    context = getattr(request, "parser_context", None) or {}
    name = getattr(context.get("view"), "motion_url_kwarg", None)
    slug = (context.get("kwargs") or {}).get(name) if name else None
    return slug if isinstance(slug, str) else None


class AgentKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if parts[0].lower() != self.keyword.lower():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Write the header as `Authorization: Bearer <key>`.")
        key = parts[1]
        # The prefix only narrows the lookup; the decision is the constant-time compare below.
        prefix = key[len(KEY_PREFIX) :].split("_", 1)[0] if key.startswith(KEY_PREFIX) else ""
        read = None
        if not prefix:
            record = None
        elif (slug := url_motion_slug(request)) is not None:
            record, _, read = read_with_motion(slug, prefix=prefix)
        else:
            record = AgentKey.objects.select_related("agent").filter(prefix=prefix).first()
        if record is None or not hmac.compare_digest(hash_key(key), record.hashed):
            raise exceptions.AuthenticationFailed("That agent key is not valid.")
        if record.revoked_at is not None:
            raise exceptions.AuthenticationFailed("That agent key was revoked.")
        now = timezone.now()
        if record.last_used_at is None or now - record.last_used_at > LAST_USED_RESOLUTION:
            AgentKey.objects.filter(pk=record.pk).update(last_used_at=now)
        return AgentPrincipal(record.agent, read), record

    def authenticate_header(self, request) -> str:
        # Makes DRF answer 401 (not 403) when no or a bad key was given.
        return 'Bearer realm="motion-runner"'


def request_agent(request) -> Agent | None:
    user = getattr(request, "user", None)
    return user.agent if isinstance(user, AgentPrincipal) else None


class IsAgent(permissions.BasePermission):
    message = "This endpoint takes an agent key: `Authorization: Bearer <key>`."

    def has_permission(self, request, view) -> bool:
        if request_agent(request) is None:
            if not (request.user and request.user.is_authenticated):
                raise exceptions.NotAuthenticated(self.message)
            return False
        return True


class AgentKeyScheme(OpenApiAuthenticationExtension):
    target_class = "motion_runner.api.auth.AgentKeyAuthentication"
    name = "agentKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An agent key (`python manage.py agent_key NAME`).",
        }
