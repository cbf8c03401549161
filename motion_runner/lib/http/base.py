"""What every part of the HTTP wrapper shares: its settings (read through lib's own AppSettings),
the errors a caller catches (FetchError; BlockedAddress for the SSRF guard), and the Response."""

from __future__ import annotations

import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from ..settings import AppSettings

# The wrapper's settings and their defaults. motion_runner/conf.py lists them among the apps'
# settings (a host sees one place); they are read here through an AppSettings of lib's own, so
# lib never imports an app's conf.py.
HTTP_DEFAULTS: dict[str, Any] = {
    "WATCH_HTTP_TIMEOUT_SECONDS": 10.0,
    "WATCH_HTTP_MAX_BYTES": 2 * 1024 * 1024,
    "WATCH_HTTP_PER_HOST_CONCURRENCY": 4,
    "WATCH_HTTP_PER_HOST_INTERVAL": 0.02,
    "WATCH_HTTP_MAX_REDIRECTS": 5,
    "WATCH_HTTP_ALLOW_NETWORKS": list,
}


settings = AppSettings("motion_runner.lib.http", HTTP_DEFAULTS)


USER_AGENT = "MotionRunner-Watch/1.0 (+https://github.com/cryptograss/motion-runner)"


REDIRECT_STATUSES = {301, 302, 303, 307, 308}


class FetchError(Exception):
    """A request that did not produce a usable response.

    `permanent` means asking again will not help (a refused address, a bad URL);
    `retry_after` is how long the other side asked us to wait, when it said.
    """

    def __init__(self, message: str, *, permanent: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.permanent = permanent
        self.retry_after = retry_after


class BlockedAddress(FetchError):
    def __init__(self, message: str):
        super().__init__(message, permanent=True)


@dataclass
class Response:
    status: int
    headers: httpx.Headers
    content: bytes
    url: str
    elapsed: float = 0.0

    @property
    def text(self) -> str:
        charset = "utf-8"
        ctype = self.headers.get("content-type", "")
        if "charset=" in ctype:
            charset = ctype.split("charset=", 1)[1].split(";")[0].strip() or "utf-8"
        try:
            return self.content.decode(charset, "replace")
        except LookupError:
            return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        import json

        try:
            return json.loads(self.content)
        except ValueError as exc:
            raise FetchError(f"{self.url} did not answer JSON ({exc})") from exc

    def retry_after(self) -> float | None:
        return parse_retry_after(self.headers.get("retry-after"))


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After is either seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None
