"""Issue 25: a watch as a newcomer meets it. Its first check says "now watching" in the Motion;
"check now" checks within seconds (a cycle is sent at once, not left to beat's next tick); a
refused loopback address names the setting that would allow it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from motion_runner.models import Message
from tests.factories import UserFactory, WatchFactory
from watchlist.models import Watch

from .conftest import recheck

pytestmark = pytest.mark.django_db


def system_lines(motion) -> list[str]:
    return list(Message.objects.filter(motion=motion, source="system").values_list("text", flat=True))


def test_the_first_check_says_now_watching_once(web, watch, merch):
    page = watch("web_page", web.page("/news", "News", "Shirts are coming.", validator="none"))

    recheck()
    recheck()

    assert system_lines(merch) == [f"👁 now watching {page}: a change is posted here"]


def test_a_watch_edited_to_watch_something_else_says_so_again(web, watch, merch):
    page = watch("web_page", web.page("/news", "News", "Shirts are coming.", validator="none"))
    recheck()
    page.target = web.page("/tour", "Tour", "Dates soon.", validator="none")
    page.last_checked_at = None
    page.save()

    recheck()

    assert len(system_lines(merch)) == 2


def test_a_failing_first_check_does_not_say_now_watching(watch, merch):
    watch("web_page", "http://127.0.0.1:9/never-there")

    recheck()

    assert system_lines(merch) == []


@pytest.fixture
def sent(monkeypatch) -> list[str]:
    from watchlist import tasks

    calls: list[str] = []
    monkeypatch.setattr(tasks.check_watches, "delay", lambda: calls.append("check"))
    return calls


def test_check_now_in_the_admin_sends_a_cycle_at_once(merch, sent, django_capture_on_commit_callbacks):
    w = WatchFactory(motion=merch, kind="web_page", target="https://example.org/")
    Watch.objects.filter(pk=w.pk).update(next_due_at=timezone.now() + timedelta(hours=1))
    admin = Client()
    admin.force_login(UserFactory(username="ana", is_staff=True, is_superuser=True))

    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(
            "/admin/watchlist/watch/", {"action": "check_now", "_selected_action": [w.pk]}, follow=True
        )

    assert sent == ["check"]
    assert Watch.objects.get(pk=w.pk).next_due_at <= timezone.now()
    assert "being checked now" in response.content.decode()


def test_a_new_watch_is_checked_at_once(merch, sent, django_capture_on_commit_callbacks, settings):
    from rest_framework.test import APIClient

    from motion_runner.api.auth import create_key
    from tests.factories import AgentFactory

    agent = AgentFactory(name="scout")
    merch.agents.add(agent)
    _, key = create_key(agent)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/watches/",
            {"motion": merch.slug, "kind": "web_page", "target": "https://example.org/"},
            format="json",
        )

    assert response.status_code == 201, response.content
    assert sent == ["check"]


def test_a_refused_loopback_address_names_the_setting_that_allows_it(merch, settings):
    from watchlist.kinds import InvalidTarget, get_kind

    settings.WATCH_HTTP_ALLOW_NETWORKS = []

    with pytest.raises(InvalidTarget) as refused:
        get_kind("web_page").clean_target("http://127.0.0.1:8000/status", {})

    assert "WATCH_HTTP_ALLOW_NETWORKS" in str(refused.value)
