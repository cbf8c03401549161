"""memory-lane's `services/wiki_feed.py`, as far as its pulse calls it: `nudge()` brings what is new
on PickiPedia into the Moods that follow it, at most once a minute. Each look is counted in the
cache (`looks`), the proof that the clock runs."""

from django.core.cache import cache

EVERY = 60


def nudge():
    if not cache.add("wiki_feed:lock", 1, EVERY):
        return False
    cache.set("wiki_feed:looks", (cache.get("wiki_feed:looks") or 0) + 1, None)
    return True


def looks() -> int:
    return cache.get("wiki_feed:looks") or 0
