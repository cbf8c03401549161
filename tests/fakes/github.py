"""GitHub's REST API, the parts a watch uses, with ETags and rate limits as GitHub sends them.

`GET /repos/{o}/{r}/issues?state=&sort=&direction=&since=&per_page=&page=` (issues and PRs
both, as GitHub lists them: no `closed_by`; `since` keeps what was updated at or after it),
`GET /repos/{o}/{r}/issues/{n}` (a PR answers too, with `pull_request.merged_at`),
`/issues/{n}/comments?since=&per_page=` (filters on updated_at, paginates with Link),
`/pulls/{n}/reviews?per_page=`. Every answer has a strong-looking weak ETag over its body and
`x-ratelimit-*` headers; `If-None-Match` that matches gets a 304 that does not count against
the limit. `throttle(...)` makes the next answers 403/429 with Retry-After or with
`x-ratelimit-remaining: 0` and a reset time.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from dataclasses import dataclass, field

from .http import FakeServer, Reply, Request


def stamp(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


@dataclass
class Issue:
    repo: str
    number: int
    title: str
    is_pr: bool = False
    state: str = "open"
    state_reason: str | None = None
    merged_at: str | None = None
    closed_by: str | None = None
    updated: int = 1_700_000_000
    comments: list[dict] = field(default_factory=list)
    reviews: list[dict] = field(default_factory=list)


class FakeGitHub(FakeServer):
    def __init__(self, host: str | None = None):
        super().__init__(host)
        self.issues: dict[tuple[str, int], Issue] = {}
        self.ids = itertools.count(5000)
        self.clock = 1_700_000_000
        self.limit, self.remaining, self.reset = 5000, 5000, int(time.time()) + 3600
        self.throttles: list[Reply] = []

    def tick(self) -> int:
        self.clock += 61
        return self.clock

    def add(self, repo: str, number: int, title: str = "A bug", is_pr: bool = False) -> Issue:
        issue = self.issues[(repo, number)] = Issue(repo, number, title, is_pr, updated=self.tick())
        return issue

    def comment(self, repo: str, number: int, user: str, body: str) -> dict:
        issue = self.issues[(repo, number)]
        now = self.tick()
        cid = next(self.ids)
        comment = {
            "id": cid,
            "html_url": f"https://github.com/{repo}/issues/{number}#issuecomment-{cid}",
            "user": {"login": user, "type": "User"},
            "body": body,
            "created_at": stamp(now),
            "updated_at": stamp(now),
        }
        issue.comments.append(comment)
        issue.updated = now
        return comment

    def review(self, repo: str, number: int, user: str, state: str, body: str = "") -> dict:
        issue = self.issues[(repo, number)]
        now = self.tick()
        rid = next(self.ids)
        review = {
            "id": rid,
            "user": {"login": user},
            "body": body,
            "state": state,
            "html_url": f"https://github.com/{repo}/pull/{number}#pullrequestreview-{rid}",
            "submitted_at": stamp(now),
            "commit_id": "abc123",
        }
        issue.reviews.append(review)
        issue.updated = now
        return review

    def close(self, repo: str, number: int, by: str, reason: str = "completed") -> None:
        issue = self.issues[(repo, number)]
        issue.state, issue.state_reason, issue.closed_by, issue.updated = "closed", reason, by, self.tick()

    def reopen(self, repo: str, number: int) -> None:
        issue = self.issues[(repo, number)]
        issue.state, issue.state_reason, issue.closed_by, issue.updated = (
            "open",
            "reopened",
            None,
            self.tick(),
        )

    def merge(self, repo: str, number: int, by: str) -> None:
        issue = self.issues[(repo, number)]
        now = self.tick()
        issue.state, issue.merged_at, issue.closed_by, issue.updated = "closed", stamp(now), by, now

    def throttle(
        self,
        status: int = 403,
        *,
        retry_after: int | None = None,
        reset_in: int | None = None,
        times: int = 1,
    ) -> None:
        for _ in range(times):
            headers = {"x-ratelimit-limit": str(self.limit), "x-ratelimit-resource": "core"}
            if retry_after is not None:
                headers["retry-after"] = str(retry_after)
                headers["x-ratelimit-remaining"] = "4000"
                message = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
            else:
                headers["x-ratelimit-remaining"] = "0"
                headers["x-ratelimit-reset"] = str(int(time.time()) + (reset_in or 60))
                message = "API rate limit exceeded for 127.0.0.1."
            body = {
                "message": message,
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            }
            self.throttles.append(Reply.json(body, status, headers))

    # --- the API ------------------------------------------------------------------------

    def listing(self, repo: str, query: dict[str, str]) -> list[dict] | None:
        issues = [issue for (name, _), issue in self.issues.items() if name == repo]
        if not issues and not any(name.lower() == repo.lower() for name, _ in self.issues):
            return None
        state = query.get("state", "open")
        if state != "all":
            issues = [issue for issue in issues if issue.state == state]
        since = query.get("since")
        if since:
            issues = [issue for issue in issues if stamp(issue.updated) >= since]
        sort = query.get("sort", "created")
        key = {"updated": lambda i: i.updated, "comments": lambda i: len(i.comments)}.get(
            sort, lambda i: i.number
        )
        issues.sort(key=key, reverse=query.get("direction", "desc") == "desc")
        items = []
        for issue in issues:
            item = self.render(issue)
            del item["closed_by"]  # only the single-issue answer carries it
            items.append(item)
        return items

    def render(self, issue: Issue) -> dict:
        base = f"https://api.github.com/repos/{issue.repo}"
        data = {
            "url": f"{base}/issues/{issue.number}",
            "html_url": f"https://github.com/{issue.repo}/{'pull' if issue.is_pr else 'issues'}/{issue.number}",
            "id": hash((issue.repo, issue.number)) & 0xFFFFFFF,
            "number": issue.number,
            "title": issue.title,
            "user": {"login": "alice"},
            "state": issue.state,
            "state_reason": issue.state_reason,
            "comments": len(issue.comments),
            "created_at": stamp(1_690_000_000),
            "updated_at": stamp(issue.updated),
            "closed_at": stamp(issue.updated) if issue.state == "closed" else None,
            "closed_by": {"login": issue.closed_by} if issue.closed_by else None,
            "body": "Steps to reproduce…",
        }
        if issue.is_pr:
            data["pull_request"] = {
                "url": f"{base}/pulls/{issue.number}",
                "html_url": data["html_url"],
                "merged_at": issue.merged_at,
            }
        return data

    def headers(self, body: bytes | None) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "x-ratelimit-limit": str(self.limit),
            "x-ratelimit-remaining": str(self.remaining),
            "x-ratelimit-reset": str(self.reset),
            "x-ratelimit-resource": "core",
            "x-github-api-version-selected": "2022-11-28",
        }
        if body is not None:
            headers["ETag"] = 'W/"' + hashlib.sha256(body).hexdigest()[:40] + '"'
        return headers

    def handle(self, request: Request) -> Reply:
        if self.throttles:
            return self.throttles.pop(0)
        parts = request.path.strip("/").split("/")
        if len(parts) == 4 and parts[0] == "repos" and parts[3] == "issues":
            data = self.listing(f"{parts[1]}/{parts[2]}", request.query)
            if data is None:
                return Reply.json(
                    {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, 404
                )
            return self.answer(request, data)
        if len(parts) < 5 or parts[0] != "repos":
            return Reply.json({"message": "Not Found"}, 404)
        repo, what, number = f"{parts[1]}/{parts[2]}", parts[3], parts[4]
        issue = self.issues.get((repo, int(number))) if number.isdigit() else None
        if issue is None or (what == "pulls" and not issue.is_pr):
            return Reply.json(
                {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, 404
            )
        tail = parts[5:]
        if what == "issues" and not tail:
            data = self.render(issue)
        elif what == "issues" and tail == ["comments"]:
            since = request.query.get("since")
            data = [c for c in issue.comments if not since or c["updated_at"] >= since]
        elif what == "pulls" and tail == ["reviews"]:
            data = list(issue.reviews)
        else:
            return Reply.json({"message": "Not Found"}, 404)
        return self.answer(request, data)

    def answer(self, request: Request, data: list | dict) -> Reply:
        if isinstance(data, list):
            per_page = int(request.query.get("per_page", 30))
            page = int(request.query.get("page", 1))
            chunk = data[(page - 1) * per_page : page * per_page]
            body = json.dumps(chunk).encode()
            headers = self.headers(body)
            if page * per_page < len(data):
                query = "&".join(f"{k}={v}" for k, v in {**request.query, "page": page + 1}.items())
                headers["Link"] = f'<{self.url}{request.path}?{query}>; rel="next"'
        else:
            body = json.dumps(data).encode()
            headers = self.headers(body)
        if request.header("if-none-match") and request.header("if-none-match") == headers["ETag"]:
            return Reply(304, b"", self.headers(None) | {"ETag": headers["ETag"]})
        self.remaining = max(self.remaining - 1, 0)
        headers["x-ratelimit-remaining"] = str(self.remaining)
        return Reply(200, body, headers)

    def counted(self) -> int:
        return 5000 - self.remaining
