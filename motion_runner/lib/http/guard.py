"""The SSRF guard: a host is resolved here and every address checked (loopback, private,
link-local, cloud metadata, CGNAT, multicast, reserved… are refused unless
WATCH_HTTP_ALLOW_NETWORKS permits them); the caller then connects to the checked address itself."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

import httpx

from .base import BlockedAddress, FetchError

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
