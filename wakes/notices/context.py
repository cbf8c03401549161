"""The page header's notices (templates/wakes/notices.html): a person's unseen count and their
latest notices (answered you, mentioned you); nothing for anyone else."""

from __future__ import annotations

from motion_runner.people.access import is_person

from .listing import shown, unseen_count
from .push import public_key


def notices(request) -> dict:
    user = getattr(request, "user", None)
    if not is_person(user):
        return {}
    listed = shown(user)
    return {
        "notices": {
            "unseen": unseen_count(user),
            "listed": listed,
            "push_key": public_key(),
        }
    }
