"""What tests/motion_runner/memory_lane/test_memory_lane_retract.py does inside the host project,
after `migrate`: a post taken back as memory-lane's own retract takes it back (a queryset update of
the row, then a MessageChange row: tests/host/conversations/retract.py) is in no later wake, record
search or read here (issue 40 item 1). Prints one JSON object.

`python -m tests.host.retract_check` with DJANGO_SETTINGS_MODULE=tests.host.settings.
"""

from __future__ import annotations

import json
import time
import uuid

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from motion_runner.models import Agent, Message, TakenBack, Turn, TurnStatus  # noqa: E402
from motion_runner.recall import record as record_server  # noqa: E402
from motion_runner.record import binding  # noqa: E402
from motion_runner.runner.turns import build_prompt_at_start  # noqa: E402
from motion_runner.tasks import sweep_taken_back_task  # noqa: E402
from tests.host.conversations import models as host  # noqa: E402
from tests.host.conversations import retract  # noqa: E402

HOST = "memory-lane.example"
CODE = "the door code is 4471, come in"
WIFI = "the wifi password is hunter2x"


def host_post(mood, sender, text: str) -> host.Message:
    """A post made by memory-lane's composer: a row of its own Message model."""
    with transaction.atomic():
        return host.Message.objects.create(
            id=uuid.uuid4(), content=text, sender=sender, mood=mood, timestamp=int(time.time() * 1000)
        )


def woken(agent: Agent, text: str, mood, sender) -> Turn:
    """A mention on memory-lane's page; the turn it queued, its prompt built as the runner builds it
    when the turn starts (and the turn then ended, so its prompt is one an agent read)."""
    before = set(Turn.objects.values_list("pk", flat=True))
    host_post(mood, sender, text)
    turn = Turn.objects.exclude(pk__in=before).get(agent=agent, reason="mention")
    build_prompt_at_start(turn)
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.FINISHED, ended_at=timezone.now())
    return Turn.objects.get(pk=turn.pk)


def found(turn: Turn, words: str) -> list[str]:
    return [r["id"] for r in record_server.search(turn, words)["results"]]


def main() -> dict:
    seen: dict = {}
    record = binding()
    justin = host.ThinkingEntity.objects.create(
        name="justin", participant_type="human", is_biological_human=True
    )
    host.ThinkingEntity.objects.create(name="magent", participant_type="ai", is_biological_human=False)
    lobby = host.Mood.objects.create(slug="lobby", title="lobby")
    magent = Agent.objects.create(name="magent", harness="claude-code")
    motion = record.motion_for_mood(lobby)
    motion.agents.add(magent)

    # 1. A door code said on memory-lane's page, read by a wake (its prompt kept, and echoed into
    # memory-lane's record as the binding writes a `claude -p` prompt's echo), then deleted there.
    post = host_post(lobby, justin, CODE)
    first = woken(magent, "@magent remember that", lobby, justin)
    echo = host.Message.objects.create(
        id=uuid.uuid4(),
        content={"type": "prompt", "agent": "magent", "text": first.prompt},
        sender=host.ConversationParticipant.objects.get_or_create(
            name="system", defaults={"participant_type": "system"}
        )[0],
        mood=lobby,
        source_file="ingest-mood-runner",
    )
    seen["before"] = {
        "copy": Message.objects.get(pk=post.pk).text,
        "prompt_has_it": "4471" in first.prompt,
        "search": found(first, "4471"),
    }
    # The agent kept a note of it in that turn, in its own words (the record server's `remember`).
    noted = record_server.remember(first, "Justin's door code: 4471 (front door)")["kept"]["id"]
    retract.delete(post, "justin")
    second = woken(magent, "@magent what did I say a moment ago?", lobby, justin)
    change = TakenBack.objects.filter(message_id=post.pk).first()
    seen["deleted"] = {
        "copy": Message.objects.get(pk=post.pk).text,
        "taken_back": [change.kind, change.by, change.reached] if change else None,
        "stored_prompt_has_it": "4471" in Turn.objects.get(pk=first.pk).prompt,
        "next_wake_has_it": "4471" in second.prompt,
        "next_wake_reads": f"#m-{post.pk}] [deleted]" in second.prompt,
        "search": found(second, "4471"),
        "read": [m["text"] for m in record_server.read(second, message_id=str(post.pk))["messages"]][:1],
        "read_motion_has_it": "4471" in json.dumps(record_server.read(second, motion=motion.slug)),
        "echo_has_it": "4471" in json.dumps(host.Message.objects.get(pk=echo.pk).content),
        "host_row": host.Message.objects.get(pk=post.pk).content,
        "note": Message.objects.get(pk=noted).text,
        "note_in_host": host.Message.objects.get(pk=noted).content,
        "anywhere_here": Message.objects.filter(text__contains="4471").count()
        + Turn.objects.filter(prompt__contains="4471").count(),
    }

    # 2. An edit on memory-lane's page: the next wake reads the words as they now stand.
    meet = host_post(lobby, justin, "meet at pier 9")
    retract.edit(meet, "meet at the gate", "justin")
    third = woken(magent, "@magent where do we meet?", lobby, justin)
    seen["edited"] = {
        "copy": Message.objects.get(pk=meet.pk).text,
        "next_wake_has_old": "pier 9" in third.prompt,
        "next_wake_has_new": "meet at the gate" in third.prompt,
        "search_old": found(third, "pier"),
    }

    # 3. A change written where no receiver ran (memory-lane's shell, a bulk write): the beat's
    # sweep takes it back here.
    wifi = host_post(lobby, justin, WIFI)
    host.Message.objects.filter(pk=wifi.pk).update(content="[deleted]")
    host.MessageChange.objects.bulk_create(
        [host.MessageChange(message=wifi, mood=lobby, kind="deleted", by="justin", reached=[])]
    )
    seen["swept"] = {
        "before_sweep": Message.objects.get(pk=wifi.pk).text,
        "applied": sweep_taken_back_task(),
        "after_sweep": Message.objects.get(pk=wifi.pk).text,
        "again": sweep_taken_back_task(),
    }

    # 4. The other way: deleted with this project's API (the thread's control) under the binding,
    # memory-lane's row says [deleted] and keeps its MessageChange, as its own retract does.
    person = get_user_model().objects.create_user("justin", password="pw")
    mine = Message.objects.get(pk=host_post(lobby, justin, "my bank pin is 9182").pk)
    Message.objects.filter(pk=mine.pk).update(author=person)
    client = Client(HTTP_HOST=HOST)
    client.force_login(person)
    answer = client.delete(f"/runner/api/messages/{mine.pk}/", secure=True)
    host_change = host.MessageChange.objects.filter(message_id=mine.pk).first()
    seen["from_here"] = {
        "status": answer.status_code,
        "host_row": host.Message.objects.get(pk=mine.pk).content,
        "host_change": [host_change.kind, host_change.by] if host_change else None,
        "copy": Message.objects.get(pk=mine.pk).text,
    }
    return seen


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
