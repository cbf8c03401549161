from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from motion_runner.models import Agent, AgentKey, Message, Motion, Turn
from wakes.models import clock


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"person{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")


class AgentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Agent
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"agent{n}")
    harness = "claude-code"


class MotionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Motion

    slug = factory.Sequence(lambda n: f"motion-{n}")
    title = factory.LazyAttribute(lambda m: m.slug.replace("-", " ").title())


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Message

    motion = factory.SubFactory(MotionFactory)
    sender = "justin"
    source = "web"
    kind = "text"
    text = "hello"


class TurnFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Turn

    motion = factory.SubFactory(MotionFactory)
    agent = factory.SubFactory(AgentFactory)
    prompt = "say hello"


class AgentKeyFactory(factory.django.DjangoModelFactory):
    """Use `key_for(agent)` to get the plain key too; this factory alone never knows it."""

    class Meta:
        model = AgentKey

    agent = factory.SubFactory(AgentFactory)
    prefix = factory.Sequence(lambda n: f"{n:08x}")
    hashed = factory.Sequence(lambda n: f"{n:064x}")


class WatchFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "watchlist.Watch"

    motion = factory.SubFactory(MotionFactory)
    kind = "web_page"
    target = factory.Sequence(lambda n: f"https://example.org/page-{n}")
    wake = "consider"


class SteerFactory(factory.django.DjangoModelFactory):
    """A thread menu's row (wakes.Steer): `setting` and `value` for the pair, said by justin now."""

    class Meta:
        model = "wakes.Steer"

    motion = factory.SubFactory(MotionFactory)
    agent = factory.SubFactory(AgentFactory)
    by_name = "justin"
    at = factory.LazyFunction(lambda: clock.now())  # looked up at each call: tests set the clock
