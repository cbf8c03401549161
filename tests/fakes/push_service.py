"""A browser push service on 127.0.0.1 (FCM's or Mozilla's, in miniature): takes an encrypted
push at /push/<token> with 201, and can be told to answer otherwise (410: the subscription is
gone; a 307 elsewhere). A `Browser` is one subscribing browser: its keys, and the decryption of
what reached it."""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from .http import FakeServer, Reply, Request


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass
class Browser:
    """A subscribing browser's key pair and auth secret (what PushManager.subscribe makes)."""

    endpoint: str
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth_secret: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def p256dh(self) -> str:
        point = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return b64url(point)

    @property
    def auth(self) -> str:
        return b64url(self.auth_secret)

    def subscription(self) -> dict:
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}

    def read(self, request: Request) -> dict:
        import http_ece

        plain = http_ece.decrypt(
            request.body, private_key=self.key, auth_secret=self.auth_secret, version="aes128gcm"
        )
        return json.loads(plain)


class FakePushService(FakeServer):
    def __init__(self) -> None:
        super().__init__()
        self.answers: dict[str, Reply] = {}  # token -> how to answer a push to it

    def endpoint(self, token: str) -> str:
        return f"{self.url}/push/{token}"

    def browser(self, token: str) -> Browser:
        return Browser(self.endpoint(token))

    def pushes_to(self, token: str) -> list[Request]:
        return [request for request in self.requests if request.path == f"/push/{token}"]

    def handle(self, request: Request) -> Reply:
        token = request.path.removeprefix("/push/")
        if request.method != "POST" or token == request.path:
            return Reply(404)
        return self.answers.get(token, Reply(201, headers={"Location": f"/message/{token}"}))
