"""Misconfiguration fails loudly at start-up, not at the first wake."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.checks import WARNING
from django.core.management import CommandError, call_command
from django.test import override_settings

from motion_runner.checks import harness_binaries, production_settings
from motion_runner.models import AgentKey, Turn
from tests.factories import AgentFactory, MotionFactory


def ids(messages) -> set[str]:
    return {m.id for m in messages}


@override_settings(
    DEBUG=False, SECRET_KEY="dev-only-not-secret-motion-runner", ALLOWED_HOSTS=["runner.example"]
)
def test_production_refuses_the_development_secret_key():
    assert "motion_runner.E001" in ids(production_settings(None))


@override_settings(
    DEBUG=False,
    SECRET_KEY="s3cret-from-the-vault",
    ALLOWED_HOSTS=["runner.example"],
    MOTION_RUNNER_FIRST_RUN_GRANTS=["demo"],
)
def test_production_refuses_the_first_run_accounts_grant():
    assert "motion_runner.E005" in ids(production_settings(None))


@override_settings(DEBUG=False, SECRET_KEY="s3cret-from-the-vault", ALLOWED_HOSTS=["*"])
def test_production_refuses_a_wildcard_host():
    assert "motion_runner.E004" in ids(production_settings(None))


@override_settings(
    DEBUG=False,
    SECRET_KEY="s3cret-from-the-vault",
    ALLOWED_HOSTS=["runner.example"],
    CELERY_BROKER_URL="filesystem://",
)
def test_production_warns_about_the_embedded_broker():
    assert "motion_runner.W003" in ids(production_settings(None))


@override_settings(DEBUG=True)
def test_development_settings_pass():
    assert production_settings(None) == []


@pytest.mark.django_db
def test_an_agent_whose_binary_cannot_be_found_is_a_warning():
    AgentFactory(name="ghost", binary="/nowhere/claude")
    errors = harness_binaries(None)
    assert ids(errors) == {"motion_runner.W011"}
    assert errors[0].level == WARNING
    assert "@ghost" in errors[0].msg


# A receiving server configured for production: only the missing binary could stop a command.
receiving_server = override_settings(SECRET_KEY="s3cret-from-the-vault", ALLOWED_HOSTS=["runner.example"])


@receiving_server
@pytest.mark.django_db
def test_agent_key_runs_its_checks_and_issues_a_key_while_a_binary_is_missing():
    """A server that only receives streams from agents on other machines issues their keys."""
    AgentFactory(name="ghost", binary="/nowhere/claude")
    out = StringIO()
    call_command("agent_key", "ghost", skip_checks=False, stdout=out, stderr=StringIO())
    assert AgentKey.objects.filter(agent__name="ghost").count() == 1


@receiving_server
@pytest.mark.django_db
def test_migrate_runs_its_checks_while_a_binary_is_missing():
    AgentFactory(name="ghost", binary="/nowhere/claude")
    call_command("migrate", "--check", skip_checks=False, stdout=StringIO(), stderr=StringIO())


@pytest.mark.django_db
def test_wake_sync_refuses_an_agent_whose_binary_is_missing_and_queues_nothing():
    AgentFactory(name="ghost", binary="/nowhere/claude")
    MotionFactory(slug="harbor")
    with pytest.raises(CommandError, match="binary '/nowhere/claude' for @ghost was not found"):
        call_command("wake", "harbor", "ghost", "--prompt", "hi", "--sync", stdout=StringIO())
    assert not Turn.objects.exists()


@pytest.mark.django_db
def test_an_agent_with_an_existing_binary_passes(tmp_path):
    binary = tmp_path / "claude"
    binary.write_text("#!/bin/sh\n")
    AgentFactory(name="magent", binary=str(binary))
    assert harness_binaries(None) == []


@pytest.mark.django_db
def test_no_model_change_is_missing_a_migration():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()
