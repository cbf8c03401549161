"""The registry of watch kinds: one module per kind; the registry also feeds Watch.kind's choices.

A new kind is one new module with a WatchKind subclass, added to KINDS below.
"""

from __future__ import annotations

from .base import Change, CheckError, InvalidTarget, Outcome, Shared, Snapshot, WatchKind
from .contract import ContractEvents
from .github import GitHubIssue
from .web_page import WebPage
from .wiki_page import WikiPage

KINDS: dict[str, WatchKind] = {
    kind.name: kind for kind in (WikiPage(), GitHubIssue(), WebPage(), ContractEvents())
}
KIND_CHOICES = [(name, kind.label) for name, kind in KINDS.items()]


def get_kind(name: str) -> WatchKind:
    try:
        return KINDS[name]
    except KeyError:
        raise InvalidTarget(f"unknown kind {name!r} (one of: {', '.join(KINDS)})", field="kind") from None


__all__ = [
    "KINDS",
    "KIND_CHOICES",
    "Change",
    "CheckError",
    "InvalidTarget",
    "Outcome",
    "Shared",
    "Snapshot",
    "WatchKind",
    "get_kind",
]
