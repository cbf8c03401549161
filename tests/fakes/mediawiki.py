"""A MediaWiki Action API (api.php) that answers the way the real one does, for the watchlist.

`action=query&prop=revisions&titles=…` with formatversion=2: `normalized` (first letter upper
case, underscores to spaces, namespace names canonical), `redirects` (with redirects=1),
`missing: true` for pages that do not exist, `invalid: true` for impossible titles, at most 50
titles (more is an error here, so a client that does not batch fails loudly), `rvlimit` with
several titles is `invalidparammix`, `continue` when `page_limit` is set, and `maxlag` errors
(HTTP 200, Retry-After, X-Database-Lag) when `lag` exceeds the request's maxlag.
`action=compare&fromrev&torev` answers an HTML diff table.

Writing, as API:Login, API:Tokens and API:Edit describe it (formatversion=2):
- a session cookie (`fakewiki_session`, HttpOnly) is set on the first request without one, and
  replaced by a new one at login, so a client that does not keep cookies never gets anywhere;
- `action=query&meta=tokens&type=login` → `query.tokens.logintoken`; `meta=tokens` (csrf, the
  default type) → `query.tokens.csrftoken`, which is `+\\` for an anonymous session;
- `action=login` (POST only: `mustbeposted`) with lgname/lgpassword/lgtoken → `login.result`
  Success (lguserid, lgusername: the part of a bot password's name before the @), Failed with
  a `reason`, or WrongToken;
- `action=edit` (POST only, token in the body or `mustposttoken`) with title, text or
  appendtext, `section=new` + `sectiontitle`, summary, `assert=user|bot` (`assertuserfailed`,
  `assertbotfailed`), token (`badtoken`: `Invalid CSRF token.`); a protected page answers
  `protectedpage`, a blocked user `blocked`; success is `edit.result = Success` with
  oldrevid/newrevid/newtimestamp. `maxlag` is checked first, as ApiMain does.
Knobs: `bots` (bot-password logins), `protected`, `blocked`, `stale_tokens` (the next N edits
answer badtoken whatever token they carry: a session whose token expired).
"""

from __future__ import annotations

import itertools
import secrets
from dataclasses import dataclass, field
from urllib.parse import parse_qs

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
        # Bot passwords: lgname ("User@app") → (password, user, is in the bot group).
        self.bots: dict[str, tuple[str, str, bool]] = {}
        self.sessions: dict[str, dict] = {}
        self.protected: set[str] = set()
        self.blocked: set[str] = set()
        self.stale_tokens = 0
        self.userids = itertools.count(7)

    def add_bot(self, lgname: str, password: str, *, bot_group: bool = True) -> None:
        self.bots[lgname] = (password, lgname.split("@", 1)[0], bot_group)

    def edits_by(self, user: str) -> list[tuple[str, dict]]:
        return [(p.title, r) for p in self.pages.values() for r in p.revisions if r["user"] == user]

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
        form = {}
        if request.method == "POST" and "x-www-form-urlencoded" in (request.header("content-type") or ""):
            form = {k: v[-1] for k, v in parse_qs(request.body.decode(), keep_blank_values=True).items()}
        q = {**request.query, **form}
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
        cookie, session = self.session(request)
        reply = self.write_api(request, q, form, session)
        if reply is None and q.get("action") == "compare":
            reply = self.compare(q)
        if reply is None:
            reply = self.read_api(q)
        if cookie:
            reply.headers["Set-Cookie"] = f"fakewiki_session={cookie}; path=/; HttpOnly"
        return reply

    # --- sessions, login, tokens, edit -------------------------------------------------------

    def session(self, request: Request) -> tuple[str | None, dict]:
        """(a new cookie to set or None, the session)."""
        for part in (request.header("cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == "fakewiki_session" and value in self.sessions:
                return None, self.sessions[value]
        sid = secrets.token_hex(16)
        self.sessions[sid] = {"id": sid, "user": None, "bot": False, "logintoken": None, "csrf": None}
        return sid, self.sessions[sid]

    def write_api(self, request: Request, q: dict, form: dict, session: dict) -> Reply | None:
        action = q.get("action")
        if action == "query" and q.get("meta") == "tokens":
            kind = q.get("type", "csrf")
            if kind == "login":
                session["logintoken"] = session["logintoken"] or secrets.token_hex(20) + "+\\"
                return Reply.json(
                    {"batchcomplete": True, "query": {"tokens": {"logintoken": session["logintoken"]}}}
                )
            if kind == "csrf":
                if session["user"] is None:
                    token = "+\\"  # what MediaWiki gives an anonymous session
                else:
                    session["csrf"] = session["csrf"] or secrets.token_hex(20) + "+\\"
                    token = session["csrf"]
                return Reply.json({"batchcomplete": True, "query": {"tokens": {"csrftoken": token}}})
            return self.error("badvalue", f'Unrecognized value for parameter "type": {kind}.')
        if action == "login":
            if request.method != "POST":
                return self.error("mustbeposted", 'The "login" module requires a POST request.')
            return self.login(q, session)
        if action == "edit":
            if request.method != "POST":
                return self.error("mustbeposted", 'The "edit" module requires a POST request.')
            if "token" in request.query:
                return self.error(
                    "mustposttoken",
                    'The "token" parameter was found in the query string, but must be in the POST body.',
                )
            return self.edit_api(q, session)
        return None

    def login(self, q: dict, session: dict) -> Reply:
        if not session["logintoken"] or q.get("lgtoken") != session["logintoken"]:
            return Reply.json({"login": {"result": "WrongToken"}})
        known = self.bots.get(q.get("lgname", ""))
        if known is None or known[0] != q.get("lgpassword"):
            return Reply.json(
                {
                    "login": {
                        "result": "Failed",
                        "reason": "Incorrect username or password entered. Please try again.",
                    }
                }
            )
        _, user, bot = known
        # A new session id at login, as MediaWiki does: the old cookie is worth nothing now.
        old = session["id"]
        new = secrets.token_hex(16)
        session.update(id=new, user=user, bot=bot, logintoken=None, csrf=None)
        self.sessions[new] = self.sessions.pop(old)
        reply = Reply.json(
            {"login": {"result": "Success", "lguserid": next(self.userids), "lgusername": user}}
        )
        reply.headers["Set-Cookie"] = f"fakewiki_session={new}; path=/; HttpOnly"
        return reply

    def edit_api(self, q: dict, session: dict) -> Reply:
        wanted = q.get("assert")
        if wanted == "user" and session["user"] is None:
            return self.error(
                "assertuserfailed", "You are no longer logged in, so the action could not be completed."
            )
        if wanted == "bot" and not session["bot"]:
            return self.error("assertbotfailed", 'Assertion that the user has the "bot" right failed.')
        if not q.get("token"):
            return self.error("missingparam", 'The "token" parameter must be set.')
        if self.stale_tokens > 0:
            self.stale_tokens -= 1
            session["csrf"] = None  # the old token is gone; a fresh meta=tokens gives a new one
            return self.error("badtoken", "Invalid CSRF token.")
        expected = session["csrf"] if session["user"] else "+\\"
        if q["token"] != expected:
            return self.error("badtoken", "Invalid CSRF token.")
        if session["user"] is None:
            return self.error("permissiondenied", "You do not have permission to edit this page.")
        if session["user"] in self.blocked:
            return self.error("blocked", "You have been blocked from editing.")
        raw_title = q.get("title", "")
        if not raw_title or any(ch in raw_title for ch in "<>[]{}|#"):
            return self.error("invalidtitle", f'Bad title "{raw_title}".')
        title = self.normalize(raw_title)
        if title in self.protected:
            return self.error(
                "protectedpage", "This page has been protected to prevent editing or other actions."
            )
        page = self.pages.get(title)
        old_text = page.text if page else ""
        if q.get("section") == "new":
            heading = q.get("sectiontitle") or q.get("summary", "")
            added = f"== {heading} ==\n\n{q.get('text', '')}"
            text = f"{old_text}\n\n{added}".lstrip("\n")
            summary = q.get("summary") or f"/* {heading} */ new section"
        elif "appendtext" in q:
            text, summary = old_text + q["appendtext"], q.get("summary", "")
        elif "text" in q:
            text, summary = q["text"], q.get("summary", "")
        else:
            return self.error("missingparam", "One of the parameters text, appendtext and undo is required.")
        oldrevid = page.revisions[-1]["revid"] if page and page.revisions else 0
        newrevid = self.edit(title, user=session["user"], comment=summary, text=text)
        body = {
            "result": "Success",
            "pageid": self.pages[title].pageid,
            "title": title,
            "contentmodel": "wikitext",
            "oldrevid": oldrevid,
            "newrevid": newrevid,
            "newtimestamp": self.pages[title].revisions[-1]["timestamp"],
        }
        if page is None:
            body["new"] = True
        return Reply.json({"edit": body})

    def edit_requests(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST" and b"action=edit" in r.body]

    # --- reading --------------------------------------------------------------------------

    def read_api(self, q: dict) -> Reply:
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
                revisions = self.pages[item["title"]].revisions[::-1]  # newest first
                if q.get("rvuser"):
                    revisions = [r for r in revisions if r["user"] == q["rvuser"]]
                # Single-page mode (rvlimit) lists up to rvlimit revisions, else the latest one.
                count = min(int(q["rvlimit"]), 500) if "rvlimit" in q else 1
                item["revisions"] = []
                for rev in revisions[:count]:
                    shown = {"revid": rev["revid"], "parentid": rev["parentid"]} if "ids" in props else {}
                    for prop in ("user", "timestamp", "comment", "size"):
                        if prop in props:
                            shown[prop] = rev[prop]
                    item["revisions"].append(shown)
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
