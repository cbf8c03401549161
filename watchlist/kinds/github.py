"""A GitHub issue or pull request, over REST with ETags (a 304 costs nothing).

Requests follow repositories, not watches. The watches on one repository share one
conditional listing, `GET /repos/{o}/{r}/issues?state=all&sort=updated&direction=asc&since=`
(issues and pull requests both) with `If-None-Match`: a 304 answers for all of them. The
listing's cursor lives in a `SharedCursor`: `since`, the ETag that belongs to that `since`,
and `seen`, the newest `updated_at` the listing showed for each issue. A watch looks further
only when `seen` says its issue changed after the `updated_at` it stored (or on its first
check, or after a long absence): then the issue itself (`issues/{n}`, with its own ETag; it
carries `closed_by`, which the listing lacks), `issues/{n}/comments?since=` when the comment
count grew, `pulls/{n}/reviews` when it is a PR whose `updated_at` moved. Because `seen` is
kept for every issue the listing showed, a watch that was not due when its issue changed still
finds the change later. A repository seen for the first time is anchored with one
`direction=desc&per_page=1` request (its newest `updated_at` becomes `since`).

Requests to one API host are serial (GitHub asks for that); a 403/429 rate limit, or
`x-ratelimit-remaining: 0`, defers this and every remaining watch on that host until
`retry-after` / `x-ratelimit-reset`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from motion_runner.lib.http.base import FetchError, Response
from motion_runner.lib.http.client import HttpClient, credential_may_go

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .base import Change, CheckError, InvalidTarget, Outcome, Shared, Snapshot, WatchKind, check_url

SHORT = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)#(?P<number>\d+)$")
URL = re.compile(r"^https?://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/(?P<what>issues|pull)/(?P<number>\d+)")
REVIEW_WORDS = {
    "APPROVED": "approved",
    "CHANGES_REQUESTED": "requested changes",
    "COMMENTED": "commented",
    "DISMISSED": "dismissed",
}
MAX_PAGES = 5
LISTING_PAGE = 100
# `seen` forgets an issue this long after its change (GitHub's clock); a watch unchecked for
# longer (ours, with a margin) looks at its issue itself instead of trusting `seen`.
SEEN_HORIZON = timedelta(days=2)
TRUST_SEEN_FOR = timedelta(days=1)
EPOCH = "1970-01-01T00:00:00Z"
STAMP = "%Y-%m-%dT%H:%M:%SZ"


def parse_stamp(value: str) -> datetime:
    return datetime.strptime(value, STAMP).replace(tzinfo=UTC)


def format_stamp(value: datetime) -> str:
    return value.astimezone(UTC).strftime(STAMP)


def first_line(text: str | None, limit: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:limit] + ("…" if len(line) > limit else "")


class RateLimited(CheckError):
    pass


class GitHubIssue(WatchKind):
    name = "github"
    label = "GitHub issue or PR"
    option_names = ("api",)
    max_lanes = 1  # serial requests per host, as GitHub's best practices ask

    def clean_target(self, target: str, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        match = SHORT.match(target) or URL.match(target)
        if not match:
            raise InvalidTarget(
                "a GitHub watch needs owner/repo#number or a github.com issue or pull request URL, "
                f"not {target[:200]!r}"
            )
        if int(match.group("number")) < 1:
            raise InvalidTarget("an issue number starts at 1")
        if options.get("api"):
            options["api"] = check_url(options["api"], "api").rstrip("/")
        return f"{match.group('repo')}#{match.group('number')}", options

    def api(self, snap: Snapshot) -> str:
        return (snap.options.get("api") or settings.WATCH_GITHUB_API).rstrip("/")

    def group_key(self, snap: Snapshot) -> str:
        return self.api(snap)

    def headers(self, url: str, etag: str | None = None) -> dict[str, str]:
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
        # The token goes only to the API it was configured for: a watch's own `api` gets none.
        if settings.WATCH_GITHUB_TOKEN and credential_may_go(url, settings.WATCH_GITHUB_API):
            headers["Authorization"] = f"Bearer {settings.WATCH_GITHUB_TOKEN}"
        if etag:
            headers["If-None-Match"] = etag
        return headers

    def shared_key(self, snap: Snapshot) -> str:
        return f"{self.api(snap)} {snap.target.split('#')[0]}"

    def check(self, http: HttpClient, snaps: list[Snapshot]) -> Iterable[Outcome | Shared]:
        limited: CheckError | None = None
        repos: dict[str, list[Snapshot]] = {}
        for snap in snaps:
            repos.setdefault(self.shared_key(snap), []).append(snap)
        for key, group in repos.items():
            done: set[int] = set()
            if limited is None:  # the host said stop: do not spend requests finding that out again
                try:
                    for item in self.check_repo(http, key, group):
                        if isinstance(item, Outcome):
                            done.add(item.watch_id)
                        yield item
                except RateLimited as exc:
                    limited = exc
                except CheckError as exc:
                    yield from (Outcome(snap.id, error=exc) for snap in group if snap.id not in done)
                    continue
            if limited is not None:
                yield from (Outcome(snap.id, error=limited) for snap in group if snap.id not in done)

    def check_repo(self, http: HttpClient, key: str, group: list[Snapshot]) -> Iterator[Outcome | Shared]:
        """One listing for the repository, then a look at each watched issue it says changed.
        A RateLimited goes up (it stops the host); another CheckError fails one watch."""
        api, repo = key.split(" ", 1)
        cursor = dict(group[0].shared)
        anchored = not cursor.get("since")
        if anchored:
            cursor = self.anchor(http, api, repo)
        else:
            cursor = self.listing(http, api, repo, cursor)
        if cursor != group[0].shared and not anchored:
            yield Shared(key, cursor)
        trust_after = datetime.now(UTC) - TRUST_SEEN_FOR
        seen = cursor.get("seen") or {}
        for snap in group:
            number = snap.target.split("#")[1]
            own = snap.state.get("updated_at")
            changed = (
                anchored  # no listing covers what happened before now: look at each issue once
                or snap.first_check
                or not own
                or snap.last_checked_at is None
                or snap.last_checked_at < trust_after
                or (seen.get(number) or "") > own
            )
            if not changed:
                yield Outcome(snap.id, state=snap.state)
                continue
            try:
                yield self.check_one(http, snap)
            except RateLimited:
                raise
            except CheckError as exc:
                yield Outcome(snap.id, error=exc)
        if anchored:
            # Saved only once every watch has looked at its issue: if the host stopped us half
            # way, the next cycle anchors again rather than trust a cursor some watches predate.
            yield Shared(key, cursor)

    def listing_url(self, api: str, repo: str) -> str:
        return f"{api}/repos/{repo}/issues"

    def anchor(self, http: HttpClient, api: str, repo: str) -> dict[str, Any]:
        """A repository seen for the first time: its newest `updated_at` becomes `since`."""
        url = self.listing_url(api, repo)
        params = {"state": "all", "sort": "updated", "direction": "desc", "per_page": 1}
        response = self.get(http, url, params=params)
        newest = self.listed(response, repo)
        since = newest[0].get("updated_at") if newest else None
        return {"since": self.step_back(since) if since else EPOCH, "etag": "", "seen": {}}

    def listing(self, http: HttpClient, api: str, repo: str, cursor: dict[str, Any]) -> dict[str, Any]:
        """Everything updated since the cursor, oldest first; a 304 changes nothing."""
        url = self.listing_url(api, repo)
        since = cursor["since"]
        params = {
            "state": "all",
            "sort": "updated",
            "direction": "asc",
            "since": since,
            "per_page": LISTING_PAGE,
        }
        response = self.get(http, url, etag=cursor.get("etag") or None, params=params)
        if response.status == 304:
            return cursor
        items = self.listed(response, repo)
        etag = response.headers.get("etag", "")
        next_url = response_link(response, "next")
        for _ in range(MAX_PAGES - 1):
            if not next_url:
                break
            page = self.get(http, next_url)
            items.extend(self.listed(page, repo))
            next_url = response_link(page, "next")
        seen = dict(cursor.get("seen") or {})
        newest = since
        for item in items:
            stamp = item.get("updated_at") or ""
            number = str(item.get("number", ""))
            if stamp > (seen.get(number) or ""):
                seen[number] = stamp
            newest = max(newest, stamp)
        # A step back from the newest: GitHub's `since` may be strict, and an issue updated in
        # that same second after this answer must still come back. The ETag belongs to `since`.
        new_since = max(self.step_back(newest), since)
        return {
            "since": new_since,
            "etag": etag if new_since == since and not next_url else "",
            "seen": self.forget_old(seen, new_since),
        }

    def listed(self, response: Response, repo: str) -> list[dict]:
        if response.status in (404, 410):
            raise CheckError(
                f"the repository {repo} was not found on GitHub ({response.status})", permanent=True
            )
        if response.status == 401:
            raise CheckError("GitHub refused the token (401): check WATCH_GITHUB_TOKEN")
        if response.status != 200:
            raise CheckError(f"GitHub answered {response.status} for the issues of {repo}")
        items = response.json()
        if not isinstance(items, list):
            raise CheckError(f"GitHub answered something other than a list for the issues of {repo}")
        return [item for item in items if isinstance(item, dict)]

    def step_back(self, stamp: str) -> str:
        try:
            return format_stamp(parse_stamp(stamp) - timedelta(seconds=1))
        except ValueError:
            return EPOCH

    def forget_old(self, seen: dict[str, str], since: str) -> dict[str, str]:
        try:
            horizon = format_stamp(parse_stamp(since) - SEEN_HORIZON)
        except ValueError:
            return seen
        return {number: stamp for number, stamp in seen.items() if stamp >= horizon}

    def merge_shared(self, stored: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """Two cycles may list one repository at once: keep every change either saw."""
        seen = dict(stored.get("seen") or {})
        for number, stamp in (new.get("seen") or {}).items():
            if stamp > (seen.get(number) or ""):
                seen[number] = stamp
        newer = new if (new.get("since") or "") >= (stored.get("since") or "") else stored
        return {"since": newer.get("since") or EPOCH, "etag": newer.get("etag", ""), "seen": seen}

    def get(self, http: HttpClient, url: str, etag: str | None = None, params: Any = None) -> Response:
        try:
            response = http.get(url, headers=self.headers(url, etag), params=params)
        except FetchError as exc:
            if exc.retry_after is not None and not exc.permanent:
                raise RateLimited(str(exc), retry_after=exc.retry_after) from exc
            raise CheckError.from_fetch(exc) from exc
        if response.status in (403, 429):
            wait = self.rate_limit_wait(response)
            if wait is not None:
                http.block_host(url, wait)
                raise RateLimited(f"GitHub rate limit: wait {wait:.0f} s", retry_after=wait)
        if response.status in (200, 304):
            remaining = response.headers.get("x-ratelimit-remaining")
            if remaining == "0" and response.status == 200:
                # This answer is good, but the next one would be refused: stop the host now.
                reset = response.headers.get("x-ratelimit-reset")
                if reset and reset.isdigit():
                    http.block_host(url, max(int(reset) - time.time(), 1.0))
        return response

    def rate_limit_wait(self, response: Response) -> float | None:
        retry_after = response.retry_after()
        if retry_after is not None:
            return retry_after
        if response.headers.get("x-ratelimit-remaining") == "0":
            reset = response.headers.get("x-ratelimit-reset", "")
            return max(int(reset) - time.time(), 1.0) if reset.isdigit() else 60.0
        if response.status == 429 or b"rate limit" in response.content.lower():
            return 60.0  # a secondary limit with no header: GitHub says wait at least a minute
        return None

    def check_one(self, http: HttpClient, snap: Snapshot) -> Outcome:
        api = self.api(snap)
        repo, number = snap.target.split("#")
        state = dict(snap.state)
        response = self.get(http, f"{api}/repos/{repo}/issues/{number}", etag=state.get("etag"))
        if response.status == 304:
            return Outcome(snap.id, state=state)
        if response.status in (404, 410):
            raise CheckError(f"{snap.target} was not found on GitHub ({response.status})", permanent=True)
        if response.status == 401:
            raise CheckError("GitHub refused the token (401): check WATCH_GITHUB_TOKEN")
        if response.status != 200:
            raise CheckError(f"GitHub answered {response.status} for {snap.target}")
        issue = response.json()
        is_pr = "pull_request" in issue
        merged_at = (issue.get("pull_request") or {}).get("merged_at")
        new_state = {
            "checked": True,
            "etag": response.headers.get("etag", ""),
            "state": issue.get("state"),
            "merged": bool(merged_at),
            "comments": issue.get("comments", 0),
            "updated_at": issue.get("updated_at"),
            "is_pr": is_pr,
            "review_id": state.get("review_id", 0),
            "comment_id": state.get("comment_id", 0),
        }
        if snap.first_check:
            return Outcome(snap.id, state=new_state)
        html_url = issue.get("html_url") or f"https://github.com/{repo}/issues/{number}"
        title = first_line(issue.get("title"), 80)
        noun = "PR" if is_pr else "issue"
        changes: list[Change] = []
        since = state.get("updated_at")
        if (issue.get("comments") or 0) > (state.get("comments") or 0):
            for comment in self.comments(http, api, repo, number, since):
                if comment["id"] <= (state.get("comment_id") or 0):
                    continue
                new_state["comment_id"] = max(new_state["comment_id"], comment["id"])
                who = (comment.get("user") or {}).get("login", "someone")
                changes.append(
                    Change(
                        key=f"comment:{comment['id']}",
                        line=f"💬 {snap.target} {who} commented: {first_line(comment.get('body'))}",
                        link=comment.get("html_url", html_url),
                        content=f"Comment by {who} on {noun} {snap.target} ({title}):\n{comment.get('body', '')}",
                    )
                )
        if is_pr and issue.get("updated_at") != since:
            for review in self.reviews(http, api, repo, number):
                if review["id"] <= (state.get("review_id") or 0) or review.get("state") == "PENDING":
                    continue
                new_state["review_id"] = max(new_state["review_id"], review["id"])
                if since and (review.get("submitted_at") or "") <= since:
                    continue  # older than the last check: the first look only sets the mark
                who = (review.get("user") or {}).get("login", "someone")
                word = REVIEW_WORDS.get(review.get("state", ""), review.get("state", "reviewed").lower())
                body = first_line(review.get("body"))
                changes.append(
                    Change(
                        key=f"review:{review['id']}",
                        line=f"🔍 {snap.target} {who} {word}" + (f": {body}" if body else ""),
                        link=review.get("html_url", html_url),
                        content=f"Review by {who} ({word}) on PR {snap.target} ({title}):\n{review.get('body') or ''}",
                    )
                )
        state_change = self.state_change(state, new_state, issue)
        if state_change:
            changes.append(
                Change(
                    key=f"state:{state_change}:{issue.get('closed_at') or issue.get('updated_at')}",
                    line=f"● {snap.target} {state_change}: {title}",
                    link=html_url,
                    content=f"{noun} {snap.target} ({title}) was {state_change}.",
                )
            )
        return Outcome(snap.id, state=new_state, changes=changes)

    def state_change(self, old: dict, new: dict, issue: dict) -> str | None:
        by = (issue.get("closed_by") or {}).get("login")
        suffix = f" by {by}" if by else ""
        if new["merged"] and not old.get("merged"):
            return "merged"
        if new["state"] == old.get("state"):
            return None
        if new["state"] == "closed":
            reason = issue.get("state_reason")
            return (
                "closed"
                + (f" as {reason.replace('_', ' ')}" if reason and reason != "completed" else "")
                + suffix
            )
        if new["state"] == "open" and old.get("state") == "closed":
            return "reopened"
        return None

    def paged(self, http: HttpClient, url: str, params: dict[str, Any]) -> list[dict]:
        items: list[dict] = []
        next_url: str | None = url
        for _ in range(MAX_PAGES):
            if not next_url:
                break
            response = self.get(http, next_url, params=params if next_url == url else None)
            if response.status != 200:
                raise CheckError(f"GitHub answered {response.status} for {url}")
            page = response.json()
            if not isinstance(page, list):
                raise CheckError(f"GitHub answered something other than a list for {url}")
            items.extend(page)
            next_url = response_link(response, "next")
        return items

    def comments(self, http: HttpClient, api: str, repo: str, number: str, since: str | None) -> list[dict]:
        params: dict[str, Any] = {"per_page": 100}
        if since:
            params["since"] = since
        comments = self.paged(http, f"{api}/repos/{repo}/issues/{number}/comments", params)
        # `since` filters on updated_at: an old comment edited since then is not new.
        return [c for c in comments if not since or (c.get("created_at") or "") > since]

    def reviews(self, http: HttpClient, api: str, repo: str, number: str) -> list[dict]:
        return self.paged(http, f"{api}/repos/{repo}/pulls/{number}/reviews", {"per_page": 100})


def response_link(response: Response, rel: str) -> str | None:
    for part in response.headers.get("link", "").split(","):
        if f'rel="{rel}"' in part:
            match = re.search(r"<([^>]+)>", part)
            if match:
                return match.group(1)
    return None
