"""The memory_lane binding against a reconstruction of REAL memory-lane, not tests/host/.

    ML_DATABASE_URL=postgres://…/empty_db python -m tests.host.real_check /work/memory-lane-real

The folder (never part of this repository) holds memory-lane's own `conversations` app as
cryptograss/memory-lane has it: `models.py`, `apps.py`, `signals.py`, `services/mood_view.py`
(the page: `timeline`, `step_payload`), `services/handoff.py`, `services/settings.py` (its
settings rows: `change`, `resolve`, `scram`), `services/retract.py` with what it calls
(`sealing.py`, `access.py`, `media.py`, `redaction.py`) and a migration for those models;
its third-party import `constant_sorrow` on its path; and a `memory_viewer` package whose settings
and urls exec exactly this checkout's README blocks ("Adding it to memory-lane", found through
MOTION_RUNNER_CHECKOUT, which this script sets), with `ML_DATABASE_URL` as its database. The check migrates the database, drives real traffic
through the apps (stream posts and a re-post, thinking, tool calls and results, a turn's end,
transcript lines of an unclaimed session later claimed, a post made through memory-lane's own
Message model, a Mood renamed in memory-lane and a Motion renamed in the apps), reads the record
back with memory-lane's own `timeline()` and `step_payload()`, prints its figures as one JSON
object and exits 1 when one of the facts below fails:

- every event once: each of the apps' index rows is in memory-lane's record, each posted line
  there once (no tool call, result or words doubled), none missing;
- a renamed Mood's current slug and every alias reach every route (stream, quiet, held, the API,
  the thread page);
- every ToolUse holds the tool's input; no ToolResult holds more than TOOL_RESULT_CONTENT_CHARS;
- no project line (wake line, request card, error, turn end) and no tool result is recorded as an
  agent's words (a `turn` of memory-lane's timeline);
- every tool step of memory-lane's page has a summary;
- memory-lane's page in command (issue 32): "mentions only" set by its own `settings.change` is
  the listening here; its AZ5 row raises and lifts the scram here; the scram raised here is what
  its own `settings.scram()` shows; a change in the apps' menus is what its own `resolve` reads;
  its `resolve` and the apps' steering pick the same row of three slots (Mood and agent, Mood,
  every Mood) for verbosity and discretion;
- its ultracode and timing rows (consider_after, idle_after, considers_per_hour) are the apps'
  ultracode and dials by the same slot order; the apps' timing and consider $/day are what its own
  `resolve` and `global_value` read;
- an agent's words carrying a ```handoff block, as the binding writes them, set off memory-lane's
  own post_save hook (its `signals.py`, `services/handoff.py`): one line in each Mood;
- a person's post an agent has read, deleted by memory-lane's own `retract.delete` (sealed first to
  a recovery key its own `sealing.new_pair` made): the apps' copy, the next wake's prompt, every
  stored prompt and its echo in memory-lane's record, the record server's search and read no
  longer hold the words, and the thread says who took it back; its own `retract.edit` is what the
  apps hold and the next wake reads (issue 40 item 1).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent


# The binding's marker after an output cut to the limit (memory_lane/rows.py): not output.
CUT_MARK = re.compile(r"\n\[\d+ more characters not kept\]$")


def kept_part(content: Any) -> str:
    """The tool output a ToolResult row keeps, without the marker saying how much was cut."""
    return CUT_MARK.sub("", content) if isinstance(content, str) else json.dumps(content)


def setup(folder: Path) -> None:
    sys.path.insert(0, str(folder))
    os.environ["MOTION_RUNNER_CHECKOUT"] = str(ROOT)
    os.environ["DJANGO_SETTINGS_MODULE"] = "memory_viewer.settings"
    # memory-lane reads its Mood admins from the environment; its AZ5 row counts only from them,
    # and this rehearsal's AZ5 is pressed by justin.
    os.environ.setdefault("MOOD_ADMINS", "justin")
    import django

    django.setup()


HOST = "memory-lane.example"


def main(folder: Path) -> dict[str, Any]:  # noqa: PLR0915  one scenario, read top to bottom
    setup(folder)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import transaction
    from django.test import Client, override_settings

    call_command("migrate", "--noinput", verbosity=0)

    from conversations import models as ml
    from conversations.services import mood_view

    from motion_runner.api.auth import create_key
    from motion_runner.ingest.writer import insert_one
    from motion_runner.models import Agent, Kind, Message, Motion, Source, Turn, UnclaimedSession
    from motion_runner.record import binding
    from motion_runner.transcripts.importer import assign_session
    from tests import recorded

    client = Client(HTTP_HOST=HOST)
    seen: dict[str, Any] = {}

    def post(key: str, slug: str, route: str, body: dict) -> int:
        return client.post(
            f"/runner/api/moods/{slug}/{route}/",
            json.dumps(body),
            content_type="application/json",
            secure=True,
            HTTP_AUTHORIZATION=f"Bearer {key}",
        ).status_code

    def said(motion: Motion, agent: Agent, kind: str, text: str, **extra: Any) -> Message:
        message = Message(
            motion=motion,
            sender=agent.name,
            agent=agent,
            source=extra.pop("source", Source.SYSTEM),
            kind=kind,
            text=text,
            **extra,
        )
        assert insert_one(message)
        return message

    # memory-lane makes a Mood and renames it: its old slug an alias (its own Mood.rename).
    mood = ml.Mood.objects.create(slug=ml.Mood.free_slug("Harbor"), title="Harbor")
    mood.rename("Harbor of moods")
    motion = binding().motion_for_slug("harbor")  # made for the Mood, by its alias
    scribe = Agent.objects.create(name="scribe", harness="claude-code")
    motion.agents.add(scribe)
    key = create_key(scribe)[1]

    # memory-lane's runner streams a turn under the old name, then re-posts it under the new one.
    session = str(uuid.uuid4())
    ids: dict[str, str] = {}
    events = [recorded.fresh_copy(line, ids, session) for line in recorded.first_run()]
    stream = [
        post(key, "harbor", "stream", {"session_id": session, "events": events}),
        post(key, "harbor-of-moods", "stream", {"session_id": session, "events": events}),
    ]
    # A turn whose model thinks first, posted twice.
    thinking_session = str(uuid.uuid4())
    thinking = [
        {
            "type": "assistant",
            "uuid": str(uuid.uuid4()),
            "session_id": thinking_session,
            "message": {
                "id": "msg_think",
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [{"type": "thinking", "thinking": "What does it mean?", "signature": "sig"}],
            },
        },
        {
            "type": "assistant",
            "uuid": str(uuid.uuid4()),
            "session_id": thinking_session,
            "message": {
                "id": "msg_think",
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [{"type": "text", "text": "It means 42."}],
            },
        },
    ]
    stream += [
        post(key, slug, "stream", {"session_id": thinking_session, "events": thinking})
        for slug in ("harbor", "harbor-of-moods")
    ]
    seen["stream_status"] = stream

    # The apps' own lines: never anyone's words in memory-lane's record.
    own_lines = [
        said(motion, scribe, Kind.WAKE, "@scribe woke: mentioned by justin · $0.0100"),
        said(motion, scribe, Kind.REQUEST, "scribe asks for full tools"),
        said(motion, scribe, Kind.ERROR, "the harness exited 1", is_error=True),
    ]

    # memory-lane's watcher posts a session nobody has claimed; posted again; then claimed.
    unclaimed = str(uuid.uuid4())
    with (
        tempfile.TemporaryDirectory() as spool,
        override_settings(INGEST_API_KEY="watcher", INGEST_SPOOL_DIR=spool),
    ):
        path = recorded.fresh_terminal_transcript(Path(spool) / "t.jsonl", unclaimed)
        body = {"lines": path.read_text().splitlines(), "username": "justin", "source": "laptop"}

        def ingest() -> dict:
            return client.post(
                "/runner/api/ingest/",
                json.dumps(body),
                content_type="application/json",
                secure=True,
                HTTP_AUTHORIZATION="Bearer watcher",
            ).json()

        ingest()
        ingest()
        before_claim = {
            "host_rows": ml.Message.objects.filter(session_id=unclaimed).count(),
            "with_a_mood": ml.Message.objects.filter(session_id=unclaimed, mood__isnull=False).count(),
            "index_rows": Message.objects.filter(session_id=unclaimed).count(),
        }
        snapshot = {
            str(pk): (sender, json.dumps(content, sort_keys=True))
            for pk, sender, content in ml.Message.objects.filter(session_id=unclaimed).values_list(
                "pk", "sender_id", "content"
            )
        }
        assign_session(UnclaimedSession.objects.get(pk=unclaimed), motion, scribe)
        ingest()
    after = {
        str(pk): (sender, json.dumps(content, sort_keys=True))
        for pk, sender, content in ml.Message.objects.filter(session_id=unclaimed).values_list(
            "pk", "sender_id", "content"
        )
    }
    seen["unclaimed"] = {
        **before_claim,
        "host_rows_after_claim": len(after),
        "in_the_mood_after_claim": ml.Message.objects.filter(session_id=unclaimed, mood=mood).count(),
        "index_rows_after_claim": Message.objects.filter(session_id=unclaimed).count(),
        "rewritten_by_the_claim": sum(1 for pk, row in snapshot.items() if after.get(pk) != row),
    }

    # A post made through memory-lane's own Message model (its composer): it reaches the apps.
    justin = ml.ThinkingEntity.objects.get_or_create(name="justin", defaults={"is_biological_human": True})[0]
    composer_id = uuid.uuid4()
    with transaction.atomic():
        ml.Message.objects.create(
            id=composer_id,
            content="@scribe what does the README say?",
            sender=justin,
            mood=mood,
            source_file="mood-web",
        )
    composer_index = Message.objects.filter(pk=composer_id).first()
    seen["composer_post"] = {
        "in_index": composer_index is not None and composer_index.motion_id == motion.pk,
        "woke": Turn.objects.filter(agent=scribe, motion=motion).exists(),
    }

    # Renamed in memory-lane again, and then in the apps (a Motion's new title).
    mood.refresh_from_db()
    mood.rename("Harbor of all moods")
    motion.refresh_from_db()
    seen["motion_title_after_mood_rename"] = motion.title
    motion.title = "Harbor at dusk"
    motion.save()
    mood.refresh_from_db()
    seen["mood_after_motion_rename"] = [
        mood.slug,
        mood.title,
        sorted(mood.aliases.values_list("slug", flat=True)),
    ]

    # Every name the Mood has had reaches every route.
    person = get_user_model().objects.create_user("justin")
    motion.people.add(person)
    reader = Client(HTTP_HOST=HOST)
    reader.force_login(person)
    routes = {}
    for slug in [mood.slug, *sorted(mood.aliases.values_list("slug", flat=True))]:
        routes[slug] = {
            "stream": post(key, slug, "stream", {"session_id": session, "events": events}),
            "quiet": post(key, slug, "quiet", {"reason": "nothing new", "by": "screen"}),
            "held": post(key, slug, "held", {"reason": ""}),
            "api": client.get(
                f"/runner/api/motions/{slug}/", secure=True, HTTP_AUTHORIZATION=f"Bearer {key}"
            ).status_code,
            "thread": reader.get(f"/runner/motions/{slug}/", secure=True).status_code,
        }
    seen["routes"] = routes
    seen["motions"] = Motion.objects.count()

    # --- read back -------------------------------------------------------------------------
    index = dict(Message.objects.filter(motion=motion).values_list("pk", "kind"))
    host = {row.pk: row for row in ml.Message.objects.filter(mood=mood).select_related("sender")}
    uses = ml.ToolUse.objects.filter(mood=mood)
    results = ml.ToolResult.objects.filter(mood=mood)
    posted = {
        uuid.UUID(e["uuid"])
        for e in [*events, *thinking]
        if e.get("uuid") and e.get("type") in ("assistant", "user")
    }
    # One line stored twice would be two rows for one model response's words (its message id, as
    # the apps' index keeps it), or for one tool call or result; equal words said in two turns are
    # two lines (the recorded session says "Done" in both of its runs).
    responses = list(
        Message.objects.filter(pk__in=list(host), kind=Kind.TEXT, agent__isnull=False)
        .exclude(harness_message_id="")
        .values_list("session_id", "harness_message_id")
    )
    doubled = {
        "tool_uses": uses.count() - len(set(uses.values_list("session_id", "tool_id"))),
        "tool_results": results.count() - len(set(results.values_list("session_id", "tool_use_id"))),
        "agents_words": len(responses) - len(set(responses)),
    }
    seen["record"] = {
        "host_rows": len(host),
        "index_rows": len(index),
        "index_rows_missing_from_host": len(set(index) - set(host)),
        "posted_lines_missing_from_host": len(posted - set(host)),
        "doubled": doubled,
    }
    limit = int(getattr(settings, "TOOL_RESULT_CONTENT_CHARS", 0) or 0)
    timeline = list(mood_view.timeline(mood))
    agents = set(Agent.objects.values_list("name", flat=True))
    not_words = {str(m.id) for m in own_lines} | {
        str(pk) for pk, kind in index.items() if kind not in (Kind.TEXT,)
    }
    steps = [item for item in timeline if item[0] == "step"]
    seen["page"] = {
        "timeline": {
            kind: sum(1 for item in timeline if item[0] == kind) for kind in {i[0] for i in timeline}
        },
        "tool_uses": uses.count(),
        "tool_uses_without_input": sum(1 for u in uses if not (isinstance(u.content, dict) and u.content)),
        "tool_results": results.count(),
        "tool_results_over_the_limit": sum(
            1 for r in results if r.content and len(kept_part(r.content)) > limit
        ),
        "tool_result_content_chars": limit,
        "tool_results_not_by_tool_result": results.exclude(sender_id="tool-result").count(),
        "project_lines_or_results_as_words": sum(
            1 for kind, msg, _ in timeline if kind == "turn" and str(msg.id) in not_words
        ),
        "agent_turns": sum(1 for kind, msg, _ in timeline if kind == "turn" and msg.sender_id in agents),
        "turn_results": ml.Message.objects.filter(mood=mood, content__type="turn-result").count(),
        "turn_results_not_by_system": ml.Message.objects.filter(mood=mood, content__type="turn-result")
        .exclude(sender_id="system")
        .count(),
        "stream_turn_stamped": ml.Message.objects.filter(session_id=session, sender_id="scribe")
        .order_by("-created_at")
        .values_list("stop_reason", flat=True)
        .first(),
        "thoughts": ml.Thought.objects.filter(mood=mood).count(),
        "steps": len(steps),
        "steps_without_summary": sum(1 for _, msg, _ in steps if not mood_view.step_payload(msg)["summary"]),
        "activity": mood_view.activity(mood),
        "payload": {k: v for k, v in mood_view.mood_payload(mood).items() if k in ("slug", "message_count")},
    }
    seen["steering"] = steering(ml, mood, motion, scribe, justin, person)
    # Last, so no figure above counts it: an agent's words carrying a ```handoff block, written
    # by the binding, reach memory-lane's own post_save hook (its signals.py), which carries it.
    jams = ml.Mood.objects.create(slug=ml.Mood.free_slug("Jams"), title="Jams")
    handoff = said(
        motion,
        scribe,
        Kind.TEXT,
        "Taking it over.\n\n```handoff\nto: jams\nabout: the setlist\n---\nsettled\n```",
        source=Source.RUNNER,
    )
    seen["handoff"] = {
        "there": ml.Message.objects.filter(
            mood=jams, source_file="handoff", content__message=str(handoff.id)
        ).count(),
        "here": ml.Message.objects.filter(
            mood=mood, source_file="handoff", content__message=str(handoff.id)
        ).count(),
        "in_the_apps": Message.objects.filter(motion__isnull=False, text__contains="the setlist").count(),
    }
    seen["taken_back"] = taken_back(ml, justin, person)
    return seen


DOOR_CODE = "the door code is 4471, come in"


def taken_back(ml: Any, justin: Any, person: Any) -> dict[str, Any]:
    """A person's post an agent has read, taken back as memory-lane itself takes it back: its own
    `services/retract.py` (`delete`, `edit`), which seals what goes to the recovery key first
    (`services/sealing.py`; a key pair made by its own `new_pair`, as its scripts/recovery_key.py
    does) and leaves a `MessageChange` row. In its own Mood, with its own agent, last: no figure
    above counts it."""
    from conversations.services import retract, sealing
    from django.test import Client, override_settings
    from django.utils import timezone

    from motion_runner.models import Agent, Message, TakenBack, Turn, TurnStatus
    from motion_runner.recall import record as record_server
    from motion_runner.record import binding
    from motion_runner.runner.turns import build_prompt_at_start

    vault = ml.Mood.objects.create(slug=ml.Mood.free_slug("Vault"), title="Vault")
    keeper = Agent.objects.create(name="keeper", harness="claude-code")
    ml.ThinkingEntity.objects.get_or_create(
        name="keeper", defaults={"participant_type": "ai", "is_biological_human": False}
    )
    motion = binding().motion_for_mood(vault)
    motion.agents.add(keeper)
    motion.people.add(person)

    def said_on_the_page(text: str) -> Any:
        return ml.Message.objects.create(
            id=uuid.uuid4(), content=text, sender=justin, mood=vault, source_file="mood-web"
        )

    def woken(text: str) -> Turn:
        """A mention on memory-lane's page; its turn's prompt built as the runner builds it when
        the turn starts, and the turn then ended: a prompt the agent read."""
        before = set(Turn.objects.values_list("pk", flat=True))
        said_on_the_page(text)
        turn = Turn.objects.exclude(pk__in=before).get(agent=keeper, reason="mention")
        build_prompt_at_start(turn)
        Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.FINISHED, ended_at=timezone.now())
        return Turn.objects.get(pk=turn.pk)

    def found(turn: Turn, words: str) -> list[str]:
        return [r["id"] for r in record_server.search(turn, words)["results"]]

    reader = Client(HTTP_HOST=HOST)
    reader.force_login(person)

    def thread_row(message_id: Any) -> dict:
        rows = reader.get(f"/runner/api/motions/{motion.slug}/messages/", secure=True).json()["results"]
        return next((r for r in rows if r["id"] == str(message_id)), {})

    post = said_on_the_page(DOOR_CODE)
    first = woken("@keeper remember that")
    # The prompt's echo in memory-lane's record, as the binding writes a `claude -p` prompt's.
    echo = ml.Message.objects.create(
        id=uuid.uuid4(),
        content={"type": "prompt", "agent": "keeper", "text": first.prompt},
        sender=ml.ConversationParticipant.objects.get_or_create(
            name="system", defaults={"participant_type": "system"}
        )[0],
        mood=vault,
        source_file="ingest-mood-runner",
    )
    seen: dict[str, Any] = {
        "before": {
            "copy": Message.objects.get(pk=post.pk).text,
            "prompt_has_it": "4471" in first.prompt,
            "search": len(found(first, "4471")),
        }
    }
    # The agent kept a note of it in that turn, in its own words (the record server's `remember`).
    noted = record_server.remember(first, "Justin's door code: 4471 (front door)")["kept"]["id"]
    private, public = sealing.new_pair()
    with override_settings(MOOD_RECOVERY_PUBLIC_KEY=public):
        answer = retract.delete(post, "justin")
        sealed = ml.SealedCopy.objects.get(message_id=post.pk, kind="deleted")
        second = woken("@keeper what did I say a moment ago?")
        change = TakenBack.objects.filter(message_id=post.pk).first()
        row = thread_row(post.pk)
        seen["deleted"] = {
            "its_answer": answer,
            "sealed_opens_with_the_key": "4471" in sealing.unseal(sealed.sealed, private).decode(),
            "host_row": ml.Message.objects.get(pk=post.pk).content,
            "copy": Message.objects.get(pk=post.pk).text,
            "taken_back": [change.kind, change.by, change.reached] if change else None,
            "stored_prompt_has_it": "4471" in Turn.objects.get(pk=first.pk).prompt,
            "next_wake_has_it": "4471" in second.prompt,
            "next_wake_reads_it_deleted": f"#m-{post.pk}] [deleted]" in second.prompt,
            "search": found(second, "4471"),
            "read": [m["text"] for m in record_server.read(second, message_id=str(post.pk))["messages"]][:1],
            "read_motion_has_it": "4471" in json.dumps(record_server.read(second, motion=motion.slug)),
            "echo_has_it": "4471" in json.dumps(ml.Message.objects.get(pk=echo.pk).content),
            "note_has_it": "4471" in Message.objects.get(pk=noted).text,
            "its_copy_of_the_note_has_it": "4471" in json.dumps(ml.Message.objects.get(pk=noted).content),
            "thread": [
                row.get("text"),
                (row.get("taken_back") or {}).get("kind"),
                (row.get("taken_back") or {}).get("by"),
            ],
            "anywhere_here": Message.objects.filter(text__contains="4471").count()
            + Turn.objects.filter(prompt__contains="4471").count(),
        }
        meet = said_on_the_page("meet at pier 9")
        retract.edit(meet, "meet at the gate", "justin")
        third = woken("@keeper where do we meet?")
        row = thread_row(meet.pk)
        seen["edited"] = {
            "host_row": ml.Message.objects.get(pk=meet.pk).content,
            "copy": Message.objects.get(pk=meet.pk).text,
            "next_wake_has_old": "pier 9" in third.prompt,
            "next_wake_has_new": "meet at the gate" in third.prompt,
            "search_old": found(third, "pier"),
            "thread": [row.get("text"), (row.get("taken_back") or {}).get("kind")],
        }
    return seen


def steering(ml: Any, mood: Any, motion: Any, agent: Any, justin: Any, person: Any) -> dict[str, Any]:
    """memory-lane's page in command (issue 32): its own settings service and AZ5 row steer the
    apps; the apps' scram and menus land where its own code reads them."""
    from conversations.services import settings as knobs

    from motion_runner.models import Scram
    from motion_runner.runner.stopping import lift_scram, raise_scram
    from wakes.decision.steering import change, steering_for

    knobs.change("listening", "mentions", mood=mood, by=justin)
    seen = {"mentions_here": steering_for(motion.pk, agent.pk).listening}
    ml.Setting.objects.create(key="scram", value=True, set_by=justin, note="AZ5 from memory-lane")
    seen["az5_raised_here"] = Scram.holding() is not None
    ml.Setting.objects.create(key="scram", value=False, set_by=justin, note="all clear")
    seen["az5_lifted_here"] = Scram.holding() is None
    raise_scram("ops", "raised in the apps")
    seen["scram_on_its_page"] = knobs.scram()
    lift_scram("ops")
    seen["scram_on_its_page_after_lift"] = knobs.scram()
    change(motion, agent, "listening", "off", None, person)
    seen["menus_change_in_its_resolve"] = knobs.resolve(mood, agent.name)["listening"]["mode"]
    # Both read the same rows by the same slot order, whatever their age: (Mood, agent) over
    # (Mood, every agent) over (every Mood); rows that widen nothing, so trust plays no part.
    entity = ml.ThinkingEntity.objects.get(name=agent.name)
    knobs.change("verbosity", "brief", mood=mood, agent=entity, by=justin)
    knobs.change("verbosity", "thorough", mood=mood, by=justin)
    knobs.change("discretion", "reserved", by=justin)
    theirs, ours = knobs.resolve(mood, agent.name), steering_for(motion.pk, agent.pk)
    seen["slot_order"] = {
        "verbosity": [theirs["verbosity"], ours.verbosity],
        "discretion": [theirs["discretion"], ours.discretion],
    }
    seen["ultracode_and_timing"] = ultracode_and_timing(ml, knobs, mood, motion, agent, justin, person)
    return seen


def ultracode_and_timing(
    ml: Any, knobs: Any, mood: Any, motion: Any, agent: Any, justin: Any, person: Any
) -> dict:
    """Its ultracode and timing rows, written by its own `settings.change`, are the apps' ultracode
    and dials; the apps' writes are what its own `resolve` and `global_value` read. Rows that widen:
    they count because justin holds an SSH key here."""
    from motion_runner.models import SshKey
    from motion_runner.record import binding
    from wakes.decision.steering import change, steering_for
    from wakes.models import Dials
    from wakes.models.in_force import resolve

    SshKey.objects.create(user=person, public_key="ssh-ed25519 AAAA justin", fingerprint="SHA256:justin")
    entity = ml.ThinkingEntity.objects.get(name=agent.name)
    knobs.change("ultracode", "on", mood=mood, agent=entity, by=justin)
    seen: dict[str, Any] = {"ultracode_here": steering_for(motion.pk, agent.pk).ultracode}
    change(motion, agent, "ultracode", "off", None, person)
    seen["ultracode_in_its_resolve"] = knobs.resolve(mood, agent.name)["ultracode"]
    knobs.change("consider_after", 45, mood=mood, by=justin)
    knobs.change("idle_after", 900, mood=mood, agent=entity, by=justin)
    knobs.change("considers_per_hour", 3, by=justin)
    dials = resolve(motion.pk, agent.pk)
    theirs = knobs.resolve(mood, agent.name)
    seen["timing"] = {
        "theirs": [theirs["consider_after"], theirs["idle_after"], theirs["considers_per_hour"]],
        "ours": [dials.quiet_seconds, dials.idle_seconds, dials.considerations_per_hour],
    }
    record, tick = binding(), Dials.load().tick_seconds
    record.write_timing(motion, "considerations_per_hour", 4, tick, person.get_username())
    record.write_timing(motion, "quiet_seconds", 20.0, tick, person.get_username())
    record.write_daily_budget(Decimal("7.5"), person.get_username())
    theirs = knobs.resolve(mood, agent.name)
    seen["written_here"] = {
        "theirs": [
            theirs["consider_after"],
            theirs["considers_per_hour"],
            knobs.global_value("consider_usd_per_day"),
        ],
        "ours": [
            resolve(motion.pk, agent.pk).quiet_seconds,
            resolve(motion.pk, agent.pk).considerations_per_hour,
            float(resolve(motion.pk, agent.pk).daily_budget_usd),
        ],
    }
    return seen


def mood_view_turn_ends() -> set[str]:
    from conversations.services import mood_view

    return set(mood_view.TURN_ENDS)


def taken_back_facts(seen: dict[str, Any]) -> dict[str, bool]:
    """A post deleted and one edited by memory-lane's own retract (issue 40 item 1)."""
    before, deleted, edited = seen["before"], seen["deleted"], seen["edited"]
    return {
        "before its own retract, the agent's prompt and the record's search hold the post": before["copy"]
        == DOOR_CODE
        and before["prompt_has_it"]
        and before["search"] == 1,
        "its own retract deleted the row, sealed what went to the recovery key and scrubbed no wake of ours": (
            deleted["host_row"] == "[deleted]"
            and deleted["sealed_opens_with_the_key"]
            and deleted["its_answer"]["scrubbed"] == 0
        ),
        "its delete takes the apps' copy back, saying which agent had read it": deleted["copy"] == "[deleted]"
        and deleted["taken_back"] == ["deleted", "justin", ["keeper"]],
        "after its delete the next wake reads the post as deleted, not its words": not deleted[
            "next_wake_has_it"
        ]
        and deleted["next_wake_reads_it_deleted"],
        "after its delete the record's search and read do not return the words": deleted["search"] == []
        and deleted["read"] == ["[deleted]"]
        and not deleted["read_motion_has_it"],
        "after its delete no stored prompt, nor the prompt's echo in its record, holds the words": not deleted[
            "stored_prompt_has_it"
        ]
        and not deleted["echo_has_it"]
        and deleted["anywhere_here"] == 0,
        "after its delete the agent's note of it loses the code, here and in its record": not deleted[
            "note_has_it"
        ]
        and not deleted["its_copy_of_the_note_has_it"],
        "after its delete the thread says it was taken back, and by whom": deleted["thread"]
        == ["[deleted]", "deleted", "justin"],
        "its edit is what the apps hold, the thread shows and the next wake reads": edited["host_row"]
        == "meet at the gate"
        and edited["copy"] == "meet at the gate"
        and edited["thread"] == ["meet at the gate", "edited"]
        and edited["next_wake_has_new"]
        and not edited["next_wake_has_old"]
        and edited["search_old"] == [],
    }


def failures(seen: dict[str, Any]) -> list[str]:
    record, page, unclaimed, steer = seen["record"], seen["page"], seen["unclaimed"], seen["steering"]
    facts = {
        "every stream post answered 200": set(seen["stream_status"]) == {200},
        "every index row is in memory-lane's record": record["index_rows_missing_from_host"] == 0,
        "every posted line is in memory-lane's record": record["posted_lines_missing_from_host"] == 0,
        "nothing doubled": set(record["doubled"].values()) == {0},
        "an unclaimed session's lines are there at once, with no Mood": unclaimed["host_rows"] > 0
        and unclaimed["with_a_mood"] == 0
        and unclaimed["index_rows"] == 0,
        "the claim gives them the Mood, rewrites and doubles none": unclaimed["host_rows_after_claim"]
        == unclaimed["host_rows"]
        == unclaimed["in_the_mood_after_claim"]
        and unclaimed["rewritten_by_the_claim"] == 0
        and unclaimed["index_rows_after_claim"] > 0,
        "a post made in memory-lane reaches the apps and wakes": all(seen["composer_post"].values()),
        "a Mood renamed in memory-lane retitles its Motion": seen["motion_title_after_mood_rename"]
        == "Harbor of all moods",
        "a Motion renamed renames its Mood": seen["mood_after_motion_rename"][:2]
        == ["harbor-at-dusk", "Harbor at dusk"]
        and seen["motions"] == 1,
        "the current slug and every alias reach every route": len(seen["routes"]) == 4
        and all(
            r == {"stream": 200, "quiet": 201, "held": 200, "api": 200, "thread": 200}
            for r in seen["routes"].values()
        ),
        "every ToolUse holds its input": page["tool_uses"] > 0 and page["tool_uses_without_input"] == 0,
        "no tool output beyond TOOL_RESULT_CONTENT_CHARS": page["tool_results"] > 0
        and page["tool_results_over_the_limit"] == 0,
        "tool results are sent by tool-result": page["tool_results_not_by_tool_result"] == 0,
        "no project line or tool result as the agent's words": page["project_lines_or_results_as_words"] == 0
        and page["agent_turns"] > 0,
        "every tool step has a summary": page["steps"] > 0 and page["steps_without_summary"] == 0,
        "a turn's end is system's turn-result, its last line stamped": page["turn_results"] > 0
        and page["turn_results_not_by_system"] == 0
        and page["stream_turn_stamped"] in mood_view_turn_ends(),
        "the model's thinking is a Thought": page["thoughts"] > 0,
        "memory-lane's mentions only is in force here": steer["mentions_here"] == "mentions",
        "memory-lane's AZ5 raises and lifts the scram here": steer["az5_raised_here"]
        and steer["az5_lifted_here"],
        "the apps' scram is on memory-lane's page": (steer["scram_on_its_page"] or {}).get("note")
        == "raised in the apps"
        and steer["scram_on_its_page_after_lift"] is None,
        "a change in the apps' menus is memory-lane's row": steer["menus_change_in_its_resolve"] == "off",
        "an agent's handoff written by the binding is carried by memory-lane's own hook": seen["handoff"]
        == {"there": 1, "here": 1, "in_the_apps": 1},
        "memory-lane's resolve and the apps' steering agree on the slot order": steer["slot_order"]
        == {"verbosity": ["brief", "terse"], "discretion": ["reserved", "reserved"]},
        "its ultracode row is the apps' ultracode, and the menus' is its row": steer["ultracode_and_timing"][
            "ultracode_here"
        ]
        == "on"
        and steer["ultracode_and_timing"]["ultracode_in_its_resolve"] is False,
        "its timing rows are the apps' dials, by the same slot order": steer["ultracode_and_timing"]["timing"]
        == {"theirs": [45, 900, 3], "ours": [45.0, 900.0, 3]},
        "the apps' timing and budget are what its own resolve and global_value read": steer[
            "ultracode_and_timing"
        ]["written_here"]
        == {"theirs": [20, 4, 7.5], "ours": [20.0, 4, 7.5]},
        **taken_back_facts(seen["taken_back"]),
    }
    return [fact for fact, held in facts.items() if not held]


if __name__ == "__main__":
    if len(sys.argv) != 2 or "ML_DATABASE_URL" not in os.environ:
        sys.exit(__doc__)
    figures = main(Path(sys.argv[1]).resolve())
    failed = failures(figures)
    print(json.dumps({**figures, "failed": failed}, default=str, indent=1))
    sys.exit(1 if failed else 0)
