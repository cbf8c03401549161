"""A second agent added standalone in one command (issue 43 item 2): `manage.py add_agent`."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from motion_runner.models import Agent, Harness
from tests.factories import AgentFactory, MotionFactory

pytestmark = pytest.mark.django_db


def add(*args: str) -> str:
    out = io.StringIO()
    call_command("add_agent", *args, stdout=out)
    return out.getvalue()


def test_an_agent_is_added_to_the_motion_with_its_harness():
    demo = MotionFactory(slug="demo")
    said = add("codey", "--harness", "codex")
    codey = Agent.objects.get(name="codey")
    assert codey.harness == Harness.CODEX and demo.agents.filter(pk=codey.pk).exists()
    assert "@codey: added" in said


def test_adding_it_again_changes_nothing_but_the_motion():
    MotionFactory(slug="demo")
    garden = MotionFactory(slug="garden")
    AgentFactory(name="pibot", harness=Harness.PI)
    said = add("@pibot", "--harness", "codex", "--motion", "garden")
    assert Agent.objects.get(name="pibot").harness == Harness.PI
    assert garden.agents.filter(name="pibot").exists() and "already there (Pi)" in said


def test_an_unknown_motion_is_refused_naming_those_there_are():
    MotionFactory(slug="demo")
    with pytest.raises(CommandError, match=r"no Motion 'nowhere' \(there are: demo\)"):
        add("codey", "--motion", "nowhere")
    assert not Agent.objects.filter(name="codey").exists()


def test_a_name_no_mention_can_reach_is_refused():
    MotionFactory(slug="demo")
    with pytest.raises(CommandError, match="not a name an @mention can reach"):
        add("two words")
