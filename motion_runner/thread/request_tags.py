"""Request tags: `<tools to="…"/>`, `<merge to="…"/>`, `<deploy to="…"/>` in an agent's reply.

Which of them ask: wakes makes each asking tag a request card (wakes/turn/requests.py), and the
thread hides exactly those from the reply (markup.py). One that asks nothing (quoted, shown as
code, inside an address someone wrote…) makes no card and is shown as written, so what the agent
wrote and the cards it made always agree.

A tag's text is masked rather than cut out before the tags are looked for, so a match's position
is its position in the reply itself (the thread cuts out those spans, and only those).
"""

from __future__ import annotations

import re

# On one line, as a person sees it written (a tag split over a line break is raw HTML, shown as text).
TAG = re.compile(
    r"""<(tools|merge|deploy)[ \t]+to[ \t]*=[ \t]*(?:"([^"\n]*)"|'([^'\n]*)')[ \t]*/?>""", re.IGNORECASE
)

# What an agent quotes or shows as code is not its own ask: it is masked before tags are found,
# in every form Markdown gives it (CommonMark's rules, erring towards leaving out):
QUOTED = re.compile(
    # a fenced block, closed only by a fence of its own character at least as long (so a shorter
    # fence inside it is its text), or open to the end;
    r"^[ \t]{0,3}(?P<fence>(?P<ch>[`~])(?P=ch){2,}).*?(?:^[ \t]{0,3}(?P=fence)(?P=ch)*[ \t]*$|\Z)"
    # a line quoted with ">" (a person's words, a watched page), a list item's too;
    r"|^[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)*>.*?$"
    # an indented line (indented code, a list item's code);
    r"|^(?: {4}|[ ]{0,3}\t).*?$"
    # HTML that shows code, or hides what it holds (a folded <details>, a raw <div> block);
    r"|<(?P<tag>pre|code|xmp|samp|kbd|textarea|details|div)\b.*?(?:</(?P=tag)\s*>|\Z)"
    # an HTML comment, open to the end if unclosed;
    r"|<!--.*?(?:-->|\Z)"
    # a link's or an image's text, inline or by reference (a link is someone's page, not an ask);
    r"|!?\[[^\[\]]{0,2000}\](?:\([^)\n]{0,2000}\)|\[[^\]\n]{0,200}\])"
    # a link's definition (`[ref]: url "title"`);
    r"|^[ ]{0,3}\[[^\[\]\n]{1,999}\]:.*?$"
    # a URL that runs into a tag with no space between (an autolink's `<https://…`, a bare
    # `https://…` or `www.…`): the tag is part of an address someone wrote, not an ask.
    r"|(?:<[a-z][a-z0-9+.\-]{1,31}:|\b[a-z][a-z0-9+.\-]{1,31}://|\bwww\.)[^\s<>]{0,2000}<[^>\n]{0,2000}>?",
    re.DOTALL | re.MULTILINE | re.IGNORECASE,
)
QUOTE_LINE = re.compile(r"^[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)*>")
FENCE_LINE = re.compile(r"^[ \t]{0,3}(?:`{3,}|~{3,})")
BACKTICKS = re.compile(r"`+")
NOT_A_NEWLINE = re.compile(r"[^\n]")


def masked(text: str) -> str:
    """`text` as blanks of the same length, its line breaks kept (a tag is still on one line)."""
    return NOT_A_NEWLINE.sub(" ", text)


def without_code_spans(text: str) -> str:
    """`text` with its code spans masked: a run of backticks opens one, closed by the next run of
    the same length (one that finds none is plain text). Paired in one pass, not by a regex, which
    tries every run against the whole rest of the text (a text of many runs took minutes)."""
    runs = [match.span() for match in BACKTICKS.finditer(text)]
    if len(runs) < 2:
        return text
    next_same: list[int | None] = [None] * len(runs)
    later: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        next_same[index], later[length] = later.get(length), index
    pieces, at, index = [], 0, 0
    while index < len(runs):
        closer = next_same[index]
        if closer is None:
            index += 1
            continue
        pieces += [text[at : runs[index][0]], masked(text[runs[index][0] : runs[closer][1]])]
        at, index = runs[closer][1], closer + 1
    pieces.append(text[at:])
    return "".join(pieces)


def without_lazy_quotes(text: str) -> str:
    """`text` with the lines a quote goes on over masked: in Markdown a line after a quoted one, up
    to a blank line, is still the quote (its "lazy continuation"). A fence line ends it (kept, so a
    code block stays closed)."""
    kept, quoting = [], False
    for line in text.split("\n"):
        if not line.strip() or FENCE_LINE.match(line):
            quoting = False
        elif QUOTE_LINE.match(line):
            quoting = True
        elif quoting:
            line = masked(line)
        kept.append(line)
    return "\n".join(kept)


def escaped(text: str, at: int) -> bool:
    """The character at `at` follows an odd run of backslashes: Markdown shows it as written."""
    start = at
    while start > 0 and text[start - 1] == "\\":
        start -= 1
    return (at - start) % 2 == 1


def asking_tags(text: str) -> list[re.Match[str]]:
    """The tags in `text` that ask (each makes a card), in order; their spans are `text`'s own."""
    own_words = without_code_spans(QUOTED.sub(lambda m: masked(m[0]), without_lazy_quotes(text or "")))
    return [match for match in TAG.finditer(own_words) if not escaped(own_words, match.start())]


def without_asking_tags(text: str) -> str:
    """`text` as the thread shows it: the tags that made cards cut out, every other character kept."""
    if not TAG.search(text):  # most texts hold no tag at all: nothing to look through
        return text
    pieces, at = [], 0
    for match in asking_tags(text):
        pieces.append(text[at : match.start()])
        at = match.end()
    pieces.append(text[at:])
    return "".join(pieces)
