"""Web pages the way sites serve them: with an ETag, with Last-Modified only, with neither,
and a page whose ads and clock change on every load (and whose ETag does too)."""

from __future__ import annotations

import hashlib
import html
import itertools
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime

from .http import FakeServer, Reply, Request

TEMPLATE = """<!doctype html>
<html><head><title>{title}</title></head>
<body>
<nav><a href="/">Home</a> · <a href="/about">About</a></nav>
<div class="ad advertisement" id="ad-banner">{ad}</div>
<article>
<h1>{title}</h1>
{paragraphs}
</article>
<aside class="sidebar ad">{ad}</aside>
<footer>Page generated at {clock}. © Example</footer>
</body></html>
"""


@dataclass
class WebPage:
    title: str
    text: str
    validator: str = "etag"  # etag | last_modified | none
    dynamic: bool = False  # ads and a clock that change on every load
    modified: float = 1_700_000_000.0
    status: int = 200


class FakeWeb(FakeServer):
    def __init__(self, host: str | None = None):
        super().__init__(host)
        self.pages: dict[str, WebPage] = {}
        self.redirects: dict[str, str] = {}
        self.loads = itertools.count()

    def page(self, path: str, title: str, text: str, validator: str = "etag", dynamic: bool = False) -> str:
        self.pages[path] = WebPage(title, text, validator, dynamic)
        return self.url + path

    def change(self, path: str, text: str) -> None:
        page = self.pages[path]
        page.text = text
        page.modified += 3600

    def render(self, page: WebPage) -> bytes:
        load = next(self.loads)
        paragraphs = "\n".join(f"<p>{html.escape(p)}</p>" for p in page.text.split("\n\n"))
        ad = f"Buy Widget #{load} today! Offer {load * 7 % 97}% off" if page.dynamic else "Our sponsor"
        clock = formatdate(1_700_000_000 + load) if page.dynamic else "a fixed time"
        return TEMPLATE.format(title=page.title, paragraphs=paragraphs, ad=ad, clock=clock).encode()

    def handle(self, request: Request) -> Reply:
        if request.path in self.redirects:
            return Reply(302, b"", {"Location": self.redirects[request.path]})
        page = self.pages.get(request.path)
        if page is None:
            return Reply(404, b"<h1>Not Found</h1>", {"Content-Type": "text/html"})
        if page.status != 200:
            return Reply(page.status, b"error", {"Content-Type": "text/plain"})
        body = self.render(page)
        headers = {"Content-Type": "text/html; charset=utf-8"}
        if page.validator == "etag":
            etag = '"' + hashlib.md5(body).hexdigest() + '"'
            headers["ETag"] = etag
            if request.header("if-none-match") == etag:
                return Reply(304, b"", headers)
        elif page.validator == "last_modified":
            headers["Last-Modified"] = formatdate(page.modified, usegmt=True)
            since = request.header("if-modified-since")
            if since and parsedate_to_datetime(since).timestamp() >= page.modified:
                return Reply(304, b"", headers)
        return Reply(200, body, headers)
