"""The room steers its agents from the thread (issue 24): listening (on / mentions only / off,
with "until"), model and effort, discretion, verbosity, a Motion's rules and archived, each
change a row with who and when said in the thread; and the scram that holds every wake.

Personas (tests/wakes_support.py): Justin and Rosemary post from the web and are not staff;
@magent listens in the Motion. Ops is staff."""

# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)
from __future__ import annotations

from datetime import UTC, timedelta

import pytest
from rest_framework.test import APIClient

from motion_runner.models import Kind, Message, Scram, Turn, TurnStatus
from motion_runner.signals import turns_stopped
from tests.factories import MotionFactory, UserFactory
from tests.wakes_support import clock, dials, finish, loop, room, say
from wakes.consider_loop.handlers import check_mentions
from wakes.consider_loop.mention_turns import renew_holds
from wakes.models import DialOverride, MentionWake, Steer
from wakes.models.in_force import resolve
from wakes.turn.footer import finalize_prompt

pytestmark = pytest.mark.django_db


def as_person(user, sign_in: str = "password") -> APIClient:
    client = APIClient()
    client.force_login(user)
    session = client.session
    session["sign_in"] = sign_in
    session.save()
    return client


def steer(
    room, who, setting: str, value: str = "", *, agent: str | None = "magent", until=None, sign_in="password"
):
    body = {"setting": setting, "value": value}
    if agent:
        body["agent"] = agent
    if until is not None:
        body["until"] = until.isoformat()
    return as_person(who, sign_in).post(f"/api/motions/{room.motion.slug}/steer/", body, format="json")


def mention_turns(room) -> list[Turn]:
    return list(Turn.objects.filter(motion=room.motion, agent=room.magent, reason="mention"))


# --- listening --------------------------------------------------------------------------------


def test_mentions_only_stops_considerations_while_a_mention_still_wakes(room, clock, loop):
    response = steer(room, room.justin, "listening", "mentions")
    assert response.status_code == 201, response.content

    say(room.motion, room.rosemary, "shall we ship the merch page?", clock)
    assert loop.run(60) == []  # no consideration: it listens for mentions only
    say(room.motion, room.rosemary, "@magent what do you think?", clock)

    assert len(mention_turns(room)) == 1


def test_a_change_is_a_row_with_who_and_when_said_in_the_thread(room, clock):
    steer(room, room.justin, "listening", "mentions")

    row = Steer.objects.get()
    assert (row.by_name, row.setting, row.value, row.agent) == (
        "justin",
        "listening",
        "mentions",
        room.magent,
    )
    line = Message.objects.get(motion=room.motion, kind=Kind.WAKE)
    assert line.text == "justin set @magent's listening here to mentions only"


def test_listening_back_on_lets_the_loop_consider_again(room, clock, loop):
    steer(room, room.justin, "listening", "mentions")
    say(room.motion, room.rosemary, "the shirts are in", clock)
    assert loop.run(30) == []

    steer(room, room.rosemary, "listening", "on")

    [consideration] = loop.run(30)
    assert "the shirts are in" in consideration.turn.prompt


def test_off_holds_a_mention_and_answers_it_once_listening_is_back(room, clock):
    steer(room, room.justin, "listening", "off")
    say(room.motion, room.rosemary, "@magent are you there?", clock)
    assert mention_turns(room) == []
    assert MentionWake.objects.get().status == MentionWake.Status.HELD
    assert Message.objects.filter(text__contains="mention is held").exists()

    steer(room, room.justin, "listening", "on")

    [turn] = mention_turns(room)
    assert "are you there?" in turn.prompt


def test_off_until_a_time_answers_the_held_mention_when_the_time_passes(room, clock):
    steer(room, room.justin, "listening", "off", until=clock.now() + timedelta(hours=1))
    say(room.motion, room.rosemary, "@magent after lunch?", clock)
    check_mentions(dispatch=False)
    assert mention_turns(room) == []

    clock.advance(hours=1, seconds=1)
    check_mentions(dispatch=False)

    assert len(mention_turns(room)) == 1


def test_an_until_in_the_past_is_refused_and_nothing_is_written(room, clock):
    response = steer(room, room.justin, "listening", "off", until=clock.now() - timedelta(minutes=1))

    assert response.status_code == 400
    assert Steer.objects.count() == 0


def test_an_unknown_value_is_a_clear_error(room, clock):
    response = steer(room, room.justin, "listening", "sometimes")

    assert response.status_code == 400
    assert "listening is one of on, mentions, off" in str(response.json())


def holds_said(room) -> list[dict]:
    return as_person(room.rosemary).get(f"/api/motions/{room.motion.slug}/holds/").json()["holds"]


def held_for_memory_lane(room) -> dict:
    return as_person(room.rosemary).get(f"/api/moods/{room.motion.slug}/held/").json()["held"]


def test_a_mention_held_by_listening_off_is_among_the_holds_until_its_time(room, clock):
    until = clock.now() + timedelta(hours=1)
    steer(room, room.justin, "listening", "off", until=until)
    say(room.motion, room.rosemary, "@magent after lunch?", clock)

    reason = f"hushed until {until.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    [hold] = holds_said(room)
    assert (hold["agent"], hold["by"], hold["reason"]) == ("magent", "rosemary", reason)
    assert held_for_memory_lane(room)["magent"]["reason"] == reason

    clock.advance(hours=1, seconds=1)
    check_mentions(dispatch=False)

    assert holds_said(room) == []
    assert "magent" not in held_for_memory_lane(room)


def test_a_mention_held_without_an_until_says_so_and_is_lifted_once_listening_is_back(room, clock):
    steer(room, room.justin, "listening", "off")
    say(room.motion, room.rosemary, "@magent are you there?", clock)

    [hold] = holds_said(room)
    assert hold["reason"] == "hushed until its listening is back on" and hold["until"] is None
    assert held_for_memory_lane(room)["magent"]["reason"] == "hushed until its listening is back on"

    steer(room, room.justin, "listening", "on")

    assert holds_said(room) == []
    assert "magent" not in held_for_memory_lane(room)


def test_a_stop_lets_go_a_hushed_mention_and_it_leaves_the_holds(room, clock):
    steer(room, room.justin, "listening", "off")
    say(room.motion, room.rosemary, "@magent are you there?", clock)

    turns_stopped.send(sender=Turn, motion=room.motion, agent_names=None, by="justin", at=clock.now())

    assert MentionWake.objects.get().status == MentionWake.Status.LET_GO
    assert holds_said(room) == []
    assert "magent" not in held_for_memory_lane(room)


def test_a_stop_says_in_the_thread_whose_waiting_mention_it_let_go(room, clock):
    """A mention still waiting when someone presses ■ is never answered: the thread says so, once,
    naming who asked, so the asker is not left waiting for an answer that will not come."""
    steer(room, room.justin, "listening", "off")
    say(room.motion, room.rosemary, "@magent are you there?", clock)

    for _ in range(2):  # the signal heard twice: said once
        turns_stopped.send(
            sender=Turn, motion=room.motion, agent_names=["magent"], by="justin", at=clock.now()
        )

    record = MentionWake.objects.get()
    assert record.status == MentionWake.Status.LET_GO and "justin" in record.hold
    (said,) = Message.objects.filter(motion=room.motion, kind=Kind.WAKE, text__contains="let go")
    assert said.agent == room.magent
    assert "justin" in said.text and "rosemary" in said.text and "@magent" in said.text
    assert holds_said(room) == []


def test_a_stop_with_nothing_waiting_says_nothing_more(room, clock):
    say(room.motion, room.rosemary, "no mention here", clock)

    turns_stopped.send(sender=Turn, motion=room.motion, agent_names=None, by="justin", at=clock.now())

    assert not Message.objects.filter(motion=room.motion, kind=Kind.WAKE, text__contains="let go").exists()


# --- reads ------------------------------------------------------------------------------------


def test_the_reads_a_person_sets_in_the_thread_bound_what_the_next_wake_quotes(room, clock, settings):
    settings.WAKES_SCREEN_API_KEY = ""
    say(room.motion, room.justin, "the old plan " + "a" * 3000, clock)
    for n in range(3):  # about 12,000 characters in all: within the default 10,000 tokens
        say(room.motion, room.justin, f"post {n} " + "b" * 3000, clock.advance(1) and clock)
    response = steer(room, room.rosemary, "reads", "2000", sign_in="ssh")  # about 8,000 characters
    assert response.status_code == 201, response.content

    say(room.motion, room.justin, "@magent what now?", clock.advance(1) and clock)

    [turn] = mention_turns(room)
    assert "earlier posts not shown" in turn.prompt
    assert "the old plan" not in turn.prompt and "post 0 " not in turn.prompt
    assert "post 2 " in turn.prompt and "@magent what now?" in turn.prompt


def test_the_threads_reads_win_over_the_admins_override_until_its_until(room, clock):
    dials(reads=10_000)
    DialOverride.objects.create(motion=room.motion, agent=room.magent, reads=40_000)
    steer(room, room.rosemary, "reads", "2000", sign_in="ssh", until=clock.now() + timedelta(hours=1))

    assert resolve(room.motion.pk, room.magent.pk).reads == 2000
    clock.advance(hours=1, seconds=1)
    assert resolve(room.motion.pk, room.magent.pk).reads == 40_000


def test_a_reads_word_from_before_the_menu_offered_budgets_leaves_the_dial_standing(room, clock):
    dials(reads=10_000)
    Steer.objects.create(
        motion=room.motion,
        agent=room.magent,
        setting="reads",
        value="thread",
        by_name="justin",
        at=clock.now(),
    )

    assert resolve(room.motion.pk, room.magent.pk).reads == 10_000


def test_reads_is_a_token_budget_from_the_menu(room, clock):
    response = steer(room, room.rosemary, "reads", "thread", sign_in="ssh")

    assert response.status_code == 400
    assert "reads is one of 2000, 10000, 40000" in str(response.json())
    assert Steer.objects.count() == 0


# --- who may ----------------------------------------------------------------------------------


def test_someone_who_may_not_post_cannot_change_the_menus(room, clock):
    anonymous = APIClient().post(
        f"/api/motions/{room.motion.slug}/steer/", {"setting": "listening", "value": "off"}, format="json"
    )
    members_only = MotionFactory(slug="backstage", visibility="members")
    members_only.agents.add(room.magent)
    outsider = as_person(room.rosemary).post(
        "/api/motions/backstage/steer/",
        {"agent": "magent", "setting": "listening", "value": "off"},
        format="json",
    )

    assert anonymous.status_code in (401, 403)
    assert outsider.status_code == 404
    assert Steer.objects.count() == 0


def test_widening_spend_needs_someone_who_may_grant(room, clock):
    refused = steer(room, room.justin, "mention_effort", "max")
    granted = steer(room, room.rosemary, "mention_effort", "max", sign_in="ssh")

    assert refused.status_code == 403
    assert "widens" in refused.json()["error"]["detail"]
    assert granted.status_code == 201


@pytest.mark.parametrize(
    ("setting", "value"), [("model", "claude-haiku-4-5"), ("mention_effort", "max"), ("reads", "40000")]
)
def test_the_first_run_account_sets_the_readmes_menus_while_debug_is_on(
    room, clock, settings, setting, value
):
    settings.DEBUG = True
    settings.MOTION_RUNNER_FIRST_RUN_GRANTS = [room.justin.username]  # justin plays bin/serve's demo

    assert steer(room, room.justin, setting, value).status_code == 201


def test_the_first_run_account_never_sets_the_rules_every_wake_obeys(room, clock, settings):
    settings.DEBUG = True
    settings.MOTION_RUNNER_FIRST_RUN_GRANTS = [room.justin.username]

    refused = steer(room, room.justin, "rules", "curl it | sh", agent=None)
    menus = as_person(room.justin).get(f"/api/motions/{room.motion.slug}/steer/").json()

    assert refused.status_code == 403
    assert (menus["can_widen"], menus["can_set_rules"]) == (True, False)


def test_production_settings_refuse_the_first_run_accounts_menus(room, clock, settings):
    settings.DEBUG = False
    settings.MOTION_RUNNER_FIRST_RUN_GRANTS = [room.justin.username]

    refused = steer(room, room.justin, "model", "claude-opus-4-1")

    assert refused.status_code == 403 and "widens" in refused.json()["error"]["detail"]


def test_making_an_agent_chatty_skips_its_screen_so_it_needs_someone_who_may_grant(room, clock):
    refused = steer(room, room.justin, "discretion", "chatty")
    reserved = steer(room, room.justin, "discretion", "reserved")  # narrowing: anyone who may post
    granted = steer(room, room.rosemary, "discretion", "chatty", sign_in="ssh")

    assert refused.status_code == 403 and "widens" in refused.json()["error"]["detail"]
    assert reserved.status_code == 201 and granted.status_code == 201


def test_the_rooms_effort_and_model_are_what_a_mention_wakes_with(room, clock):
    steer(room, room.rosemary, "mention_effort", "low", sign_in="ssh")
    steer(room, room.rosemary, "model", "claude-haiku-4-5", sign_in="ssh")

    say(room.motion, room.justin, "@magent quick one", clock)

    [turn] = mention_turns(room)
    assert (turn.effort, turn.model) == ("low", "claude-haiku-4-5")


# --- the Motion's own settings --------------------------------------------------------------------


def test_the_rules_are_said_in_every_wake(room, clock):
    steer(room, room.rosemary, "rules", "No spoilers for the album before Friday.", agent=None, sign_in="ssh")
    steer(room, room.justin, "discretion", "reserved")

    prompt = finalize_prompt("New posts…", room.motion, room.magent, "look", "new_posts")

    assert "No spoilers for the album before Friday." in prompt
    assert "Be reserved here" in prompt


def test_an_archived_motion_gets_no_unprompted_look_but_mentions_are_answered(room, clock, loop):
    steer(room, room.justin, "archived", "yes", agent=None)

    say(room.motion, room.rosemary, "anyone?", clock)
    assert loop.run(60) == []
    say(room.motion, room.rosemary, "@magent anyone?", clock)

    assert len(mention_turns(room)) == 1


def test_the_menus_read_back_what_is_in_force_and_who_set_it(room, clock):
    steer(room, room.justin, "verbosity", "terse")

    menus = as_person(room.rosemary).get(f"/api/motions/{room.motion.slug}/steer/").json()

    [magent] = menus["agents"]
    assert magent["verbosity"] == "terse" and magent["listening"] == "on"
    assert magent["set_by"]["verbosity"].startswith("justin, ")
    assert menus["changes"][0]["text"] == "justin set @magent's verbosity here to terse"
    assert menus["can_widen"] is False


# --- scram --------------------------------------------------------------------------------------


@pytest.fixture
def ops():
    return UserFactory(username="ops", is_staff=True)


def test_a_scram_makes_a_mention_wake_nothing_and_lifting_it_restores_wakes(room, clock, ops):
    raised = as_person(ops).post("/api/scram/", {"reason": "runaway spend"}, format="json")
    assert raised.status_code == 201, raised.content

    say(room.motion, room.justin, "@magent hello?", clock)
    assert mention_turns(room) == []
    assert as_person(room.justin).get("/api/scram/").json()["scram"]["reason"] == "runaway spend"

    assert as_person(ops).delete("/api/scram/").status_code == 200
    say(room.motion, room.justin, "@magent hello again?", clock)
    assert len(mention_turns(room)) == 1


def test_a_command_not_run_during_a_scram_is_never_shown_as_a_hold(room, clock, ops):
    """Its row keeps why it was not run (the scram), but it is let go, not held: neither the holds
    nor the 30-second renewal of holds show it, during the scram or after its lift."""
    as_person(ops).post("/api/scram/", {"reason": "runaway spend"}, format="json")
    say(room.motion, room.justin, "@magent /context", clock)
    assert MentionWake.objects.get().status == MentionWake.Status.LET_GO

    assert holds_said(room) == []
    assert renew_holds() == 0
    as_person(ops).delete("/api/scram/")
    assert holds_said(room) == []
    assert renew_holds() == 0


def test_a_scram_holds_the_loop_too(room, clock, loop, ops):
    as_person(ops).post("/api/scram/", {"reason": "maintenance"}, format="json")
    say(room.motion, room.justin, "the shirts are in", clock)

    assert loop.run(60) == []


def test_a_scram_ends_queued_turns_and_they_never_start(room, clock, ops):
    say(room.motion, room.justin, "@magent go", clock)
    [turn] = mention_turns(room)

    as_person(ops).post("/api/scram/", {"reason": "stop everything"}, format="json")

    turn.refresh_from_db()
    assert turn.status == TurnStatus.KILLED
    assert "scram: stop everything" in turn.error


def test_only_staff_and_people_the_dial_names_may_scram(room, clock):
    refused = as_person(room.justin).post("/api/scram/", {"reason": "why not"}, format="json")
    dials(scram_for=["justin"])
    allowed = as_person(room.justin).post("/api/scram/", {"reason": "named by the dial"}, format="json")

    assert refused.status_code == 403
    assert allowed.status_code == 201
    assert Scram.holding().raised_by == "justin"


def test_a_scram_needs_a_reason(room, clock, ops):
    response = as_person(ops).post("/api/scram/", {}, format="json")

    assert response.status_code == 400
    assert Scram.holding() is None


def test_the_thread_poll_says_a_scram_holds(room, clock, ops):
    as_person(ops).post("/api/scram/", {"reason": "runaway spend"}, format="json")

    page = as_person(room.justin).get(f"/api/motions/{room.motion.slug}/messages/").json()

    assert page["scram"]["reason"] == "runaway spend"
    assert page["scram"]["raised_by"] == "ops"


def test_mentions_only_until_a_time_lets_the_loop_look_again_by_itself(room, clock, loop):
    steer(room, room.justin, "listening", "mentions", until=clock.now() + timedelta(minutes=30))
    say(room.motion, room.rosemary, "posted during the hush", clock)
    assert loop.run(60) == []

    clock.advance(minutes=30)

    [consideration] = loop.run(30)
    assert "posted during the hush" in consideration.turn.prompt
