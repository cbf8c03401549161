"""people/access.py: `readers_may_read_among` (one query, the search's scope) allows exactly the
Motions `readers_may_read` allows one by one, from a woken Motion of each visibility."""

from __future__ import annotations

import pytest

from motion_runner.models import Motion, Visibility
from motion_runner.people.access import MotionAccess
from tests.factories import AgentFactory, MotionFactory, UserFactory


@pytest.fixture
def world(db):
    """Motions of each visibility, with people Ada, Bo, Cy and agents @m, @n in their sets (an
    agent is a reader of its Motions like a person)."""
    ada, bo, cy = (UserFactory(username=name) for name in ("ada", "bo", "cy"))
    m, n = AgentFactory(name="m"), AgentFactory(name="n")
    made = {}
    for visibility in Visibility.values:
        for people, label in (((ada, bo), "ab"), ((ada,), "a"), ((ada, bo, cy), "abc"), ((), "none")):
            for agents, tail in (((), ""), ((m,), "-m"), ((m, n), "-mn")):
                slug = f"{visibility}-{label}{tail}".replace("_", "-")
                motion = MotionFactory(slug=slug, visibility=visibility)
                motion.people.add(*people)
                motion.agents.add(*agents)
                made[motion.slug] = motion
    return made


@pytest.mark.parametrize(
    "woken",
    [
        "public-ab",
        "signed-in-ab",
        "members-ab",
        "members-a",
        "members-abc",
        "members-none",
        "signed-in-ab-m",
        "signed-in-none-mn",
        "members-ab-m",
        "members-a-mn",
        "members-none-m",
        "members-none-mn",
    ],
)
def test_the_one_query_allows_what_the_rule_allows_one_by_one(world, woken):
    policy = MotionAccess()
    motion = world[woken]
    one_by_one = {slug for slug, target in world.items() if policy.readers_may_read(motion, target)}
    among = set(policy.readers_may_read_among(motion, Motion.objects.all()).values_list("slug", flat=True))
    assert among == one_by_one


class Stricter(MotionAccess):
    def readers_may_read(self, motion, target) -> bool:
        return target.slug == motion.slug


def test_the_one_query_is_one_statement(world, django_assert_num_queries):
    with django_assert_num_queries(1):
        list(MotionAccess().readers_may_read_among(world["members-ab-m"], Motion.objects.all()))


def test_a_policy_with_its_own_rule_is_asked_motion_by_motion(world):
    among = Stricter().readers_may_read_among(world["members-ab"], Motion.objects.all())
    assert list(among.values_list("slug", flat=True)) == ["members-ab"]
