"""Long polls a client may hold at once (issue 30 item 8): each waiting poll holds a web thread
for up to 25 s, so one client (an address, a person, an agent's key) holds at most
LONG_POLLS_PER_CLIENT of a process's, anonymous readers together at most LONG_POLLS_ANONYMOUS,
and a poll past either is answered at once: 429 with Retry-After, nothing waited for."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from motion_runner.api import cursor as cursors
from motion_runner.api.poll_caps import client_address, client_of, poll_slots
from motion_runner.models import Visibility
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory

pytestmark = pytest.mark.django_db

ROAMER = "198.51.100.7"  # an anonymous reader's address
NEIGHBOUR = "198.51.100.8"


@pytest.fixture(autouse=True)
def no_slots_held():
    poll_slots.clear()
    yield
    poll_slots.clear()


@pytest.fixture
def plaza():
    return MotionFactory(slug="plaza", visibility=Visibility.PUBLIC)


def long_poll(motion, *, address=ROAMER, client=None, wait="25", after=cursors.START, **headers):
    client = client or APIClient()
    return client.get(
        f"/api/motions/{motion.slug}/messages/",
        {"after": after, "wait": wait},
        REMOTE_ADDR=address,
        **headers,
    )


def fill(client: str, settings) -> None:
    for _ in range(settings.LONG_POLLS_PER_CLIENT):
        assert poll_slots.take(client, anonymous=client.startswith("address:"))


# --- who a client is ------------------------------------------------------------------------------


def test_an_anonymous_reader_is_its_address_and_a_forwarded_for_header_is_not_believed(rf):
    request = rf.get("/", REMOTE_ADDR=ROAMER, HTTP_X_FORWARDED_FOR="203.0.113.1")

    assert client_address(request) == ROAMER


def test_behind_a_trusted_proxy_the_nearest_untrusted_forwarded_address_is_the_client(rf, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    # The reader wrote a made-up first entry; the proxies appended what they saw.
    request = rf.get("/", REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="203.0.113.1, 198.51.100.7, 10.0.0.9")

    assert client_address(request) == ROAMER


def test_a_forwarded_for_header_from_an_untrusted_peer_is_ignored_even_with_proxies_set(rf, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    request = rf.get("/", REMOTE_ADDR=ROAMER, HTTP_X_FORWARDED_FOR="10.0.0.1")

    assert client_address(request) == ROAMER


def test_a_malformed_forwarded_entry_stops_the_walk_at_the_proxy_that_passed_it(rf, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.5"]
    request = rf.get("/", REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="not-an-address")

    assert client_address(request) == "10.0.0.5"


def test_a_signed_in_person_and_an_agents_key_are_counted_as_themselves_not_by_address(rf):
    person, agent = UserFactory(username="wren"), AgentFactory(name="finch")
    request = rf.get("/", REMOTE_ADDR=ROAMER)
    request.user = person

    assert client_of(request) == f"person:{person.pk}"
    from motion_runner.people.principal import AgentPrincipal

    request.user = AgentPrincipal(agent)
    assert client_of(request) == f"agent:{agent.pk}"


# --- the cap --------------------------------------------------------------------------------------


def test_a_long_poll_past_the_clients_cap_is_answered_at_once_with_429_and_retry_after(plaza, settings):
    fill(f"address:{ROAMER}", settings)

    response = long_poll(plaza)

    assert response.status_code == 429
    assert response["Retry-After"] == str(int(settings.LONG_POLL_RETRY_AFTER_SECONDS))
    assert response.json()["error"]["code"] == "throttled"


def test_another_address_is_not_held_back_by_a_full_one(plaza, settings):
    fill(f"address:{ROAMER}", settings)

    assert long_poll(plaza, address=NEIGHBOUR, wait="0.05").status_code == 200


def test_anonymous_readers_together_hold_at_most_their_share(plaza, settings):
    settings.LONG_POLLS_ANONYMOUS = 2
    assert poll_slots.take("address:203.0.113.1", anonymous=True)
    assert poll_slots.take("address:203.0.113.2", anonymous=True)

    assert long_poll(plaza, address=NEIGHBOUR).status_code == 429
    person = APIClient()
    person.force_login(UserFactory(username="wren"))
    assert long_poll(plaza, client=person, wait="0.05").status_code == 200


def test_a_signed_in_person_is_capped_as_themselves_wherever_they_poll_from(plaza, settings):
    wren = UserFactory(username="wren")
    person = APIClient()
    person.force_login(wren)
    fill(f"address:{ROAMER}", settings)
    assert long_poll(plaza, client=person, wait="0.05").status_code == 200

    fill(f"person:{wren.pk}", settings)
    assert long_poll(plaza, client=person, address=NEIGHBOUR).status_code == 429


def test_a_poll_over_the_cap_that_has_news_answers_it(plaza, settings):
    MessageFactory(motion=plaza, text="already here")
    fill(f"address:{ROAMER}", settings)

    response = long_poll(plaza)

    assert response.status_code == 200
    assert [m["text"] for m in response.json()["results"]] == ["already here"]


def test_a_finished_poll_gives_its_slot_back(plaza, settings):
    settings.LONG_POLLS_PER_CLIENT = 1

    assert long_poll(plaza, wait="0.05").status_code == 200
    assert poll_slots.held(f"address:{ROAMER}") == 0
    assert long_poll(plaza, wait="0.05").status_code == 200


def test_a_poll_that_does_not_wait_needs_no_slot(plaza, settings):
    fill(f"address:{ROAMER}", settings)

    assert long_poll(plaza, wait="0").status_code == 200
