"""Notices: a person's @mention answered by an agent is kept for them (seen/unseen), listed in
the header and at GET /api/notices/ for that person alone, and pushed to the browsers they
subscribed."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from motion_runner.models import Message, Turn
from motion_runner.signals import message_created
from tests.factories import MessageFactory
from tests.wakes_support import clock, room, say
from wakes.models import Notice
from wakes.notices import answers, push

pytestmark = pytest.mark.django_db


def reply(turn: Turn, text: str) -> Message:
    """The agent's post in its turn, announced as the write path announces it."""
    message = MessageFactory(
        motion=turn.motion, agent=turn.agent, sender=turn.agent.name, source="runner", turn=turn, text=text
    )
    message_created.send(sender=Message, message=message, newest_of_batch=True)
    return message


def signed_in(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.fixture
def pushes(monkeypatch):
    sent = []
    monkeypatch.setattr(answers, "send_when_broker_answers", lambda name, *args: sent.append((name, args)))
    return sent


@pytest.fixture
def answered(room, clock, pushes, django_capture_on_commit_callbacks):
    """Justin asked @magent; its turn answered."""
    mention = say(room.motion, room.justin, "@magent are the shirts in?", clock)
    turn = Turn.objects.get(agent=room.magent)
    with django_capture_on_commit_callbacks(execute=True):
        answer = reply(turn, "Yes: 40 shirts came on Tuesday.")
    return mention, answer


def test_an_answered_mention_is_a_notice_for_the_person_who_asked(room, answered, pushes):
    mention, answer = answered
    notice = Notice.objects.get()
    assert (notice.person, notice.agent, notice.mention, notice.answer) == (
        room.justin,
        room.magent,
        mention,
        answer,
    )
    assert notice.seen_at is None
    assert pushes == [("wakes.push_notices", ([notice.pk],))]


def test_a_second_post_of_the_same_turn_makes_no_second_notice(room, answered):
    reply(Turn.objects.get(agent=room.magent), "Also: the posters are late.")
    assert Notice.objects.count() == 1


def test_a_silent_turn_answers_nobody(room, clock, pushes):
    say(room.motion, room.justin, "@magent thanks!", clock)
    reply(Turn.objects.get(agent=room.magent), "<silent>nothing to add</silent>")
    assert not Notice.objects.exists()
    assert pushes == []


def test_an_agents_mention_makes_no_notice(room, clock):
    room.motion.agents.add(room.codey)
    say(room.motion, room.codey, "@magent what do you think?", clock)
    turn = Turn.objects.get(agent=room.magent)
    reply(turn, "I think yes.")
    assert not Notice.objects.exists()


def test_each_person_whose_mention_the_turn_answers_gets_their_own(room, clock):
    say(room.motion, room.justin, "@magent shirts?", clock)
    say(room.motion, room.rosemary, "@magent posters?", clock.advance(1) and clock)
    reply(Turn.objects.get(agent=room.magent), "Both are in.")
    assert sorted(Notice.objects.values_list("person__username", flat=True)) == ["justin", "rosemary"]


# --- GET /api/notices/ and marking seen ---------------------------------------------------------


def test_a_person_reads_their_own_notices(room, answered):
    page = signed_in(room.justin).get("/api/notices/").json()
    assert page["unseen"] == 1
    (notice,) = page["notices"]
    assert notice["agent"] == "magent"
    assert notice["snippet"] == "Yes: 40 shirts came on Tuesday."
    assert notice["url"].endswith(f"#m-{answered[1].pk}")
    assert notice["seen"] is False


def test_anonymous_is_refused(answered):
    response = APIClient().get("/api/notices/")
    assert response.status_code in (401, 403)
    assert "notices" not in response.json()


def test_another_person_sees_none_of_them(room, answered):
    assert signed_in(room.rosemary).get("/api/notices/").json() == {"unseen": 0, "notices": []}


def test_asking_for_another_persons_notices_is_refused(room, answered):
    response = signed_in(room.rosemary).get("/api/notices/?person=justin")
    assert response.status_code == 403


def test_an_agent_key_is_refused(room, answered, capsys):
    call_command("agent_key", "magent", label="laptop")
    key = capsys.readouterr().out.strip()
    response = APIClient().get("/api/notices/", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 403


def test_marking_seen_clears_the_unseen_count(room, answered):
    client = signed_in(room.justin)
    notice = Notice.objects.get()
    page = client.post("/api/notices/seen/", {"ids": [notice.pk]}, format="json").json()
    assert page["unseen"] == 0
    assert page["notices"][0]["seen"] is True


def test_marking_another_persons_notice_is_refused_and_changes_nothing(room, answered):
    notice = Notice.objects.get()
    response = signed_in(room.rosemary).post("/api/notices/seen/", {"ids": [notice.pk]}, format="json")
    assert response.status_code == 403
    notice.refresh_from_db()
    assert notice.seen_at is None


def test_marking_nothing_is_a_clear_error(room, answered):
    response = signed_in(room.justin).post("/api/notices/seen/", {}, format="json")
    assert response.status_code == 400
    assert "ids" in str(response.json()["error"])


def test_the_header_shows_the_unseen_count(room, answered):
    client = signed_in(room.justin)
    page = client.get("/").content.decode()
    assert 'class="notices-unseen" data-count="1"' in page
    assert "@magent answered you in" in page


def test_a_notice_in_a_motion_the_person_may_no_longer_read_is_not_listed(room, answered):
    room.motion.visibility = "members"
    room.motion.save()
    assert signed_in(room.justin).get("/api/notices/").json()["notices"] == []


def test_a_notice_and_its_push_show_the_answers_words_without_their_markdown(
    room, clock, pushes, django_capture_on_commit_callbacks
):
    """Issue 43.4: "**40 shirts**" was shown with its stars."""
    say(room.motion, room.justin, "@magent are the shirts in?", clock)
    with django_capture_on_commit_callbacks(execute=True):
        reply(Turn.objects.get(agent=room.magent), "Yes: **40 shirts** came:\n\n- `blue`\n- red")

    (notice,) = signed_in(room.justin).get("/api/notices/").json()["notices"]

    assert notice["snippet"] == "Yes: 40 shirts came: blue red"
    assert push.notification(Notice.objects.get())["body"].endswith(": Yes: 40 shirts came: blue red")
