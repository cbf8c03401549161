"""Message ids every layer derives: the runner's events, the wakes' lines, the watchlist's notices.

Ids for events whose harness line carries no uuid of its own are derived from stable keys
(session id plus the harness's own item or message ids), so a replayed line maps to the same
Message id and is never written twice.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid

from django.conf import settings

EVENT_NAMESPACE = uuid.UUID("6f1f4b0e-6a43-4d2c-9a53-3f1d8e5e7c21")


def stable_uuid(*parts: object) -> str:
    return str(uuid.uuid5(EVENT_NAMESPACE, "\x1f".join(str(p) for p in parts)))


def system_uuid(*parts: object) -> str:
    """The id of a line the runner itself says (a wake line, a request card, a watch line, a cap
    notice): stable for its parts, so it is said once, but keyed with SECRET_KEY, so no client
    can compute it and post something else under it first (a uuid5 anyone can)."""
    digest = hmac.new(
        settings.SECRET_KEY.encode(), "\x1f".join(str(p) for p in parts).encode(), hashlib.sha256
    ).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))
