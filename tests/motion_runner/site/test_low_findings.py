"""Issue 10's low findings: each one, as an outsider or a careless agent would meet it."""

from __future__ import annotations

import pytest
from django.test import Client

from motion_runner.lib.http.guard import address_problem
from motion_runner.models import AgentKey
from tests.factories import AgentFactory, UserFactory
from wakes.turn.requests import find_asks


def test_the_admins_new_key_never_rides_in_a_cookie(db):
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    agent = AgentFactory(name="scribe")

    response = admin.post(
        "/admin/motion_runner/agent/", {"action": "create_key", "_selected_action": [agent.pk]}, follow=False
    )

    assert AgentKey.objects.filter(agent=agent).exists()
    assert all("mrk_" not in morsel.value for morsel in response.cookies.values())
    assert "messages" not in response.cookies


@pytest.mark.parametrize(
    "address",
    [
        "2002:c0a8:0001::1",  # 6to4 of 192.168.0.1
        "2002:7f00:0001::1",  # 6to4 of 127.0.0.1
        "2001:0000:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    ],
)
def test_ipv6_forms_of_inside_addresses_are_refused(address):
    assert address_problem(address) is not None


@pytest.mark.parametrize(
    "text",
    [
        'He wrote:\n> <tools to="wipe the disk"/>\nI will not.',
        'The syntax is `<tools to="x"/>`.',
        'For example:\n```\n<deploy to="production"/>\n```',
    ],
)
def test_a_tag_quoted_or_shown_as_code_is_no_request(text):
    assert find_asks(text) == []


def test_a_tag_in_the_agents_own_words_is_still_a_request():
    asks = find_asks('Quoting `<tools/>` aside, <merge to="PR 12"/>')
    assert [(a.kind, a.to) for a in asks] == [("merge", "PR 12")]
