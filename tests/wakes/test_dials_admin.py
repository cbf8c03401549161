"""Every dial can be set in the admin (Wakes → Dials), and says what it does and its default."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.db import models

from tests.factories import AgentFactory, UserFactory
from wakes.decision.trust import full_tools_for
from wakes.models import Dials

pytestmark = pytest.mark.django_db

CHANGE_PAGE = "/admin/wakes/dials/1/change/"


def dial_fields() -> list[models.Field]:
    """Every dial the model has, read from the model itself (not a hand-kept list)."""
    return [f for f in Dials._meta.concrete_fields if f.editable and not f.primary_key]


def shown_default(field: models.Field) -> str | None:
    """How a help text writes the field's default; None for long texts (named, not quoted)."""
    default = field.get_default()
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, (int, float, Decimal)):
        return f"{float(default):g}"
    if default is None:
        return "blank"
    if isinstance(default, list):
        return "none"
    if isinstance(default, str) and len(default) <= 40:
        return default
    return None


def test_every_dial_is_in_the_admin_form(admin_client):
    Dials.load()
    form = admin_client.get(CHANGE_PAGE).context["adminform"].form
    missing = [f.name for f in dial_fields() if f.name not in form.fields]
    assert missing == []


@pytest.mark.parametrize("field", dial_fields(), ids=lambda f: f.name)
def test_every_dial_says_what_it_does_and_its_default(field):
    help_text = str(field.help_text)
    assert len(help_text) > 30, f"{field.name}: {help_text!r}"
    match = re.search(r"Default: \$?(.+?)\.?$", help_text)
    assert match, f"{field.name} does not say its default: {help_text!r}"
    if (default := shown_default(field)) is not None:
        assert match.group(1).split(" ")[0] == default, f"{field.name}: {help_text!r}"


def test_an_admin_sets_full_tools_for_and_the_loop_guard_in_the_admin(admin_client):
    UserFactory(username="Justin")
    Dials.load()
    form = admin_client.get(CHANGE_PAGE).context["adminform"].form
    data = {}
    for name, bound in ((name, form[name]) for name in form.fields):
        value = bound.value()
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = value
    data.update(full_tools_for=["Justin"], loop_same_call_in_a_row="4")

    response = admin_client.post(CHANGE_PAGE, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    dials = Dials.load()
    assert (dials.full_tools_for, dials.loop_same_call_in_a_row) == (["Justin"], 4)
    assert full_tools_for() == {"Justin"}  # as the user model compares names: exactly (issue 42.5)


def test_dials_are_labelled_in_words_not_field_names(admin_client):
    # Issue 25: the labels were the raw field names.
    Dials.load()
    form = admin_client.get(CHANGE_PAGE).context["adminform"].form

    assert form.fields["typing_ttl_seconds"].label == "Typing shown for (seconds)"
    assert form.fields["daily_budget_usd"].label == "Daily budget ($)"
    assert form.fields["min_consideration_usd"].label == "Minimum consideration ($)"
    assert all("_" not in str(field.label) for field in form.fields.values())


def test_full_tools_for_is_picked_from_the_people_and_agents_there_are(admin_client):
    UserFactory(username="rosemary")
    AgentFactory(name="scribe")
    dials = Dials.load()
    dials.full_tools_for = ["wiki-justin"]  # a name set before, with no user here: kept as a choice
    dials.save()

    page = admin_client.get(CHANGE_PAGE).content.decode()
    form = admin_client.get(CHANGE_PAGE).context["adminform"].form

    choices = [value for value, _ in form.fields["full_tools_for"].choices]
    assert {"rosemary", "scribe", "wiki-justin"} <= set(choices)
    assert '<select name="full_tools_for"' in page and "multiple" in page
    assert "SelectFilter" in page  # the admin's two-box picker
