"""Taking back what was said: a post deleted or edited, and its words gone from everywhere they were read.

Something pasted by mistake (a door code, a key) has to be able to go, for real. As memory-lane does
it (its `services/retract.py`, read late 2026), a delete sets the post's words to `[deleted]`, an
edit replaces them, and a `TakenBack` row says who and when, never what it said before (history is
where a secret would survive). Everything goes through `take_back`, one place, whoever asked: the
thread's control and `DELETE`/`PATCH /api/messages/<id>/` (motion_runner/api/taking_back.py), and
memory-lane's own retract under the binding (`take_back_for_host`, from its `MessageChange` rows).

Who may (`why_not`): a person, their own post (deleted within a week of saying it, edited within a
day, and only one typed on the page or through the API); staff signed in with their SSH key may
delete anyone's words, an agent's too (memory-lane's admins, key-signed). Each person at most
PER_HOUR in an hour and PER_DAY in a day. Agents never take anything back.

Where the words go from (`scrub_copies`), in the transaction that changes the row:
- the post's row (its `text`, and its `raw` line, which may hold the words too); the search index
  follows the row (PostgreSQL's expression index, SQLite's FTS5 triggers), so the record server's
  `search` and `read` (motion_runner/recall) find it as it now stands;
- stored prompts (`Turn.prompt`): the post's quote (its `#m-<id>` header and indented lines) says
  `[deleted]` or `[edited]`; any other line of it copied there too; a digest of older posts that may
  have summarized it is withdrawn (a summary cannot be scrubbed line by line);
- the runner's own lines after it (handoff lines, their `raw` context, wake lines) and the handoff
  blocks of agents' replies that carried it on;
- agents' notes (`remember`, read back by the record server's search and read at later wakes):
  any note since that copied a line of it loses the line, and a note written in a turn that read
  the post also loses its codes (`codes_in`: a door code, a pin, a key, noted as "door code 4471");
- the lines the harness adapters skipped (`Turn.raw_log`), which may hold what a turn was told;
- the harness's own session, whose context holds the prompt a turn read (kept by the harness,
  beyond the apps' reach): the sessions of each agent whose turn read it, in that Motion, are
  retired (`retire_sessions`), so its next wake there starts fresh instead of resuming them; so
  is one a turn running at the take-back names only afterwards (`Turn.read_taken_back`);
- the shared cache of its rendered Markdown.
The next wake reads the post as it now stands (wakes read the record, never a copy); the wake
preview page is built the same way. What cannot be called back is said, not pretended away: the
agents whose turns already read it (`TakenBack.reached`), as memory-lane's `MessageChange.reached`.
Whoever keeps another copy hears `signals.message_taken_back` (memory-lane's record, under the binding).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from . import signals
from .ingest.redaction import redact
from .lib.scrubbing import codes_in, gone_lines, quote_header, scrub, scrub_quote
from .models import Kind, Message, MotionSession, Source, TakenBack, Turn, TurnStatus
from .thread.markup import forget_rendered

DELETED = "[deleted]"
EDITED = "[edited]"
WITHDRAWN = "    [summary withdrawn: a post it covered was taken back]"
MOST_PROBED = 20  # lines looked for in the copies, longest first
DELETE_OWN_WITHIN = timedelta(days=7)
EDIT_OWN_WITHIN = timedelta(days=1)
PER_HOUR, PER_DAY = 10, 30
EDITABLE_SOURCES = (Source.WEB, Source.API)
TAKABLE_KINDS = (Kind.TEXT, Kind.NOTE)
DIGEST_HEAD = re.compile(
    r"^\(\d+ earlier posts? \(from /motions/[\w-]+/#m-(?P<first>[0-9a-f-]{36})\), summarized:\)$"
)


class Refused(Exception):
    """Not taken back, and why (said to the person); `status` the HTTP answer."""

    def __init__(self, why: str, status: int = 403):
        super().__init__(why)
        self.status = status


@dataclass(frozen=True)
class Taker:
    """Who asks: a person (`user`), how their session signed in (`sign_in`: staff need "ssh")."""

    user: Any
    sign_in: str = ""

    @property
    def name(self) -> str:
        return self.user.get_username()


def is_said(message: Message) -> bool:
    """Words someone said: a post or an agent's words or note, never the runner's own lines."""
    return message.kind in TAKABLE_KINDS and message.source != Source.SYSTEM


def own(message: Message, user) -> bool:
    return bool(user is not None and user.is_authenticated and message.author_id == user.pk)


def is_admin(taker: Taker) -> bool:
    return bool(taker.user.is_authenticated and taker.user.is_staff and taker.sign_in == "ssh")


def why_not(message: Message, taker: Taker, *, edit: bool) -> str:
    """Why `taker` may not delete (or `edit`) `message`; "" when they may."""
    if not taker.user.is_authenticated:
        return "sign in to take back what you said"
    if not is_said(message):
        return "only words someone said can be taken back, not the runner's own lines"
    age = timezone.now() - message.created_at
    if edit:
        if not own(message, taker.user):
            return "only its author may edit a post"
        if message.source not in EDITABLE_SOURCES:
            return "only a post typed on the page or through the API can be edited"
        if age > EDIT_OWN_WITHIN:
            return "a post can be edited within a day of saying it"
        return ""
    if is_admin(taker):
        return ""
    if not own(message, taker.user):
        return "only its author (or staff signed in with their SSH key) may delete a post"
    if age > DELETE_OWN_WITHIN:
        return "your own post can be deleted within a week of saying it; older, ask staff"
    return ""


def may_take_back(message: Message, taker: Taker, *, edit: bool = False) -> bool:
    return not why_not(message, taker, edit=edit)


def check_pace(by: str) -> None:
    """At most PER_HOUR taken back in an hour and PER_DAY in a day, each person (staff too)."""
    now = timezone.now()
    mine = TakenBack.objects.filter(by=by)
    if mine.filter(at__gte=now - timedelta(hours=1)).count() >= PER_HOUR:
        raise Refused(f"that is {PER_HOUR} taken back in the last hour: wait a while", status=429)
    if mine.filter(at__gte=now - timedelta(days=1)).count() >= PER_DAY:
        raise Refused(f"that is {PER_DAY} taken back today: ask staff", status=429)


def take_back_as(message: Message, taker: Taker, new_text: str | None = None) -> TakenBack:
    """`take_back` for a person who asked (the API, the thread's control): refused unless they may."""
    why = why_not(message, taker, edit=new_text is not None)
    if why:
        raise Refused(why)
    if new_text is not None and not new_text.strip():
        raise Refused("an edit needs words: to take it all back, delete it", status=400)
    check_pace(taker.name)
    return take_back(message, taker.name, new_text)


def take_back(message: Message, by: str, new_text: str | None = None) -> TakenBack:
    """The one place a post is taken back: deleted (`new_text` None) or edited. Its words leave the
    apps' copies in one transaction, then `signals.message_taken_back` tells whoever keeps another."""
    with transaction.atomic():
        message = Message.objects.select_for_update().get(pk=message.pk)
        old = message.text
        kind = TakenBack.Change.DELETED if new_text is None else TakenBack.Change.EDITED
        new = DELETED if new_text is None else redact(new_text.strip())
        change = TakenBack.objects.filter(message=message).first()
        if change is not None and change.kind == TakenBack.Change.DELETED:
            return change  # deleted already: nothing is left to take
        Message.objects.filter(pk=message.pk).update(text=new, raw=None)
        message.text, message.raw = new, None
        gone = gone_lines(old, new)
        scrubbed, reached = scrub_copies(message, gone, DELETED if new_text is None else EDITED)
        change, _ = TakenBack.objects.update_or_create(
            message=message,
            defaults={"kind": kind, "by": by, "at": timezone.now(), "scrubbed": scrubbed, "reached": reached},
        )
        forget_rendered(old)
        signals.message_taken_back.send(sender=Message, message=message, change=change, gone=gone)
    return change


def take_back_for_host(message_id: Any, kind: str, text: str, by: str) -> TakenBack | None:
    """memory-lane's page took a post back (its row already says `text`): the apps' copy the same
    way. A post put back there (`restored`) has its words back here too, and is no longer taken
    back. Nothing when the apps have no copy, or it already says that."""
    message = Message.objects.filter(pk=message_id).first()
    if message is None:
        return None
    if kind == "restored":
        with transaction.atomic():
            Message.objects.filter(pk=message.pk).update(text=redact(text))
            TakenBack.objects.filter(message=message).delete()
        return None
    if kind == TakenBack.Change.DELETED:
        return take_back(message, by)
    if message.text == redact(text.strip()):
        return TakenBack.objects.filter(message=message).first()
    return take_back(message, by, text)


# --- the copies ----------------------------------------------------------------------------------


def holds_any(field: str, lines: list[str]) -> Q:
    probe = Q(pk__in=[])
    for line in lines[:MOST_PROBED]:
        probe |= Q(**{f"{field}__contains": line})
    return probe


def scrub_copies(message: Message, gone: list[str], mark: str) -> tuple[int, list[str]]:
    """Take the words out of every copy the apps keep. (How many copies changed, the agents whose
    turns already read them.)"""
    scrubbed, reached, read_by = scrub_prompts(message, gone, mark)
    scrubbed += scrub_lines(message, gone, mark)
    scrubbed += scrub_notes(message, gone, mark, read_by)
    scrubbed += scrub_raw_logs(message, gone, mark)
    retire_sessions(read_by)
    return scrubbed, reached


def scrub_prompts(message: Message, gone: list[str], mark: str) -> tuple[int, list[str], set[int]]:
    """Stored prompts. (How many changed, the agents whose turns read the post, those turns.)"""
    header = quote_header(message.pk)
    quoted = Q(prompt__contains=header) | holds_any("prompt", gone)
    # A digest (the screen's summary of older posts) in the post's own Motion may have covered it.
    digested = Q(motion_id=message.motion_id, prompt__contains="summarized:)")
    # A turn's prompt is made again when it starts (runner.turns.build_prompt_at_start): one queued
    # before the post but started after it quotes it too (the room simulation's seed 151).
    since = message.created_at - timedelta(seconds=1)
    turns = Turn.objects.filter(quoted | digested).filter(Q(queued_at__gte=since) | Q(started_at__gte=since))
    # Locked as read: a turn a worker is claiming this instant is read as started once the claim
    # commits (it makes its prompt from the record, where the words still stand), never as waiting.
    turns = turns.select_for_update(of=("self",), no_key=True)
    firsts: dict[str, Any] = {}
    scrubbed, reached, read_by = 0, set(), set()
    for turn in turns.select_related("agent").only("pk", "prompt", "status", "motion_id", "agent__name"):
        prompt = scrub_quote(turn.prompt, header, mark)
        prompt = scrub(prompt, gone, mark)
        if turn.motion_id == message.motion_id and header not in turn.prompt:
            prompt = withdraw_digest(prompt, message, firsts)
        if prompt != turn.prompt:
            Turn.objects.filter(pk=turn.pk).update(prompt=prompt)
            scrubbed += 1
            if turn.status != TurnStatus.QUEUED:
                reached.add(turn.agent.name)
                read_by.add(turn.pk)
    return scrubbed, sorted(reached), read_by


def withdraw_digest(prompt: str, message: Message, firsts: dict[str, Any]) -> str:
    """A digest that began at or before the post (so may have summarized it) is withdrawn."""
    lines = prompt.split("\n")
    out: list[str] = []
    skipping = False
    for line in lines:
        if skipping and line.startswith("    "):
            continue
        skipping = False
        out.append(line)
        match = DIGEST_HEAD.match(line)
        if match is None:
            continue
        first = match.group("first")
        if first not in firsts:
            try:
                firsts[first] = (
                    Message.objects.filter(pk=uuid.UUID(first)).values_list("created_at", flat=True).first()
                )
            except ValueError:
                firsts[first] = None
        began = firsts[first]
        if began is not None and began <= message.created_at:
            out.append(WITHDRAWN)
            skipping = True
    return "\n".join(out)


def scrub_lines(message: Message, gone: list[str], mark: str) -> int:
    """The runner's own lines said since (handoff lines and their context, wake lines), and the
    handoff blocks of agents' replies that carried the words on."""
    if not gone:
        return 0
    since = message.created_at - timedelta(seconds=1)
    runner_lines = Q(source=Source.SYSTEM)
    handoff_replies = Q(agent__isnull=False, kind=Kind.TEXT, text__contains="```handoff")
    rows = (
        Message.objects.filter(runner_lines | handoff_replies, created_at__gte=since)
        .filter(holds_any("text", gone))
        .exclude(pk=message.pk)
    )
    scrubbed = 0
    for row in rows.only("pk", "text", "raw"):
        text, raw = scrub(row.text, gone, mark), scrub(row.raw, gone, mark)
        if (text, raw) != (row.text, row.raw):
            Message.objects.filter(pk=row.pk).update(text=text, raw=raw)
            forget_rendered(row.text)
            scrubbed += 1
    return scrubbed


def scrub_notes(message: Message, gone: list[str], mark: str, read_by: set[int]) -> int:
    """Agents' notes since the post: a line of it copied goes from any note; a note written in a
    turn that read it loses its codes too (noted in the agent's own words, "door code 4471")."""
    if not gone:
        return 0
    codes = codes_in(gone)
    rows = (
        Message.objects.filter(kind=Kind.NOTE, created_at__gte=message.created_at - timedelta(seconds=1))
        .filter(holds_any("text", gone) | Q(turn_id__in=read_by))
        .exclude(pk=message.pk)
    )
    scrubbed = 0
    for row in rows.only("pk", "text", "raw", "turn_id"):
        lines = gone + codes if row.turn_id in read_by else gone
        text, raw = scrub(row.text, lines, mark), scrub(row.raw, lines, mark)
        if (text, raw) != (row.text, row.raw):
            Message.objects.filter(pk=row.pk).update(text=text, raw=raw)
            forget_rendered(row.text)
            scrubbed += 1
    return scrubbed


def scrub_raw_logs(message: Message, gone: list[str], mark: str) -> int:
    """The lines a harness adapter skipped, kept on the turn (`Turn.raw_log`), since the post."""
    if not gone:
        return 0
    probe = Q(pk__in=[])
    for line in gone[:MOST_PROBED]:
        probe |= Q(raw_log_text__contains=json.dumps(line, ensure_ascii=False)[1:-1])
    turns = (
        Turn.objects.filter(queued_at__gte=message.created_at - timedelta(seconds=1))
        .exclude(raw_log=[])
        .annotate(raw_log_text=Cast("raw_log", TextField()))
        .filter(probe)
    )
    scrubbed = 0
    for turn in turns.only("pk", "raw_log"):
        raw_log = scrub(turn.raw_log, gone, mark)
        if raw_log != turn.raw_log:
            Turn.objects.filter(pk=turn.pk).update(raw_log=raw_log)
            scrubbed += 1
    return scrubbed


def retire_sessions(read_by: set[int]) -> int:
    """The sessions of each agent whose turn read the words, in that Motion: never resumed again.
    A resumed session's context still holds what its turns were told (the harness keeps it, out of
    the apps' reach), so the agent's next wake there starts a fresh session. How many.

    A session is named by its harness's first line (Claude Code's init), after the turn started,
    and a turn still running may yet name one: the turns that read the words, and every turn of
    those agents running there now (it may have resumed a session that held them and fork a new
    one), are marked `read_taken_back`, and `latest_session` never resumes a session a marked
    turn ran in, whenever it is named."""
    pairs = set(Turn.objects.filter(pk__in=read_by).values_list("motion_id", "agent_id"))
    if not pairs:
        return 0
    held = Q(pk__in=[])
    for motion_id, agent_id in pairs:
        held |= Q(motion_id=motion_id, agent_id=agent_id)
    # Locked as read, so a turn whose claim commits meanwhile is read as running.
    unended = Turn.objects.filter(held, status__in=(TurnStatus.QUEUED, TurnStatus.RUNNING))
    running = [
        pk
        for pk, status in unended.select_for_update(no_key=True).values_list("pk", "status")
        if status == TurnStatus.RUNNING
    ]
    Turn.objects.filter(pk__in=[*read_by, *running]).update(read_taken_back=True)
    return MotionSession.objects.filter(held, retired_at=None).update(retired_at=timezone.now())
