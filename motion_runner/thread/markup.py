"""Markdown for the thread, rendered and sanitized on the server.

Agents and watched pages write whatever they like; the thread shows it as Markdown and never
runs any of it. markdown-it-py renders with raw HTML off (a `<script>` in a post is shown as
text), and nh3 (Ammonia) then keeps only the tags and URL schemes below, so even a renderer bug
cannot let an attribute like `onerror` or a `javascript:` link through.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections import OrderedDict

import nh3
from django.core.cache import cache
from markdown_it import MarkdownIt

from ..conf import app_settings

log = logging.getLogger(__name__)

# The kinds whose text is prose worth rendering; tool calls, results and system lines stay
# plain text (the page shows them with textContent).
MARKDOWN_KINDS = frozenset({"text", "watch", "compact", "error", "thinking"})

# A reply's `<tools to="…"/>` (and merge, deploy) becomes a request card of its own: the raw
# tag is hidden from the reply. Kept in step with wakes.turn.requests.TAG (a test pins both).
REQUEST_TAG = re.compile(r"""<(tools|merge|deploy)\s+to\s*=\s*(?:"[^"]*"|'[^']*')\s*/?>""", re.IGNORECASE)

ALLOWED_TAGS = {
    "p", "br", "hr", "strong", "em", "s", "del", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "code": {"class"},
    "ol": {"start"},
    "th": {"style"},
    "td": {"style"},
}
ALLOWED_SCHEMES = {"http", "https", "mailto"}

# breaks: a line break typed in a post (Shift+Enter) is kept, as chat and comment boxes keep it.
_markdown = MarkdownIt(
    "commonmark", {"linkify": True, "html": False, "typographer": False, "breaks": True}
).enable(["linkify", "table", "strikethrough"])


def strip_request_tags(text: str) -> str:
    return REQUEST_TAG.sub("", text)


# Bumped whenever what a text renders to changes (the tags, the renderer's options): the shared
# cache's keys carry it, so an old rendering is never served for the new rules.
RENDERING = "1"


class Rendered:
    """Each text rendered once: by content hash, in this process (the most recent, bounded) and in
    the shared cache (every web process and thread alike), so a poll never renders again what
    any reader already had. Keyed by hash, not by text, so the process keeps no texts."""

    def __init__(self, size: int = 4096):
        self.size = size
        self.recent: OrderedDict[str, str] = OrderedDict()
        self.lock = threading.Lock()  # gthread: several readers of one process at once

    def __call__(self, text: str) -> str:
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
        with self.lock:
            html = self.recent.get(digest)
            if html is not None:
                self.recent.move_to_end(digest)
                return html
        key = f"motion_runner:markdown:{RENDERING}:{digest}"
        try:
            html = cache.get(key)
        except Exception:  # the shared cache away (Redis restarting): render here, as before it
            log.warning("markdown cache unreadable; rendering in this process", exc_info=True)
            html, key = None, None
        if html is None:
            html = _render(text)
            if key is not None:
                try:
                    cache.set(key, html, timeout=app_settings.THREAD_MARKDOWN_CACHE_SECONDS)
                except Exception:
                    log.warning("markdown cache unwritable", exc_info=True)
        with self.lock:
            self.recent[digest] = html
            while len(self.recent) > self.size:
                self.recent.popitem(last=False)
        return html

    def cache_clear(self) -> None:
        with self.lock:
            self.recent.clear()


render_markdown = Rendered()


def _render(text: str) -> str:
    """Safe HTML for one post: links open in a new tab and carry no referrer or opener."""
    html = _markdown.render(strip_request_tags(text or ""))
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=ALLOWED_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        set_tag_attribute_values={"a": {"target": "_blank"}},
        filter_style_properties={"text-align"},
    ).strip()


def html_for(kind: str, text: str) -> str | None:
    """The post as HTML, or None for the page to show it as plain text: a kind that is not prose,
    or a text past THREAD_MARKDOWN_MAX_CHARS (the renderer's work grows with the text, fastest
    on a run of `![`: the bound caps what one text can cost)."""
    if kind not in MARKDOWN_KINDS or not text or len(text) > app_settings.THREAD_MARKDOWN_MAX_CHARS:
        return None
    return render_markdown(text)
