"""Web Push of notices (memory-lane's `services/push.py`, the facts): each new notice is sent
once, encrypted for each browser its person subscribed and signed with our VAPID key, to that
subscription's own endpoint and nowhere else.

An endpoint is a capability URL at the browser's push service (a secret host): it is checked when
a browser subscribes and again before every send (https; never a private, loopback or link-local
address unless WAKES_PUSH_LOOPBACK_OK, which only the tests' fake push service sets), sent through
the project's HTTP wrapper (its SSRF guard checks the resolved address) without following a
redirect, and never shown or logged past its origin.

No WAKES_VAPID_PRIVATE_KEY: no push; the header's notices work as before.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import logging
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.urls import reverse

from motion_runner.lib.http.base import FetchError
from motion_runner.lib.http.client import HttpClient
from motion_runner.thread.markup import plain_text

from ..conf import app_settings
from ..models import Notice, PushSubscription, clock

log = logging.getLogger(__name__)

# An undelivered push is dropped by the push service after this long: an answer an hour old is
# in the header by then.
TTL_SECONDS = 3600
TIMEOUT_SECONDS = 10
GONE = (404, 410)  # the push service forgot the subscription: so do we
LOOPBACK_NETWORK_V4 = "127.0.0.0/8"
LOOPBACK_NETWORK_V6 = "::1/128"


class EndpointRefused(ValueError):
    """A subscription endpoint that is not a push service's public https address."""


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def private_key() -> str:
    return (app_settings.WAKES_VAPID_PRIVATE_KEY or "").strip().strip("\"'").strip()


def vapid():
    """The configured key as py_vapid reads it (base64url of the raw number, DER, or PEM)."""
    from py_vapid import Vapid02

    key = private_key()
    if "-----BEGIN" in key:
        return Vapid02.from_pem(key.replace("\\n", "\n").encode())
    return Vapid02.from_string(key)


def enabled() -> bool:
    if not private_key():
        return False
    try:
        vapid()
    except Exception as exc:  # the key's shape, never the key
        log.error("Web Push is off: WAKES_VAPID_PRIVATE_KEY can't be read (%s)", type(exc).__name__)
        return False
    return True


def public_key() -> str:
    """The applicationServerKey browsers subscribe with (an uncompressed P-256 point,
    base64url); '' when push is off. Public by nature: every subscribing page is given it."""
    if not enabled():
        return ""
    from cryptography.hazmat.primitives import serialization

    point = vapid().public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return _b64url(point)


def new_private_key() -> str:
    """A fresh VAPID private key, base64url (manage.py vapid_key)."""
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return _b64url(key.private_numbers().private_value.to_bytes(32, "big"))


def _is_loopback_name(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost")


def check_endpoint(endpoint: str) -> str:
    """The endpoint if push may be sent there; else EndpointRefused saying why (not the URL)."""
    try:
        parts = urlsplit(endpoint)
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError as exc:
        raise EndpointRefused("the endpoint is not a URL") from exc
    if not host or parts.username or parts.password:
        raise EndpointRefused("the endpoint must be a plain https URL, with no credentials in it")
    loopback_ok = bool(app_settings.WAKES_PUSH_LOOPBACK_OK)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    loopback = _is_loopback_name(host) or (address is not None and address.is_loopback)
    if loopback:
        if not loopback_ok:
            raise EndpointRefused("the endpoint is this machine, not a push service")
        if parts.scheme not in ("http", "https"):
            raise EndpointRefused("the endpoint must be an https URL")
        return endpoint
    if parts.scheme != "https":
        raise EndpointRefused("the endpoint must be an https URL")
    if address is not None and not address.is_global:
        raise EndpointRefused("the endpoint is a private address, not a push service")
    return endpoint


def notification(notice: Notice) -> dict:
    """What the browser shows (static/motion_runner/push-worker.js), as the header says it."""
    title = notice.motion.title or notice.motion_id
    words = " ".join(
        plain_text(notice.answer.text or "", in_a_turn=notice.answer.turn_id is not None).split()
    )  # its Markdown's words (43.4)
    url = reverse("motion-thread", args=[notice.motion_id]) + f"#m-{notice.answer_id}"
    return {
        "title": f"@{notice.answer.sender} {notice.get_kind_display()}",
        "body": f"{title}: {words}"[:200],
        "tag": f"notice-{notice.pk}",
        "url": url,
    }


@dataclass
class Sent:
    status: str  # sent | gone | refused | failed


def encrypted(subscription: PushSubscription, payload: dict) -> tuple[bytes, dict[str, str]]:
    """The payload encrypted for the browser (RFC 8291, aes128gcm) and the headers that go with
    it, VAPID-signed for the endpoint's origin (RFC 8292)."""
    from pywebpush import WebPusher

    info = {
        "endpoint": subscription.endpoint,
        "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth},
    }
    body = WebPusher(info).encode(json.dumps(payload).encode(), "aes128gcm")["body"]
    claims = {
        "sub": app_settings.WAKES_VAPID_CONTACT,
        "aud": "{0.scheme}://{0.netloc}".format(urlsplit(subscription.endpoint)),
        "exp": int(time.time()) + 12 * 3600,
    }
    headers = {"Content-Encoding": "aes128gcm", "TTL": str(TTL_SECONDS), "Urgency": "normal"}
    headers.update(vapid().sign(claims))
    return body, headers


def _failed(subscription: PushSubscription, why: str, origin: str) -> Sent:
    log.warning("push to %s %s", origin, why)
    PushSubscription.objects.filter(pk=subscription.pk).update(last_error=why[:200])
    return Sent("failed")


def send(subscription: PushSubscription, payload: dict) -> Sent:
    """One push, through the project's one HTTP wrapper (its SSRF guard resolves the host and
    connects to the address it checked), to the endpoint itself: a redirect is not followed."""
    try:
        endpoint = check_endpoint(subscription.endpoint)
    except EndpointRefused as exc:
        PushSubscription.objects.filter(pk=subscription.pk).update(last_error=f"refused: {exc}"[:200])
        return Sent("refused")
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(endpoint))
    try:
        body, headers = encrypted(subscription, payload)
    except Exception as exc:  # keys a browser never made
        return _failed(
            subscription, f"failed: the subscription's keys can't be used ({type(exc).__name__})", origin
        )
    allow = [LOOPBACK_NETWORK_V4, LOOPBACK_NETWORK_V6] if app_settings.WAKES_PUSH_LOOPBACK_OK else []
    try:
        with HttpClient(timeout=TIMEOUT_SECONDS, max_redirects=0, allow=allow, max_bytes=64 * 1024) as client:
            response = client.request("POST", endpoint, headers=headers, content=body)
    except FetchError as exc:
        return _failed(subscription, f"failed: {str(exc).replace(endpoint, origin)[:120]}", origin)
    if response.status in GONE:
        subscription.delete()
        return Sent("gone")
    if response.status >= 300:
        return _failed(subscription, f"failed: {response.status}", origin)
    PushSubscription.objects.filter(pk=subscription.pk).update(last_sent_at=clock.now(), last_error="")
    return Sent("sent")


def push_notices(notice_ids: list[int]) -> dict[str, int]:
    """Each notice, once (claimed by a conditional UPDATE), to every browser of its person; a
    notice already seen is not pushed."""
    counts = {"sent": 0, "gone": 0, "refused": 0, "failed": 0, "skipped": 0}
    if not enabled():
        return counts
    for notice in Notice.objects.filter(pk__in=notice_ids).select_related("motion", "agent", "answer"):
        claimed = Notice.objects.filter(pk=notice.pk, pushed_at__isnull=True, seen_at__isnull=True).update(
            pushed_at=clock.now()
        )
        if not claimed:
            counts["skipped"] += 1
            continue
        payload = notification(notice)
        for subscription in PushSubscription.objects.filter(person_id=notice.person_id):
            counts[send(subscription, payload).status] += 1
    return counts
