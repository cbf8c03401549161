"""The small base class every watch kind implements, and the plain data it trades in.

A kind's `check` runs in a worker thread and only talks HTTP: it gets `Snapshot`s (plain
copies of the watches, never ORM objects) and returns one `Outcome` per watch. Everything
that touches the database (state, lines in the Motion, wakes) happens afterwards, in the
cycle's own thread (watchlist/checker.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar
from urllib.parse import urlsplit

from motion_runner.lib.http.base import FetchError
from motion_runner.lib.http.client import HttpClient


class CheckError(Exception):
    """A check that failed. `permanent` disables the watch (a 404, an invalid target);
    `retry_after` defers it without counting a failure (the source asked us to wait)."""

    def __init__(self, message: str, *, permanent: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.permanent = permanent
        self.retry_after = retry_after

    @classmethod
    def from_fetch(cls, exc: FetchError) -> CheckError:
        return cls(str(exc), permanent=exc.permanent, retry_after=exc.retry_after)


class InvalidTarget(ValueError):
    """A watch's target or options are wrong; `field` says which, the message says why."""

    def __init__(self, message: str, field: str = "target"):
        super().__init__(message)
        self.field = field


@dataclass
class Snapshot:
    id: int
    kind: str
    target: str
    options: dict[str, Any]
    state: dict[str, Any]
    wake: str = "consider"
    label: str = ""
    last_checked_at: datetime | None = None
    # State the watches of one group share (a repository's listing cursor), loaded by the
    # checker from SharedCursor when the kind gives the watch a `shared_key`.
    shared: dict[str, Any] = field(default_factory=dict)

    @property
    def first_check(self) -> bool:
        return not self.state.get("checked")


@dataclass
class Change:
    """One thing that happened at the source: one line in the Motion."""

    key: str  # stable per change (a revision id, a comment id, a text hash…): the message id
    line: str
    link: str = ""
    content: str = ""  # what the source said, quoted as data in a woken agent's prompt
    talk_page: dict[str, str] | None = None  # the one page a woken agent may reply on


@dataclass
class Shared:
    """New shared state for one group (yielded by `check` beside the Outcomes): the checker
    saves it through the kind's `merge_shared`, in its own thread."""

    key: str
    state: dict[str, Any]


@dataclass
class Outcome:
    watch_id: int
    state: dict[str, Any] | None = None  # None: leave the stored state alone
    changes: list[Change] = field(default_factory=list)
    error: CheckError | None = None
    skipped: bool = False  # not checked this cycle (out of time): just release the claim


class WatchKind:
    """One kind of watched thing. Subclasses set `name`/`label` and implement the three methods."""

    name: ClassVar[str]
    label: ClassVar[str]
    option_names: ClassVar[tuple[str, ...]] = ()
    # How many lanes (serial request sequences) one host's watches may be split into.
    max_lanes: ClassVar[int | None] = None

    def clean(self, target: str, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Normalize and validate; raise InvalidTarget saying what is wrong."""
        unknown = sorted(set(options) - set(self.option_names))
        if unknown:
            allowed = ", ".join(self.option_names) or "none"
            raise InvalidTarget(
                f"unknown option {', '.join(map(repr, unknown))} for a {self.name} watch (allowed: {allowed})",
                field="options",
            )
        return self.clean_target(target.strip(), dict(options))

    def clean_target(self, target: str, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        raise NotImplementedError

    def group_key(self, snap: Snapshot) -> str:
        """Watches with the same key share a host (and its limits) and may be batched."""
        raise NotImplementedError

    def lanes(self, snaps: list[Snapshot], max_lanes: int) -> list[list[Snapshot]]:
        count = max(1, min(max_lanes, self.max_lanes or max_lanes, len(snaps)))
        return [snaps[i::count] for i in range(count)]

    def check(self, http: HttpClient, snaps: list[Snapshot]) -> Iterable[Outcome | Shared]:
        raise NotImplementedError

    def shared_key(self, snap: Snapshot) -> str | None:
        """Watches with the same shared key read one answer (a repository's issue listing) and
        keep one cursor for it; None: the watch keeps all its state itself."""
        return None

    def merge_shared(self, stored: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """Combine a cycle's new shared state with the stored one (two cycles may race)."""
        return new

    def describe(self, snap: Snapshot) -> str:
        return snap.label or snap.target


def check_url(value: Any, field_name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidTarget(f"{field_name} must be a URL", field=field_name)
    value = value.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidTarget(
            f"{field_name} must be an http or https URL with a host, not {value[:200]!r}", field=field_name
        )
    return value


def public_url(url: str) -> str:
    """What may be shown of a URL that can hold a key in its path, query or user part: its
    scheme, host and port only (an RPC provider's URL is often `https://host/v3/<key>`)."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    port = f":{parts.port}" if parts.port else ""
    return (
        f"{parts.scheme or 'https'}://{host}{port}/…"
        if parts.path.strip("/") or parts.query
        else f"{parts.scheme}://{host}{port}"
    )
