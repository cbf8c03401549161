"""A newcomer's first run without a model key: a Claude Code agent with no key of its own talks
to the stand-in bin/serve started; a real key never goes there."""

from __future__ import annotations

import pytest

from motion_runner.harnesses.env import harness_environment
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db

STANDIN = "http://127.0.0.1:8765"


@pytest.fixture
def standin_started(settings, monkeypatch, tmp_path):
    settings.STANDIN_MODEL_URL = STANDIN
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no `claude /login` in this home


def test_an_agent_without_a_key_talks_to_the_stand_in(standin_started):
    env = harness_environment(AgentFactory(harness="claude-code", env={}))

    assert env["ANTHROPIC_BASE_URL"] == STANDIN
    assert env["ANTHROPIC_API_KEY"] == "stand-in"


def test_an_agents_own_key_never_goes_to_the_stand_in(standin_started):
    env = harness_environment(AgentFactory(harness="claude-code", env={"ANTHROPIC_API_KEY": "sk-ant-real"}))

    assert env["ANTHROPIC_API_KEY"] == "sk-ant-real"
    assert "ANTHROPIC_BASE_URL" not in env


def test_a_key_in_the_workers_environment_never_goes_to_the_stand_in(standin_started, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-worker")

    env = harness_environment(AgentFactory(harness="claude-code", env={}))

    assert env["ANTHROPIC_API_KEY"] == "sk-ant-worker"
    assert "ANTHROPIC_BASE_URL" not in env


def test_a_claude_login_in_the_agents_home_is_used_not_the_stand_in(standin_started, tmp_path):
    home = tmp_path / "agent-home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text("{}")

    env = harness_environment(AgentFactory(harness="claude-code", env={"HOME": str(home)}))

    assert "ANTHROPIC_BASE_URL" not in env and "ANTHROPIC_API_KEY" not in env


def test_other_harnesses_are_left_to_their_own_provider_files(standin_started):
    env = harness_environment(AgentFactory(harness="codex", env={}))

    assert "ANTHROPIC_BASE_URL" not in env


def test_without_a_stand_in_nothing_is_added(standin_started, settings):
    settings.STANDIN_MODEL_URL = ""

    env = harness_environment(AgentFactory(harness="claude-code", env={}))

    assert "ANTHROPIC_BASE_URL" not in env and "ANTHROPIC_API_KEY" not in env
