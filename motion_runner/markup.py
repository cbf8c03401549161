"""Markdown for the thread, rendered and sanitized on the server.

Agents and watched pages write whatever they like; the thread shows it as Markdown and never
runs any of it. markdown-it-py renders with raw HTML off (a `<script>` in a post is shown as
text), and nh3 (Ammonia) then keeps only the tags and URL schemes below, so even a renderer bug
cannot let an attribute like `onerror` or a `javascript:` link through.
"""

from __future__ import annotations

import re
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

# The kinds whose text is prose worth rendering; tool calls, results and system lines stay
# plain text (the page shows them with textContent).
MARKDOWN_KINDS = frozenset({"text", "watch", "compact", "error", "thinking"})

# A reply's `<tools to="…"/>` (and merge, deploy) becomes a request card of its own: the raw
# tag is hidden from the reply. Kept in step with wakes.requests.TAG (a test pins both).
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


@lru_cache(maxsize=4096)
def render_markdown(text: str) -> str:
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
    return render_markdown(text) if kind in MARKDOWN_KINDS else None
