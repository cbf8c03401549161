"""runner/turns.py: no pass file a launch wrote (0600, holding the record's pass and the
database's address) outlives its turn, even when the turn fails after the launch was built but
before the harness started."""

from __future__ import annotations

import pytest

from motion_runner.harnesses.base import LaunchSpec
from motion_runner.models import TurnStatus
from motion_runner.runner import turns
from tests.factories import AgentFactory, MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db


class PassWriting:
    """An adapter whose launch writes a pass file, as codex's and pi's do."""

    def __init__(self, path):
        self.path = path

    def build_launch(self, turn, **kwargs) -> LaunchSpec:
        self.path.write_text("DATABASE_URL=postgres://secret")
        self.path.chmod(0o600)
        return LaunchSpec(argv=["true"], env={}, cwd=None, temp_files=[self.path])


def test_a_turn_failing_before_launch_leaves_no_pass_file(tmp_path, monkeypatch):
    pass_file = tmp_path / "record-pass.json"
    monkeypatch.setattr(turns, "get_adapter", lambda harness: PassWriting(pass_file))

    def broken(*args, **kwargs):
        raise RuntimeError("the database went away before the launch")

    monkeypatch.setattr(turns, "new_run", broken)
    turn = TurnFactory(motion=MotionFactory(), agent=AgentFactory(), status=TurnStatus.RUNNING)

    with pytest.raises(RuntimeError):
        turns._execute_claimed(turn, None)

    assert not pass_file.exists()
