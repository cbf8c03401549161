"""How many long polls one client may hold at once in this web process.

A waiting long poll holds one of the process's threads for up to 25 s (no database connection:
`thread/bell.py`), so without a cap one client, or anonymous readers together, could hold them
all and starve every other request. A client is the agent of an agent key, a signed-in person, or
else the address the request came from (`client_address`). A poll past its client's cap
(LONG_POLLS_PER_CLIENT) or past the anonymous readers' share (LONG_POLLS_ANONYMOUS) is answered
at once with 429 and Retry-After (LONG_POLL_RETRY_AFTER_SECONDS): the page asks again then, so
the reader still sees every message, a few seconds later. A poll that has news answers it
without waiting and needs no slot. The counts are per process: the threads they guard are too.
"""

from __future__ import annotations

import ipaddress
import threading
from collections import Counter

from ..conf import app_settings as settings
from ..people.principal import AgentPrincipal


def client_address(request) -> str:
    """REMOTE_ADDR, unless that is one of TRUSTED_PROXIES: then X-Forwarded-For is read from its
    right end (what the nearest proxy saw), past every trusted proxy, and the first address not
    one of them is the client. A reader can write anything at the left of that header, so it is
    believed only as far back as trusted proxies vouch for it, and not at all with none set."""
    address = request.META.get("REMOTE_ADDR", "")
    trusted = _networks(tuple(settings.TRUSTED_PROXIES))
    if not trusted or not _within(address, trusted):
        return address
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for hop in reversed([part for part in forwarded if part]):
        if _parse(hop) is None:
            break  # not an address: the proxy that passed it is as far as we can see
        address = hop
        if not _within(hop, trusted):
            break
    return address


def client_of(request) -> str:
    user = getattr(request, "user", None)
    if isinstance(user, AgentPrincipal):
        return f"agent:{user.agent.pk}"
    if user is not None and user.is_authenticated:
        return f"person:{user.pk}"
    return f"address:{client_address(request)}"


class PollSlots:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: Counter[str] = Counter()
        self._anonymous = 0

    def take(self, client: str, *, anonymous: bool) -> bool:
        """A slot for one waiting poll of `client`, or False when it (or anonymous readers
        together) holds all it may."""
        with self._lock:
            if self._held[client] >= settings.LONG_POLLS_PER_CLIENT:
                return False
            if anonymous and self._anonymous >= settings.LONG_POLLS_ANONYMOUS:
                return False
            self._held[client] += 1
            self._anonymous += anonymous
            return True

    def give_back(self, client: str, *, anonymous: bool) -> None:
        with self._lock:
            self._held[client] -= 1
            if self._held[client] <= 0:
                del self._held[client]
            self._anonymous -= anonymous

    def held(self, client: str) -> int:
        with self._lock:
            return self._held[client]

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._anonymous = 0


poll_slots = PollSlots()


def _parse(text: str):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _within(address: str, networks) -> bool:
    parsed = _parse(address)
    return parsed is not None and any(parsed in network for network in networks)


_parsed_networks: dict[tuple, list] = {}


def _networks(names: tuple) -> list:
    """TRUSTED_PROXIES as networks (an address is a network of one), parsed once per value."""
    if names not in _parsed_networks:
        _parsed_networks[names] = [ipaddress.ip_network(name, strict=False) for name in names]
    return _parsed_networks[names]
