"""What tests/motion_runner/site/test_host_project.py does inside the host project, after `migrate`: prints one JSON
object of what it saw, for the test to assert on.

`python -m tests.host.scenario <workspace>` with DJANGO_SETTINGS_MODULE=tests.host.settings:
1. a stream post (memory-lane's runner client's call, the recorded first run, sent twice);
2. a real Claude Code wake (`wake --sync`) against the fake model given in HOST_RUNNER_EXTRA_ENV;
3. a post made through the host's own Message model, mentioning the agent;
4. the host's home page and the apps' thread page, rendered inside the host.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections import Counter
from io import StringIO

import django

django.setup()

from django.contrib.staticfiles import finders  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402

from motion_runner.api.auth import create_key  # noqa: E402
from motion_runner.models import Agent, Message, Motion, Turn, Visibility  # noqa: E402
from tests import recorded  # noqa: E402
from tests.host.conversations import models as host  # noqa: E402
from wakes.models import MentionWake  # noqa: E402

HOST = "memory-lane.example"


def host_rows(**filters) -> dict:
    rows = host.Message.objects.filter(**filters)
    return {
        "ids": sorted(str(pk) for pk in rows.values_list("pk", flat=True)),
        "tool_use": host.ToolUse.objects.filter(pk__in=rows.values("pk")).count(),
        "tool_result": host.ToolResult.objects.filter(pk__in=rows.values("pk")).count(),
        "thought_signatures": list(
            host.Thought.objects.filter(pk__in=rows.values("pk")).values_list("signature", flat=True)
        ),
        "senders": sorted(set(rows.values_list("sender_id", flat=True))),
        "moods": sorted({str(slug) for slug in rows.values_list("mood__slug", flat=True)}),
    }


def index_ids(**filters) -> list[str]:
    return sorted(str(pk) for pk in Message.objects.filter(**filters).values_list("pk", flat=True))


def main(workspace: str) -> dict:
    seen: dict = {}
    # memory-lane renamed the Mood; its old slug is an alias, and the Motion keeps the old slug.
    mood = host.Mood.objects.create(slug="harbor-of-moods", title="Harbor of moods")
    host.MoodAlias.objects.create(slug="harbor", mood=mood)
    motion = Motion.objects.create(
        slug="harbor", title="Harbor", workspace=workspace, visibility=Visibility.PUBLIC
    )  # made by an admin here for its workspace; a Mood's Motion is made on its own (record_check)
    scribe = Agent.objects.create(name="scribe", harness="claude-code")
    magent = Agent.objects.create(name="magent", harness="claude-code", workdir=workspace)
    motion.agents.add(scribe, magent)
    client = Client(HTTP_HOST=HOST)

    # 1. The stream post, twice: the second adds nothing, in either record.
    key = create_key(scribe)[1]
    session = recorded.session_id()
    body = json.dumps({"session_id": session, "events": recorded.first_run()})
    answers = [
        client.post(
            "/runner/api/moods/harbor/stream/",
            body,
            content_type="application/json",
            secure=True,
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        for _ in range(2)
    ]
    seen["stream"] = {
        "status": [a.status_code for a in answers],
        "counts": [{k: a.json().get(k) for k in ("imported", "skipped")} for a in answers],
        "index": index_ids(session_id=session),
        "host": host_rows(session_id=session),
        # memory-lane's content: a ToolUse holds the tool's input; a ToolResult, under memory-lane's
        # default TOOL_RESULT_CONTENT_CHARS (0), none of the output, sent by `tool-result`.
        "tool_uses": [[u.tool_name, u.content] for u in host.ToolUse.objects.filter(session_id=session)],
        "tool_results": [
            [r.tool_use_id, r.sender_id, r.content]
            for r in host.ToolResult.objects.filter(session_id=session)
        ],
        "claimed_by": list(
            host.MoodSession.objects.filter(session_id=session).values_list("mood__slug", flat=True)
        ),
    }

    # 2. A real Claude Code wake: its lines land in the host's record once, under the same ids.
    out = StringIO()
    call_command("wake", "harbor", "magent", prompt="What does the README say?", sync=True, stdout=out)
    turn = Turn.objects.get(agent=magent)
    seen["wake"] = {
        "status": turn.status,
        "session_id": turn.session_id,
        "index": index_ids(session_id=turn.session_id),
        "host": host_rows(session_id=turn.session_id),
        "claimed_by": list(
            host.MoodSession.objects.filter(session_id=turn.session_id).values_list("mood__slug", flat=True)
        ),
        "texts": [
            m.content
            for m in host.Message.objects.filter(
                session_id=turn.session_id, toolresult=None, tooluse=None, thought=None
            )
        ],
    }

    # 3. A post made through the host's own model (its composer) wakes the agent it mentions.
    justin = host.ThinkingEntity.objects.create(
        name="justin", participant_type="human", is_biological_human=True
    )
    post_id = uuid.uuid4()
    with transaction.atomic():
        host.Message.objects.create(
            id=post_id,
            content="@magent and what else does it say?",
            sender=justin,
            mood=mood,
            timestamp=int(time.time() * 1000),
        )
    index_post = Message.objects.filter(pk=post_id).values("motion_id", "sender", "source", "text").first()
    seen["host_post"] = {
        "index": index_post,
        "turns": list(
            Turn.objects.filter(agent=magent, woken_by_id=post_id).values_list("reason", flat=True)
        ),
        "host_copies": host.Message.objects.filter(pk=post_id).count(),
        # Every row of the apps' index is in the host's record once, and nothing more came back.
        "index_total": Message.objects.filter(motion=motion).count(),
        "host_total": host.Message.objects.filter(mood=mood).count(),
        "index_not_in_host": sorted(
            str(pk)
            for pk in Message.objects.filter(motion=motion)
            .exclude(pk__in=host.Message.objects.values("pk"))
            .values_list("pk", flat=True)
        ),
        "host_kinds": dict(
            Counter(
                "tool_use"
                if hasattr(m, "tooluse")
                else "tool_result"
                if hasattr(m, "toolresult")
                else "message"
                for m in host.Message.objects.filter(mood=mood)
            )
        ),
    }

    # 3b. A line memory-lane's own watcher brought from a transcript (it has a session): a
    # terminal line, whose mention waits to see whether it is answered (memory-lane's rule).
    line_id = uuid.uuid4()
    with transaction.atomic():
        host.Message.objects.create(
            id=line_id,
            content=[{"type": "text", "text": "@magent later"}],
            sender=justin,
            mood=mood,
            session_id=uuid.uuid4(),
            timestamp=int(time.time() * 1000),
        )
    seen["host_transcript_line"] = {
        "index": Message.objects.filter(pk=line_id).values("source", "text").first(),
        "turns": Turn.objects.filter(woken_by_id=line_id).count(),
        "waiting": MentionWake.objects.filter(message_id=line_id, agent=magent).count(),
    }

    # 4. Pages: the host's base.html is its own; the apps' thread page renders inside the host.
    home = client.get("/", secure=True)
    thread = client.get("/runner/motions/harbor/", secure=True)
    seen["pages"] = {
        "home": [home.status_code, home.content.decode()],
        "thread": [thread.status_code, thread.content.decode()],
        "thread_css": bool(finders.find("motion_runner/thread.css")),
    }
    return seen


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1]), default=str))
