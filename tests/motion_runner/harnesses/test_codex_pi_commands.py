"""The command lines the runner launches Codex and Pi with, per wake mode."""

from __future__ import annotations

import pytest

from tests.factories import AgentFactory, MotionFactory, TurnFactory
from tests.harness_support import launch_for


@pytest.fixture(autouse=True)
def codex_look_only_accepted(settings):
    """The command lines themselves; the runner's default refuses a look-only Codex turn
    (tests/motion_runner/harnesses/test_codex_look_only.py)."""
    settings.RUNNER_CODEX_LOOK_ONLY = "allow"


@pytest.fixture(autouse=True)
def own_memory_server(settings):
    """The command lines of a deployment naming its own memory server: no record server, whose
    pass needs a saved turn (its command line: test_a_standalone_turn_adds_the_record_server)."""
    settings.WAKE_MEMORY_SERVERS = ["magenta-memory-v2"]


@pytest.fixture
def binary(tmp_path):
    path = tmp_path / "harness-cli"
    path.write_text("#!/bin/sh\n")
    return str(path)


def turn_for(
    harness: str, binary: str, *, mode: str = "look", prompt: str = "What do the notes say?", **agent
):
    agent = AgentFactory.build(name=f"{harness}-bot", harness=harness, binary=binary, **agent)
    return TurnFactory.build(
        agent=agent, motion=MotionFactory.build(workspace="/srv/notes"), mode=mode, prompt=prompt
    )


def argv(turn, resume: str | None = None) -> list[str]:
    return launch_for(turn, resume_session=resume).argv


class TestCodex:
    def test_a_look_only_turn_runs_in_the_read_only_sandbox(self, binary):
        assert argv(turn_for("codex", binary)) == [
            binary,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-s",
            "read-only",
            "-",
        ]

    def test_a_full_turn_may_write_its_workspace(self, binary):
        line = argv(turn_for("codex", binary, mode="full"))
        assert line[line.index("-s") + 1] == "workspace-write"

    def test_an_unknown_mode_is_look_only(self, binary):
        line = argv(turn_for("codex", binary, mode="sideways"))
        assert line[line.index("-s") + 1] == "read-only"

    def test_resume_comes_after_the_sandbox_and_model_flags(self, binary):
        line = argv(turn_for("codex", binary, model="gpt-5.5"), resume="01a22b25-thread")
        assert line[line.index("resume") :] == ["resume", "01a22b25-thread", "-"]
        assert line.index("-s") < line.index("resume")
        assert line.index("-m") < line.index("resume")
        assert line[line.index("-m") + 1] == "gpt-5.5"

    def test_the_prompt_goes_on_stdin_so_a_flag_in_it_is_never_an_argument(self, binary):
        turn = turn_for("codex", binary, prompt="--dangerously-bypass-approvals-and-sandbox")
        launch = launch_for(turn, resume_session=None)
        assert launch.stdin == "--dangerously-bypass-approvals-and-sandbox"
        assert "--dangerously-bypass-approvals-and-sandbox" not in launch.argv

    def test_the_agents_system_prompt_becomes_developer_instructions(self, binary):
        line = argv(turn_for("codex", binary, system_prompt='Be "brief".\nAlways.'))
        assert line[line.index("-c") + 1] == 'developer_instructions="Be \\"brief\\".\\nAlways."'

    def test_it_runs_in_the_motions_workspace(self, binary):
        turn = turn_for("codex", binary)
        assert launch_for(turn, resume_session=None).cwd == "/srv/notes"


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["look", "full"])
def test_a_standalone_codex_turn_adds_the_record_server_without_its_pass_on_the_line(binary, settings, mode):
    del settings.WAKE_MEMORY_SERVERS
    agent = AgentFactory(name="codey", harness="codex", binary=binary)
    turn = TurnFactory(agent=agent, motion=MotionFactory(workspace="/srv/notes"), mode=mode, status="running")
    launch = launch_for(turn, resume_session=None)
    try:
        line = " ".join(launch.argv)
        assert "mcp_servers.motion-record.command=" in line
        assert '"-m", "motion_runner.recall"' in line
        assert "mrp_" not in line and "DATABASE_URL" not in line
        assert launch.temp_files and all(path.exists() for path in launch.temp_files)
    finally:
        for path in launch.temp_files:
            path.unlink()


@pytest.mark.django_db
def test_a_codex_turn_reaches_the_record_server_by_url_its_pass_in_the_environment_only(
    binary, settings, monkeypatch
):
    """Where RECORD_SERVER_URL names the record server (issue 41): its URL and the variable
    Codex reads the bearer token from (`bearer_token_env_var`); the pass never on the line."""
    from motion_runner.recall import passes

    del settings.WAKE_MEMORY_SERVERS
    settings.RECORD_SERVER_URL = "http://127.0.0.1:8765/mcp"
    monkeypatch.setattr(passes, "healthy", lambda url: True)
    agent = AgentFactory(name="codey", harness="codex", binary=binary)
    turn = TurnFactory(
        agent=agent, motion=MotionFactory(workspace="/srv/notes"), mode="full", status="running"
    )
    launch = launch_for(turn, resume_session=None)
    line = " ".join(launch.argv)
    assert 'mcp_servers.motion-record.url="http://127.0.0.1:8765/mcp"' in line
    assert 'mcp_servers.motion-record.bearer_token_env_var="MOTION_RUNNER_MCP_TOKEN_MOTION_RECORD"' in line
    assert "mrp_" not in line and "command=" not in line and launch.temp_files == []
    assert passes.running_turn_for(launch.env["MOTION_RUNNER_MCP_TOKEN_MOTION_RECORD"]) == turn


@pytest.mark.django_db
def test_a_pi_turn_hands_its_extension_the_record_servers_url(binary, settings, monkeypatch):
    import json

    from motion_runner.recall import passes

    del settings.WAKE_MEMORY_SERVERS
    settings.RECORD_SERVER_URL = "http://127.0.0.1:8765/mcp"
    monkeypatch.setattr(passes, "healthy", lambda url: True)
    agent = AgentFactory(name="pia", harness="pi", binary=binary, model="fake/fake-model")
    turn = TurnFactory(
        agent=agent, motion=MotionFactory(workspace="/srv/notes"), mode="look", status="running"
    )
    launch = launch_for(turn, resume_session=None)
    server = json.loads(launch.env["MOTION_RUNNER_TURN_SERVERS"])["motion-record"]
    assert (server["type"], server["url"]) == ("http", "http://127.0.0.1:8765/mcp")
    assert passes.running_turn_for(server["headers"]["Authorization"].removeprefix("Bearer ")) == turn
    assert "mrp_" not in " ".join(launch.argv)


class TestPi:
    def test_a_look_only_turn_gets_the_shared_list_and_the_footer(self, binary):
        from motion_runner.harnesses.policy import PI_READ_GUARD
        from tests.harness_support import pi_look_only_tools
        from wakes.turn.footer import wake_footer

        assert argv(turn_for("pi", binary, model="fake/fake-model")) == [
            binary,
            "--mode",
            "json",
            "--provider",
            "fake",
            "--model",
            "fake-model",
            "--tools",
            ",".join(pi_look_only_tools()),
            "-e",
            str(PI_READ_GUARD),
            "--append-system-prompt",
            wake_footer("look"),
            "-p",
        ]

    def test_a_full_turn_has_pis_default_tools(self, binary):
        assert "--tools" not in argv(turn_for("pi", binary, mode="full"))

    def test_the_read_guard_confines_a_look_only_turn_and_denies_secrets_on_every_turn(self, binary):
        import json

        from motion_runner.harnesses.policy import PI_READ_GUARD
        from wakes.turn.tool_policy import DENIED_PATHS

        for mode, confined in (("look", "1"), ("full", "0")):
            turn = turn_for("pi", binary, mode=mode, env={"MOTION_RUNNER_CONFINE_READS": "0"})
            launch = launch_for(turn, resume_session=None)
            assert launch.argv[launch.argv.index("-e") + 1] == str(PI_READ_GUARD)
            # The agent's own env cannot switch the guard off.
            assert launch.env["MOTION_RUNNER_CONFINE_READS"] == confined
            assert json.loads(launch.env["MOTION_RUNNER_DENIED_PATHS"]) == list(DENIED_PATHS)

    def test_a_provider_is_split_at_the_first_slash_only(self, binary):
        line = argv(turn_for("pi", binary, model="openrouter/anthropic/claude-sonnet-4"))
        assert line[3:7] == ["--provider", "openrouter", "--model", "anthropic/claude-sonnet-4"]

    def test_a_bare_model_name_leaves_the_provider_to_pi(self, binary):
        line = argv(turn_for("pi", binary, model="sonnet"))
        assert "--provider" not in line
        assert line[line.index("--model") + 1] == "sonnet"

    def test_resume_names_the_session(self, binary):
        line = argv(turn_for("pi", binary), resume="01a22b26-session")
        assert line[line.index("--session") + 1] == "01a22b26-session"
        assert line[-1] == "-p"

    def test_the_agents_system_prompt_is_appended(self, binary):
        line = argv(turn_for("pi", binary, system_prompt="Be brief."))
        assert line[line.index("--append-system-prompt") + 1].startswith(
            "Be brief.\n\n---\nThis wake is look-only."
        )

    @pytest.mark.parametrize("prompt", ["@alice asked about notes.txt", "-p --tools bash"])
    def test_a_prompt_pi_would_read_as_a_file_or_flag_goes_on_stdin_never_as_an_argument(
        self, binary, prompt
    ):
        launch = launch_for(turn_for("pi", binary, prompt=prompt), resume_session=None)
        assert launch.stdin == prompt
        assert prompt not in launch.argv


@pytest.mark.django_db
@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi"])
def test_a_turn_with_no_workspace_runs_in_a_folder_of_its_motion_never_the_checkout(
    harness, binary, settings, tmp_path
):
    from tests.factories import AgentFactory, MotionFactory, TurnFactory

    settings.DATA_DIR = tmp_path
    motion = MotionFactory(slug="no-workspace", workspace="")
    agent = AgentFactory(name=f"{harness}-agent", harness=harness, binary=binary, workdir="")
    cwd = launch_for(TurnFactory(motion=motion, agent=agent), resume_session=None).cwd
    assert cwd == str(tmp_path / "workspaces" / "no-workspace")
    assert (tmp_path / "workspaces" / "no-workspace").is_dir()
