"""Web Push of notices: a person who opted in is sent each new notice once, encrypted for their
browser and VAPID-signed, to the subscription's own endpoint (a local fake push service here)
and nowhere else."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from motion_runner.models import Message, Turn
from motion_runner.signals import message_created
from tests.factories import MessageFactory
from tests.fakes.http import Reply
from tests.fakes.push_service import Browser, FakePushService
from tests.wakes_support import clock, room, say
from wakes.models import Notice, PushSubscription
from wakes.notices import answers
from wakes.notices.push import EndpointRefused, check_endpoint, new_private_key, push_notices

pytestmark = pytest.mark.django_db

VAPID_KEY = new_private_key()


@pytest.fixture
def push_on():
    with override_settings(WAKES_VAPID_PRIVATE_KEY=VAPID_KEY, WAKES_PUSH_LOOPBACK_OK=True):
        yield


@pytest.fixture
def service():
    with FakePushService() as fake:
        yield fake


def signed_in(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def subscribe(user, browser: Browser):
    return signed_in(user).post("/api/notices/push/", browser.subscription(), format="json")


def answer(room, clock, monkeypatch) -> Notice:
    """Justin asks @magent; its turn answers (the push task is run by the test itself)."""
    monkeypatch.setattr(answers, "send_when_broker_answers", lambda *args: None)
    say(room.motion, room.justin, "@magent are the shirts in?", clock)
    turn = Turn.objects.get(agent=room.magent)
    message = MessageFactory(
        motion=room.motion, agent=room.magent, sender="magent", source="runner", turn=turn, text="Yes, 40."
    )
    message_created.send(sender=Message, message=message, newest_of_batch=True)
    return Notice.objects.get()


def test_a_subscribed_browser_gets_the_answer_encrypted_for_it(room, clock, monkeypatch, push_on, service):
    browser = service.browser("justins-phone")
    assert subscribe(room.justin, browser).status_code == 201
    notice = answer(room, clock, monkeypatch)

    assert push_notices([notice.pk])["sent"] == 1

    (push,) = service.pushes_to("justins-phone")
    assert push.header("content-encoding") == "aes128gcm"
    assert push.header("authorization").startswith("vapid t=")
    shown = browser.read(push)
    assert shown["title"] == "@magent answered you"
    assert shown["body"].endswith("Yes, 40.")
    assert shown["url"] == f"/motions/{room.motion.slug}/#m-{notice.answer_id}"


def test_a_notice_is_pushed_once(room, clock, monkeypatch, push_on, service):
    subscribe(room.justin, service.browser("phone"))
    notice = answer(room, clock, monkeypatch)
    push_notices([notice.pk])
    assert push_notices([notice.pk])["skipped"] == 1
    assert len(service.pushes_to("phone")) == 1


def test_a_notice_seen_before_its_push_is_not_pushed(room, clock, monkeypatch, push_on, service):
    subscribe(room.justin, service.browser("phone"))
    notice = answer(room, clock, monkeypatch)
    Notice.objects.filter(pk=notice.pk).update(seen_at=notice.created_at)
    push_notices([notice.pk])
    assert service.pushes_to("phone") == []


def test_only_the_asking_persons_browsers_are_pushed(room, clock, monkeypatch, push_on, service):
    subscribe(room.rosemary, service.browser("rosemarys-laptop"))
    notice = answer(room, clock, monkeypatch)
    push_notices([notice.pk])
    assert service.pushes_to("rosemarys-laptop") == []


def test_a_subscription_the_push_service_forgot_is_dropped(room, clock, monkeypatch, push_on, service):
    subscribe(room.justin, service.browser("old-phone"))
    service.answers["old-phone"] = Reply(410)
    notice = answer(room, clock, monkeypatch)
    assert push_notices([notice.pk])["gone"] == 1
    assert not PushSubscription.objects.exists()


def test_a_redirect_is_not_followed_to_another_host(room, clock, monkeypatch, push_on, service):
    with FakePushService() as elsewhere:
        subscribe(room.justin, service.browser("phone"))
        service.answers["phone"] = Reply(307, headers={"Location": elsewhere.endpoint("phone")})
        notice = answer(room, clock, monkeypatch)
        assert push_notices([notice.pk])["failed"] == 1
        assert elsewhere.requests == []
    assert "redirect" in PushSubscription.objects.get().last_error


def test_no_vapid_key_no_push(room, clock, monkeypatch, service):
    with override_settings(WAKES_VAPID_PRIVATE_KEY=VAPID_KEY, WAKES_PUSH_LOOPBACK_OK=True):
        subscribe(room.justin, service.browser("phone"))
    with override_settings(WAKES_VAPID_PRIVATE_KEY="", WAKES_PUSH_LOOPBACK_OK=True):
        notice = answer(room, clock, monkeypatch)
        push_notices([notice.pk])
    assert service.requests == []


# --- subscribing ---------------------------------------------------------------------------------


def test_subscribing_needs_a_signed_in_person(room, push_on, service):
    response = APIClient().post("/api/notices/push/", service.browser("x").subscription(), format="json")
    assert response.status_code in (401, 403)
    assert not PushSubscription.objects.exists()


def test_the_subscription_is_never_echoed(room, push_on, service):
    response = subscribe(room.justin, service.browser("secret-token"))
    assert "secret-token" not in response.content.decode()


def test_unsubscribing_removes_only_ones_own(room, push_on, service):
    browser = service.browser("phone")
    subscribe(room.justin, browser)
    signed_in(room.rosemary).delete("/api/notices/push/", {"endpoint": browser.endpoint}, format="json")
    assert PushSubscription.objects.filter(person=room.justin).exists()
    signed_in(room.justin).delete("/api/notices/push/", {"endpoint": browser.endpoint}, format="json")
    assert not PushSubscription.objects.exists()


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://push.example.org/x",  # not https
        "https://10.0.0.8/push/x",  # a private address
        "https://169.254.169.254/latest/meta-data",  # the cloud's metadata service
        "https://user:pw@push.example.org/x",  # credentials in it
        "https://127.0.0.1/push/x",  # this machine (outside the tests' fake)
        "https://localhost/push/x",
    ],
)
def test_an_endpoint_that_is_not_a_push_service_is_refused(room, endpoint):
    with override_settings(WAKES_VAPID_PRIVATE_KEY=VAPID_KEY), pytest.raises(EndpointRefused):
        check_endpoint(endpoint)


def test_a_push_services_endpoint_is_taken(room):
    with override_settings(WAKES_VAPID_PRIVATE_KEY=VAPID_KEY):
        endpoint = "https://fcm.googleapis.com/fcm/send/abc:def"
        assert check_endpoint(endpoint) == endpoint


def test_a_refused_endpoint_is_a_clear_400(room, push_on):
    browser = Browser("https://10.0.0.8/push/x")
    response = subscribe(room.justin, browser)
    assert response.status_code == 400
    assert "private address" in str(response.json()["error"])
    assert not PushSubscription.objects.exists()


def test_the_public_key_is_given_to_a_signed_in_person(room, push_on):
    state = signed_in(room.justin).get("/api/notices/push/").json()
    assert state["enabled"] is True
    assert len(state["public_key"]) == 87  # an uncompressed P-256 point, base64url


def test_the_vapid_key_command_prints_a_key_push_can_use(room, capsys):
    from django.core.management import call_command

    from wakes.notices.push import public_key

    call_command("vapid_key")
    key = capsys.readouterr().out.strip()
    with override_settings(WAKES_VAPID_PRIVATE_KEY=key):
        assert len(public_key()) == 87
