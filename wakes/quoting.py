"""How a wake quotes the record: one post a line-led block that cannot pass for the runner's words.

Every line of a post after its first is indented, so nothing in it starts a line as the footer's
lines do, and a tag that looks like the wake's frame (or memory-lane's) is defused.
"""

from __future__ import annotations

import re

from motion_runner.ingest.fit import POST_KINDS
from motion_runner.models import Kind, Message, Source

FRAME = "motion-wake"
LEAD_IN = 3  # posts before the new ones, unmarked, so the new ones are read in their place
NEW = "► "
# A tag that could pass for the frame's own (or memory-lane's), opening or closing.
LOOKALIKE = re.compile(r"<(\s*/?\s*)((?:motion|mood)-wake)", re.IGNORECASE)


def defuse(text: str) -> str:
    """Quoted text, unable to close the frame or open one of its own."""
    return LOOKALIKE.sub(lambda m: f"‹{m.group(1)}{m.group(2)}", text)


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
    head = f"{NEW if new else '  '}[{post.sender}{kind}, {post.created_at:%Y-%m-%d %H:%M} UTC, #m-{post.pk}]"
    return "\n".join([f"{head} {lines[0]}", *(f"    {line}" for line in lines[1:])])


def posts_of(motion_id: str):
    """What a wake may quote: words and watch lines, never tool noise or the runner's lines."""
    return Message.objects.filter(motion_id=motion_id, kind__in=POST_KINDS).exclude(source=Source.SYSTEM)
