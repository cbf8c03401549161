"""A memory-lane with many Moods for the binding's reads (issue 41, item 3): used by
tests/host/binding_reads_check.py and bench/binding_reads.py, inside the host project."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from motion_runner.models import Agent, SshKey
from motion_runner.record import binding
from tests.host.conversations import models as host


def many_moods(moods: int = 100, agents: tuple[str, ...] = ("magent", "pal")) -> list[tuple[str, int]]:
    """`moods` Moods, each a Motion with every agent of `agents` (moods × agents pairs), and
    settings rows as memory-lane's page writes them: justin's (a key here) timing and reads rows in
    some Moods, a row for every Mood, the global budget; a visitor's (no key) widening row."""
    record = binding()
    justin = host.ThinkingEntity.objects.create(name="justin", participant_type="human")
    visitor = host.ThinkingEntity.objects.create(name="visitor", participant_type="human")
    user = get_user_model().objects.create_user("justin")
    SshKey.objects.create(user=user, public_key="ssh-ed25519 AAAA justin", fingerprint="SHA256:justin-reads")
    entities = {
        name: host.ThinkingEntity.objects.create(name=name, participant_type="ai", is_biological_human=False)
        for name in agents
    }
    made = [Agent.objects.create(name=name, harness="claude-code") for name in agents]
    pairs = []
    rows = [
        host.Setting(key="consider_usd_per_day", value=25.0, set_by=justin),
        host.Setting(key="considers_per_hour", value=4, set_by=justin),
    ]
    for i in range(moods):
        mood = host.Mood.objects.create(slug=f"room-{i}", title=f"room-{i}")
        motion = record.motion_for_mood(mood)
        motion.agents.add(*made)
        pairs += [(motion.pk, agent.pk) for agent in made]
        if i % 3 == 0:
            rows.append(host.Setting(key="consider_after", value=30 + i, mood=mood, set_by=justin))
        if i % 4 == 0:
            rows.append(
                host.Setting(
                    key="catch_up_tokens", value=2000 + i, mood=mood, agent=entities[agents[0]], set_by=justin
                )
            )
        if i % 5 == 0:
            rows.append(host.Setting(key="catch_up_tokens", value=9000, mood=mood, set_by=visitor))
            rows.append(
                host.Setting(
                    key="listening", value={"mode": "mentions", "until": None}, mood=mood, set_by=visitor
                )
            )
    host.Setting.objects.bulk_create(rows)  # bulk: no post_save, as rows already there before the tick
    return pairs
