"""The host-project test (issue 12): tests/host/ is a foreign Django project shaped like memory-lane
(its own settings with DEBUG=False, root urls, base.html and `conversations` app with memory-lane's
record shapes) that installs the three apps with exactly the README's block. In subprocesses with
its own settings, against its own PostgreSQL database (made and dropped here): `check --deploy` is
clean, `migrate` runs, a stream post and a real Claude Code wake against the fake model land in the
host's Message table (and its subclasses) exactly once, a post made through the host's own model
wakes the agent it mentions, and the apps' pages render inside the host without shadowing it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from tests import recorded
from tests.conftest import require_cli
from tests.fakes.anthropic_api import FakeAnthropic, Reply, Text, Thinking, Usage
from tests.paths import ROOT

pytestmark = pytest.mark.e2e

README = "# Demo workspace\n\nThe answer to the demo question is 42.\n"
ANSWERS = "The README says the answer is 42."
THINKS = "The README holds the answer; quote it."


def host_database_url() -> tuple[str, str]:
    """A database of the host's own on this run's PostgreSQL server: (its url, its name)."""
    db = settings.DATABASES["default"]
    if connection.vendor != "postgresql":  # the standalone settings' own backend is PostgreSQL too
        reason = "the host-project test runs on PostgreSQL (set DATABASE_URL)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    name = f"{db['NAME']}_host"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}", name


def admin_sql(statement: str) -> None:
    db = settings.DATABASES["default"]
    with psycopg.connect(
        dbname="postgres",
        user=db["USER"],
        password=db.get("PASSWORD") or None,
        host=db["HOST"] or "127.0.0.1",
        port=db["PORT"] or 5432,
        autocommit=True,
    ) as connection:
        connection.execute(statement)


def fresh_host_database(suffix: str = "") -> tuple[str, str]:
    """A host database made anew for one test module: (its url, its name), dropped first if a run
    before left it."""
    url, name = host_database_url()
    name = f"{name}{suffix}"
    url = url.rsplit("/", 1)[0] + f"/{name}"
    admin_sql(f'DROP DATABASE IF EXISTS "{name}"')
    admin_sql(f'CREATE DATABASE "{name}"')
    return url, name


@pytest.fixture(scope="module")
def host_run(tmp_path_factory):
    """check --deploy, migrate and the scenario (tests/host/scenario.py), run once for the module."""
    require_cli("claude")
    url, name = fresh_host_database()
    tmp = tmp_path_factory.mktemp("host")
    workspace, home = tmp / "workspace", tmp / "home"
    workspace.mkdir()
    home.mkdir()
    (workspace / "README.md").write_text(README)
    try:
        with FakeAnthropic() as model:
            model.script(
                Reply(Thinking(THINKS), Text(ANSWERS), usage=Usage(input_tokens=1200, output_tokens=12))
            )
            # The host's own environment: none of this run's Django variables.
            env = {
                **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
                "DJANGO_SETTINGS_MODULE": "tests.host.settings",
                "HOST_DATABASE_URL": url,
                "HOST_RUNNER_EXTRA_ENV": json.dumps({**model.env(), "HOME": str(home)}),
            }

            def run(*args: str) -> subprocess.CompletedProcess:
                return subprocess.run(
                    [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
                )

            check = run("-m", "django", "check", "--deploy", "--fail-level", "WARNING")
            migrate = run("-m", "django", "migrate", "--noinput")
            scenario = run("-m", "tests.host.scenario", str(workspace)) if migrate.returncode == 0 else None
            requests = len(model.message_requests())
    finally:
        admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert scenario is not None and scenario.returncode == 0, (
        migrate.stdout + migrate.stderr + (scenario.stderr if scenario else "")
    )
    return {
        "check": check,
        "migrate": migrate,
        "seen": json.loads(scenario.stdout.splitlines()[-1]),
        "requests": requests,
    }


def test_check_deploy_is_clean_in_the_host(host_run):
    check = host_run["check"]
    assert check.returncode == 0, check.stdout + check.stderr
    assert "System check identified no issues" in check.stdout


def test_migrate_runs_the_apps_and_the_hosts_own_record(host_run):
    out = host_run["migrate"].stdout
    assert "Applying conversations.0001_initial... OK" in out
    assert "Applying motion_runner.0001_initial... OK" in out
    assert "Applying wakes.0001_initial... OK" in out


def test_a_stream_post_lands_in_the_hosts_record_once_under_the_same_ids(host_run):
    stream = host_run["seen"]["stream"]
    assert stream["status"] == [200, 200]
    events = len(recorded.first_run())  # 5 write a line, the rest have nothing to show
    assert stream["counts"] == [{"imported": 5, "skipped": events - 5}, {"imported": 0, "skipped": events}]
    assert stream["host"]["ids"] == stream["index"] and len(stream["index"]) == 5
    assert stream["host"]["senders"] == ["scribe", "system", "tool-result"]
    # Matched through memory-lane's alias of the renamed Mood; the session claimed for that Mood.
    assert stream["host"]["moods"] == ["harbor-of-moods"]
    assert stream["claimed_by"] == ["harbor-of-moods"]
    # A ToolUse holding the tool's input; its ToolResult with none of the output (memory-lane's default).
    [[tool, tool_input]] = stream["tool_uses"]
    assert tool == "Read" and set(tool_input) == {"file_path"}
    assert [sender_and_content for _, *sender_and_content in stream["tool_results"]] == [["tool-result", ""]]


def test_a_real_claude_code_wake_lands_in_the_hosts_message_table_once(host_run):
    wake = host_run["seen"]["wake"]
    assert wake["status"] == "finished"
    assert host_run["requests"] == 1
    assert wake["index"] and wake["host"]["ids"] == wake["index"]
    assert wake["claimed_by"] == ["harbor-of-moods"]
    assert [ANSWERS] in [[block.get("text") for block in c] for c in wake["texts"] if isinstance(c, list)]


def test_a_thinking_summary_is_memory_lanes_thought_with_its_signature(host_run):
    assert host_run["seen"]["wake"]["host"]["thought_signatures"] == ["fake-signature"]


def test_every_line_is_in_the_hosts_record_exactly_once_with_memory_lanes_subclasses(host_run):
    post = host_run["seen"]["host_post"]
    assert post["index_not_in_host"] == []
    assert post["host_total"] == post["index_total"]
    # The recorded first run: a tool call and its result (memory-lane's ToolUse and ToolResult).
    assert post["host_kinds"]["tool_use"] >= 1 and post["host_kinds"]["tool_result"] >= 1


def test_a_post_made_through_the_hosts_own_model_wakes_the_agent_it_mentions(host_run):
    post = host_run["seen"]["host_post"]
    assert post["index"] == {
        "motion_id": "harbor",
        "sender": "justin",
        "source": "web",
        "text": "@magent and what else does it say?",
    }
    assert post["turns"] == ["mention"]
    assert post["host_copies"] == 1  # handed to the apps, never written back as a second row


def test_a_transcript_line_memory_lane_imported_itself_is_a_terminal_line_whose_mention_waits(host_run):
    line = host_run["seen"]["host_transcript_line"]
    assert line == {"index": {"source": "terminal", "text": "@magent later"}, "turns": 0, "waiting": 1}


def test_the_apps_pages_render_inside_the_host_without_shadowing_its_base_html(host_run):
    pages = host_run["seen"]["pages"]
    assert pages["home"][0] == 200 and "memory-lane's own base.html" in pages["home"][1]
    status, thread = pages["thread"]
    assert status == 200
    assert "memory-lane's own base.html" not in thread
    assert 'class="brand">Motion Runner</a>' in thread and "Harbor" in thread
    assert pages["thread_css"]
