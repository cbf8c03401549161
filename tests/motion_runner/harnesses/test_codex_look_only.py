"""Issue 10, "look-only confined for every harness": Codex's read-only sandbox keeps a turn from
writing but not from reading outside its workspace, so a look-only Codex turn is refused with a
clear line in the thread. The real CLI shows why: allowed, it reads a private key in ~/.ssh."""

from __future__ import annotations

import json

import pytest

from motion_runner.harnesses.base import HarnessError
from motion_runner.models import Kind, Message, TurnStatus
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.conftest import require_cli
from tests.factories import AgentFactory, MotionFactory, TurnFactory
from tests.fakes.openai_api import Text, ToolCall, reply
from tests.harness_support import launch_for

SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n"


@pytest.fixture
def codey(tmp_path, fake_openai):
    from tests.fakes.harness_homes import CODEX_MODEL, codex_env

    require_cli("codex")
    env = codex_env(tmp_path / "codex", fake_openai.base_url)
    return AgentFactory(name="codey", harness="codex", model=CODEX_MODEL, env=env)


@pytest.fixture
def launch_room(tmp_path):
    work = tmp_path / "launch-room"
    work.mkdir()
    return MotionFactory(slug="launch-room", workspace=str(work))


@pytest.fixture
def private_key(tmp_path):
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text(SECRET)
    return ssh / "id_ed25519"


@pytest.mark.django_db
def test_a_look_only_codex_launch_is_refused_saying_why():
    turn = TurnFactory(agent=AgentFactory(name="codey", harness="codex", binary="/bin/true"), mode="look")

    with pytest.raises(HarnessError, match="reads anywhere, ~/.ssh included"):
        launch_for(turn, resume_session=None)


@pytest.mark.django_db
def test_a_full_tools_codex_launch_is_not_refused():
    turn = TurnFactory(agent=AgentFactory(name="codey", harness="codex", binary="/bin/true"), mode="full")

    assert "workspace-write" in launch_for(turn, resume_session=None).argv


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_look_only_codex_wake_never_starts_the_cli_and_the_thread_says_why(codey, launch_room, fake_openai):
    queued = enqueue_turn(launch_room, codey, "Read ~/.ssh.", mode="look", dispatch=False)

    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FAILED and "look-only Codex wakes are refused" in turn.error
    assert fake_openai.model_requests() == []
    assert Message.objects.filter(
        motion=launch_room, kind=Kind.ERROR, text__contains="~/.ssh included"
    ).exists()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_allowed_anyway_the_real_cli_reads_a_private_key_outside_its_workspace(
    codey, launch_room, fake_openai, private_key, settings
):
    settings.RUNNER_CODEX_LOOK_ONLY = "allow"
    fake_openai.script(
        reply(ToolCall(("exec_command", "shell_command", "shell"), {"cmd": f"cat {private_key}"})),
        reply(Text("I read it.")),
    )
    queued = enqueue_turn(launch_room, codey, "Read the key.", mode="look", dispatch=False)

    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    # What the sandbox handed back to the model after the read: the key itself.
    assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU=" in json.dumps(fake_openai.model_requests()[1]["body"]["input"])
