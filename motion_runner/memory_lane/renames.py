"""A Mood is a Motion, and a rename on either side is followed on the other.

A route's slug is a Motion's, or else a Mood's now or before a rename (`Mood.by_slug`), whose
Motion is made when it has none (`motion_for_slug`); a Motion with no Mood gets one whose slug
follows its title (`Mood.free_slug`), its own slug kept as an alias. A Motion's new title renames
its Mood as memory-lane renames one (`Mood.rename`: the slug follows, the old one an alias); a
Mood renamed in memory-lane retitles its Motion (an UPDATE, which saves no Motion, so nothing
renames back). Mixed into `MemoryLaneRecord` (binding.py), which connects the receivers.
"""

from __future__ import annotations

from django.db import models

from ..models import Motion
from .host import host_model, is_writing, writing


class MoodNames:
    def mood_by_slug(self, slug: str) -> models.Model | None:
        """memory-lane's own `Mood.by_slug`: the Mood going by `slug` now, or before a rename."""
        return host_model("mood").by_slug(slug)

    def mood_slugs(self, mood: models.Model) -> list[str]:
        """Every name a Mood answers to: its slug now, then its aliases."""
        aliases = host_model("mood_alias").objects.filter(mood=mood).values_list("slug", flat=True)
        return [mood.slug, *aliases]

    def free_slug(self, title: str) -> str:
        """memory-lane's own `Mood.free_slug`: the title's slug, numbered past the names taken."""
        return host_model("mood").free_slug(title)

    def mood_for(self, motion: Motion) -> models.Model:
        """The Mood the Motion is (its slug is the Mood's, now or before a rename). A Motion with
        none gets one as memory-lane makes a Mood: its slug follows the title (`free_slug`); the
        Motion's own slug, if different, becomes one of the Mood's aliases, so both find it."""
        mood = self.mood_by_slug(motion.slug)
        if mood is not None:
            return mood
        mood = host_model("mood").objects.create(
            slug=self.free_slug(motion.title or motion.slug),
            title=motion.title,
            description=motion.description,
        )
        if mood.slug != motion.slug:
            host_model("mood_alias").objects.get_or_create(slug=motion.slug, defaults={"mood": mood})
        return mood

    def motion_for_mood(self, mood: models.Model) -> Motion:
        """The Motion that is this Mood: the one going by any of its names (the oldest, should
        there be two), else one made now under the Mood's slug and title. Nobody makes it by hand."""
        motion = Motion.objects.filter(slug__in=self.mood_slugs(mood)).order_by("created_at").first()
        if motion is None:
            motion, _ = Motion.objects.get_or_create(
                slug=mood.slug, defaults={"title": mood.title or mood.slug, "description": mood.description}
            )
        return motion

    def motion_for_slug(self, slug: str) -> Motion | None:
        """A route's Motion: by its own slug, else by the Mood going by `slug` (its slug now or
        any alias, memory-lane's `Mood.by_slug`), made for that Mood when it has none yet."""
        motion = Motion.objects.filter(slug=slug).first()
        if motion is not None:
            return motion
        mood = self.mood_by_slug(slug)
        return self.motion_for_mood(mood) if mood is not None else None

    def on_motion_save(self, sender, instance, created: bool = False, raw: bool = False, **kwargs) -> None:
        """A Motion retitled (the admin, or any save): its Mood is renamed as memory-lane renames
        one (`Mood.rename`: new title, the slug follows it, the old slug kept as a MoodAlias). The
        Mood's own save then finds `_writing` set and retitles nothing back."""
        if raw or created or is_writing():
            return
        mood = self.mood_by_slug(instance.slug)
        if mood is None or mood.title == instance.title or not instance.title:
            return  # no Mood yet (made when the first line is written), or the same title
        with writing():
            mood.rename(instance.title)

    def on_mood_save(self, sender, instance, created: bool = False, raw: bool = False, **kwargs) -> None:
        """A Mood renamed in memory-lane: its Motion (found by any of its names) takes the title."""
        if raw or created or is_writing():
            return
        Motion.objects.filter(slug__in=self.mood_slugs(instance)).exclude(title=instance.title).update(
            title=instance.title or instance.slug
        )
