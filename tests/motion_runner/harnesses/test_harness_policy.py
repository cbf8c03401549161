"""The harness adapters are pure: a ToolPolicy value in, argv out, with no wakes and no database
behind them (motion_runner/harnesses/policy.py); a resumed session's recorded turn ends come in
as a reader the runner hands over."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.apps import apps as django_apps

from motion_runner import signals
from motion_runner.harnesses import HarnessError, get_adapter
from motion_runner.harnesses.policy import LookOnlyPolicy, ToolPolicy, closed_policy
from motion_runner.runner.turns import execute_turn, policy_for
from tests.factories import AgentFactory, MotionFactory, TurnFactory
from tests.harness_support import launch_for
from wakes.turn.tool_policy import policy_for_turn


@pytest.fixture
def binary(tmp_path):
    path = tmp_path / "harness-cli"
    path.write_text("#!/bin/sh\n")
    return str(path)


def turn_for(harness: str, binary: str, mode: str = "look"):
    agent = AgentFactory.build(name=f"{harness}-bot", harness=harness, binary=binary)
    return TurnFactory.build(agent=agent, motion=MotionFactory.build(workspace="/srv/notes"), mode=mode)


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


WIKI_ONLY = LookOnlyPolicy(
    wiki_server="wiki",
    wiki_read_tools=("get-page",),
    memory_servers=(),
    memory_loaded_whole=False,
    memory_read_tools=(),
    wiki_write_tools=("update-page",),
)


def test_a_pi_turn_whose_policy_names_no_read_guard_is_refused(binary):
    """Without the guard Pi reads any path: no launch, whatever the mode."""
    for mode in ("look", "full"):
        with pytest.raises(HarnessError, match="read guard"):
            get_adapter("pi").build_launch(
                turn_for("pi", binary, mode),
                resume_session=None,
                policy=ToolPolicy(mode=mode, look_only=WIKI_ONLY),
            )


def test_a_policy_naming_a_wiki_write_on_the_look_only_list_is_refused(binary):
    sneaky = LookOnlyPolicy(**{**WIKI_ONLY.__dict__, "extra_mcp_tools": ("mcp__wiki__update-page",)})
    with pytest.raises(ValueError, match="wiki write tools: mcp__wiki__update-page"):
        get_adapter("claude-code").build_launch(
            turn_for("claude-code", binary),
            resume_session=None,
            policy=ToolPolicy(mode="look", look_only=sneaky),
        )


def test_the_policy_given_is_the_policy_spelled(binary):
    policy = ToolPolicy(
        mode="look", look_only=WIKI_ONLY, pi_codemode=False, pi_read_guard="/guard.ts", footer="F"
    )
    pi = get_adapter("pi").build_launch(turn_for("pi", binary), resume_session=None, policy=policy)
    assert flag(pi.argv, "--tools") == "read,grep,find,ls,mcp__wiki__get-page"
    assert flag(pi.argv, "-e") == "/guard.ts"
    assert flag(pi.argv, "--append-system-prompt") == "F"
    launch = get_adapter("claude-code").build_launch(
        turn_for("claude-code", binary), resume_session=None, policy=policy
    )
    try:
        assert flag(launch.argv, "--allowedTools").endswith(",mcp__wiki__get-page")
        assert "mcp__wiki__update-page" in flag(launch.argv, "--disallowedTools").split(",")
    finally:
        for path in launch.temp_files:
            path.unlink()


def test_every_adapter_must_be_handed_its_policy(binary):
    """No adapter falls back to asking the hook: a launch without a policy is a caller's error."""
    for harness in ("claude-code", "codex", "pi"):
        with pytest.raises(TypeError, match="policy"):
            get_adapter(harness).build_launch(turn_for(harness, binary), resume_session=None)


SCRIBES_POLICY = ToolPolicy(mode="look", look_only=WIKI_ONLY, footer="F")
asked: list[int] = []


def scribes_policy(turn) -> ToolPolicy:
    """A deployment's own tool policy, named by MOTION_RUNNER_TOOL_POLICY in the tests below."""
    asked.append(turn.pk)
    return SCRIBES_POLICY


@pytest.mark.django_db
def test_a_deployment_names_its_own_policy_and_the_runner_hands_it_to_the_adapter(
    binary, monkeypatch, settings
):
    settings.MOTION_RUNNER_TOOL_POLICY = f"{__name__}.scribes_policy"
    asked.clear()
    given = []

    def build_launch(self, turn, *, resume_session, policy):
        given.append(policy)
        raise HarnessError("launched no further")

    monkeypatch.setattr(type(get_adapter("claude-code")), "build_launch", build_launch)
    turn = TurnFactory(agent=AgentFactory(name="scribe", harness="claude-code", binary=binary))
    execute_turn(turn.pk)
    assert asked == [turn.pk]
    assert given == [SCRIBES_POLICY]


def test_without_wakes_a_turn_gets_the_closed_policy(binary, monkeypatch):
    monkeypatch.setattr(django_apps, "is_installed", lambda app: app != "wakes")
    turn = turn_for("claude-code", binary, mode="full")
    assert signals.tool_policy.path() == "motion_runner.harnesses.policy.closed_policy"
    assert policy_for(turn) == closed_policy()
    launch = launch_for(turn)
    try:
        assert flag(launch.argv, "--permission-mode") == "dontAsk"  # look-only, although the turn says full
        assert (
            flag(launch.argv, "--allowedTools")
            == "Read(//srv/notes/**),Grep(//srv/notes/**),Glob(//srv/notes/**)"
        )
        assert flag(launch.argv, "--disallowedTools") == ""
    finally:
        for path in launch.temp_files:
            path.unlink()


def test_wakes_policy_is_the_default_and_tells_the_turn_its_footer(binary):
    assert signals.tool_policy.load() is policy_for_turn
    look, full = policy_for(turn_for("pi", binary)), policy_for(turn_for("pi", binary, mode="full"))
    assert (look.mode, full.mode) == ("look", "full")
    assert "look-only" in look.footer and look.footer != full.footer
    assert look.pi_read_guard.endswith("motion_runner/harnesses/pi_read_guard.ts")


def test_a_resumed_sessions_baseline_comes_from_the_recorded_ends_handed_over():
    read = []

    def ends():
        read.append(1)
        return [{"type": "system"}, {"type": "result", "total_cost_usd": 0.25}]

    parser = get_adapter("claude-code").new_parser("a-session", recorded_ends=ends)
    assert parser.baseline_usd == Decimal("0.25")
    assert get_adapter("claude-code").new_parser("", recorded_ends=ends).baseline_usd == Decimal(0)
    assert len(read) == 1  # a fresh session never reads them
    codex = get_adapter("codex").new_parser(
        "a-thread", recorded_ends=lambda: [{"type": "turn.completed", "usage": {"input_tokens": 7}}]
    )
    assert codex.baseline == {"input_tokens": 7}
