"""The timing knobs memory-lane's people set per Mood (debounce, unprompted looks — 0 never —
considerations per hour) and the global consider $/day, set by the Motion's granters from the
thread's API, not only in the admin. Justin signs in with his SSH key; Rosemary with a password."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from motion_runner.models import Kind, Message
from tests.wakes_support import clock, room, say
from wakes.consider_loop.loop import schedule
from wakes.models import DialOverride, Dials, ListenState
from wakes.models.in_force import resolve

pytestmark = pytest.mark.django_db


def as_person(user, sign_in: str) -> APIClient:
    client = APIClient()
    client.force_login(user)
    session = client.session
    session["sign_in"] = sign_in
    session.save()
    return client


def set_knob(room, who, knob: str, value, sign_in: str = "ssh"):
    return as_person(who, sign_in).post(
        f"/api/motions/{room.motion.slug}/timing/", {"knob": knob, "value": value}, format="json"
    )


def test_a_granter_sets_the_motions_debounce_and_the_thread_says_so(room):
    response = set_knob(room, room.justin, "quiet_seconds", "20")
    assert response.status_code == 201, response.content
    assert resolve(room.motion.pk, room.magent.pk).quiet_seconds == 20
    assert response.json()["motion"]["quiet_seconds"] == {"value": 20.0, "own": True}
    assert Message.objects.filter(
        kind=Kind.WAKE, text__startswith="justin set this Motion's debounce"
    ).exists()


def test_a_blank_value_goes_back_to_the_global_dial(room):
    set_knob(room, room.justin, "considerations_per_hour", "2")
    set_knob(room, room.justin, "considerations_per_hour", "")
    assert (
        resolve(room.motion.pk, room.magent.pk).considerations_per_hour
        == Dials.load().considerations_per_hour
    )


def test_staff_set_the_global_consider_dollars_a_day(room):
    room.justin.is_staff = True
    room.justin.save(update_fields=["is_staff"])
    assert set_knob(room, room.justin, "consider_usd_per_day", "4.50").status_code == 201
    assert Dials.load().daily_budget_usd == Decimal("4.50")


def test_a_granter_who_is_not_staff_may_not_set_the_global_consider_dollars_a_day(room):
    before = Dials.load().daily_budget_usd
    response = set_knob(room, room.justin, "consider_usd_per_day", "1000")  # signed in with SSH
    assert response.status_code == 403
    assert Dials.load().daily_budget_usd == before


def test_someone_who_may_not_grant_is_refused_and_nothing_changes(room):
    response = set_knob(room, room.rosemary, "quiet_seconds", "1", sign_in="password")
    assert response.status_code == 403
    assert not DialOverride.objects.exists()


def test_anonymous_is_refused(room):
    response = APIClient().post(
        f"/api/motions/{room.motion.slug}/timing/", {"knob": "idle_looks", "value": "0"}
    )
    assert response.status_code in (401, 403)


def test_a_value_out_of_range_is_a_clear_error(room):
    response = set_knob(room, room.justin, "considerations_per_hour", "5000")
    assert response.status_code == 400
    assert "between 0 and 120" in str(response.json()["error"])


def test_zero_unprompted_looks_means_never(room, clock):
    set_knob(room, room.justin, "idle_looks", "0")
    say(room.motion, room.justin, "morning", clock)
    state = ListenState.objects.get(motion=room.motion, agent=room.magent)
    state.considered_through = state.last_post_at  # the post was considered: only a long quiet is left
    assert schedule(state, resolve(room.motion.pk, room.magent.pk)) is None


def test_a_reader_sees_the_knobs(room):
    page = as_person(room.rosemary, "password").get(f"/api/motions/{room.motion.slug}/timing/").json()
    assert set(page["motion"]) == {"quiet_seconds", "idle_looks", "considerations_per_hour"}
