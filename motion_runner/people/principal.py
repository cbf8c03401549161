"""Who an agent is when it acts through a key: the principal the access rules (people/access.py)
and the wakes' readings ask about. Not an HTTP concept, so wakes may ask it too."""

from __future__ import annotations

from dataclasses import dataclass

from ..models import Agent, Motion


@dataclass(frozen=True)
class MotionRead:
    """The Motion a request's URL names, read with the request's key (one round trip instead of
    three, two in the ORM): `member_motion` takes it instead of asking again. It lives on
    this request's principal only, so a membership removed since is seen by the next request."""

    slug: str
    agent_id: int
    motion: Motion | None  # None: no such Motion
    member: bool  # the agent is one of its agents (the default access rule, MotionAccess)


class AgentPrincipal:
    """request.user for a request made with an agent key: an agent, never a person."""

    is_authenticated = True
    is_anonymous = False
    is_agent = True
    is_staff = False
    is_superuser = False
    is_active = True

    def __init__(self, agent: Agent, motion_read: MotionRead | None = None):
        self.agent = agent
        self.pk = None
        self.motion_read = motion_read

    def get_username(self) -> str:
        return self.agent.name

    def has_perm(self, perm: str, obj: object = None) -> bool:
        return False  # an agent holds no Django permission: what it may do is membership

    def __str__(self) -> str:
        return f"@{self.agent.name}"
