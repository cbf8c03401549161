"""The one outbound HTTP wrapper: the SSRF guard (after DNS, on every redirect), pinning, limits."""

from __future__ import annotations

import pytest

from motion_runner.lib.http import guard as whttp
from motion_runner.lib.http.base import BlockedAddress, FetchError
from motion_runner.lib.http.client import HttpClient
from motion_runner.lib.http.guard import address_problem
from tests.fakes.http import FakeServer, Reply
from watchlist.checker import run_cycle

from .conftest import lines


class Echo(FakeServer):
    """Answers with the Host header it saw; `/go?to=URL` redirects; `/big` is 1 MB."""

    def handle(self, request):
        if request.path == "/go":
            return Reply(302, b"", {"Location": request.query["to"]})
        if request.path == "/big":
            return Reply(200, b"x" * 1_000_000)
        return Reply(200, f"host={request.header('host')} auth={request.header('authorization')}".encode())


@pytest.fixture
def inside():
    with Echo() as fake:
        yield fake


@pytest.fixture
def other():
    with Echo() as fake:
        yield fake


def test_loopback_is_refused_when_no_allowlist_permits_it(inside):
    with HttpClient(allow=[]) as client, pytest.raises(BlockedAddress, match="loopback"):
        client.get(inside.url + "/")
    assert inside.requests == []


def test_a_redirect_to_127_0_0_1_is_refused_when_the_allowlist_is_narrowed(inside, other):
    allow = [f"127.0.0.1:{inside.port}"]  # only the first server, by port
    with HttpClient(allow=allow) as client:
        assert client.get(inside.url + "/").status == 200
        with pytest.raises(BlockedAddress, match="refused 127.0.0.1: a loopback address"):
            client.get(f"{inside.url}/go", params={"to": f"http://127.0.0.1:{other.port}/secret"})
    assert other.requests == []


def test_a_name_that_resolves_to_a_private_address_is_refused(monkeypatch):
    monkeypatch.setattr(whttp, "resolve", lambda host, port: ["10.1.2.3"])
    with (
        HttpClient(allow=[]) as client,
        pytest.raises(BlockedAddress, match=r"intranet\.example \(10\.1\.2\.3\): a private address"),
    ):
        client.get("http://intranet.example/")


def test_a_name_with_one_public_and_one_private_address_is_refused(monkeypatch):
    monkeypatch.setattr(whttp, "resolve", lambda host, port: ["93.184.216.34", "192.168.1.1"])
    with HttpClient(allow=[]) as client, pytest.raises(BlockedAddress, match="private"):
        client.get("http://mixed.example/")


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("169.254.10.1", "link-local"),
        ("fe80::1", "link-local"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("100.64.0.1", "reserved"),
        ("0.0.0.0", "reserved"),
        ("172.16.5.4", "private"),
    ],
)
def test_each_kind_of_inside_address_is_named(address, why):
    assert why in whttp.address_problem(address)


def test_the_connection_goes_to_the_checked_address_with_the_name_kept(inside, monkeypatch):
    answers = iter([["127.0.0.1"], ["10.0.0.9"]])  # a rebinding DNS: a second lookup would lie
    monkeypatch.setattr(whttp, "resolve", lambda host, port: next(answers))
    with HttpClient(allow=["127.0.0.1"]) as client:
        response = client.get(f"http://wiki.example:{inside.port}/")
    assert response.text.startswith(f"host=wiki.example:{inside.port}")


def test_credentials_do_not_follow_a_redirect_to_another_host(inside, monkeypatch):
    monkeypatch.setattr(whttp, "resolve", lambda host, port: ["127.0.0.1"])
    with HttpClient(allow=["127.0.0.1"]) as client:
        response = client.get(
            f"{inside.url}/go?to=http://elsewhere.example:{inside.port}/",
            headers={"Authorization": "Bearer t"},
        )
    assert "auth=None" in response.text and inside.requests[0].header("authorization") == "Bearer t"


def test_a_body_over_the_cap_is_cut_off(inside):
    with (
        HttpClient(allow=["127.0.0.1"], max_bytes=100_000) as client,
        pytest.raises(FetchError, match="more than 100000 bytes"),
    ):
        client.get(inside.url + "/big")


def test_a_host_that_asked_us_to_wait_is_not_asked_again_meanwhile(inside):
    with HttpClient(allow=["127.0.0.1"]) as client:
        client.block_host(inside.url, 30)
        with pytest.raises(FetchError) as caught:
            client.get(inside.url + "/")
    assert 29 <= caught.value.retry_after <= 30 and inside.requests == []


@pytest.mark.django_db
def test_a_web_watch_on_a_private_address_is_stopped_with_the_reason(watch, merch, monkeypatch, settings):
    settings.WATCH_HTTP_ALLOW_NETWORKS = []
    monkeypatch.setattr(whttp, "resolve", lambda host, port: ["192.168.0.10"])
    page = watch("web_page", "http://router.example/admin")

    run_cycle()

    page.refresh_from_db()
    assert not page.enabled
    assert page.disabled_reason == (
        "refused router.example (192.168.0.10): a private address"
        " (an operator may allow a network with WATCH_HTTP_ALLOW_NETWORKS)"
    )
    assert "a private address" in lines(merch)[0]


@pytest.mark.django_db
def test_a_contract_watch_whose_rpc_resolves_inside_is_stopped(watch, merch, monkeypatch, settings):
    settings.WATCH_HTTP_ALLOW_NETWORKS = []
    monkeypatch.setattr(whttp, "resolve", lambda host, port: ["169.254.169.254"])
    contract = watch("contract", "0x" + "1" * 40, options={"rpc": "http://rpc.example/"})

    run_cycle()

    contract.refresh_from_db()
    assert not contract.enabled and "a cloud metadata address" in contract.disabled_reason


# --- inside addresses in their IPv6 forms (issues 10 and 20) ------------------------------------


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


@pytest.mark.parametrize("address", ["fec0::1", "feff:ffff::1", "fec0::a9fe:a9fe"])
def test_a_site_local_ipv6_address_is_refused(address):
    from motion_runner.lib.http.guard import address_problem

    assert address_problem(address) == "a reserved address"
