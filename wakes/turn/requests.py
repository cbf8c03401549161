"""Requests: `<tools to="…"/>`, `<merge to="…"/>`, `<deploy to="…"/>` in an agent's reply.

A tools request shows 🔨 by the Motion's name until a trusted person grants it (the agent is
woken again, with full tools) or declines it. Merge and deploy requests are cards only a person
can act on: nothing merges or deploys on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from motion_runner.ingest.system_lines import insert_system_line
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Kind, Message, Turn
from motion_runner.runner.turns import enqueue_turn

from ..decision.steering import scram_holds
from ..decision.trust import full_tools_for
from ..models import WakeRequest, clock
from .wake import post_wake_line, resume_after_look_only

# On one line, as a person sees it written (a tag split over a line break is raw HTML, shown as nothing).
TAG = re.compile(
    r"""<(tools|merge|deploy)[ \t]+to[ \t]*=[ \t]*(?:"([^"\n]*)"|'([^'\n]*)')[ \t]*/?>""", re.IGNORECASE
)


class RequestRefused(Exception):
    """A person who may not answer this request tried to: the reason is for them to read."""


@dataclass(frozen=True)
class Ask:
    kind: str
    to: str


# What an agent quotes or shows as code is not its own ask: it is left out before tags are found,
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
    # an HTML comment (shown as nothing), open to the end if unclosed;
    r"|<!--.*?(?:-->|\Z)"
    # a link's or an image's text, inline or by reference (a link is someone's page, not an ask);
    r"|!?\[[^\[\]]{0,2000}\](?:\([^)\n]{0,2000}\)|\[[^\]\n]{0,200}\])"
    # a link's definition (`[ref]: url "title"`), shown as nothing;
    r"|^[ ]{0,3}\[[^\[\]\n]{1,999}\]:.*?$"
    # a URL that runs into a tag with no space between (an autolink's `<https://…`, a bare
    # `https://…` or `www.…`): the tag is part of an address someone wrote, not an ask.
    r"|(?:<[a-z][a-z0-9+.\-]{1,31}:|\b[a-z][a-z0-9+.\-]{1,31}://|\bwww\.)[^\s<>]{0,2000}<[^>\n]{0,2000}>?",
    re.DOTALL | re.MULTILINE | re.IGNORECASE,
)
QUOTE_LINE = re.compile(r"^[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)*>")
FENCE_LINE = re.compile(r"^[ \t]{0,3}(?:`{3,}|~{3,})")
BACKTICKS = re.compile(r"`+")


def without_code_spans(text: str) -> str:
    """`text` without its code spans: a run of backticks opens one, closed by the next run of the
    same length (one that finds none is plain text). Paired in one pass, not by a regex, which
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
        pieces += [text[at : runs[index][0]], " "]
        at, index = runs[closer][1], closer + 1
    pieces.append(text[at:])
    return "".join(pieces)


def without_lazy_quotes(text: str) -> str:
    """`text` without the lines a quote goes on over: in Markdown a line after a quoted one, up to
    a blank line, is still the quote (its "lazy continuation"). A fence line ends it (kept, so a
    code block stays closed)."""
    kept, quoting = [], False
    for line in text.split("\n"):
        if not line.strip() or FENCE_LINE.match(line):
            quoting = False
        elif QUOTE_LINE.match(line):
            quoting = True
        elif quoting:
            line = ""
        kept.append(line)
    return "\n".join(kept)


def escaped(text: str, at: int) -> bool:
    """The character at `at` follows an odd run of backslashes: Markdown shows it as written."""
    start = at
    while start > 0 and text[start - 1] == "\\":
        start -= 1
    return (at - start) % 2 == 1


def find_asks(text: str) -> list[Ask]:
    own_words = without_code_spans(QUOTED.sub(" ", without_lazy_quotes(text or "")))
    return [
        Ask(match[1].lower(), (match[2] or match[3] or "").strip())
        for match in TAG.finditer(own_words)
        if not escaped(own_words, match.start())
    ]


def record_requests(sender, turn: Turn, **kwargs) -> list[WakeRequest]:
    """After a turn, each ask in its replies becomes a request card, once."""
    created = []
    replies = Message.objects.filter(turn=turn, kind=Kind.TEXT).order_by("created_at", "id")
    for reply in replies:
        for index, ask in enumerate(find_asks(reply.text)):
            card = Message(
                id=system_uuid("request", reply.id, index),
                motion=turn.motion,
                sender=turn.agent.name,
                agent=turn.agent,
                source="runner",
                kind=Kind.REQUEST,
                tool_name=ask.kind,
                text=ask.to,
                turn=turn,
            )
            with transaction.atomic():
                if insert_system_line(card):
                    created.append(
                        WakeRequest.objects.create(
                            motion=turn.motion,
                            agent=turn.agent,
                            turn=turn,
                            message=card,
                            kind=ask.kind,
                            to=ask.to,
                        )
                    )
    return created


def person_may_grant(user, sign_in: str) -> tuple[bool, str]:
    if user is None or not user.is_authenticated:
        return False, "Sign in to answer a request."
    if sign_in == "ssh":
        return True, "signed in with an SSH key"
    if user.get_username() in full_tools_for():
        return True, "named in full_tools_for"
    return False, (
        "Only a person signed in with an SSH key, or named in full_tools_for, can grant full tools; "
        f"you signed in with {sign_in or 'a password'}."
    )


def _decide(request_id: int, user, status: str) -> WakeRequest:
    with transaction.atomic():
        request = WakeRequest.objects.select_for_update().select_related("motion", "agent").get(pk=request_id)
        if request.status != WakeRequest.Status.OPEN:
            raise RequestRefused(f"This request was already {request.status}.")
        request.status = status
        request.decided_by = user
        request.decided_at = timezone.now()
        request.save(update_fields=["status", "decided_by", "decided_at"])
    return request


def grant(request_id: int, user, sign_in: str) -> WakeRequest:
    allowed, why = person_may_grant(user, sign_in)
    if not allowed:
        raise RequestRefused(why)
    if scram_holds():
        raise RequestRefused("a scram holds: nothing wakes until it is lifted")
    request = WakeRequest.objects.get(pk=request_id)
    if request.kind != WakeRequest.Kind.TOOLS:
        return answer(request_id, user, WakeRequest.Status.DONE, sign_in)
    with transaction.atomic():
        request = _decide(request_id, user, WakeRequest.Status.GRANTED)
        name = user.get_username()
        turn = enqueue_turn(
            request.motion,
            request.agent,
            f"{name} granted you full tools for: {request.to}\nGo ahead.",
            reason="grant",
            reason_detail=f"full tools granted by {name} ({why})",
            mode="full",
            mode_rule=f"granted by {name}, {why}",
            effort="high",
            woken_by=request.message,
            resume_after_look_only=resume_after_look_only(),
            queued_at=clock.now(),
        )
        post_wake_line(turn, f"full tools granted by {name} ({why})")
        request.granted_turn = turn
        request.save(update_fields=["granted_turn"])
    return request


def answer(request_id: int, user, status: str, sign_in: str = "") -> WakeRequest:
    """Decline a request, or mark a merge/deploy card done. A tools request is answered only
    by someone who could grant it; a merge or deploy card by any signed-in person."""
    if user is None or not user.is_authenticated:
        raise RequestRefused("Sign in to answer a request.")
    if WakeRequest.objects.filter(pk=request_id, kind=WakeRequest.Kind.TOOLS).exists():
        allowed, why = person_may_grant(user, sign_in)
        if not allowed:
            raise RequestRefused(why)
    return _decide(request_id, user, status)
