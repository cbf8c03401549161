"""The CLI screen with Codex and Pi, each its own way (`codex exec --ephemeral -s read-only`,
`pi --no-tools --no-session`), the real CLIs against the fake OpenAI API: the verdict read by the
harness's own parser, the cost the harness's own (usage × its price table)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.conftest import require_cli
from tests.factories import AgentFactory, MessageFactory, MotionFactory
from tests.fakes.harness_homes import CODEX_MODEL, PI_MODEL, PI_PROVIDER, codex_env, pi_env
from tests.fakes.openai_api import Text, Usage, reply
from wakes.models import Dials
from wakes.turn.screen import screen_posts

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

USAGE = Usage(input_tokens=1200, cached_input_tokens=200, output_tokens=50)


@pytest.fixture
def cli_screen(settings):
    settings.WAKES_SCREEN_API_KEY = ""
    settings.WAKES_SCREEN_CLI = "auto"


def screen(agent):
    motion = MotionFactory(slug="launch-room")
    motion.agents.add(agent)
    post = MessageFactory(motion=motion, text="nice weather for a launch")
    return screen_posts(motion, agent, [post], Dials.load())


def test_codex_screens_with_its_own_login(tmp_path, fake_openai, cli_screen):
    require_cli("codex")
    env = codex_env(tmp_path / "codex", fake_openai.base_url)
    agent = AgentFactory(name="codey", harness="codex", model=CODEX_MODEL, env=env)
    fake_openai.script(reply(Text("DISMISS: small talk"), usage=USAGE))

    result = screen(agent)

    assert (result.verdict, result.reason, result.answered) == ("DISMISS", "small talk", True)
    assert result.cost > Decimal(0)
    # Codex has no tool-free mode: its tools are offered, inside the read-only sandbox.
    assert "apply_patch" in fake_openai.offered_tools()


def test_pi_screens_with_its_own_login(tmp_path, fake_openai, cli_screen):
    require_cli("pi")
    env = pi_env(tmp_path / "pi", fake_openai.base_url)
    agent = AgentFactory(name="pia", harness="pi", model=f"{PI_PROVIDER}/{PI_MODEL}", env=env)
    fake_openai.script(reply(Text("PASS: asks nothing, but names the launch"), usage=USAGE))

    result = screen(agent)

    assert (result.verdict, result.answered) == ("PASS", True)
    assert result.cost > Decimal(0)
    assert fake_openai.offered_tools() == []  # --no-tools: the screen reads, never acts
