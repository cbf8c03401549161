"""A MediaWiki Action API (api.php) that answers the way the real one does, for the watchlist.

`action=query&prop=revisions&titles=…` with formatversion=2: `normalized` (first letter upper
case, underscores to spaces, namespace names canonical), `redirects` (with redirects=1),
`missing: true` for pages that do not exist, `invalid: true` for impossible titles, at most 50
titles (more is an error here, so a client that does not batch fails loudly), `rvlimit` with
several titles is `invalidparammix`, `continue` when `page_limit` is set, and `maxlag` errors
(HTTP 200, Retry-After, X-Database-Lag) when `lag` exceeds the request's maxlag.
`action=compare&fromrev&torev` answers an HTML diff table.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from .http import FakeServer, Reply, Request

NAMESPACES = {
    "talk": (1, "Talk"),
    "user": (2, "User"),
    "user talk": (3, "User talk"),
    "pickipedia": (4, "PickiPedia"),
}


@dataclass
class Page:
    title: str
    ns: int
    pageid: int
    revisions: list[dict] = field(default_factory=list)
    text: str = ""


class FakeMediaWiki(FakeServer):
    def __init__(self, host: str | None = None):
        super().__init__(host)
        self.pages: dict[str, Page] = {}
        self.redirects: dict[str, str] = {}
        self.lag = 0.0
        self.retry_after = "5"
        self.page_limit: int | None = None  # revisions per response before `continue`
        self.revids = itertools.count(1000)
        self.pageids = itertools.count(1)

    @property
    def api(self) -> str:
        return f"{self.url}/w/api.php"

    # --- the wiki's content -------------------------------------------------------------

    def normalize(self, title: str) -> str:
        title = title.replace("_", " ").strip()
        ns_name, sep, rest = title.partition(":")
        if sep and ns_name.lower() in NAMESPACES:
            rest = rest.strip()
            return f"{NAMESPACES[ns_name.lower()][1]}:{rest[:1].upper()}{rest[1:]}"
        return title[:1].upper() + title[1:]

    def namespace(self, title: str) -> int:
        ns_name, sep, _ = title.partition(":")
        return NAMESPACES[ns_name.lower()][0] if sep and ns_name.lower() in NAMESPACES else 0

    def edit(self, title: str, user: str = "Justin", comment: str = "", text: str = "") -> int:
        title = self.normalize(title)
        page = self.pages.get(title)
        if page is None:
            page = self.pages[title] = Page(title, self.namespace(title), next(self.pageids))
        revid = next(self.revids)
        parent = page.revisions[-1]["revid"] if page.revisions else 0
        page.revisions.append(
            {
                "revid": revid,
                "parentid": parent,
                "user": user,
                "timestamp": f"2026-11-30T06:{len(page.revisions) % 60:02d}:00Z",
                "comment": comment,
                "size": len(text),
                "text": text,
            }
        )
        page.text = text
        return revid

    def delete(self, title: str) -> None:
        self.pages.pop(self.normalize(title), None)

    def redirect(self, source: str, target: str) -> None:
        self.redirects[self.normalize(source)] = self.normalize(target)

    # --- the API ------------------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        if request.path != "/w/api.php":
            return Reply(404, "Not Found")
        q = request.query
        if "maxlag" in q and self.lag > float(q["maxlag"]):
            return Reply.json(
                {
                    "error": {
                        "code": "maxlag",
                        "info": f"Waiting for 10.64.0.12: {self.lag} seconds lagged.",
                        "host": "10.64.0.12",
                        "lag": self.lag,
                        "type": "db",
                        "*": "See https://www.mediawiki.org/w/api.php for API usage.",
                    },
                    "servedby": "fake-mw1",
                },
                headers={
                    "Retry-After": self.retry_after,
                    "X-Database-Lag": str(int(self.lag)),
                    "MediaWiki-API-Error": "maxlag",
                },
            )
        if q.get("action") == "compare":
            return self.compare(q)
        if q.get("action") != "query" or q.get("prop") != "revisions":
            return self.error("badvalue", 'Unrecognized value for parameter "action".')
        titles = [t for t in q.get("titles", "").split("|") if t]
        if len(titles) > 50:
            return self.error(
                "toomanyvalues", 'Too many values supplied for parameter "titles". The limit is 50.'
            )
        if "rvlimit" in q and len(titles) > 1:
            return self.error(
                "invalidparammix",
                "The rvlimit parameter may not be used with multiple pages.",
            )
        if q.get("formatversion") != "2":
            return self.error("badformat", "This fake speaks formatversion=2 only.")
        normalized, redirects, pages = [], [], []
        seen: set[str] = set()
        for raw in titles:
            if any(ch in raw for ch in "<>[]{}|#"):
                pages.append(
                    {
                        "title": raw,
                        "invalidreason": f'The requested page title contains invalid characters: "{raw}".',
                        "invalid": True,
                    }
                )
                continue
            title = self.normalize(raw)
            if title != raw:
                normalized.append({"fromencoded": False, "from": raw, "to": title})
            if q.get("redirects") and title in self.redirects:
                redirects.append({"from": title, "to": self.redirects[title]})
                title = self.redirects[title]
            if title in seen:
                continue
            seen.add(title)
            page = self.pages.get(title)
            if page is None:
                pages.append({"ns": self.namespace(title), "title": title, "missing": True})
            else:
                pages.append({"pageid": page.pageid, "ns": page.ns, "title": page.title})
        start = int(q.get("rvcontinue", "0") or 0)
        with_revisions = [p for p in pages if "pageid" in p]
        end = (
            len(with_revisions)
            if self.page_limit is None
            else min(start + self.page_limit, len(with_revisions))
        )
        props = q.get("rvprop", "ids|timestamp|flags|comment|user").split("|")
        for index, item in enumerate(with_revisions):
            if start <= index < end:
                rev = self.pages[item["title"]].revisions[-1]
                shown = {"revid": rev["revid"], "parentid": rev["parentid"]} if "ids" in props else {}
                for prop in ("user", "timestamp", "comment", "size"):
                    if prop in props:
                        shown[prop] = rev[prop]
                item["revisions"] = [shown]
        body: dict = {"query": {"pages": sorted(pages, key=lambda p: p.get("pageid", 10**9))}}
        if normalized:
            body["query"]["normalized"] = normalized
        if redirects:
            body["query"]["redirects"] = redirects
        if end < len(with_revisions):
            body["continue"] = {"rvcontinue": str(end), "continue": "||"}
        else:
            body["batchcomplete"] = True
        return Reply.json(body)

    def compare(self, q: dict[str, str]) -> Reply:
        revs = {r["revid"]: r for p in self.pages.values() for r in p.revisions}
        old, new = revs.get(int(q.get("fromrev", 0))), revs.get(int(q.get("torev", 0)))
        if not old or not new:
            return self.error("nosuchrevid", "There is no revision with that ID.")
        rows = "".join(
            f'<tr><td class="diff-deletedline diff-side-deleted"><div>{line}</div></td></tr>'
            for line in old["text"].splitlines()
            if line not in new["text"].splitlines()
        )
        rows += "".join(
            f'<tr><td class="diff-addedline diff-side-added"><div>{line}</div></td></tr>'
            for line in new["text"].splitlines()
            if line not in old["text"].splitlines()
        )
        return Reply.json({"compare": {"fromrevid": old["revid"], "torevid": new["revid"], "body": rows}})

    def error(self, code: str, info: str) -> Reply:
        return Reply.json(
            {
                "error": {"code": code, "info": info, "docref": "See /w/api.php for API usage."},
                "servedby": "fake-mw1",
            },
            headers={"MediaWiki-API-Error": code},
        )

    def query_requests(self) -> list[Request]:
        return [r for r in self.requests if r.query.get("action") == "query"]
