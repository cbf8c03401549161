"""What tests/motion_runner/memory_lane/test_memory_lane_record.py does inside the host project, after `migrate`: every kind
of line the apps write goes through the memory_lane binding into memory-lane's record (the
reconstruction in tests/host/conversations/, with no Motion made by hand), and is read back the way
memory-lane's page reads it (tests/host/conversations/page.py). Prints one JSON object.

`python -m tests.host.record_check` with DJANGO_SETTINGS_MODULE=tests.host.settings.
"""

from __future__ import annotations

import json
import logging
import tempfile
import uuid
from decimal import Decimal
from pathlib import Path

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client, override_settings  # noqa: E402

from motion_runner.api.auth import create_key  # noqa: E402
from motion_runner.ingest.writer import insert_one  # noqa: E402
from motion_runner.models import (  # noqa: E402
    Agent,
    Kind,
    Message,
    Motion,
    Source,
    Turn,
    TurnStatus,
    UnclaimedSession,
)
from motion_runner.recall import record as recall  # noqa: E402
from motion_runner.record import binding  # noqa: E402
from motion_runner.transcripts.importer import assign_session  # noqa: E402
from tests import recorded  # noqa: E402
from tests.host.conversations import models as host  # noqa: E402
from tests.host.conversations import page  # noqa: E402

HOST = "memory-lane.example"


def said(motion: Motion, agent: Agent | None, kind: str, text: str, **extra) -> Message:
    """A line the apps write themselves (wake line, request card, dot, error…), through the one
    write path."""
    message = Message(
        motion=motion,
        sender=agent.name if agent else extra.pop("sender", "justin"),
        agent=agent,
        source=extra.pop("source", Source.SYSTEM if agent else Source.WEB),
        kind=kind,
        text=text,
        **extra,
    )
    assert insert_one(message)
    return message


def post(client: Client, key: str, slug: str, route: str, body: dict) -> int:
    answer = client.post(
        f"/runner/api/moods/{slug}/{route}/",
        json.dumps(body),
        content_type="application/json",
        secure=True,
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    return answer.status_code


def host_rows(session: str) -> dict[str, tuple]:
    """The host's rows of a session, as memory-lane would show them: id -> (kind, sender, content,
    Mood slug)."""
    return {
        str(row.pk): (
            "thought"
            if hasattr(row, "thought")
            else "use"
            if hasattr(row, "tooluse")
            else "result"
            if hasattr(row, "toolresult")
            else "message",
            row.sender_id,
            json.dumps(row.content, sort_keys=True),
            row.mood.slug if row.mood_id else None,
        )
        for row in host.Message.objects.filter(session_id=session).select_related(
            "mood", "thought", "tooluse", "toolresult"
        )
    }


def unclaimed_then_claimed(motion: Motion, agent: Agent, mood: host.Mood) -> dict:
    client = Client(HTTP_HOST=HOST)
    session = str(uuid.uuid4())
    with (
        tempfile.TemporaryDirectory() as folder,
        override_settings(INGEST_API_KEY="watcher-key", INGEST_SPOOL_DIR=folder),
    ):
        path = recorded.fresh_terminal_transcript(Path(folder) / "t.jsonl", session)
        body = {"lines": path.read_text().splitlines(), "username": "justin", "source": "laptop"}

        def ingest() -> dict:
            answer = client.post(
                "/runner/api/ingest/",
                json.dumps(body),
                content_type="application/json",
                secure=True,
                HTTP_AUTHORIZATION="Bearer watcher-key",
            )
            return answer.json()

        first = ingest()
        before = host_rows(session)
        again = ingest()  # the watcher re-sends a batch: nothing doubled
        after_repost = host_rows(session)
        index_before = Message.objects.filter(session_id=session).count()
        inbox = UnclaimedSession.objects.get(pk=session)
        assign_session(inbox, motion, agent)
        claimed = host_rows(session)
        index = set(map(str, Message.objects.filter(session_id=session).values_list("pk", flat=True)))
        third = ingest()  # posted once more after the claim: still once
        last = host_rows(session)
    unchanged = {key: value[:3] for key, value in before.items()}
    return {
        "answers": [first["unclaimed_sessions"], again["unclaimed_sessions"], third["unclaimed_sessions"]],
        "rows_before_claim": len(before),
        "moods_before_claim": sorted({value[3] or "" for value in before.values()}),
        "kinds_before_claim": sorted({value[0] for value in before.values()}),
        "repost_same": after_repost == before,
        "index_before_claim": index_before,
        "rows_after_claim": len(claimed),
        "moods_after_claim": sorted({value[3] or "" for value in claimed.values()}),
        "rewritten": sorted(k for k, v in claimed.items() if unchanged.get(k) != v[:3]),
        "index_after_claim": len(index),
        "index_not_in_host": sorted(index - set(claimed)),
        "host_not_in_index": sorted(claimed[k][0] for k in set(claimed) - index),
        "after_repost_same": last == claimed,
        "mood": mood.slug,
    }


def host_page_rows(motion: Motion, mood: host.Mood, scribe: Agent, justin: host.ThinkingEntity) -> dict:
    """What memory-lane's own page writes, as its views write it (views_auth.api_say and
    api_interrupt): composer posts from an SSH-key device and a PickiPedia one, a ■ on a running
    turn, and an event row that is nobody's words."""
    from wakes.decision.trust import decide

    system = host.ThinkingEntity.objects.get_or_create(
        name="system", defaults={"participant_type": "system", "is_biological_human": False}
    )[0]
    # An AI entity of memory-lane's with no Agent of that name here (renamed, or spelled "Scribe"):
    # only memory-lane's own is_biological_human says it is no person.
    entity = host.ThinkingEntity.objects.get_or_create(
        name="Scribe", defaults={"participant_type": "ai", "is_biological_human": False}
    )[0]
    rows = {}
    for name, client_version, sender in (
        ("key", "magenta-web/mobile", justin),
        ("wiki", "magenta-web/wiki", justin),
        ("unmarked", None, justin),
        ("ai_entity", "magenta-web/mobile", entity),
    ):
        rows[name] = uuid.uuid4()
        with transaction.atomic():
            host.Message.objects.create(
                id=rows[name],
                content=f"the merch table is by the door ({name})",
                sender=sender,
                mood=mood,
                source_file="mood-web",
                client_version=client_version,
            )
    posts = {name: Message.objects.filter(pk=pk).first() for name, pk in rows.items()}
    running = Turn.objects.create(
        motion=motion, agent=scribe, prompt="count the shirts", status=TurnStatus.RUNNING
    )
    stop_id, deploy_id = uuid.uuid4(), uuid.uuid4()
    with transaction.atomic():
        host.Message.objects.create(
            id=stop_id,
            content={"type": "interrupt", "agent": "scribe", "by": "justin"},
            sender=system,
            mood=mood,
            source_file="interrupt",
        )
        host.Message.objects.create(
            id=deploy_id,
            content={"type": "deploy", "server": "maybelle", "state": "finished", "by": "justin"},
            sender=system,
            mood=mood,
            source_file="deploy",
        )
    running.refresh_from_db()
    return {
        "sign_in": {name: post.sign_in if post else None for name, post in posts.items()},
        "modes": {name: decide(post).mode if post else None for name, post in posts.items()},
        "stop": [running.stop_requested_at is not None, running.stopped_by],
        "event_rows_indexed": Message.objects.filter(pk__in=[stop_id, deploy_id]).count(),
    }


def remembered(motion: Motion, agent: Agent) -> dict:
    """A note the woken agent keeps with the record server's `remember`: in memory-lane's tables
    as in the apps' index, once (issue 43, item 9)."""
    motion.agents.add(agent)
    turn = Turn.objects.create(motion=motion, agent=agent, prompt="keep a note", status=TurnStatus.RUNNING)
    kept = recall.remember(turn, "the lamp is lit at dusk")["kept"]
    rows = host.Message.objects.filter(pk=kept["id"]).select_related("mood")
    return {
        "index": list(Message.objects.filter(pk=kept["id"]).values_list("kind", "text")),
        "host": [[row.sender_id, row.content, row.mood.slug if row.mood_id else None] for row in rows],
    }


def main() -> dict:
    seen: dict = {}
    client = Client(HTTP_HOST=HOST)

    # memory-lane makes a Mood and renames it: "harbor" is now an alias of "harbor-of-moods".
    mood = host.Mood.objects.create(slug=host.Mood.free_slug("Harbor"), title="Harbor")
    mood.rename("Harbor of moods")
    resolved = {slug: binding().motion_for_slug(slug) for slug in ("harbor-of-moods", "harbor", "nowhere")}
    motion = resolved["harbor"]
    seen["resolved"] = {slug: m.slug if m else None for slug, m in resolved.items()}
    seen["motions_made"] = list(Motion.objects.values_list("slug", "title"))

    scribe = Agent.objects.create(name="scribe", harness="claude-code")
    motion.agents.add(scribe)  # an admin's step (README, step 6): which agents a Motion has
    key = create_key(scribe)[1]
    session = recorded.session_id()
    # memory-lane's own watcher stored a line of this session before anyone claimed it: no Mood yet.
    early = host.ThinkingEntity.objects.create(name="ada", participant_type="human")
    waiting_id = uuid.uuid4()
    with transaction.atomic():
        host.Message.objects.create(
            id=waiting_id, content="typed before the claim", sender=early, session_id=session
        )
    events = recorded.first_run()
    # memory-lane's runner learned the old name before the rename: posts under the alias, then again.
    seen["stream_status"] = [
        post(client, key, "harbor", "stream", {"session_id": session, "events": events}),
        post(client, key, "harbor-of-moods", "stream", {"session_id": session, "events": events}),
        post(client, key, "harbor", "held", {"reason": "at its hourly cap"}),
    ]
    seen["host_held"] = page.held_in(mood.slug)
    seen["activity_after_turn"] = page.activity(mood)
    seen["waiting_line_mood"] = host.Message.objects.get(pk=waiting_id).mood.slug

    # A turn whose model thinks first (a line of its own, as Claude Code streams it), posted twice.
    thinking_session, thought_id, reply_id = (str(uuid.uuid4()) for _ in range(3))
    thinking = [
        {
            "type": "assistant",
            "uuid": thought_id,
            "session_id": thinking_session,
            "message": {
                "id": "msg_thinking",
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "The README holds sk-ant-api03-" + "C" * 40 + "; say only what it means.",
                        "signature": "sig-of-the-vendor",
                    }
                ],
            },
        },
        {
            "type": "assistant",
            "uuid": reply_id,
            "session_id": thinking_session,
            "message": {
                "id": "msg_thinking",
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [{"type": "text", "text": "It means 42."}],
            },
        },
    ]
    prompt_id, continued_id = str(uuid.uuid4()), str(uuid.uuid4())
    thinking += [
        {  # a `claude -p` prompt's echo: the wake prompt the apps wrote
            "type": "user",
            "uuid": prompt_id,
            "session_id": thinking_session,
            "message": {"role": "user", "content": "justin mentioned you (@scribe) in the Motion “Harbor”"},
        },
        {  # the summary a compacted session goes on from
            "type": "user",
            "uuid": continued_id,
            "session_id": thinking_session,
            "isSynthetic": True,
            "message": {
                "role": "user",
                "content": "This session is being continued from a previous conversation. It read the README.",
            },
        },
    ]
    body = {"session_id": thinking_session, "events": thinking}
    seen["thinking_status"] = [post(client, key, "harbor", "stream", body) for _ in range(2)]
    thought = host.Thought.objects.filter(pk=thought_id).first()
    seen["thought"] = thought and {
        "signature": thought.signature,
        "content": thought.content,
        "sender": thought.sender_id,
        "recipients": sorted(thought.recipients.values_list("name", flat=True)),
        "copies": host.Message.objects.filter(pk=thought_id).count(),
        "in_index": Message.objects.filter(pk=thought_id).exists(),
    }
    prompt_row = host.Message.objects.get(pk=prompt_id)
    continued = host.Message.objects.get(pk=continued_id)
    seen["unindexed_lines"] = {
        "prompt": [prompt_row.sender_id, prompt_row.content],
        "continuation": [continued.sender_id, continued.is_continuation_message, continued.content],
        "in_index": Message.objects.filter(pk__in=[prompt_id, continued_id]).count(),
    }

    # The apps' own lines, each as the apps write it.
    wake = said(motion, scribe, Kind.WAKE, "@scribe woke: mentioned by justin · $0.0100")
    request = said(motion, scribe, Kind.REQUEST, "scribe asks for full tools")
    error = said(motion, scribe, Kind.ERROR, "the harness exited 1", is_error=True)
    dot = said(motion, scribe, Kind.DOT, '<silent by="screen">nothing new</silent>', source=Source.API)
    boundary = said(motion, scribe, Kind.COMPACT, "compacted", source=Source.RUNNER)
    summary = said(
        motion,
        scribe,
        Kind.COMPACT,
        "This session is being continued from a previous conversation. In short: the README.",
        source=Source.RUNNER,
    )
    person = said(motion, None, Kind.TEXT, "@scribe thanks", sender="justin")
    # A transcript's line names its parent: one the host has, and one it has not seen yet.
    known_parent = Message.objects.filter(motion=motion, kind=Kind.TEXT, agent=scribe).first()
    unseen = uuid.uuid4()
    child = said(
        motion,
        scribe,
        Kind.TEXT,
        "and one more thing",
        source=Source.TERMINAL,
        raw={"parentUuid": str(known_parent.id)},
    )
    orphan = said(
        motion,
        scribe,
        Kind.TEXT,
        "said before its parent came",
        source=Source.TERMINAL,
        raw={"parentUuid": str(unseen)},
    )
    # A host that keeps some tool output (memory-lane's own setting) gets that much, no more.
    with override_settings(TOOL_RESULT_CONTENT_CHARS=12):
        kept = said(
            motion,
            scribe,
            Kind.TOOL_RESULT,
            "line one of a file\nline two",
            tool_id="toolu_kept",
            source=Source.RUNNER,
        )
    # Another process's turn ends with the stop reason it names.
    refused = said(motion, scribe, Kind.TEXT, "I can't help with that.", source=Source.RUNNER)
    said(
        motion,
        scribe,
        Kind.TURN_END,
        "turn ended",
        source=Source.RUNNER,
        raw={"type": "result", "subtype": "success", "stop_reason": "refusal"},
        cost_usd=Decimal("0.0123"),
    )
    seen["activity_after_refusal"] = page.activity(mood)
    rows = {
        str(m.pk): m
        for m in host.Message.objects.filter(mood=mood)
        .exclude(pk__in=[prompt_id, continued_id, waiting_id])
        .select_related("tooluse", "toolresult")
    }  # prompt lines are the host's alone; thinking is in both (a Thought there, a step here)
    index = {str(pk) for pk in Message.objects.filter(motion=motion).values_list("pk", flat=True)}
    timeline = page.timeline(mood)

    def row(message: Message) -> dict:
        found = rows[str(message.id)]
        return {
            "sender": found.sender_id,
            "sender_type": found.sender.participant_type,
            "content": found.content,
            "stop_reason": found.stop_reason,
            "source_file": found.source_file,
            "recipients": sorted(found.recipients.values_list("name", flat=True)),
            "parent": str(found.parent_id) if found.parent_id else None,
            "looking_for_parent": str(found.looking_for_parent_id) if found.looking_for_parent_id else None,
            "is_continuation": found.is_continuation_message,
        }

    uses = host.ToolUse.objects.filter(mood=mood)
    results = host.ToolResult.objects.filter(mood=mood)
    raw_inputs = {
        b["id"]: b["input"]
        for e in events
        if e.get("type") == "assistant"
        for b in e["message"]["content"]
        if b.get("type") == "tool_use"
    }
    seen["record"] = {
        "index_only": sorted(index - set(rows)),
        "host_only": sorted(set(rows) - index),
        "index_total": len(index),
        "host_total": len(rows),
    }
    seen["steps"] = [
        {
            "tool": u.tool_name,
            "content": u.content,
            "recorded_input": raw_inputs.get(u.tool_id),
            "summary": page.step_summary(u.tool_name, u.content),
            "recipients": sorted(u.recipients.values_list("name", flat=True)),
            "result": page.step_result(u),
        }
        for u in uses
    ]
    seen["timeline_steps"] = sum(1 for kind, _, _ in timeline if kind == "step")
    seen["tool_results"] = [
        {
            "sender": r.sender_id,
            "sender_type": r.sender.participant_type,
            "content": r.content,
            "recipients": sorted(r.recipients.values_list("name", flat=True)),
        }
        for r in results.exclude(pk=kept.id)
    ]
    seen["kept_tool_result"] = row(kept)["content"]
    seen["turn_words"] = [text for kind, _, text in timeline if kind == "turn"]
    seen["timeline_kinds"] = [kind for kind, _, _ in timeline]
    seen["lines"] = {
        name: row(message)
        for name, message in {
            "wake": wake,
            "request": request,
            "error": error,
            "dot": dot,
            "boundary": boundary,
            "summary": summary,
            "person": person,
            "child": child,
            "orphan": orphan,
            "refused": refused,
        }.items()
    }
    seen["known_parent"] = str(known_parent.id)
    seen["unseen_parent"] = str(unseen)
    turn_ends = host.Message.objects.filter(mood=mood, content__type="turn-result")
    seen["turn_results"] = [{"sender": t.sender_id, "content": t.content} for t in turn_ends]
    seen["stream_last_line_stop"] = (
        host.Message.objects.filter(session_id=session, sender_id="scribe")
        .order_by("-created_at")
        .first()
        .stop_reason
    )
    seen["message_count"] = page.message_count(mood)
    seen["system_rows"] = host.Message.objects.filter(mood=mood, sender_id="system").count()
    seen["agent_rows"] = host.Message.objects.filter(mood=mood, sender_id="scribe").count()
    seen["claimed_by"] = list(
        host.MoodSession.objects.filter(session_id=session).values_list("mood__slug", flat=True)
    )

    # Renamed again in memory-lane: every name it ever had finds the one Motion; its title follows.
    mood.rename("Harbor of all moods")
    seen["after_rename"] = {
        slug: getattr(binding().motion_for_slug(slug), "slug", None)
        for slug in ("harbor-of-all-moods", "harbor-of-moods", "harbor")
    }
    seen["title_after_rename"] = Motion.objects.get(pk=motion.pk).title
    seen["stream_after_rename"] = post(
        client, key, "harbor-of-all-moods", "stream", {"session_id": session, "events": events}
    )
    thread = client.get(
        "/runner/api/motions/harbor-of-all-moods/", secure=True, HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    seen["api_by_new_slug"] = thread.status_code
    seen["quiet_by_old_slug"] = post(
        client, key, "harbor", "quiet", {"reason": "nothing new", "by": "screen"}
    )
    person = get_user_model().objects.create_user("justin")
    motion.people.add(person)  # a members' Motion: its people read it, by any of its names
    reader = Client(HTTP_HOST=HOST)
    reader.force_login(person)
    seen["thread_by_each_name"] = {
        slug: reader.get(f"/runner/motions/{slug}/", secure=True).status_code
        for slug in ("harbor", "harbor-of-moods", "harbor-of-all-moods", "nowhere")
    }

    # Renamed in the apps (the admin saves a new title): the Mood is renamed as memory-lane renames
    # one, its old slug an alias, and neither side renames the other back.
    motion.refresh_from_db()
    motion.title = "Harbor at dusk"
    motion.save()
    mood.refresh_from_db()
    seen["motion_renamed"] = {
        "mood": [mood.slug, mood.title],
        "aliases": sorted(mood.aliases.values_list("slug", flat=True)),
        "motion": list(Motion.objects.filter(pk=motion.pk).values_list("slug", "title").get()),
        "motions": Motion.objects.count(),
    }
    seen["after_motion_rename"] = {
        slug: {
            "resolves": getattr(binding().motion_for_slug(slug), "slug", None),
            "held": post(client, key, slug, "held", {"reason": ""}),
            "thread": reader.get(f"/runner/motions/{slug}/", secure=True).status_code,
        }
        for slug in ("harbor-at-dusk", "harbor-of-all-moods", "harbor")
    }
    seen["stream_after_motion_rename"] = post(
        client, key, "harbor-at-dusk", "stream", {"session_id": session, "events": events}
    )

    # memory-lane's watcher posts a session nobody has claimed: its lines are in memory-lane's
    # record at once, with no Mood; the claim (an admin assigns it) gives them the Mood, and the
    # apps' index rows come from the spool without doubling or rewriting memory-lane's.
    seen["unclaimed"] = unclaimed_then_claimed(motion, scribe, mood)

    lighthouse = Motion.objects.create(slug="lighthouse", title="The Lighthouse Keeper")
    said(lighthouse, scribe, Kind.TEXT, "first light", source=Source.RUNNER)
    twin = Motion.objects.create(slug="lighthouse-two", title="The Lighthouse Keeper")
    said(twin, scribe, Kind.TEXT, "second light", source=Source.RUNNER)
    seen["made_moods"] = {
        m.slug: sorted(m.aliases.values_list("slug", flat=True))
        for m in host.Mood.objects.filter(title="The Lighthouse Keeper")
    }
    seen["made_moods_find_their_motions"] = [
        getattr(binding().motion_for_slug(slug), "slug", None)
        for slug in ("the-lighthouse-keeper", "the-lighthouse-keeper-2")
    ]

    # A post in a Mood the apps never heard of: its Motion is made, and the post reaches the wakes app.
    quay = host.Mood.objects.create(slug=host.Mood.free_slug("Quay"), title="Quay")
    justin = host.ThinkingEntity.objects.get(name="justin")
    with transaction.atomic():
        host.Message.objects.create(id=uuid.uuid4(), content="hello quay", sender=justin, mood=quay)
    quay_motion = binding().motion_for_slug("quay")
    seen["quay"] = {
        "motion": [quay_motion.slug, quay_motion.title] if quay_motion else None,
        "index": list(Message.objects.filter(motion__slug="quay").values_list("text", flat=True)),
    }
    seen["remembered"] = remembered(lighthouse, scribe)
    seen["host_page"] = host_page_rows(motion, mood, scribe, justin)
    post(client, key, "harbor", "held", {"reason": ""})
    seen["host_held_lifted"] = page.held_in(mood.slug)
    # memory-lane's own loggers still log, through its own handlers, their lines redacted.
    seen["logging"] = {
        "loggers": sorted(settings.LOGGING["loggers"]),
        "handlers": sorted(settings.LOGGING["handlers"]),
    }
    logging.getLogger("conversations").warning("imported with sk-ant-api03-%s", "A" * 40)
    logging.getLogger("django.request").error("a request with ghp_%s", "B" * 36)
    return seen


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
