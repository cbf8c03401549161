"""Taking back what was said (issue 40 item 1): the words leave every place they were read. A test
per place: the apps' copy, the record server's search and read, the next wake, a stored prompt, a
digest that may have summarized it, a handoff's context, an agent's notes, a turn's skipped harness
lines, the session a turn read it in, the wake preview page, the rendered cache."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from motion_runner.harnesses import Event, EventKind
from motion_runner.ingest.sessions import latest_session
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import Kind, Message, MotionSession, Source, TakenBack, Turn, TurnStatus
from motion_runner.recall import record
from motion_runner.retract import DELETED, EDITED, take_back
from motion_runner.runner.turns import build_prompt_at_start
from motion_runner.thread.markup import RENDERING, html_for
from tests.factories import MessageFactory, MotionFactory, TurnFactory
from tests.fakes.anthropic_api import FakeAnthropic, Reply, Text, Usage
from tests.wakes_support import clock, dials, finish, room, say
from wakes.turn.context import mention_prompt
from wakes.turn.handoff import handed_over

pytestmark = pytest.mark.django_db

CODE = "the door code is 4471, come in"


def started(turn: Turn) -> str:
    build_prompt_at_start(turn)
    return turn.prompt


def mention_turn(room, clock, text="@magent what did I say a moment ago?") -> Turn:
    say(room.motion, room.justin, text, clock.advance(1) and clock)
    return Turn.objects.filter(agent=room.magent, reason="mention").latest("pk")


def stored(turn: Turn) -> str:
    return Turn.objects.get(pk=turn.pk).prompt


# --- the apps' copy ---------------------------------------------------------------------------


def test_the_post_itself_says_deleted_and_keeps_no_raw_line(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    Message.objects.filter(pk=post.pk).update(raw={"message": {"content": CODE}})

    take_back(post, "justin")

    post.refresh_from_db()
    assert post.text == DELETED and post.raw is None


# --- the record server ------------------------------------------------------------------------


def test_the_record_servers_search_no_longer_finds_it(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    turn = TurnFactory(motion=room.motion, agent=room.magent)
    assert [r["id"] for r in record.search(turn, "4471")["results"]] == [str(post.pk)]

    take_back(post, "justin")

    assert record.search(turn, "4471")["results"] == []
    assert record.search(turn, "door code")["results"] == []


def test_the_record_servers_read_reads_it_as_it_now_stands(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    turn = TurnFactory(motion=room.motion, agent=room.magent)

    take_back(post, "justin", "see you at the gate")

    around = record.read(turn, message_id=str(post.pk))
    assert [m["text"] for m in around["messages"]] == ["see you at the gate"]
    assert CODE not in str(record.read(turn, motion=room.motion.slug))


# --- wakes ------------------------------------------------------------------------------------


def test_the_next_wake_reads_the_post_as_it_now_stands(room, clock):
    post = say(room.motion, room.justin, CODE, clock)

    take_back(post, "justin")
    prompt = started(mention_turn(room, clock))

    assert "4471" not in prompt
    assert f"#m-{post.pk}] {DELETED}" in prompt


def test_a_stored_prompt_that_quoted_it_is_scrubbed_and_its_agent_is_said_reached(room, clock):
    post = say(room.motion, room.justin, "first line stays private\n" + CODE, clock)
    other = say(room.motion, room.rosemary, "the shirts are in", clock.advance(1) and clock)
    turn = mention_turn(room, clock)
    prompt = started(turn)
    Turn.objects.filter(pk=turn.pk).update(prompt=prompt)
    finish(turn, said="you said the code")
    assert "4471" in stored(turn)

    change = take_back(post, "justin")

    after = stored(turn)
    assert "4471" not in after and "first line stays private" not in after
    assert f"#m-{post.pk}] {DELETED}" in after
    assert f"#m-{other.pk}] the shirts are in" in after  # the rest as it was
    assert change.reached == ["magent"] and change.scrubbed >= 1


def test_a_turn_queued_before_the_post_that_quoted_it_when_it_started_is_scrubbed(room, clock):
    """Its prompt is made when it starts (build_prompt_at_start), so it reads what was said while
    it waited (found by the room simulation, seed 151: a reply taken back stayed in such a wake)."""
    turn = mention_turn(room, clock)
    post = say(room.motion, room.justin, CODE, clock.advance(2) and clock)
    queued = post.created_at - timedelta(seconds=2)
    Turn.objects.filter(pk=turn.pk).update(
        queued_at=queued, started_at=post.created_at + timedelta(seconds=1)
    )
    Turn.objects.filter(pk=turn.pk).update(prompt=started(turn))
    assert "4471" in stored(turn)

    take_back(post, "justin")

    assert "4471" not in stored(turn)


def test_the_whole_quote_goes_even_a_line_too_short_to_scrub_by_itself(room, clock):
    post = say(room.motion, room.justin, "the gate:\n471\nok", clock)
    turn = mention_turn(room, clock)
    Turn.objects.filter(pk=turn.pk).update(prompt=started(turn))
    assert "\n    471\n" in stored(turn)

    take_back(post, "justin")

    assert "\n    471" not in stored(turn) and "\n    ok" not in stored(turn)
    assert f"#m-{post.pk}] {DELETED}" in stored(turn)


def test_an_edit_marks_the_stored_quote_edited(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    turn = mention_turn(room, clock)
    Turn.objects.filter(pk=turn.pk).update(prompt=started(turn))

    take_back(post, "justin", "come by any time")

    assert "4471" not in stored(turn) and f"#m-{post.pk}] {EDITED}" in stored(turn)


def test_a_queued_turn_is_scrubbed_but_no_agent_has_read_it(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    turn = mention_turn(room, clock)
    Turn.objects.filter(pk=turn.pk).update(prompt=started(turn), status=TurnStatus.QUEUED)

    change = take_back(post, "justin")

    assert "4471" not in stored(turn) and change.reached == []


def test_a_stored_prompt_of_another_motion_that_copied_the_words_is_scrubbed(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    elsewhere = TurnFactory(
        motion=MotionFactory(slug="jams"),
        agent=room.magent,
        prompt=f"someone said: {CODE}\nthe end",
        queued_at=clock.advance(1),
    )

    take_back(post, "justin")

    assert stored(elsewhere) == f"someone said: {DELETED}\nthe end"


def test_a_digest_that_may_have_summarized_it_is_withdrawn(room, clock, settings):
    dials(reads=100)  # about 400 characters: the older posts are summarized
    with FakeAnthropic(
        default=Reply(
            Text("Justin gave the door code, 4471."), usage=Usage(input_tokens=900, output_tokens=20)
        )
    ) as fake:
        settings.WAKES_SCREEN_API_BASE = fake.url
        settings.WAKES_SCREEN_API_KEY = "sk-test-screen"
        post = say(room.motion, room.justin, CODE + " " + "b" * 150, clock)
        for n in range(4):
            say(room.motion, room.rosemary, f"post {n} " + "b" * 150, clock.advance(1) and clock)
        turn = mention_turn(room, clock)
        Turn.objects.filter(pk=turn.pk).update(prompt=started(turn))
    assert "Justin gave the door code, 4471." in stored(turn)

    take_back(post, "justin")

    assert "4471" not in stored(turn)
    assert "[summary withdrawn: a post it covered was taken back]" in stored(turn)


def test_a_digest_that_began_after_the_post_is_kept(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    later = say(room.motion, room.rosemary, "a later post", clock.advance(1) and clock)
    prompt = (
        f"(3 earlier posts (from /motions/{room.motion.slug}/#m-{later.pk}), summarized:)\n"
        "    They talked about shirts."
    )
    turn = TurnFactory(motion=room.motion, agent=room.magent, prompt=prompt)

    take_back(post, "justin")

    assert stored(turn) == prompt


# --- handoffs ---------------------------------------------------------------------------------


def test_a_handoffs_context_and_the_reply_that_carried_it_lose_the_words(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    jams = MotionFactory(slug="jams", title="Jams")
    jams.agents.add(room.magent)
    context = f"Justin said: {CODE}"
    reply = MessageFactory(
        motion=room.motion,
        sender="magent",
        agent=room.magent,
        source=Source.RUNNER,
        text=f"Taking it over.\n```handoff\nto: jams\n---\n{context}\n```",
        created_at=clock.advance(1),
    )
    MessageFactory(
        motion=jams,
        sender="magent",
        agent=room.magent,
        source=Source.SYSTEM,
        text=f"↪ Handed over by @magent\n\n{context}",
        raw={"handoff": {"from": room.motion.pk, "for": "magent", "context": context}},
        created_at=clock.advance(1),
    )
    assert "4471" in handed_over(jams, room.magent, None)

    take_back(post, "justin")

    assert "4471" not in handed_over(jams, room.magent, None)
    assert not Message.objects.filter(text__contains="4471").exists()
    assert (
        Message.objects.get(raw__handoff__for="magent").raw["handoff"]["context"] == f"Justin said: {DELETED}"
    )
    assert "```handoff" in Message.objects.get(pk=reply.pk).text


def test_an_agents_ordinary_reply_is_its_own_words(room, clock):
    """As memory-lane: what an agent said in answer stays its own (the reached list says it saw it)."""
    post = say(room.motion, room.justin, CODE, clock)
    reply = say(room.motion, room.magent, f"noted: {CODE}", clock.advance(1) and clock)

    take_back(post, "justin")

    assert Message.objects.get(pk=reply.pk).text == f"noted: {CODE}"
    assert Message.objects.get(pk=post.pk).text == DELETED


# --- an agent's notes (remember), read back at later wakes --------------------------------------


def note(room, turn, text: str, clock) -> Message:
    """A note the agent kept with `remember` in that turn (recall/record.py writes it so)."""
    return MessageFactory(
        motion=turn.motion,
        sender=room.magent.name,
        agent=room.magent,
        source=Source.RUNNER,
        kind=Kind.NOTE,
        turn=turn,
        text=text,
        created_at=clock.advance(1),
    )


def read_the_post(room, clock) -> Turn:
    """A mention turn that quoted the thread, the post in it, and ended: its agent read it."""
    turn = mention_turn(room, clock, "@magent remember that")
    Turn.objects.filter(pk=turn.pk).update(prompt=started(turn))
    return finish(turn, said="noted")


def test_a_note_written_in_a_turn_that_read_it_loses_its_codes(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    kept = note(room, read_the_post(room, clock), "Justin's door code: 4471 (front door)", clock)

    take_back(post, "justin")

    assert Message.objects.get(pk=kept.pk).text == f"Justin's door code: {DELETED} (front door)"


def test_the_record_servers_search_no_longer_finds_it_in_a_note(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    note(room, read_the_post(room, clock), "remember: door 4471", clock)
    later = TurnFactory(motion=room.motion, agent=room.magent)
    assert len(record.search(later, "4471")["results"]) == 2  # the post and the note

    take_back(post, "justin")

    assert record.search(later, "4471")["results"] == []


def test_a_note_anywhere_that_copied_a_line_of_it_loses_the_line(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    elsewhere = TurnFactory(motion=MotionFactory(slug="jams"), agent=room.magent)
    kept = note(room, elsewhere, f"heard in cryptograss: {CODE}", clock)

    take_back(post, "justin")

    assert Message.objects.get(pk=kept.pk).text == f"heard in cryptograss: {DELETED}"


def test_a_note_of_a_turn_that_never_read_it_keeps_its_codes(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    elsewhere = TurnFactory(
        motion=MotionFactory(slug="jams"), agent=room.magent, prompt="@magent book a room"
    )
    kept = note(room, elsewhere, "booked room 4471 for the jam", clock)

    take_back(post, "justin")

    assert Message.objects.get(pk=kept.pk).text == "booked room 4471 for the jam"


# --- the harness's own session ------------------------------------------------------------------


def test_the_session_that_read_it_is_never_resumed(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    MotionSession.objects.create(session_id="s-read", motion=room.motion, agent=room.magent)
    read_the_post(room, clock)
    assert latest_session(room.motion, room.magent) == "s-read"

    take_back(post, "justin")

    assert latest_session(room.motion, room.magent) is None


def test_a_session_in_a_motion_where_no_turn_read_it_is_resumed(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    jams = MotionFactory(slug="jams")
    MotionSession.objects.create(session_id="s-jams", motion=jams, agent=room.magent)
    read_the_post(room, clock)

    take_back(post, "justin")

    assert latest_session(jams, room.magent) == "s-jams"


def running(turn: Turn) -> Turn:
    """The turn taken by a worker, its prompt made from the record as it stands: it is reading."""
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.RUNNING, started_at=timezone.now())
    turn.refresh_from_db()
    Turn.objects.filter(pk=turn.pk).update(prompt=started(turn))
    return turn


def its_harness_names_its_session(turn: Turn, session_id: str) -> None:
    """The harness's init line (Claude Code's, with its session_id), written as the runner writes it."""
    context = IngestContext(
        motion=turn.motion, agent=turn.agent, harness=turn.agent.harness, source="runner", turn=turn
    )
    EventWriter(context).write(Event(EventKind.INIT, session_id=session_id))


def test_a_session_a_running_turn_names_only_after_the_take_back_is_never_resumed(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    reading = running(mention_turn(room, clock, "@magent remember that"))

    take_back(post, "justin")
    its_harness_names_its_session(reading, "s-late")
    finish(reading, said="noted")

    assert latest_session(room.motion, room.magent) is None


def test_a_turn_running_on_a_session_that_held_it_forks_one_never_resumed(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    MotionSession.objects.create(session_id="s-read", motion=room.motion, agent=room.magent)
    Turn.objects.filter(pk=read_the_post(room, clock).pk).update(session_id="s-read")
    compacting = TurnFactory(
        motion=room.motion, agent=room.magent, prompt="/compact", reason="compact", status=TurnStatus.RUNNING
    )

    take_back(post, "justin")
    its_harness_names_its_session(compacting, "s-forked")  # --fork-session: an id of its own

    assert latest_session(room.motion, room.magent) is None


def test_a_turn_that_starts_after_the_take_back_keeps_its_session(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    waiting = mention_turn(room, clock, "@magent what did I say a moment ago?")

    take_back(post, "justin")
    reading = running(waiting)
    its_harness_names_its_session(reading, "s-after")

    assert "4471" not in stored(reading)
    assert latest_session(room.motion, room.magent) == "s-after"


# --- the harness's skipped lines --------------------------------------------------------------


def test_a_turns_skipped_harness_lines_lose_the_words(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    turn = read_the_post(room, clock)
    Turn.objects.filter(pk=turn.pk).update(raw_log=[{"type": "echo", "prompt": f"[justin] {CODE}"}])

    take_back(post, "justin")

    assert Turn.objects.get(pk=turn.pk).raw_log == [{"type": "echo", "prompt": f"[justin] {DELETED}"}]


# --- the page ---------------------------------------------------------------------------------


def test_the_wake_preview_page_no_longer_shows_it(client, room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    client.force_login(room.justin)
    assert "4471" in client.get(f"/motions/{room.motion.slug}/wakes/").content.decode()

    take_back(post, "justin")

    page = client.get(f"/motions/{room.motion.slug}/wakes/").content.decode()
    assert "4471" not in page and DELETED in page


def test_its_rendering_leaves_the_shared_cache(room, clock):
    import hashlib

    post = say(room.motion, room.justin, CODE, clock)
    html_for(Kind.TEXT, CODE)
    digest = hashlib.blake2b(CODE.encode(), digest_size=20).hexdigest()
    key = f"motion_runner:markdown:{RENDERING}:{digest}"
    assert cache.get(key) is not None

    take_back(post, "justin")

    assert cache.get(key) is None


def test_deleting_twice_changes_nothing_more(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    first = take_back(post, "justin")
    again = take_back(post, "ops")
    assert again.by == "justin" and first.at == again.at
    assert TakenBack.objects.count() == 1
