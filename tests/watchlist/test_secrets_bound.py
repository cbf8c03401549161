"""Issue 10, finding 1 and 6: each configured secret goes only to the origin it was configured
for, over https (plain http only to loopback), and nothing derived from one is stored where a
reader of the Motion sees it."""

from __future__ import annotations

import pytest

from motion_runner.lib.http import client as whttp
from motion_runner.lib.http.client import HttpClient, credential_may_go
from tests.fakes.github import FakeGitHub
from wakes.abilities.wiki_reply import credentials_for
from watchlist.checker import run_cycle
from watchlist.models import Watch

from .test_http_guard import Echo

TOKEN = "ghp_configuredTokenForTheRealApi0123456789"


@pytest.fixture
def attacker():
    """A stand-in for a host an agent key would like the GitHub token sent to."""
    with FakeGitHub() as fake:
        yield fake


@pytest.mark.django_db
def test_a_github_watch_pointed_at_another_api_never_carries_the_token(github, attacker, watch, settings):
    settings.WATCH_GITHUB_TOKEN = TOKEN
    attacker.add("cryptograss/merch", 12, "Shirt sizes")
    watch("github", "cryptograss/merch#12", options={"api": attacker.url})

    run_cycle()

    assert attacker.requests, "the watch did check its own api"
    assert all(request.header("authorization") is None for request in attacker.requests)


@pytest.mark.django_db
def test_the_configured_github_api_still_gets_the_token(github, watch, settings):
    settings.WATCH_GITHUB_TOKEN = TOKEN
    github.add("cryptograss/merch", 12, "Shirt sizes")
    watch("github", "cryptograss/merch#12")

    run_cycle()

    assert github.requests[0].header("authorization") == f"Bearer {TOKEN}"


@pytest.mark.parametrize(
    ("url", "configured"),
    [
        ("http://api.github.com/repos", "https://api.github.com"),  # downgraded to plain http
        ("https://api.github.com:8443/repos", "https://api.github.com"),  # another port
        ("https://evil.example/repos", "https://api.github.com"),  # another host
        ("https://api.github.com.evil.example/", "https://api.github.com"),
        ("http://wiki.example/api.php", "http://wiki.example/api.php"),  # plain http off this machine
    ],
)
def test_a_secret_may_not_go_anywhere_but_its_own_origin_over_https(url, configured):
    assert not credential_may_go(url, configured)


@pytest.mark.parametrize(
    ("url", "configured"),
    [
        ("https://api.github.com/repos/a/b/issues/1", "https://api.github.com"),
        ("https://api.github.com:443/x", "https://api.github.com"),
        ("http://127.0.0.1:8001/api.php", "http://127.0.0.1:8001/api.php"),  # loopback: no wire
    ],
)
def test_a_secret_goes_to_its_own_origin(url, configured):
    assert credential_may_go(url, configured)


def test_a_bot_password_for_a_plain_http_wiki_is_never_used(settings):
    settings.WIKI_BOT_CREDENTIALS = {"http://wiki.example/api.php": ("Bot@runner", "s3cret")}

    assert credentials_for("http://wiki.example/api.php") is None


def test_credentials_do_not_follow_a_redirect_to_the_same_host_on_another_port():
    with Echo() as first, Echo() as second, HttpClient(allow=["127.0.0.1"]) as client:
        response = client.get(
            f"{first.url}/go?to={second.url}/", headers={"Authorization": "Bearer t", "X-Api-Key": "k"}
        )
    assert "auth=None" in response.text
    assert second.requests[0].header("x-api-key") is None


def test_the_screen_key_is_never_sent_over_plain_http_off_this_machine(monkeypatch):
    monkeypatch.setattr(whttp.httpx, "post", lambda *a, **k: pytest.fail("the key was sent"))
    with pytest.raises(whttp.httpx.HTTPError, match="https"):
        whttp.post_json_to_configured_api(
            "http://api.example/v1/messages", headers={"x-api-key": "sk-ant-x"}, body={}, timeout=1
        )


@pytest.mark.django_db
def test_the_default_rpc_url_is_not_copied_into_a_contract_watchs_options(node, watch, settings, client):
    settings.WATCH_ETH_RPC_URL = node.url + "/v3/providerKey0123456789abcdef"
    from tests.factories import UserFactory

    client.force_login(UserFactory(is_superuser=True))
    answer = client.post(
        "/api/watches/",
        {"motion": "cryptograss-merch", "kind": "contract", "target": "0x" + "1" * 40},
        content_type="application/json",
    )

    assert answer.status_code == 201, answer.content
    assert "providerKey" not in answer.content.decode()
    assert "providerKey" not in str(Watch.objects.get().options)


@pytest.mark.django_db
def test_a_failing_rpc_names_its_host_but_not_the_key_in_its_path(watch, settings):
    with Echo() as rpc:
        settings.WATCH_ETH_RPC_URL = rpc.url + "/v3/providerKey0123456789abcdef"
        contract = watch("contract", "0x" + "1" * 40)

        run_cycle()

    contract.refresh_from_db()
    assert contract.last_error and "providerKey" not in contract.last_error
    assert "127.0.0.1" in contract.last_error
