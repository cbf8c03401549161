"""The one outbound HTTP wrapper for the whole project (mock it at this seam, nowhere else).

Every request a watch (or anything else) sends to the outside goes through `HttpClient`:

- SSRF guard: the host is resolved here, every address is checked (loopback, private,
  link-local, cloud metadata, CGNAT, multicast, reserved… are refused unless
  WATCH_HTTP_ALLOW_NETWORKS permits them), and the connection is then made to the checked
  address itself (the URL is rewritten to the IP, with the Host header and TLS SNI kept to
  the name), so a DNS answer that changes between the check and the connect (rebinding)
  cannot send the request elsewhere. Redirects are followed by hand, and each hop is checked
  the same way.
- Limits: connect/read timeouts, an overall deadline per request, and a cap on the body size
  (read as a stream, so a huge body is cut off rather than buffered).
- Per-host politeness: at most N requests in flight to one host, a minimum interval between
  request starts to one host, and a "blocked until" a host asked us to wait (Retry-After):
  later requests to that host fail fast with `retry_after` rather than sleeping, so one slow
  or throttling host never holds a worker that others need.
- Cookies only where the caller asks for them: a request may carry a caller-owned jar
  (`cookies=`, e.g. one wiki login session), matched against the URL's real host name; the
  per-host connection pools keep none, so no cookie leaks from one caller to another.
- Counters (requests, bytes) for the benchmark and the admin.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any
from urllib.parse import urljoin

import httpcore
import httpx

from .settings import AppSettings

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

# Not covered by ipaddress's flags on every Python version, or worth naming explicitly.
EXTRA_BLOCKED_NETWORKS = [
    ipaddress.ip_network("100.64.0.0/10"),  # carrier-grade NAT (shared address space)
    ipaddress.ip_network("169.254.169.254/32"),  # cloud metadata (AWS, GCP, Azure, …)
    ipaddress.ip_network("fd00:ec2::254/128"),  # AWS metadata over IPv6
    ipaddress.ip_network("0.0.0.0/8"),
    ipaddress.ip_network("192.0.0.0/24"),
    ipaddress.ip_network("198.18.0.0/15"),  # benchmarking
    # IPv6 forms that carry an IPv4 address inside, which could be a private one: 6to4,
    # Teredo, NAT64.
    ipaddress.ip_network("2002::/16"),
    ipaddress.ip_network("2001::/32"),
    ipaddress.ip_network("64:ff9b::/96"),
    ipaddress.ip_network("64:ff9b:1::/48"),
    # Site-local (deprecated, RFC 3879, but still routed inside some networks): not is_private.
    ipaddress.ip_network("fec0::/10"),
]


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


# --- The SSRF guard -------------------------------------------------------------------------


def resolve(host: str, port: int) -> list[str]:
    """The resolver seam: every address `host` resolves to (tests patch this)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"cannot resolve {host}: {exc.strerror or exc}") from exc
    seen: list[str] = []
    for info in infos:
        address = info[4][0]
        if address not in seen:
            seen.append(address)
    return seen


@dataclass(frozen=True)
class AllowRule:
    network: ipaddress.IPv4Network | ipaddress.IPv6Network
    port: int | None = None

    def permits(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> bool:
        return address in self.network and (self.port is None or self.port == port)


def parse_allow_rules(entries: Iterable[str]) -> list[AllowRule]:
    """`10.0.0.0/8`, `127.0.0.1`, `127.0.0.1:8080`, `[::1]:8080`."""
    rules = []
    for entry in entries:
        entry = entry.strip()
        if not entry:
            continue
        port = None
        if entry.startswith("["):
            host, _, rest = entry[1:].partition("]")
            if rest.startswith(":"):
                port = int(rest[1:])
            entry = host
        elif entry.count(":") == 1:
            entry, port_text = entry.split(":")
            port = int(port_text)
        rules.append(AllowRule(ipaddress.ip_network(entry, strict=False), port))
    return rules


def address_problem(address: str) -> str | None:
    """Why this address must not be fetched, or None when it is a public one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "a loopback address"
    if any(ip in net for net in EXTRA_BLOCKED_NETWORKS if net.version == ip.version):
        if str(ip) in ("169.254.169.254", "fd00:ec2::254"):
            return "a cloud metadata address"
        return "a reserved address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private:
        return "a private address"
    if ip.is_multicast or ip.is_reserved or ip.is_unspecified:
        return "a reserved address"
    return None


def check_address(address: str, port: int, rules: list[AllowRule]) -> str | None:
    problem = address_problem(address)
    if problem is None:
        return None
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if any(rule.permits(ip, port) for rule in rules):
        return None
    return problem


def guard_url(url: httpx.URL, rules: list[AllowRule], dns: dict | None = None) -> str:
    """Resolve the URL's host and return the one checked address to connect to.

    `dns` caches answers for one client's life (a cycle): safe, since the connection is
    pinned to the address that was checked, whatever the name resolves to later."""
    if url.scheme not in ("http", "https"):
        raise BlockedAddress(f"refused {url}: only http and https are fetched")
    host = url.host
    if not host:
        raise BlockedAddress(f"refused {url}: no host")
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        addresses = [str(ipaddress.ip_address(host))]
    except ValueError:
        key = (host, port)
        if dns is not None and key in dns:
            addresses = dns[key]
        else:
            addresses = resolve(host, port)
            if dns is not None:
                dns[key] = addresses
    if not addresses:
        raise FetchError(f"cannot resolve {host}: no addresses")
    # Every answer must be fine: otherwise a name with one public and one private record
    # would be a coin toss.
    for address in addresses:
        if problem := check_address(address, port, rules):
            shown = host if host == address else f"{host} ({address})"
            raise BlockedAddress(
                f"refused {shown}: {problem} (an operator may allow a network with WATCH_HTTP_ALLOW_NETWORKS)"
            )
    return addresses[0]


# --- An overall deadline, headers included ----------------------------------------------------

# The deadline of the request this thread is sending: every socket read and write waits at most
# until then, so a server that trickles its status line or headers a byte at a time cannot hold
# a worker past it (httpx's own timeouts are per read, and restart with every byte).
_deadline = threading.local()


def _remaining(timeout: float | None) -> float | None:
    deadline = getattr(_deadline, "at", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the request's overall deadline passed")
    return left if timeout is None else min(timeout, left)


class DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream):
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _remaining(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _remaining(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.NetworkStream:
        return DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, _remaining(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        stream = self._backend.connect_tcp(host, port, _remaining(timeout), local_address, socket_options)
        return DeadlineStream(stream)

    def connect_unix_socket(self, path, timeout=None, socket_options=None):  # pragma: no cover
        raise httpcore.ConnectError("no unix sockets here")

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def deadline_transport(max_connections: int) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport(trust_env=False)
    # httpx takes no network backend: its pool is swapped for one built with httpcore's public
    # arguments and the deadline-keeping backend.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=max_connections,
        network_backend=DeadlineBackend(),
    )
    return transport


# --- Bodies decoded under the cap -------------------------------------------------------------

# Only what can be decoded a chunk at a time under a cap is asked for.
ACCEPT_ENCODING = "gzip, deflate"


class CappedDecoder:
    """Undo a gzip or deflate Content-Encoding as the chunks arrive, never producing more than
    `limit` bytes: a 500-byte bomb stops at the cap instead of growing in memory first."""

    def __init__(self, encoding: str, limit: int, host: str):
        self.limit, self.host, self.size = limit, host, 0
        encoding = encoding.strip().lower()
        if encoding in ("gzip", "x-gzip"):
            self.zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self.zlib = zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib-wrapped, as RFC 9110 says
        elif encoding in ("", "identity"):
            self.zlib = None
        else:
            raise FetchError(
                f"{host} sent a body encoded as {encoding!r}, which is not asked for", permanent=True
            )

    def feed(self, chunk: bytes) -> bytes:
        if self.zlib is None:
            out = chunk
        else:
            try:
                out = self.zlib.decompress(chunk, self.limit - self.size + 1)
            except zlib.error as exc:
                raise FetchError(f"{self.host}: could not decode the body ({exc})") from exc
        self.size += len(out)
        if self.size > self.limit or (self.zlib is not None and self.zlib.unconsumed_tail):
            raise FetchError(f"{self.host} sent more than {self.limit} bytes (decoded)")
        return out

    def flush(self) -> bytes:
        return self.feed(b"") if self.zlib is None else self.zlib.flush()


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
    ) -> Response:
        """`cookies`: a jar the caller owns; what the server sets lands in it, and it is sent
        back on later requests (and redirect hops) whose host and path match."""
        try:
            current = httpx.URL(url, params=params) if params is not None else httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            raise FetchError(f"not a URL: {url!r} ({exc})", permanent=True) from exc
        headers = dict(headers or {})
        origin_host = origin(current)
        for _hop in range(self.max_redirects + 1):
            response = self._send_once(method, current, headers, json, data, cookies)
            if response.status not in REDIRECT_STATUSES or "location" not in response.headers:
                return response
            target = httpx.URL(urljoin(str(current), response.headers["location"]))
            if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                method, json, data = "GET", None, None
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
                method, pinned, headers=send_headers, json=json, data=data, extensions=extensions
            )
            sent = len(request.content or b"") if (json is not None or data is not None) else 0
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
