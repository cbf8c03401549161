"""The scripted fake harness (tests/fakes/fake_harness.py) launched in Claude Code's place, and
the turns sent to a worker recorded rather than sent: for tests that run turns themselves."""

from __future__ import annotations

import pytest

from tests.paths import TESTS

FAKE = TESTS / "fakes" / "fake_harness.py"


@pytest.fixture(autouse=True)
def python_runs_the_fake(monkeypatch):
    """The adapter launches `<binary> -p …`: put the fake script first so python runs it.
    Autouse in every test module that imports it."""
    from motion_runner.harnesses import claude_code

    real = claude_code.ClaudeCodeAdapter.build_launch

    def build_launch(self, turn, *, resume_session, policy):
        spec = real(self, turn, resume_session=resume_session, policy=policy)
        spec.argv = [spec.argv[0], str(FAKE), *spec.argv[1:]]
        return spec

    monkeypatch.setattr(claude_code.ClaudeCodeAdapter, "build_launch", build_launch)


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    """Turns sent to a worker (recorded: the test runs them)."""
    sent: list[int] = []
    monkeypatch.setattr(
        "motion_runner.runner.turns.send_turn",
        lambda turn, countdown=0: sent.append(getattr(turn, "pk", turn)),
    )
    return sent
