"""A newcomer's first turn without a model key: the real Claude Code CLI, woken on a real worker,
answers through bin/serve's stand-in (motion_runner/lib/standin_model.py), and the thread says
plainly that the words came from a stand-in, how to set a real key, and that it cost nothing."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest

from motion_runner.lib.standin_model import serve
from motion_runner.models import Kind, Message, TurnStatus
from motion_runner.runner.turns import enqueue_turn
from tests.e2e.test_e2e_claude import celery_worker_thread, wait_for_end  # noqa: F401 (a fixture)
from tests.factories import AgentFactory, MotionFactory

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("celery_worker_thread")]


@pytest.fixture
def standin(settings, tmp_path, monkeypatch):
    server = serve(0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    home = tmp_path / "home"
    home.mkdir()
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    settings.STANDIN_MODEL_URL = f"http://127.0.0.1:{server.server_address[1]}"
    settings.RUNNER_EXTRA_ENV = {"HOME": str(home)}  # no key and no `claude /login` here
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.django_db(transaction=True)
def test_a_first_turn_without_a_key_answers_through_the_stand_in_and_says_so(
    claude_binary, standin, tmp_path
):
    motion = MotionFactory(slug="demo", workspace=str(tmp_path))
    magent = AgentFactory(name="magent", harness="claude-code", env={})

    turn = wait_for_end(enqueue_turn(motion, magent, "Say hello to the Motion"))

    assert turn.status == TurnStatus.FINISHED, turn.error
    (reply,) = Message.objects.filter(motion=motion, kind=Kind.TEXT)
    assert reply.text.startswith("(This reply is from a stand-in, not a model.)")
    assert "ANTHROPIC_API_KEY" in reply.text and "claude /login" in reply.text
    assert turn.cost_usd == Decimal(0)
    assert not Message.objects.filter(motion=motion, kind=Kind.ERROR).exists()
