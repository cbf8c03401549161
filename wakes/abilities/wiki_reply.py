"""Reply on a wiki page: the runner posts the agent's reply on the one page the wake fixed.

The turn never gets a wiki write tool. After it FINISHED, the runner logs in to the wiki with a
bot password (settings WIKI_BOT_CREDENTIALS, keyed by api.php URL) and posts the agent's final
text as a new section of exactly `Turn.ability["page"]`, through the MediaWiki Action API
(API:Login, API:Tokens, API:Edit; formatversion=2), all through the one HTTP wrapper:

  GET  action=query&meta=tokens&type=login          → logintoken (and a session cookie)
  POST action=login lgname lgpassword lgtoken       → login.result Success
  GET  action=query&meta=tokens                     → csrftoken
  POST action=edit title section=new sectiontitle text summary assert maxlag token

Why `section=new`: a reply is a new comment, and a new section is the one placement that is
never wrong — `appendtext` lands inside whatever section happens to be last, which is often
not the discussion that woke the agent; the section heading says who replies, and the
signature (~~~~) is the wiki's own. The edit summary carries a marker with the turn id, so a
retry after a lost answer first looks for its own edit instead of posting twice.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import httpx

from motion_runner.lib.http.base import FetchError, Response
from motion_runner.lib.http.client import HttpClient, credential_may_go
from motion_runner.lib.wiki_urls import page_url
from motion_runner.models import Turn

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .base import Ability, AbilityError, Done

REPLY_ON_WIKI_PAGE = "reply_on_wiki_page"

# Codes after which asking again cannot help (the docs' API:Edit "Possible errors" and ApiMain's
# assert errors); anything not named here or in TRANSIENT is treated as permanent too, so an
# unknown refusal is never hammered.
TRANSIENT = {"ratelimited": 60.0, "readonly": 300.0, "internal_api_error_DBQueryError": 60.0}
BAD_TITLE = re.compile(r"[#<>\[\]|{}\x00-\x1f]")


def page_link(api: str, title: str, **params: Any) -> str:
    return page_url(api, title, **params)


def credentials_for(api: str) -> tuple[str, str] | None:
    """The bot password configured for exactly this api.php, and only over https (or loopback)."""
    if not credential_may_go(api, api):
        return None
    found = settings.WIKI_BOT_CREDENTIALS.get(api)
    if not found or not found[0] or not found[1]:
        return None
    return found[0], found[1]


class BadToken(AbilityError):
    """The edit token was refused (expired with its session): fetched afresh once."""

    def __init__(self, info: str):
        super().__init__(f"badtoken: {info}")


class WikiSession:
    """One login session on one wiki: a cookie jar and the Action API's error handling."""

    def __init__(self, http: HttpClient, api: str):
        self.http = http
        self.api = api
        self.cookies = httpx.Cookies()
        self.username = ""

    def call(self, method: str, params: dict[str, Any]) -> dict:
        params = {**params, "format": "json", "formatversion": "2"}
        try:
            if method == "GET":
                response = self.http.request("GET", self.api, params=params, cookies=self.cookies)
            else:
                response = self.http.post_form(self.api, params, cookies=self.cookies)
        except FetchError as exc:
            raise AbilityError(str(exc), permanent=exc.permanent, retry_after=exc.retry_after) from exc
        return self.body(response)

    def body(self, response: Response) -> dict:
        if response.status == 429 or response.status >= 500:
            raise AbilityError(f"the wiki answered {response.status}", retry_after=response.retry_after())
        if response.status != 200:
            raise AbilityError(f"the wiki answered {response.status}", permanent=True)
        try:
            body = response.json()
        except FetchError as exc:
            raise AbilityError(
                "the wiki did not answer JSON: is it a MediaWiki api.php URL?", permanent=True
            ) from exc
        if not isinstance(body, dict):
            raise AbilityError("the wiki answered something that is not a JSON object", permanent=True)
        if error := body.get("error"):
            code, info = str(error.get("code", "?")), str(error.get("info", ""))[:300]
            if code == "maxlag":
                wait = response.retry_after() or float(error.get("lag") or 5)
                raise AbilityError(f"the wiki is lagged ({info})", retry_after=wait)
            if code == "badtoken":
                raise BadToken(info)
            if code in TRANSIENT:
                raise AbilityError(f"{code}: {info}", retry_after=response.retry_after() or TRANSIENT[code])
            raise AbilityError(f"{code}: {info}", permanent=True)
        return body

    def login(self, lgname: str, password: str) -> str:
        token = self.call("GET", {"action": "query", "meta": "tokens", "type": "login"})
        logintoken = token.get("query", {}).get("tokens", {}).get("logintoken")
        if not logintoken:
            raise AbilityError("the wiki gave no login token", permanent=True)
        answer = self.call(
            "POST", {"action": "login", "lgname": lgname, "lgpassword": password, "lgtoken": logintoken}
        ).get("login", {})
        if answer.get("result") != "Success":
            reason = answer.get("reason") or answer.get("result") or "no reason given"
            if isinstance(reason, dict):  # newer wikis: {"code": …, "text": …}
                reason = reason.get("text") or reason.get("code")
            raise AbilityError(f"the wiki refused the bot login as {lgname}: {reason}", permanent=True)
        self.username = answer.get("lgusername") or lgname.split("@", 1)[0]
        return self.username

    def csrf(self) -> str:
        token = self.call("GET", {"action": "query", "meta": "tokens", "type": "csrf"})
        csrf = token.get("query", {}).get("tokens", {}).get("csrftoken")
        if not csrf or csrf == "+\\":  # `+\` is the anonymous token: the login did not hold
            raise AbilityError("the wiki gave no edit token for the bot's session", permanent=True)
        return csrf

    def find_own_edit(self, title: str, marker: str) -> int | None:
        """The revision id of an earlier edit of ours whose summary carries `marker`, if any."""
        body = self.call(
            "GET",
            {
                "action": "query",
                "prop": "revisions",
                "titles": title,
                "rvprop": "ids|comment|user",
                "rvuser": self.username,
                "rvlimit": "50",
            },
        )
        for page in body.get("query", {}).get("pages", []):
            for revision in page.get("revisions", []) or []:
                if marker in (revision.get("comment") or ""):
                    return revision.get("revid")
        return None

    def new_section(self, title: str, heading: str, text: str, summary: str) -> dict:
        """One edit; a stale token (badtoken) is fetched afresh and the edit tried once more."""
        params = {
            "action": "edit",
            "title": title,
            "section": "new",
            "sectiontitle": heading,
            "text": text,
            "summary": summary,
            "assert": settings.WIKI_REPLY_ASSERT,
            "maxlag": str(settings.WATCH_WIKI_MAXLAG),
        }
        for attempt in (1, 2):
            try:
                body = self.call("POST", {**params, "token": self.csrf()})
                break
            except BadToken as exc:
                if attempt == 2:
                    raise AbilityError(
                        f"the wiki refused a fresh edit token too ({exc})", permanent=True
                    ) from exc
        edit = body.get("edit", {})
        if edit.get("result") != "Success" or not edit.get("newrevid"):
            detail = {k: v for k, v in edit.items() if k not in ("result", "title")}
            raise AbilityError(
                f"the wiki did not save the edit: {edit.get('result', '?')} {detail}"[:400], permanent=True
            )
        return edit


class WikiReply(Ability):
    kind = REPLY_ON_WIKI_PAGE

    def target(self, spec: dict[str, Any]) -> str:
        return f"{spec.get('page')} on {urlsplit(str(spec.get('api', ''))).netloc or spec.get('api')}"

    def prompt(self, spec: dict[str, Any]) -> str:
        return (
            f"This wake is for the talk page {spec['page']} on {spec['api']}. If a reply is owed, "
            f"write it as your answer in this turn: when the turn ends, the runner itself posts your "
            f"final text (what you say after your last tool call) as a new section on {spec['page']}, "
            "signed as coming from you through the runner. That page is fixed by the runner: naming "
            "another page changes nothing, and you cannot and need not edit the wiki yourself (this "
            "turn is look-only). If nothing needs saying, reply with only <silent>why</silent> and "
            "nothing is posted."
        )

    def perform(self, turn: Turn, spec: dict[str, Any], payload: str, *, attempt: int) -> Done:
        api, title = str(spec.get("api", "")), str(spec.get("page", ""))
        # The spec was written by the runner, but check it as if it were not.
        if api not in settings.WATCH_TALK_REPLY_WIKIS:
            raise AbilityError(
                f"{api} is not a wiki the runner replies on (WATCH_TALK_REPLY_WIKIS)", permanent=True
            )
        if not title or BAD_TITLE.search(title):
            raise AbilityError(f"{title!r} is not a page title", permanent=True)
        if len(payload) > settings.WIKI_REPLY_MAX_CHARS:
            raise AbilityError(
                f"the reply is {len(payload)} characters, over the {settings.WIKI_REPLY_MAX_CHARS} a wiki reply may have",
                permanent=True,
            )
        found = credentials_for(api)
        if found is None:
            raise AbilityError(
                f"no bot password is configured for {api} (WIKI_BOT_CREDENTIALS; sent over https only)",
                permanent=True,
            )
        agent = turn.agent.name
        marker = f"turn {turn.pk}"
        summary = f"Reply from @{agent} through Motion Runner ({marker} in {turn.motion_id})"
        text = f"{payload}\n\n{settings.WIKI_REPLY_SIGNATURE.format(agent=agent)}"
        with HttpClient() as http:
            session = WikiSession(http, api)
            session.login(*found)
            revid = session.find_own_edit(title, f"({marker} ") if attempt > 1 else None
            if revid is None:
                edit = session.new_section(title, f"Reply from @{agent}", text, summary)
                revid, title = edit["newrevid"], edit.get("title", title)
        link = page_link(api, title, diff=revid)
        return Done(
            f"✎ replied on {title} (rev {revid}) {link}", {"revid": revid, "link": link, "title": title}
        )
