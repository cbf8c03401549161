"""people/first_run.py: the first-run grant names an account as the user model names it (exactly):
a separate account whose name differs only in case is not granted."""

from __future__ import annotations

import pytest
from django.test import override_settings

from motion_runner.people.first_run import has_first_run_grant
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@override_settings(DEBUG=True, MOTION_RUNNER_FIRST_RUN_GRANTS=["demo"])
def test_the_account_named_has_the_grant():
    assert has_first_run_grant(UserFactory(username="demo"))


@override_settings(DEBUG=True, MOTION_RUNNER_FIRST_RUN_GRANTS=["demo"])
def test_an_account_whose_name_differs_only_in_case_has_not():
    assert not has_first_run_grant(UserFactory(username="Demo"))
