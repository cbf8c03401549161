"""Every dial can be set in the admin (Wakes → Dials), and says what it does and its default."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
from django.db import models

from wakes.models import Dials
from wakes.trust import full_tools_for

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
    data.update(full_tools_for=json.dumps(["Justin"]), loop_same_call_in_a_row="4")

    response = admin_client.post(CHANGE_PAGE, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    dials = Dials.load()
    assert (dials.full_tools_for, dials.loop_same_call_in_a_row) == (["Justin"], 4)
    assert full_tools_for() == {"justin"}
