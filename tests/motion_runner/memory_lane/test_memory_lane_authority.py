"""Authority as memory-lane judges it, under the binding (issue 40 item 2; issue 42 item 5, AZ5).

In a subprocess with the host project's settings (tests/host/, the README's block), against its
own PostgreSQL database: tests/host/authority_check.py writes memory-lane's settings and scram
rows as its page and admin write them. A widening row by someone without a key here is said as
not applied and why; after `manage.py enroll_signers` brings MOOD_ALLOWED_SIGNERS' keys here, it
counts. memory-lane's AZ5 is obeyed only from its MOOD_ADMINS, said with who wrote it.
"""

from __future__ import annotations

import pytest

from tests.motion_runner.memory_lane.host_support import host_check


@pytest.fixture(scope="module")
def seen():
    return host_check("_authority", "tests.host.authority_check")


def test_a_row_by_someone_without_a_key_here_does_not_count(seen):
    assert seen["before"]["model"] == ""


def test_a_row_that_does_not_count_is_said_as_not_applied_and_why_never_as_done(seen):
    (line,) = seen["before"]["said"]
    assert line.startswith("Not applied: skyler (on memory-lane's page) set @magent's model here to sonnet")
    assert "no one here is named skyler" in line and "manage.py enroll_signers" in line


def test_enroll_signers_brings_memory_lanes_keys_and_then_the_row_counts(seen):
    assert seen["enrolled"] == ["skyler"]
    assert seen["after"]["model"] == "opus"
    assert seen["after"]["said"] == ["skyler (on memory-lane's page) set @magent's model here to opus"]


def test_an_ai_entitys_az5_row_does_not_lift_a_scram_staff_raised_here(seen):
    assert seen["ai_lift"]["holds"] is True
    (line,) = seen["ai_lift"]["said"]
    assert "lift of the scram written on memory-lane's page by magent" in line
    assert "not one of memory-lane's admins" in line


def test_a_person_who_is_not_memory_lanes_admin_does_not_lift_it_either(seen):
    assert seen["non_admin_lift"]["holds"] is True and len(seen["non_admin_lift"]["said"]) == 1


def test_memory_lanes_admin_lifts_it_said_with_who_wrote_it(seen):
    assert seen["admin_lift"] == {"holds": False, "lifted_by": "justin (AZ5 on memory-lane's page)"}


def test_an_ai_entitys_az5_raises_nothing_and_an_admins_does(seen):
    assert seen["ai_raise"]["holds"] is False
    assert seen["admin_raise"]["raised_by"] == "justin (AZ5 on memory-lane's page)"
    assert any("Scram raised by justin (AZ5 on memory-lane's page)" in s for s in seen["admin_raise"]["said"])
