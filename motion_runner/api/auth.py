"""Agent keys: `Authorization: Bearer <key>`, bound to one agent, checked in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from ..models import Agent, AgentKey

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


class AgentPrincipal:
    """request.user for a request made with an agent key: an agent, never a person."""

    is_authenticated = True
    is_anonymous = False
    is_agent = True
    is_staff = False
    is_superuser = False
    is_active = True

    def __init__(self, agent: Agent):
        self.agent = agent
        self.pk = None

    def get_username(self) -> str:
        return self.agent.name

    def has_perm(self, perm: str, obj: object = None) -> bool:
        return False  # an agent holds no Django permission: what it may do is membership

    def __str__(self) -> str:
        return f"@{self.agent.name}"


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
        record = AgentKey.objects.select_related("agent").filter(prefix=prefix).first() if prefix else None
        if record is None or not hmac.compare_digest(hash_key(key), record.hashed):
            raise exceptions.AuthenticationFailed("That agent key is not valid.")
        if record.revoked_at is not None:
            raise exceptions.AuthenticationFailed("That agent key was revoked.")
        now = timezone.now()
        if record.last_used_at is None or now - record.last_used_at > LAST_USED_RESOLUTION:
            AgentKey.objects.filter(pk=record.pk).update(last_used_at=now)
        return AgentPrincipal(record.agent), record

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
