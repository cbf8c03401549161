"""What tests/motion_runner/memory_lane/test_memory_lane_details.py does inside the host project,
after `migrate`: the binding's details of issue 32, item 5, each read back as memory-lane keeps or
shows it. Prints one JSON object.

`python -m tests.host.details_check` with DJANGO_SETTINGS_MODULE=tests.host.settings:
1. memory-lane's runner posts a recorded run (three turns, the third a `/compact`) into a Mood no
   Motion was made for: accepted, the runner's agent joins the new Motion;
2. the turn-result rows carry each run's cost;
3. the compaction stays below the turns that came before it on memory-lane's page;
4. the session's transcript, imported after, fills memory-lane's copy of the streamed rows (cwd,
   parents, tokens);
5. a tool's output cut to TOOL_RESULT_CONTENT_CHARS says how much was not kept;
6. the project's own agent key, and a runner key of an agent not among a Motion's agents, are
   still refused (403).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import django

django.setup()

from django.test import Client, override_settings  # noqa: E402

from motion_runner.api.auth import create_key  # noqa: E402
from motion_runner.ingest.writer import insert_one  # noqa: E402
from motion_runner.models import Agent, Kind, Message, Motion, Source  # noqa: E402
from motion_runner.transcripts.importer import import_file  # noqa: E402
from tests import recorded  # noqa: E402
from tests.host.conversations import models as host  # noqa: E402
from tests.host.conversations import page  # noqa: E402

HOST = "memory-lane.example"
RUNNER_KEYS = {
    "magent": "runner-key-of-magent-0123456789abcdef",
    "bbot": "runner-key-of-bbot-0123456789abcdef",
}


def stream(client: Client, slug: str, key: str, events: list[dict]) -> tuple[int, dict]:
    answer = client.post(
        f"/runner/api/moods/{slug}/stream/",
        json.dumps({"session_id": recorded.session_id(), "events": events}),
        content_type="application/json",
        secure=True,
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    return answer.status_code, answer.json()


def main() -> dict:
    seen: dict = {}
    magent = Agent.objects.create(name="magent", harness="claude-code")
    Agent.objects.create(name="bbot", harness="claude-code")
    lobby = host.Mood.objects.create(slug="lobby", title="lobby")
    client = Client(HTTP_HOST=HOST)
    # What memory-lane's runner posts: the assistant, user and result lines, all three runs.
    events = [
        line for line in recorded.lines("stream") if line.get("type") in ("assistant", "user", "result")
    ]

    # 6 first: the project's own key of an agent into the agentless Mood is still refused.
    own_key = create_key(magent)[1]
    with override_settings(MOOD_RUNNER_KEYS=RUNNER_KEYS):
        seen["own_key"] = stream(client, "lobby", own_key, events[:1])[0]
        # 1. memory-lane's runner key: accepted in a Mood with no Motion; its agent joins.
        status, answer = stream(client, "lobby", RUNNER_KEYS["magent"], events)
        motion = Motion.objects.get(slug="lobby")
        seen["first_post"] = {
            "status": status,
            "imported": answer.get("imported"),
            "errors": answer.get("errors"),
            "agents": sorted(motion.agents.values_list("name", flat=True)),
            "said": list(
                motion.messages.filter(text__contains="is now an agent").values_list("text", flat=True)
            ),
            "host_rows": host.Message.objects.filter(mood=lobby).count(),
        }
        # 6: another agent's runner key, the Motion having agents now: refused as before.
        seen["other_runner"] = stream(client, "lobby", RUNNER_KEYS["bbot"], events[:1])[0]

    # 2. Each run's cost in its turn-result row.
    results = host.Message.objects.filter(mood=lobby, sender_id="system").order_by("created_at")
    seen["turn_result_costs"] = [
        r.content.get("cost_usd")
        for r in results
        if isinstance(r.content, dict) and r.content.get("type") == "turn-result"
    ]
    seen["result_costs"] = [line.get("total_cost_usd") for line in events if line.get("type") == "result"]

    # 3. memory-lane's page order: the compaction after the two turns before it.
    timeline = page.timeline(lobby)
    kinds = [kind for kind, _, _ in timeline]
    seen["timeline_kinds"] = kinds
    # Every row of the batch, in memory-lane's order (created_at), against the order it was said.
    said = [str(line["uuid"])[:8] for line in events if line.get("uuid")]
    stored = [
        str(pk)[:8]
        for pk in host.Message.objects.filter(mood=lobby).order_by("created_at").values_list("pk", flat=True)
    ]
    seen["order"] = {
        "stored": [short for short in stored if short in said],
        "said": [short for short in said if short in stored],
    }

    # 4. The transcript, imported after the stream, fills memory-lane's copy of the rows.
    first_reply, first_call = "75654cbc", "21a76d47"  # the recording's first text, then its tool call
    rows = {str(r.pk)[:8]: r for r in host.Message.objects.filter(mood=lobby)}
    before = {
        k: [rows[k].cwd, rows[k].parent_id, rows[k].looking_for_parent_id] for k in (first_reply, first_call)
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "-tmp-work" / f"{recorded.session_id()}.jsonl"
        path.parent.mkdir()
        recorded.terminal_transcript(path)
        import_file(path)
    rows = {str(r.pk)[:8]: r for r in host.Message.objects.filter(mood=lobby)}
    seen["fill_in"] = {
        "before": before,
        "after": {
            k: [
                bool(rows[k].cwd),
                str(rows[k].parent_id or "")[:8],
                str(rows[k].looking_for_parent_id or "")[:8],
            ]
            for k in (first_reply, first_call)
        },
        "index_cwd": bool(Message.objects.get(pk=rows[first_reply].pk).cwd),
    }

    # 5. A tool's output cut to memory-lane's setting says how much it left out.
    with override_settings(TOOL_RESULT_CONTENT_CHARS=12):
        cut = Message(
            motion=motion,
            sender="magent",
            agent=magent,
            source=Source.SYSTEM,
            kind=Kind.TOOL_RESULT,
            text="line one of a file\nline two",
            tool_id="toolu_cut",
        )
        assert insert_one(cut)
        short = Message(
            motion=motion,
            sender="magent",
            agent=magent,
            source=Source.SYSTEM,
            kind=Kind.TOOL_RESULT,
            text="whole",
            tool_id="toolu_short",
        )
        assert insert_one(short)
    seen["cut"] = host.ToolResult.objects.get(pk=cut.id).content
    seen["short"] = host.ToolResult.objects.get(pk=short.id).content
    return seen


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
