"""The first run: the welcome post's command works as written in a fresh checkout."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command, load_command_class

from motion_runner.models import Message

pytestmark = pytest.mark.django_db


def test_the_welcome_posts_wake_command_runs_with_the_checkouts_python():
    call_command("bootstrap_demo", stdout=io.StringIO())
    welcome = Message.objects.get(motion_id="demo", source="system")

    (command,) = re.findall(r"`([^`]+)`", welcome.text)
    python, manage, name, *args = shlex.split(command)

    assert (python, manage, name) == (".venv/bin/python", "manage.py", "wake")
    assert (Path(settings.BASE_DIR) / python).exists()  # bin/setup makes it; a bare `python` may lack Django
    parsed = load_command_class("motion_runner", "wake").create_parser("manage.py", "wake").parse_args(args)
    assert (parsed.motion, parsed.agent, parsed.prompt, parsed.sync) == ("demo", "magent", "hello", True)


def test_the_welcome_post_says_the_agent_needs_a_key_and_where():
    call_command("bootstrap_demo", stdout=io.StringIO())

    assert "Agents → magent → env" in Message.objects.get(motion_id="demo", source="system").text
