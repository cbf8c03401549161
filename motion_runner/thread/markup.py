"""Markdown for the thread, rendered and sanitized on the server.

Agents and watched pages write whatever they like; the thread shows it as Markdown and never
runs any of it. markdown-it-py renders with raw HTML off (a `<script>` in a post is shown as
text), and nh3 (Ammonia) then keeps only the tags and URL schemes below, so even a renderer bug
cannot let an attribute like `onerror` or a `javascript:` link through.

A text's render is bounded by work, not only by length: markdown-it's steps are counted as it
parses (`Meter`), and a text that needs more than its budget (a few steps a character: prose
needs about half of one) is shown plain instead, every character kept. A page of hostile posts
then costs about what a page of prose of the same length costs, cold cache or not.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from html import unescape

import nh3
from django.core.cache import cache
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..conf import app_settings
from .request_tags import without_asking_tags

log = logging.getLogger(__name__)

# The kinds whose text is prose worth rendering; tool calls, results and system lines stay
# plain text (the page shows them with textContent).
MARKDOWN_KINDS = frozenset({"text", "watch", "compact", "error", "thinking"})

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

# The work a text may cost, in parser steps: WORK_BASE + WORK_PER_CHAR a character. A step is a
# rule markdown-it tries or a lookahead step; a token made counts TOKEN_STEPS (it is also rendered
# and cleaned, several steps' work), a linkify match LINKIFY_STEPS. Ordinary Markdown takes about
# one step a character, a dense table or a list of bold bullets with code a little over three;
# the shapes a hostile post repeats take more, and unclosed `![` grows with the square of the
# text. The figures and how they were measured: bench/README.md, bench/markdown_work.py.
WORK_PER_CHAR = 4
WORK_BASE = 4_000
TOKEN_STEPS = 5
LINKIFY_STEPS = 20
# How far past its budget a text's count can go before the meter stops it: one linkify call.
WORK_OVERSHOOT = LINKIFY_STEPS


class WorkSpent(Exception):
    """The text needed more parser steps than its budget: it is shown plain."""


class Meter:
    """Counts one render's steps (each rule markdown-it tries, each lookahead step, each linkify
    match) on the thread doing the render, and stops the render once past its budget."""

    local = threading.local()

    def __init__(self, budget: int):
        self.budget = budget
        self.spent = 0

    def __enter__(self) -> Meter:
        self.local.meter = self
        return self

    def __exit__(self, *exc) -> None:
        self.local.meter = None

    @classmethod
    def spend(cls, steps: int) -> None:
        meter = getattr(cls.local, "meter", None)
        if meter is not None:
            meter.spent += steps
            if meter.spent > meter.budget:
                raise WorkSpent


def _counted(fn, steps: int = 1):
    def counted(*args):
        Meter.spend(steps)
        return fn(*args)

    return counted


def _meter(md: MarkdownIt) -> MarkdownIt:
    """Every rule of every ruler, the inline lookahead (`skipToken`: where unclosed link and image
    openers make the work grow with the square of the text) and the linkify matcher, counted.

    Each rule keeps its options: a block rule's `alt` names the rules it may interrupt (a list,
    fence, heading or quote directly under a line of text), and `Ruler.at` without them drops it."""
    for ruler in (md.core.ruler, md.block.ruler, md.inline.ruler, md.inline.ruler2):
        for rule in list(ruler.__rules__):
            ruler.at(rule.name, _counted(rule.fn), {"alt": list(rule.alt)})
    md.inline.skipToken = _counted(md.inline.skipToken)
    md.linkify.pretest = _counted(md.linkify.pretest)  # a quick look for "://", "@" or "www."
    for name in ("test", "match", "match_at_start"):
        setattr(md.linkify, name, _counted(getattr(md.linkify, name), LINKIFY_STEPS))
    return md


def _count_tokens() -> None:
    """Each token made counts TOKEN_STEPS: most of a long text's cost is its tokens (each is also
    rendered and cleaned), and one rule can make a whole table's. markdown-it makes them in many
    places, so the count sits in the Token class itself; it costs nothing outside a Meter."""
    if getattr(Token, "motion_runner_counted", False):
        return
    made = Token.__post_init__

    def counted(self) -> None:
        Meter.spend(TOKEN_STEPS)
        made(self)

    Token.__post_init__ = counted
    Token.motion_runner_counted = True


_count_tokens()
_meter(_markdown)


def work_budget(text: str) -> int:
    return WORK_BASE + WORK_PER_CHAR * len(text)


# Bumped whenever what a text renders to changes (the tags, the renderer's options): the shared
# cache's keys carry it, so an old rendering is never served for the new rules.
# 3: lists, fences, headings and quotes directly under a line (issue 43).
# 4: only a request tag that made a card is cut; one inside an address or code is shown (issue 42).
# 5: a text renders as given; html_for cuts those tags from a turn's reply only (issue 42).
RENDERING = "5"
# Kept in the caches for a text shown plain (past its work budget): a cold read does not parse it
# again. Not HTML any text renders to (it holds a NUL, which no rendering does).
PLAIN = "\x00plain"


class Rendered:
    """Each text rendered once: by content hash, in this process (the most recent, bounded) and in
    the shared cache (every web process and thread alike), so a poll never renders again what
    any reader already had. Keyed by hash, not by text, so the process keeps no texts."""

    def __init__(self, size: int = 4096):
        self.size = size
        self.recent: OrderedDict[str, str] = OrderedDict()
        self.lock = threading.Lock()  # gthread: several readers of one process at once

    def __call__(self, text: str) -> str | None:
        """The text's HTML, or None when it is shown plain (past its work budget)."""
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
        with self.lock:
            html = self.recent.get(digest)
            if html is not None:
                self.recent.move_to_end(digest)
                return None if html == PLAIN else html
        key = f"motion_runner:markdown:{RENDERING}:{digest}"
        try:
            html = cache.get(key)
        except Exception:  # the shared cache away (Redis restarting): render here, as before it
            log.warning("markdown cache unreadable; rendering in this process", exc_info=True)
            html, key = None, None
        if html is None:
            html = _render(text)
            html = PLAIN if html is None else html
            if key is not None:
                try:
                    cache.set(key, html, timeout=app_settings.THREAD_MARKDOWN_CACHE_SECONDS)
                except Exception:
                    log.warning("markdown cache unwritable", exc_info=True)
        with self.lock:
            self.recent[digest] = html
            while len(self.recent) > self.size:
                self.recent.popitem(last=False)
        return None if html == PLAIN else html

    def forget(self, text: str) -> None:
        """A text taken back (motion_runner/retract.py): its rendering leaves this process's
        memory and the shared cache (another process's memory keeps it only until it is pushed out)."""
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
        with self.lock:
            self.recent.pop(digest, None)
        try:
            cache.delete(f"motion_runner:markdown:{RENDERING}:{digest}")
        except Exception:
            log.warning(
                "markdown cache unwritable: a taken-back rendering stays until it expires", exc_info=True
            )

    def cache_clear(self) -> None:
        with self.lock:
            self.recent.clear()


render_markdown = Rendered()


def forget_rendered(text: str) -> None:
    """A taken-back text's renderings leave the caches: as written, and as a reply shows it."""
    render_markdown.forget(text)
    if (reply := without_asking_tags(text)) != text:
        render_markdown.forget(reply)


def render_metered(text: str) -> tuple[str | None, int]:
    """The text's Markdown (None past its work budget) and the parser steps it took."""
    with Meter(work_budget(text)) as meter:
        try:
            html = _markdown.render(text)
        except WorkSpent:
            return None, meter.spent
    return html, meter.spent


def _render(text: str) -> str | None:
    """Safe HTML for one post (links open in a new tab and carry no referrer or opener), or None
    for a text past its work budget."""
    html, _ = render_metered(text or "")
    if html is None:
        log.info("a %d-character text shown plain: past its Markdown work budget", len(text))
        return None
    return clean(html)


def clean(html: str) -> str:
    """markdown-it's HTML with only the allowed tags, attributes and URL schemes kept."""
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=ALLOWED_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        set_tag_attribute_values={"a": {"target": "_blank"}},
        filter_style_properties={"text-align"},
    ).strip()


def html_for(kind: str, text: str, *, in_a_turn: bool = False) -> str | None:
    """The post as HTML, or None for the page to show it as plain text: a kind that is not prose,
    a text past THREAD_MARKDOWN_MAX_CHARS, or one past its work budget (`Meter`).

    A reply of a turn (`in_a_turn`, kind text) has each `<tools to="…"/>` (merge, deploy) that asks
    made a request card of its own (wakes/turn/requests.py), so those are cut from it; any other
    tag, and every tag in a person's post, a thought or a watched page, is shown as written."""
    if kind not in MARKDOWN_KINDS or not text or len(text) > app_settings.THREAD_MARKDOWN_MAX_CHARS:
        return None
    return render_markdown(without_asking_tags(text) if in_a_turn and kind == "text" else text)


def plain_text(text: str, *, in_a_turn: bool = False) -> str:
    """The text a post's Markdown shows, without its marks ("**42 tests**" reads "42 tests"): for a
    search snippet, shown as text (issue 43.4). A text shown plain in the thread stays as it is."""
    html = html_for("text", text, in_a_turn=in_a_turn)
    if html is None:
        return text
    return unescape(nh3.clean(html, tags=set(), attributes={}))
