"""What tests/motion_runner/memory_lane/test_shadow_report.py does inside the host project, after
`migrate` (issue 40 item 6, docs/switch-over.md "Shadow for a day"): with WAKES_SHADOW on, a
mention on memory-lane's page is decided and recorded, nothing launched; memory-lane's poller's
turns are rows as its `views_runner.finish_turn` leaves them (the agent's lines under the forked
session, then `system`'s turn-result); `manage.py shadow_report` lays the two side by side.
Prints one JSON object.

`python -m tests.host.shadow_check` with DJANGO_SETTINGS_MODULE=tests.host.settings.
"""

from __future__ import annotations

import io
import json
import time
import uuid

import django

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from motion_runner.models import Agent, Turn  # noqa: E402
from motion_runner.record import binding  # noqa: E402
from tests.host.conversations import models as host  # noqa: E402
from wakes.models import ShadowDecision, Spend  # noqa: E402


def host_post(mood, sender, text: str) -> host.Message:
    """A post made by memory-lane's composer: a row of its own Message model."""
    with transaction.atomic():
        return host.Message.objects.create(
            id=uuid.uuid4(), content=text, sender=sender, mood=mood, timestamp=int(time.time() * 1000)
        )


def poller_turn(mood, agent: host.ThinkingEntity, said: str, cost: float) -> None:
    """The rows one poller wake leaves in memory-lane's tables: the agent's line streamed under the
    forked session, and the run's end, a turn-result sent by `system` (views_runner.finish_turn)."""
    session = uuid.uuid4()
    host.Message.objects.create(id=uuid.uuid4(), content=said, sender=agent, mood=mood, session_id=session)
    system, _ = host.ConversationParticipant.objects.get_or_create(
        name="system", defaults={"participant_type": "system"}
    )
    host.Message.objects.create(
        id=uuid.uuid5(uuid.NAMESPACE_URL, f"turn-result:{session}"),
        sender=system,
        mood=mood,
        session_id=session,
        content={"type": "turn-result", "agent": agent.name, "subtype": "success", "cost_usd": cost},
    )


def report(*args: str) -> list[str]:
    out = io.StringIO()
    call_command("shadow_report", *args, stdout=out)
    return out.getvalue().splitlines()


def main() -> dict:
    record = binding()
    justin = host.ThinkingEntity.objects.create(
        name="justin", participant_type="human", is_biological_human=True
    )
    magent_row = host.ThinkingEntity.objects.create(
        name="magent", participant_type="ai", is_biological_human=False
    )
    lobby = host.Mood.objects.create(slug="lobby", title="lobby")
    kitchen = host.Mood.objects.create(slug="kitchen", title="kitchen")
    magent = Agent.objects.create(name="magent", harness="claude-code")
    for mood in (lobby, kitchen):
        record.motion_for_mood(mood).agents.add(magent)

    codey = Agent.objects.create(name="codey", harness="claude-code")
    record.motion_for_mood(lobby).agents.add(codey)
    # The switch-over's order (docs/switch-over.md): shadow on, then the agent out of POLLER_AGENTS;
    # an agent still in it is decided by the poller alone, so nothing is recorded for it here.
    with override_settings(WAKES_SHADOW=True, POLLER_AGENTS=["codey"]):
        host_post(lobby, justin, "@magent what did the deploy log say?")
        host_post(lobby, justin, "@codey and you?")
    seen: dict = {
        "turns": Turn.objects.count(),
        "spends": Spend.objects.count(),
        "decisions": list(
            ShadowDecision.objects.values_list("motion__slug", "agent__name", "kind", "reason")
        ),
    }
    # The poller, still running, answered that mention, and woke @magent in the kitchen on its own.
    poller_turn(lobby, magent_row, "the log says the deploy finished", 0.12)
    poller_turn(kitchen, magent_row, "nothing new here", 0.03)
    with CaptureQueriesContext(connection) as queries:
        seen["report"] = report("--since", "1h")
    seen["report_queries"] = len(queries)
    poller_turn(kitchen, magent_row, "and again", 0.01)  # one more turn: the same statements
    with CaptureQueriesContext(connection) as queries:
        report("--since", "1h")
    seen["report_queries_with_one_more_turn"] = len(queries)
    seen["lobby"] = report("--motion", "lobby")
    return seen


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
