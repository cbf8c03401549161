"""memory-lane's `services/push.py`, as far as its pulse calls it: `nudge()` looks for notices to
push to closed pages at most every `EVERY` seconds (a cache lock) and answers whether it looked.
Here each look is counted in the cache (`looks`), the proof that the clock runs."""

from django.core.cache import cache

EVERY = 10


def nudge():
    if not cache.add("push:lock", 1, EVERY):
        return False
    cache.set("push:looks", (cache.get("push:looks") or 0) + 1, None)
    return True


def looks() -> int:
    return cache.get("push:looks") or 0
