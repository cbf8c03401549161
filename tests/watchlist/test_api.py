"""`/api/watches/`: Justin manages his Motion's watches; bad input gets an error that says why."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.factories import WatchFactory
from watchlist.models import Watch

pytestmark = pytest.mark.django_db

WATCH_PERMISSIONS = ["add_watch", "change_watch", "delete_watch"]


@pytest.fixture
def api(justin):
    """Justin keeps the Motion's watches: he holds the watch permissions."""
    justin.user_permissions.add(*Permission.objects.filter(codename__in=WATCH_PERMISSIONS))
    client = APIClient()
    client.force_authenticate(justin)
    return client


def add(api, **body):
    return api.post("/api/watches/", {"motion": "cryptograss-merch", **body}, format="json")


def test_a_stranger_cannot_add_a_watch(merch):
    response = APIClient().post(
        "/api/watches/",
        {"motion": merch.slug, "kind": "web_page", "target": "https://example.org/"},
        format="json",
    )
    assert response.status_code == 401  # not signed in: who are you?
    assert not Watch.objects.exists()


def test_justin_adds_a_pickipedia_talk_page_and_the_default_wiki_is_filled_in(api, merch, settings):
    response = add(api, kind="wiki_page", target="Talk:Merch_plans", wake="always")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["target"], body["options"], body["wake"], body["interval"]) == (
        "Talk:Merch plans",
        {"api": settings.WATCH_WIKI_API},
        "always",
        90,
    )


def test_a_github_url_is_stored_as_owner_repo_number(api, merch):
    response = add(api, kind="github", target="https://github.com/cryptograss/merch/pull/40")
    assert response.json()["target"] == "cryptograss/merch#40"


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"kind": "github", "target": "merch 40"}, "target", "owner/repo#number"),
        ({"kind": "web_page", "target": "ftp://example.org/"}, "target", "http or https URL"),
        ({"kind": "web_page", "target": "http://10.0.0.1/admin"}, "target", "a private address"),
        ({"kind": "web_page", "target": "http://localhost:8000/"}, "target", "a loopback address"),
        ({"kind": "wiki_page", "target": "Talk:A|B"}, "target", "cannot contain '|'"),
        (
            {"kind": "wiki_page", "target": "Merch", "options": {"wiki": "x"}},
            "options",
            "unknown option 'wiki'",
        ),
        ({"kind": "contract", "target": "0x12"}, "target", "40-hex-digit address"),
        (
            {"kind": "contract", "target": "0x" + "1" * 40, "options": {"max_range": 0}},
            "options",
            "max_range",
        ),
        (
            {"kind": "web_page", "target": "https://example.org/", "interval": 5},
            "interval",
            "at least 90 seconds",
        ),
        ({"kind": "telegram", "target": "x"}, "kind", "not a valid choice"),
        (
            {"kind": "web_page", "target": "https://example.org/", "wake": "sometimes"},
            "wake",
            "not a valid choice",
        ),
    ],
)
def test_a_bad_watch_is_refused_with_a_reason(api, merch, settings, body, field, says):
    settings.WATCH_HTTP_ALLOW_NETWORKS = []
    response = add(api, **body)

    assert response.status_code == 400
    error = response.json()["error"]
    assert says in " ".join(error["fields"][field])
    assert not Watch.objects.exists()


def test_pausing_and_resuming(api, merch):
    w = WatchFactory(motion=merch, enabled=True)
    Watch.objects.filter(pk=w.pk).update(disabled_reason="", consecutive_failures=4)

    assert api.post(f"/api/watches/{w.pk}/pause/").json()["enabled"] is False
    resumed = api.post(f"/api/watches/{w.pk}/resume/").json()

    assert resumed["enabled"] is True and resumed["consecutive_failures"] == 0


def test_editing_the_target_forgets_the_etag_and_hash(api, merch):
    w = WatchFactory(motion=merch, target="https://example.org/a")
    Watch.objects.filter(pk=w.pk).update(etag='"abc"', text_hash="f" * 64, extra={"checked": True})

    response = api.patch(f"/api/watches/{w.pk}/", {"target": "https://example.org/b"}, format="json")

    assert response.status_code == 200 and response.json()["state"] == {}
    w.refresh_from_db()
    assert (w.etag, w.text_hash, w.extra) == ("", "", {})


def test_changing_only_the_wake_policy_keeps_the_state(api, merch):
    w = WatchFactory(motion=merch, target="https://example.org/a")
    Watch.objects.filter(pk=w.pk).update(etag='"abc"')

    api.patch(f"/api/watches/{w.pk}/", {"wake": "never"}, format="json")

    w.refresh_from_db()
    assert (w.wake, w.etag) == ("never", '"abc"')


def test_listing_is_per_motion_and_deleting_removes(api, merch):
    mine = WatchFactory(motion=merch)
    WatchFactory()

    listed = api.get("/api/watches/", {"motion": merch.slug}).json()
    assert [w["id"] for w in listed] == [mine.pk]

    assert api.delete(f"/api/watches/{mine.pk}/").status_code == 204
    assert not Watch.objects.filter(pk=mine.pk).exists()


def test_the_watch_model_has_its_migration():
    out = io.StringIO()
    call_command("makemigrations", "watchlist", "--check", "--dry-run", stdout=out)
