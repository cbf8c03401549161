"""A web page: a conditional GET, else a hash of its main text.

`If-None-Match` with the stored ETag and `If-Modified-Since` with the server's own
`Last-Modified` (never our clock); a 304 ends the check. On a 200 the main text is extracted
(trafilatura: navigation, ads and footers dropped) and hashed, so a rotating ad or a clock is
not a change even when the server sends a fresh ETag on every load. A change shows a short
unified diff of the main text.
"""

from __future__ import annotations

import difflib
import hashlib
import ipaddress
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from motion_runner.lib.http.base import FetchError
from motion_runner.lib.http.client import HttpClient
from motion_runner.lib.http.guard import address_problem, check_address, parse_allow_rules

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .base import Change, CheckError, InvalidTarget, Outcome, Snapshot, WatchKind, check_url

TEXT_KEEP = 20_000  # characters of main text kept for the next diff
DIFF_LINES = 8


def main_text(html: str) -> str:
    import trafilatura

    text = trafilatura.extract(html, include_comments=False, include_tables=True, favor_precision=True)
    if not text:
        # Not an article (a bare page, plain text): fall back to the visible text.
        text = re.sub(r"(?is)<(script|style|noscript)[^>]*>.*?</\1>", " ", html)
        text = re.sub(r"<[^>]+>", " ", text)
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def short_diff(old: str, new: str, limit: int = DIFF_LINES) -> str:
    lines = [
        line
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
        if not line.startswith(("---", "+++", "@@"))
    ]
    shown = [line[:160] for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"… {len(lines) - limit} more")
    return "\n".join(shown)


def refuse_literal_address(url: str, field: str) -> None:
    """Catch `http://10.0.0.1/` at validation time; names are checked when fetched."""
    host = urlsplit(url).hostname or ""
    if host in ("localhost",) or host.endswith(".localhost"):
        address = "127.0.0.1"
    else:
        try:
            address = str(ipaddress.ip_address(host))
        except ValueError:
            return
    port = urlsplit(url).port or (443 if url.startswith("https") else 80)
    if address_problem(address) and check_address(
        address, port, parse_allow_rules(settings.WATCH_HTTP_ALLOW_NETWORKS)
    ):
        raise InvalidTarget(
            f"{host} is {address_problem(address)}: watches fetch only public addresses"
            " (an operator may allow a network with the setting WATCH_HTTP_ALLOW_NETWORKS)",
            field=field,
        )


class WebPage(WatchKind):
    name = "web_page"
    label = "Web page"

    def clean_target(self, target: str, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        url = check_url(target, "target")
        refuse_literal_address(url, "target")
        return url, options

    def group_key(self, snap: Snapshot) -> str:
        parts = urlsplit(snap.target)
        return f"{parts.scheme}://{parts.netloc}"

    def check(self, http: HttpClient, snaps: list[Snapshot]) -> Iterable[Outcome]:
        for snap in snaps:
            try:
                yield self.check_one(http, snap)
            except CheckError as exc:
                yield Outcome(snap.id, error=exc)

    def check_one(self, http: HttpClient, snap: Snapshot) -> Outcome:
        state = dict(snap.state)
        headers = {"Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"}
        if state.get("etag"):
            headers["If-None-Match"] = state["etag"]
        if state.get("last_modified"):
            headers["If-Modified-Since"] = state["last_modified"]
        try:
            response = http.get(snap.target, headers=headers)
        except FetchError as exc:
            raise CheckError.from_fetch(exc) from exc
        if response.status == 304:
            return Outcome(snap.id, state=state)
        if response.status in (404, 410):
            raise CheckError(f"{snap.target} answered {response.status}", permanent=True)
        if response.status in (429, 503):
            raise CheckError(f"{snap.target} answered {response.status}", retry_after=response.retry_after())
        if response.status != 200:
            raise CheckError(f"{snap.target} answered {response.status}")
        body_hash = hashlib.sha256(response.content).hexdigest()
        if body_hash == state.get("body_hash"):
            # The very same bytes: the same main text, without extracting it again (the costly
            # part of a cycle over pages that send no validator).
            return Outcome(snap.id, state=state)
        text = main_text(response.text)
        digest = hashlib.sha256(text.encode()).hexdigest()
        new_state = {
            "checked": True,
            "etag": response.headers.get("etag", ""),
            "last_modified": response.headers.get("last-modified", ""),
            "text_hash": digest,
            "body_hash": body_hash,
            "text": text[:TEXT_KEEP],
        }
        if snap.first_check or digest == state.get("text_hash"):
            return Outcome(snap.id, state=new_state)
        diff = short_diff(state.get("text", ""), text)
        first = next((line[1:].strip() for line in diff.splitlines() if line.startswith("+")), "")
        line = f"🌐 {self.describe(snap)} changed" + (f": {first[:140]}" if first else "")
        return Outcome(
            snap.id,
            state=new_state,
            changes=[
                Change(
                    key=f"text:{digest[:32]}",
                    line=line,
                    link=snap.target,
                    content=f"{snap.target} changed. Diff of its main text:\n{diff}",
                )
            ],
        )
