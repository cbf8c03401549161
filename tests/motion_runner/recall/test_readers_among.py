"""people/access.py: `readers_may_read_among` (one query, the search's scope) allows exactly the
Motions `readers_may_read` allows one by one, from a woken Motion of each visibility."""

from __future__ import annotations

import pytest

from motion_runner.models import Motion, Visibility
from motion_runner.people.access import MotionAccess
from tests.factories import MotionFactory, UserFactory


@pytest.fixture
def world(db):
    ada, bo, cy = (UserFactory(username=name) for name in ("ada", "bo", "cy"))
    made = {}
    for visibility in Visibility.values:
        for people, label in (((ada, bo), "ab"), ((ada,), "a"), ((ada, bo, cy), "abc"), ((), "none")):
            motion = MotionFactory(slug=f"{visibility}-{label}".replace("_", "-"), visibility=visibility)
            motion.people.add(*people)
            made[motion.slug] = motion
    return made


@pytest.mark.parametrize(
    "woken", ["public-ab", "signed-in-ab", "members-ab", "members-a", "members-abc", "members-none"]
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


def test_a_policy_with_its_own_rule_is_asked_motion_by_motion(world):
    among = Stricter().readers_may_read_among(world["members-ab"], Motion.objects.all())
    assert list(among.values_list("slug", flat=True)) == ["members-ab"]
