"""A MediaWiki page (PickiPedia by default): batched latest-revision queries, ≤50 titles each.

One request per 50 distinct titles on one wiki:
`action=query&prop=revisions&titles=A|B|…&rvprop=ids|timestamp|user|comment|size&redirects=1
&maxlag=5&format=json&formatversion=2`. No rvlimit: with several titles it would switch the
module to single-page mode (`invalidparammix`). Results are mapped back through `normalized`
and `redirects`; `missing` pages are kept watching (a talk page often does not exist until its
first comment, and its creation is news); `invalid` titles disable the watch. A `maxlag` error
(HTTP 200 + Retry-After) defers the batch. `continue` is followed until the batch completes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

from motion_runner.lib.http.base import FetchError
from motion_runner.lib.http.client import HttpClient
from motion_runner.lib.wiki_urls import page_url

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .base import Change, CheckError, InvalidTarget, Outcome, Snapshot, WatchKind, check_url

BATCH = 50
BAD_TITLE = re.compile(r"[#<>\[\]|{}\x00-\x1f]")
MAX_CONTINUATIONS = 20


def diff_text(body: str, limit: int = 4000) -> str:
    """The added/removed lines of a MediaWiki HTML diff table, as plain text."""
    lines = []
    for sign, cell in re.findall(
        r'<td class="diff-(added|deleted)line[^"]*"[^>]*>(.*?)</td>', body, flags=re.S
    ):
        text = html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
        if text:
            lines.append(("+ " if sign == "added" else "- ") + text)
    return "\n".join(lines)[:limit]


class WikiPage(WatchKind):
    name = "wiki_page"
    label = "Wiki page"
    option_names = ("api",)

    def clean_target(self, target: str, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if not target:
            raise InvalidTarget("a wiki page needs a title, e.g. Talk:Main Page")
        if len(target) > 255:
            raise InvalidTarget("a wiki page title is at most 255 characters")
        if bad := BAD_TITLE.search(target):
            raise InvalidTarget(f"a wiki page title cannot contain {bad.group()!r}")
        options["api"] = check_url(options.get("api") or settings.WATCH_WIKI_API, "api")
        return target.replace("_", " "), options

    def group_key(self, snap: Snapshot) -> str:
        return snap.options.get("api") or settings.WATCH_WIKI_API

    def lanes(self, snaps: list[Snapshot], max_lanes: int) -> list[list[Snapshot]]:
        # A batch is the unit: split by distinct title, 50 to a batch, batches over lanes.
        by_title: dict[str, list[Snapshot]] = {}
        for snap in snaps:
            by_title.setdefault(snap.target, []).append(snap)
        titles = list(by_title)
        batches = [titles[i : i + BATCH] for i in range(0, len(titles), BATCH)]
        count = max(1, min(max_lanes, len(batches)))
        lanes: list[list[Snapshot]] = [[] for _ in range(count)]
        for index, batch in enumerate(batches):
            for title in batch:
                lanes[index % count].extend(by_title[title])
        return [lane for lane in lanes if lane]

    def check(self, http: HttpClient, snaps: list[Snapshot]) -> Iterable[Outcome]:
        api = self.group_key(snaps[0])
        by_title: dict[str, list[Snapshot]] = {}
        for snap in snaps:
            by_title.setdefault(snap.target, []).append(snap)
        titles = list(by_title)
        for start in range(0, len(titles), BATCH):
            batch = titles[start : start + BATCH]
            members = [snap for title in batch for snap in by_title[title]]
            try:
                pages, requests = self.query(http, api, batch)
            except CheckError as exc:
                yield from (Outcome(snap.id, error=exc) for snap in members)
                continue
            for title in batch:
                for snap in by_title[title]:
                    yield self.outcome(http, api, snap, pages.get(title))

    def query(self, http: HttpClient, api: str, titles: list[str]) -> tuple[dict[str, dict], int]:
        """{requested title: page} for one batch, following continuation."""
        params: dict[str, Any] = {
            "action": "query",
            "prop": "revisions",
            "titles": "|".join(titles),
            "rvprop": "ids|timestamp|user|comment|size",
            "redirects": "1",
            "maxlag": str(settings.WATCH_WIKI_MAXLAG),
            "format": "json",
            "formatversion": "2",
        }
        pages: dict[str, dict] = {}
        normalized: dict[str, str] = {}
        redirects: dict[str, str] = {}
        requests = 0
        cont: dict[str, Any] = {}
        while True:
            try:
                response = http.get(api, params={**params, **cont})
            except FetchError as exc:
                raise CheckError.from_fetch(exc) from exc
            requests += 1
            if response.status == 404:
                raise CheckError(f"{api} answered 404: not a MediaWiki API", permanent=True)
            if response.status == 429 or response.status >= 500:
                raise CheckError(f"{api} answered {response.status}", retry_after=response.retry_after())
            if response.status != 200:
                raise CheckError(f"{api} answered {response.status}")
            try:
                body = response.json()
            except FetchError as exc:
                raise CheckError(f"{api} did not answer JSON: is it a MediaWiki api.php URL?") from exc
            if error := body.get("error"):
                code = error.get("code", "?")
                if code == "maxlag":
                    wait = response.retry_after() or float(error.get("lag") or 5)
                    http.block_host(api, wait)
                    raise CheckError(f"{api} is lagged ({error.get('info', 'maxlag')})", retry_after=wait)
                raise CheckError(f"{api}: {code}: {error.get('info', '')}"[:500])
            query = body.get("query", {})
            for item in query.get("normalized", []):
                normalized[item["from"]] = item["to"]
            for item in query.get("redirects", []):
                redirects[item["from"]] = item["to"]
            for page in query.get("pages", []):
                known = pages.setdefault(page["title"], page)
                if page.get("revisions"):
                    known["revisions"] = page["revisions"]
            if "continue" not in body or requests > MAX_CONTINUATIONS:
                break
            cont = body["continue"]
        result: dict[str, dict] = {}
        for title in titles:
            name = normalized.get(title, title)
            for _ in range(5):  # redirect chains are short; loops end here
                if name not in redirects:
                    break
                name = redirects[name]
            if name in pages:
                result[title] = pages[name]
        return result, requests

    def outcome(self, http: HttpClient, api: str, snap: Snapshot, page: dict | None) -> Outcome:
        if page is None:
            return Outcome(snap.id, error=CheckError(f"{api} said nothing about {snap.target!r}"))
        title = page.get("title", snap.target)
        if page.get("invalid"):
            reason = page.get("invalidreason", "not a valid title")
            return Outcome(snap.id, error=CheckError(f"{snap.target!r}: {reason}", permanent=True))
        old = snap.state.get("revision")
        talk = self.talk_page(api, page)
        if page.get("missing"):
            state = {"checked": True, "revision": None, "title": title, "missing": True}
            changes = []
            if not snap.first_check and old:
                changes.append(
                    Change(
                        key=f"gone:{old}", line=f"✎ {title} was deleted or moved", link=page_url(api, title)
                    )
                )
            return Outcome(snap.id, state=state, changes=changes)
        revision = (page.get("revisions") or [{}])[0]
        revid = revision.get("revid")
        state = {"checked": True, "revision": revid, "title": title, "missing": False}
        if snap.first_check or revid is None or revid == old:
            return Outcome(snap.id, state=state)
        user = revision.get("user", "someone")
        summary = (revision.get("comment") or "").strip()
        verb = "edited" if old else "created"
        line = f"✎ {title} {verb} by {user}" + (f": {summary[:200]}" if summary else "")
        link = page_url(api, title, diff=revid, oldid=old) if old else page_url(api, title, oldid=revid)
        content = f"{line}\n"
        if snap.wake == "always" and old:
            content += self.compare(http, api, old, revid)
        change = Change(key=f"rev:{revid}", line=line, link=link, content=content, talk_page=talk)
        return Outcome(snap.id, state=state, changes=[change])

    def talk_page(self, api: str, page: dict) -> dict[str, str] | None:
        # Talk namespaces are the odd ones (1 Talk, 3 User talk, …).
        if page.get("ns", 0) % 2 == 1 and api in settings.WATCH_TALK_REPLY_WIKIS:
            return {"wiki": api, "page": page["title"]}
        return None

    def compare(self, http: HttpClient, api: str, old: int, new: int) -> str:
        try:
            response = http.get(
                api,
                params={
                    "action": "compare",
                    "fromrev": old,
                    "torev": new,
                    "format": "json",
                    "formatversion": "2",
                },
            )
            body = response.json().get("compare", {}).get("body", "")
        except (FetchError, AttributeError):
            return "(the diff could not be fetched)"
        return diff_text(body)
