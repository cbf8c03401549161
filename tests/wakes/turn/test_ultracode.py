"""Ultracode per Motion and agent (issue 33): the room's `ultracode` setting, set in the thread's
menus only by someone who may grant full tools, rides on a trusted full-tools mention as
memory-lane's poller passes it (`--settings {"ultracode": true}`), never on a look-only wake nor on
an unprompted one.

Personas (tests/wakes_support.py): Justin signs in with his SSH key (he may grant full tools);
Rosemary signs in with a password (she may not); @magent listens in the Motion."""

# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)
from __future__ import annotations

import json

import pytest

from motion_runner.models import Kind, Message
from tests.factories import TurnFactory
from tests.harness_support import launch_for
from tests.wakes.decision.test_steering import steer
from tests.wakes_support import clock, room
from wakes.models import Steer

pytestmark = pytest.mark.django_db


@pytest.fixture
def binary(tmp_path):
    path = tmp_path / "claude"
    path.write_text("#!/bin/sh\n")
    return str(path)


def ultracode_on(room) -> None:
    response = steer(room, room.justin, "ultracode", "on", sign_in="ssh")
    assert response.status_code == 201, response.content


def settings_flag(argv: list[str]) -> dict | None:
    return json.loads(argv[argv.index("--settings") + 1]) if "--settings" in argv else None


def launched(room, binary, *, mode: str, reason: str = "mention") -> list[str]:
    room.magent.binary = binary
    room.magent.save()
    turn = TurnFactory(motion=room.motion, agent=room.magent, mode=mode, reason=reason)
    return launch_for(turn).argv


def test_ultracode_rides_on_a_trusted_full_tools_mention(room, binary):
    ultracode_on(room)

    assert settings_flag(launched(room, binary, mode="full")) == {"ultracode": True}


def test_ultracode_never_rides_on_a_look_only_mention(room, binary):
    ultracode_on(room)

    assert settings_flag(launched(room, binary, mode="look")) is None


@pytest.mark.parametrize("reason", ["new_posts", "quiet", "watch", "grant", "arrival"])
def test_ultracode_rides_on_no_wake_a_person_did_not_ask_by_mention(room, binary, reason):
    ultracode_on(room)

    assert settings_flag(launched(room, binary, mode="full", reason=reason)) is None


def test_ultracode_is_off_until_the_room_turns_it_on(room, binary):
    assert settings_flag(launched(room, binary, mode="full")) is None


def test_ultracode_turned_off_again_rides_no_more(room, binary):
    ultracode_on(room)
    assert steer(room, room.justin, "ultracode", "off", sign_in="ssh").status_code == 201

    assert settings_flag(launched(room, binary, mode="full")) is None


def test_ultracode_is_per_agent_in_the_motion(room, binary):
    ultracode_on(room)
    room.motion.agents.add(room.codey)
    room.codey.binary = binary
    room.codey.save()

    turn = TurnFactory(motion=room.motion, agent=room.codey, mode="full", reason="mention")
    assert settings_flag(launch_for(turn).argv) is None


def test_only_someone_who_may_grant_full_tools_sets_ultracode(room):
    response = steer(room, room.rosemary, "ultracode", "on")

    assert response.status_code == 403
    assert "widens" in response.content.decode()
    assert not Steer.objects.filter(setting="ultracode").exists()


def test_nor_may_they_turn_it_off(room):
    ultracode_on(room)

    assert steer(room, room.rosemary, "ultracode", "off").status_code == 403


def test_ultracode_is_on_or_off_nothing_else(room):
    response = steer(room, room.justin, "ultracode", "max", sign_in="ssh")

    assert response.status_code == 400
    assert "ultracode is one of on, off" in response.content.decode()


def test_the_menus_show_ultracode_and_the_change_is_said_in_the_thread(room):
    ultracode_on(room)

    menus = steer(room, room.justin, "ultracode", "on", sign_in="ssh").json()
    assert menus["agents"][0]["ultracode"] == "on"
    assert "ultracode" in menus["widening"]
    said = Message.objects.filter(motion=room.motion, kind=Kind.WAKE).values_list("text", flat=True)
    assert "justin set @magent's ultracode here to on" in list(said)


def test_the_wake_line_of_a_full_tools_mention_says_ultracode(room, clock):
    from wakes.turn.wake import wake

    ultracode_on(room)
    mention = Message.objects.create(
        motion=room.motion,
        sender="justin",
        author=room.justin,
        sign_in="ssh",
        source="web",
        text="@magent go",
    )
    turn = wake(
        room.motion,
        room.magent,
        prompt="go",
        reason="mention",
        why="mentioned by justin",
        effort="high",
        cap=None,
        woken_by=mention,
        dispatch=False,
    )

    assert turn.mode == "full"
    line = Message.objects.get(motion=room.motion, kind=Kind.WAKE, turn=turn)
    assert "ultracode" in line.text
