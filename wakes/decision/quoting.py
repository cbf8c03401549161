"""How a wake quotes the record: one post a line-led block that cannot pass for the runner's words.

Every line of a post after its first is indented, so nothing in it starts a line as the footer's
lines do; one that would read as a post's header (`► [name, time, #m-…]`) once its indent is
ignored is escaped with a backslash, so only the runner writes headers. A tag that looks like the
wake's frame (or memory-lane's) is defused, also when it is spelled with lookalike characters or
invisible ones in it (matched after NFKC normalization, format characters dropped).
"""

from __future__ import annotations

import json
import re
import unicodedata

from motion_runner.ingest.fit import POST_KINDS
from motion_runner.models import Kind, Message, Source

FRAME = "motion-wake"
LEAD_IN = 3  # posts before the new ones, unmarked, so the new ones are read in their place
NEW = "► "
# A tag that could pass for the frame's own (or memory-lane's), opening or closing.
LOOKALIKE = re.compile(r"<(\s*/?\s*)((?:motion|mood)-wake)", re.IGNORECASE)


# What starts a header: the ► of a new post, or the bracket of any; a backslash is escaped too,
# so an escape in the text cannot pose as ours. Lookalike arrows count as the ►.
HEADER_START = ("[", "\\", "►", "▶", "▸", "▹", "▻", "➤", "➢", "⯈", "‣")


def plain(text: str) -> str:
    """`text` as it reads: NFKC-normalized (fullwidth `＜` is `<`), invisible format characters
    (zero-width spaces and joiners, bidi marks, soft hyphens) dropped. ASCII reads as written."""
    if text.isascii():
        return text
    normalized = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in normalized if unicodedata.category(ch) != "Cf")


def defuse(text: str) -> str:
    """Quoted text, unable to close the frame or open one of its own. Text whose plain reading
    holds a lookalike of the frame's tag is quoted in that plain reading, defused, whatever else
    it holds (a plain ASCII tag beside a lookalike one does not spare the lookalike)."""
    if not text.isascii() and LOOKALIKE.search(plain(text)):
        text = plain(text)
    return LOOKALIKE.sub(lambda m: f"‹{m.group(1)}{m.group(2)}", text)


def escape_line(line: str) -> str:
    """A continuation line that would start like a header once its indent is ignored gets a
    backslash first."""
    return "\\" + line if plain(line).lstrip().startswith(HEADER_START) else line


def header_name(name: str) -> str:
    """A sender's name as a header says it: on one line, unable to close the bracket early."""
    return " ".join(str(name).split()).replace("]", ")").replace("[", "(")


def inline_quote(text: str, limit: int = 400) -> str:
    """Someone's words said outside the frame (who stopped a turn, a scram's reason): one line in
    double quotes, its newlines and quotes escaped, lookalike tags defused."""
    return json.dumps(defuse(text[:limit]), ensure_ascii=False)


def thread_link(motion_id: str, message_id) -> str:
    return f"/motions/{motion_id}/#m-{message_id}"


def quote(post: Message, cap: int, *, new: bool) -> str:
    """One post: a header line (► when new), its text with every further line indented, cut at
    `cap` characters (and said so)."""
    text = post.text
    if len(text) > cap:
        text = text[:cap] + f" […{len(post.text) - cap:,} more characters]"
    lines = defuse(text).splitlines() or [""]
    kind = " (watch)" if post.kind == Kind.WATCH else ""
    sender = header_name(post.sender)
    head = f"{NEW if new else '  '}[{sender}{kind}, {post.created_at:%Y-%m-%d %H:%M} UTC, #m-{post.pk}]"
    return "\n".join([f"{head} {lines[0]}", *(f"    {escape_line(line)}" for line in lines[1:])])


def posts_of(motion_id: str):
    """What a wake may quote: words and watch lines, never tool noise or the runner's lines."""
    return Message.objects.filter(motion_id=motion_id, kind__in=POST_KINDS).exclude(source=Source.SYSTEM)
