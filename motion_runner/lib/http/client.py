"""`HttpClient`, the one outbound HTTP client (see this package's docstring): its redirects
followed by hand and each hop guarded, per-host politeness, caller-owned cookies, counters; and
the rule for where a credential may be sent (`credential_may_go`)."""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any
from urllib.parse import urljoin

import httpx

from .base import REDIRECT_STATUSES, USER_AGENT, FetchError, Response, settings
from .guard import guard_url, parse_allow_rules
from .transport import ACCEPT_ENCODING, CappedDecoder, _deadline, deadline_transport

# --- The SSRF guard -------------------------------------------------------------------------


# --- An overall deadline, headers included ----------------------------------------------------


# --- Bodies decoded under the cap -------------------------------------------------------------


# --- Per-host politeness --------------------------------------------------------------------


@dataclass
class HostState:
    semaphore: threading.BoundedSemaphore
    lock: threading.Lock = field(default_factory=threading.Lock)
    next_start: float = 0.0
    blocked_until: float = 0.0
    client: httpx.Client | None = None


@dataclass
class Stats:
    requests: int = 0
    bytes_received: int = 0
    bytes_sent: int = 0
    by_host: dict[str, int] = field(default_factory=dict)
    statuses: dict[int, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "bytes_received": self.bytes_received,
            "bytes_sent": self.bytes_sent,
            "by_host": dict(self.by_host),
            "statuses": dict(self.statuses),
        }


class HttpClient:
    """Thread-safe; one per cycle (or per process). Close it when done."""

    def __init__(
        self,
        *,
        timeout: float | None = None,
        max_bytes: int | None = None,
        per_host_concurrency: int | None = None,
        per_host_interval: float | None = None,
        allow: Iterable[str] | None = None,
        max_redirects: int | None = None,
    ):
        self.timeout = timeout if timeout is not None else settings.WATCH_HTTP_TIMEOUT_SECONDS
        self.max_bytes = max_bytes if max_bytes is not None else settings.WATCH_HTTP_MAX_BYTES
        self.per_host_concurrency = per_host_concurrency or settings.WATCH_HTTP_PER_HOST_CONCURRENCY
        self.per_host_interval = (
            per_host_interval if per_host_interval is not None else settings.WATCH_HTTP_PER_HOST_INTERVAL
        )
        self.rules = parse_allow_rules(allow if allow is not None else settings.WATCH_HTTP_ALLOW_NETWORKS)
        self.max_redirects = max_redirects if max_redirects is not None else settings.WATCH_HTTP_MAX_REDIRECTS
        self.stats = Stats()
        self._hosts: dict[str, HostState] = {}
        self._dns: dict[tuple[str, int], list[str]] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            for state in self._hosts.values():
                if state.client is not None:
                    state.client.close()
            self._hosts.clear()

    # One httpx.Client (one connection pool) per host name: connections are made to the
    # checked IP, and a pool keyed by IP must never reuse a TLS session opened for another
    # name on the same address.
    def _host(self, key: str) -> HostState:
        with self._lock:
            state = self._hosts.get(key)
            if state is None:
                state = HostState(semaphore=threading.BoundedSemaphore(self.per_host_concurrency))
                state.client = httpx.Client(
                    transport=deadline_transport(self.per_host_concurrency),
                    timeout=httpx.Timeout(self.timeout),
                    # A jar that accepts nothing: the pool is shared by every caller of this
                    # host, and it sees only the pinned IP (cookies are the caller's, below).
                    cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
                    follow_redirects=False,
                    trust_env=False,  # a proxy from the environment would bypass the pinning
                    limits=httpx.Limits(max_connections=self.per_host_concurrency),
                )
                self._hosts[key] = state
            return state

    def block_host(self, url: str, seconds: float) -> None:
        """Remember that a host asked us to wait (Retry-After, a rate-limit reset)."""
        parsed = httpx.URL(url)
        state = self._host(host_key(parsed))
        with state.lock:
            state.blocked_until = max(state.blocked_until, time.monotonic() + seconds)

    def _pace(self, state: HostState, key: str) -> None:
        with state.lock:
            now = time.monotonic()
            if state.blocked_until > now:
                raise FetchError(f"{key} asked us to wait", retry_after=round(state.blocked_until - now, 1))
            wait = state.next_start - now
            state.next_start = max(now, state.next_start) + self.per_host_interval
        if wait > 0:
            time.sleep(wait)

    def get(self, url: str, *, headers: dict[str, str] | None = None, params: Any = None) -> Response:
        return self.request("GET", url, headers=headers, params=params)

    def post_json(self, url: str, body: Any, *, headers: dict[str, str] | None = None) -> Response:
        return self.request("POST", url, headers=headers, json=body)

    def post_form(self, url: str, data: dict[str, str], *, cookies: httpx.Cookies | None = None) -> Response:
        """An application/x-www-form-urlencoded POST (MediaWiki's login and edit want one)."""
        return self.request("POST", url, data=data, cookies=cookies)

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        params: Any = None,
        json: Any = None,
        data: dict[str, str] | None = None,
        cookies: httpx.Cookies | None = None,
        content: bytes | None = None,
    ) -> Response:
        """`cookies`: a jar the caller owns; what the server sets lands in it, and it is sent
        back on later requests (and redirect hops) whose host and path match. `content`: a raw
        body (an encrypted Web Push message), sent as given."""
        try:
            current = httpx.URL(url, params=params) if params is not None else httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            raise FetchError(f"not a URL: {url!r} ({exc})", permanent=True) from exc
        headers = dict(headers or {})
        origin_host = origin(current)
        for _hop in range(self.max_redirects + 1):
            response = self._send_once(method, current, headers, json, data, cookies, content)
            if response.status not in REDIRECT_STATUSES or "location" not in response.headers:
                return response
            target = httpx.URL(urljoin(str(current), response.headers["location"]))
            if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                method, json, data, content = "GET", None, None, None
            if origin(target) != origin_host:
                # Credentials meant for one origin never follow a redirect to another (another
                # host, and also another port or scheme on the same host).
                headers = {k: v for k, v in headers.items() if k.lower() not in CREDENTIAL_HEADERS}
            current = target
        raise FetchError(f"{url}: more than {self.max_redirects} redirects")

    def _send_once(
        self,
        method: str,
        url: httpx.URL,
        headers: dict[str, str],
        json: Any,
        data: dict[str, str] | None = None,
        cookies: httpx.Cookies | None = None,
        content: bytes | None = None,
    ) -> Response:
        address = guard_url(url, self.rules, self._dns)
        key = host_key(url)
        state = self._host(key)
        pinned = url.copy_with(host=address)
        send_headers = {
            "User-Agent": USER_AGENT,
            **headers,
            "Accept-Encoding": ACCEPT_ENCODING,
            "Host": url.netloc.decode("ascii"),
        }
        if cookies is not None:
            # Matched against the real URL (name, path, scheme), never the pinned IP.
            probe = httpx.Request(method, url)
            cookies.set_cookie_header(probe)
            if "cookie" in probe.headers:
                send_headers["Cookie"] = probe.headers["cookie"]
        extensions: dict[str, Any] = {}
        if url.scheme == "https":
            extensions["sni_hostname"] = url.host  # the certificate is checked against the name
        limit = self.timeout * 2
        with state.semaphore:
            self._pace(state, key)
            started = time.monotonic()
            request = state.client.build_request(
                method,
                pinned,
                headers=send_headers,
                json=json,
                data=data,
                content=content,
                extensions=extensions,
            )
            has_body = json is not None or data is not None or content is not None
            sent = len(request.content or b"") if has_body else 0
            size = 0
            _deadline.at = started + limit
            try:
                raw = state.client.send(request, stream=True)
                try:
                    encodings = [e for e in raw.headers.get("content-encoding", "").split(",") if e.strip()]
                    if len(encodings) > 1:
                        raise FetchError(f"{url.host} sent a body encoded {len(encodings)} times over")
                    decoder = CappedDecoder(encodings[0] if encodings else "", self.max_bytes, url.host)
                    chunks: list[bytes] = []
                    for chunk in raw.iter_raw():
                        size += len(chunk)
                        if size > self.max_bytes:
                            raise FetchError(f"{url.host} sent more than {self.max_bytes} bytes")
                        chunks.append(decoder.feed(chunk))
                    chunks.append(decoder.flush())
                finally:
                    raw.close()
                if cookies is not None:
                    cookies.extract_cookies(
                        httpx.Response(raw.status_code, headers=raw.headers, request=probe)
                    )
                body = b"".join(chunks)
                response = Response(
                    status=raw.status_code,
                    headers=raw.headers,
                    content=body,
                    url=str(url),
                    elapsed=time.monotonic() - started,
                )
            except httpx.TimeoutException as exc:
                if time.monotonic() >= started + limit:
                    raise FetchError(f"{url.host} took longer than {limit:g} s") from exc
                raise FetchError(f"{url.host} timed out ({type(exc).__name__})") from exc
            except httpx.HTTPError as exc:
                raise FetchError(f"{url.host}: {type(exc).__name__}: {exc}") from exc
            finally:
                _deadline.at = None
                with self._lock:
                    self.stats.requests += 1
                    self.stats.bytes_sent += sent
                    self.stats.by_host[key] = self.stats.by_host.get(key, 0) + 1
        with self._lock:
            self.stats.bytes_received += size
            self.stats.statuses[response.status] = self.stats.statuses.get(response.status, 0) + 1
        return response


CREDENTIAL_HEADERS = {"authorization", "x-api-key", "cookie"}


def origin(url: httpx.URL) -> tuple[str, str, int]:
    """(scheme, host, port) with the scheme's default port filled in."""
    return url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80)


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def credential_may_go(url: str, configured: str) -> bool:
    """A secret configured for `configured` may go to `url`: the same origin (scheme, host and
    port), over https; plain http only to a loopback address, which no network carries."""
    try:
        to, home = httpx.URL(url), httpx.URL(configured)
    except (httpx.InvalidURL, TypeError, ValueError):
        return False
    if not home.host or origin(to) != origin(home):
        return False
    return to.scheme == "https" or (to.scheme == "http" and is_loopback_host(to.host))


def host_key(url: httpx.URL) -> str:
    port = url.port
    return f"{url.host}:{port}" if port else url.host


def post_json_to_configured_api(
    url: str, *, headers: dict[str, str], body: Any, timeout: float
) -> httpx.Response:
    """A POST to an API whose address is an operator's setting (the screen's Messages API), not
    something a watched source or an agent chose: no SSRF guard, only the timeout. Kept here so
    every outbound request of the project goes through this module. The caller's secret goes
    only over https (or to loopback), and never through a proxy named in the environment."""
    if not credential_may_go(url, url):
        raise httpx.UnsupportedProtocol(f"refused {url}: a key goes only over https (or to loopback)")
    return httpx.post(url, headers=headers, json=body, timeout=timeout, trust_env=False)
