"""Notices in real Chromium: the header shows a person's unseen answers and opening the list
marks them seen; the push service worker (static/motion_runner/push-worker.js), registered for
real, turns a push into a notification. Chromium's own push service (FCM) is not on this closed
network, so the push is delivered to the worker through DevTools (ServiceWorker.deliverPushMessage)
with the payload push_notices sends; the encryption and the send are tested against the fake push
service in tests/wakes/notices/test_notices_push.py."""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import expect

from motion_runner.models import Message, Turn
from motion_runner.signals import message_created
from tests.browser.conftest import screenshot, sign_in_as
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from wakes.models import MentionWake, Notice
from wakes.notices.push import notification

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def answered_notice(monkeypatch):
    from wakes.notices import answers

    monkeypatch.setattr(answers, "send_when_broker_answers", lambda *args: None)
    justin = UserFactory(username="justin")
    magent = AgentFactory(name="magent")
    motion = MotionFactory(slug="jams", title="Jams")
    mention = MessageFactory(motion=motion, sender="justin", author=justin, text="@magent set list?")
    turn = Turn.objects.create(motion=motion, agent=magent, reason="mention", woken_by=mention)
    MentionWake.objects.create(
        message=mention,
        agent=magent,
        status="woken",
        turn=turn,
        due_at=mention.created_at,
        created_at=mention.created_at,
    )
    answer = MessageFactory(
        motion=motion,
        agent=magent,
        sender="magent",
        source="runner",
        turn=turn,
        text="Opening with Salt Creek.",
    )
    message_created.send(sender=Message, message=answer, newest_of_batch=True)
    return Notice.objects.get()


def test_the_header_shows_an_unseen_answer_and_opening_it_marks_it_seen(live_server, page, answered_notice):
    sign_in_as(page, live_server, answered_notice.person)
    page.goto(f"{live_server.url}/")

    count = page.locator("#notices .notices-unseen")
    expect(count).to_have_text("1")
    page.locator("#notices summary").click()
    expect(page.locator("#notices .notices-list")).to_contain_text("@magent answered you in Jams")
    screenshot(page, "notices-open")

    expect(count).to_have_text("0", timeout=10_000)
    answered_notice.refresh_from_db()
    assert answered_notice.seen_at is not None
    assert page.js_errors == []


class WorkerWatch:
    """What DevTools' ServiceWorker domain says of the page's workers: their registrations, each
    version's status and running status, and any error a worker reported."""

    def __init__(self, cdp) -> None:
        self.cdp = cdp
        self.registrations: dict[str, str] = {}
        self.versions: dict[str, dict] = {}
        self.errors: list[dict] = []
        cdp.on("ServiceWorker.workerRegistrationUpdated", self._registrations)
        cdp.on("ServiceWorker.workerVersionUpdated", self._versions)
        cdp.on("ServiceWorker.workerErrorReported", lambda event: self.errors.append(event["errorMessage"]))
        cdp.send("ServiceWorker.enable")

    def _registrations(self, event) -> None:
        for registration in event["registrations"]:
            if not registration.get("isDeleted"):
                self.registrations[registration["scopeURL"]] = registration["registrationId"]

    def _versions(self, event) -> None:
        for version in event["versions"]:
            self.versions[version["versionId"]] = version

    def wait_for(self, ready, bound: float = 30.0) -> None:
        deadline = time.monotonic() + bound
        while not ready() and time.monotonic() < deadline:
            self.cdp.send("Runtime.evaluate", {"expression": "1"})  # lets the session's events arrive

    def activated(self, registration: str) -> bool:
        return any(
            version["registrationId"] == registration and version["status"] == "activated"
            for version in self.versions.values()
        )

    def registration_id(self, scope: str) -> str:
        """The id DevTools knows `scope` by, once the browser itself holds its worker activated (the
        page's `activated` can come first: a push delivered before is dropped without a word)."""
        self.wait_for(lambda: scope in self.registrations)
        registration = self.registrations[scope]
        self.wait_for(lambda: self.activated(registration))
        assert self.activated(registration), self.described()
        return registration

    def described(self) -> str:
        states = [(v["registrationId"], v["status"], v["runningStatus"]) for v in self.versions.values()]
        return f"workers (registration, status, running): {states}; errors reported: {self.errors}"


def test_the_service_worker_shows_a_push_as_a_notification(live_server, page, answered_notice):
    page.context.grant_permissions(["notifications"], origin=live_server.url)
    sign_in_as(page, live_server, answered_notice.person)
    page.goto(f"{live_server.url}/")
    worker = page.locator("#notices").get_attribute("data-worker")
    scope = page.evaluate("async () => (await window.motionRunnerPushWorker()).scope")
    cdp = page.context.new_cdp_session(page)
    workers = WorkerWatch(cdp)
    registration = workers.registration_id(scope)

    payload = notification(answered_notice)
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": live_server.url, "registrationId": registration, "data": json.dumps(payload)},
    )

    shown = []
    deadline = time.monotonic() + 30
    while not shown and time.monotonic() < deadline:
        shown = page.evaluate(
            "async (url) => { const r = await navigator.serviceWorker.getRegistration(url);"
            " return (await r.getNotifications()).map(n => ({title: n.title, body: n.body, url: n.data.url})); }",
            worker,
        )
    assert shown == [
        {"title": "@magent answered you", "body": "Jams: Opening with Salt Creek.", "url": payload["url"]}
    ], workers.described()
    assert page.js_errors == []
