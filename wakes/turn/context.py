"""What a wake tells the agent: the Motion's record since it last spoke, inside one frame.

Every wake's prompt is one `<motion-wake motion="…" reason="…">` block: a line saying why it
woke, then what was said in the Motion (people's posts, other agents' words, watch lines; never
tool calls or the runner's own lines) since the agent last spoke or left its own dot (not the
screen's). The newest is quoted word for word within the `reads` dial (per Motion and agent),
each post capped; the older part is summarized by the screen's model and counted in the ledger
as a screen, or, with no screen key, said as "N earlier posts not shown" with a link to the
first of them. What is new to this wake is marked ►, after a few posts of lead-in. A post that
links a message (`#m-<uuid>`) has the record read on from there, in a Motion the person who wrote
the post, the agent and every reader of this Motion (its people and its agents) may read. A long
quiet shows the last turns.

Quoted text cannot pass for the runner's words: every line of a post after its first is
indented, so nothing in it starts a line as the footer does; one that would read as a post's
header is escaped; and a tag that looks like the frame's is defused, lookalike spellings too
(wakes/decision/quoting.py). The runner's own words (what to do, the footer, its safety lines) follow the
frame. The whole is bounded (`prompt_max_chars`): the oldest quoted posts go first, and the
prompt says so.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth.models import AnonymousUser
from django.db.models import Q

from motion_runner.models import Agent, Kind, Message, Motion, Source
from motion_runner.people.access import MotionAccess, access
from motion_runner.people.principal import AgentPrincipal

from ..decision.mentions import mentioned_names
from ..decision.quoting import FRAME, LEAD_IN, defuse, posts_of, quote, thread_link
from ..models import clock
from ..models.in_force import Resolved, resolve
from .screen import digest, small_model_available

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
QUIET_TURNS = 12  # a long quiet's look back
MOST_READ = 500  # posts read from the record at most; past that they are counted, not read
MESSAGE_LINK = re.compile(
    r"(?:/(?:motions|moods)/([\w-]+)/)?#m-([0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12})"
)
SILENT_HINT = (
    "If there is nothing useful for you to say, answer only <silent>a few words why</silent>: "
    "it shows as a small dot in the thread instead of a message."
)
SCREEN_DOT = '<silent by="screen"'

ASKS = {
    "mention": "Answer in the thread.",
    "new_posts": (
        "You were not mentioned: you are considering whether to say something. If you have something "
        "that would genuinely help (a fact, a connection, a question), say it briefly; most of the "
        "time the right answer is to stay quiet."
    ),
    # An agent (or a terminal post) mentioned it, so the loop considers it rather than a mention waking it.
    "new_posts_mentioned": (
        "Answer in the thread if it helps; say it briefly. If there is nothing for you here, stay quiet."
    ),
    "quiet": (
        "Is there something worth picking up, following up or finishing? Nobody is waiting on you: "
        "letting it rest is fine."
    ),
    "watch": "Say in the thread what matters about this change, if anything.",
}


# --- what the record holds -------------------------------------------------------------------


def own(agent: Agent) -> Q:
    return Q(agent=agent) | Q(agent__isnull=True, sender__iexact=agent.name)


def last_word_at(motion_id: str, agent: Agent, before: datetime | None = None) -> datetime | None:
    """Up to when the agent has read the Motion: its last word here (a reply, or its own dot: a
    silent turn read everything before it; the screen's dots do not count, the agent never read
    those posts). A word written by a turn read only what was there when the turn was queued:
    what came while it worked is still new to it."""
    words = Message.objects.filter(own(agent), motion_id=motion_id).filter(
        Q(kind=Kind.TEXT) & ~Q(source=Source.SYSTEM) | Q(kind=Kind.DOT) & ~Q(text__startswith=SCREEN_DOT)
    )
    if before is not None:
        words = words.filter(created_at__lt=before)
    last = words.select_related("turn__woken_by").order_by("-created_at", "-id").first()
    if last is None:
        return None
    return min(last.created_at, read_through(last.turn)) if last.turn is not None else last.created_at


def read_through(turn) -> datetime:
    """The newest post a turn was woken by (a mention turn: the newest mention it answered); a
    turn woken by none (a long quiet) read everything before it was queued."""
    mentions = [m.message.created_at for m in turn.mention_wakes.select_related("message")]
    if mentions:
        return max(mentions)
    if turn.woken_by is not None:
        return turn.woken_by.created_at
    return turn.queued_at


@dataclass
class Reading:
    """What one wake quotes, oldest first."""

    lead_in: list[Message] = field(default_factory=list)
    posts: list[Message] = field(default_factory=list)  # word for word
    older: list[Message] = field(default_factory=list)  # over `reads`: summarized or linked
    older_unread: int = 0  # past MOST_READ: counted only
    new_since: datetime | None = None  # posts after this are marked ►; None: all of `posts`
    dropped: int = 0  # dropped to keep the prompt within its bound
    kept: frozenset = frozenset()  # ids of `posts` quoted whatever the budget and bound (the mentions)


def read_since(
    motion_id: str,
    agent: Agent,
    dials: Resolved,
    *,
    since: datetime | None,
    through: datetime | None = None,
    keep: Sequence[Message] = (),
) -> Reading:
    """Posts after `since` (all, when None), newest word for word within `reads`. The posts in
    `keep` (a turn's mentions) are quoted word for word whatever else was said after them; their
    size comes out of `reads` first."""
    posts = posts_of(motion_id).exclude(own(agent))
    if since is not None:
        posts = posts.filter(created_at__gt=since)
    if through is not None:
        posts = posts.filter(created_at__lte=through)
    newest_first = list(posts.order_by("-created_at", "-id")[: MOST_READ + 1])
    reading = Reading(kept=frozenset(post.pk for post in keep))
    if len(newest_first) > MOST_READ:
        newest_first = newest_first[:MOST_READ]
        reading.older_unread = posts.count() - MOST_READ
    cap = dials.dials.read_post_chars

    def size_of(post: Message) -> int:
        return min(len(post.text), cap) + 80

    read = {post.pk for post in newest_first}
    # A mention older than every post read (MOST_READ said after it) is read too, before them.
    oldest_read = newest_first[-1].created_at if newest_first else None
    beyond = [
        post
        for post in keep
        if post.pk not in read and (oldest_read is None or post.created_at <= oldest_read)
    ]
    reading.older_unread = max(0, reading.older_unread - len(beyond))
    budget = dials.reads * CHARS_PER_TOKEN - sum(size_of(post) for post in keep)
    over = False
    for index, post in enumerate(newest_first):
        if post.pk in reading.kept:
            reading.posts.insert(0, post)
            continue
        # The newest is always quoted, however long (capped); past the first that does not fit,
        # the rest are older.
        over = over or (index > 0 and size_of(post) > budget)
        if over:
            reading.older.insert(0, post)
            continue
        budget -= size_of(post)
        reading.posts.insert(0, post)
    reading.posts[:0] = sorted(beyond, key=lambda post: (post.created_at, str(post.pk)))
    if since is not None or reading.posts:
        # Before the oldest read (a kept mention can be older than the summarized posts).
        firsts = reading.older[:1] + reading.posts[:1]
        first = min(firsts, key=lambda post: post.created_at) if firsts else None
        before = first.created_at if first is not None else since
        lead = posts_of(motion_id)
        if before is not None:
            lead = lead.filter(created_at__lt=before)
        reading.lead_in = list(reversed(list(lead.order_by("-created_at", "-id")[:LEAD_IN])))
    return reading


def linked_reading(
    posts: list[Message], motion: Motion, agent: Agent, dials: Resolved
) -> tuple[Motion, Reading] | None:
    """The first message a post links (`#m-<uuid>`, or `/motions/<slug>/#m-<uuid>`), read on from,
    if its Motion may be read by the post's author, by the agent, and by every reader (person or
    agent) of this Motion (they all see the wake on its preview page); None otherwise (said
    nowhere: a link to a Motion one of them may not read must not even confirm it exists)."""
    for post in posts:
        match = MESSAGE_LINK.search(post.text)
        if not match:
            continue
        try:
            target = Message.objects.select_related("motion").get(pk=uuid.UUID(match.group(2)))
        except (Message.DoesNotExist, ValueError):
            return None
        if target.motion_id != motion.pk:
            reader = post.author if post.author_id else AnonymousUser()
            policy = access()
            # A host's own policy written before this question existed answers it as the default.
            readers_may_read = getattr(policy, "readers_may_read", MotionAccess().readers_may_read)
            if not (
                policy.can_read(reader, target.motion)
                and policy.can_read(AgentPrincipal(agent), target.motion)
                and readers_may_read(motion, target.motion)
            ):
                return None
        reading = Reading()
        after = posts_of(target.motion_id).filter(created_at__gte=target.created_at)
        budget = dials.reads * CHARS_PER_TOKEN // 2
        for quoted in after.order_by("created_at", "id")[:MOST_READ]:
            size = min(len(quoted.text), dials.dials.read_post_chars) + 80
            if reading.posts and size > budget:
                break
            budget -= size
            reading.posts.append(quoted)
        reading.new_since = None
        return target.motion, reading
    return None


# --- the older part ----------------------------------------------------------------------------


def older_part(
    motion: Motion, agent: Agent, reading: Reading, dials: Resolved, *, summarize: bool = True
) -> str:
    """The posts over `reads`: summarized by the screen's model (a screen in the ledger), or,
    with no screen key or when it fails, counted with a link to the first."""
    older = reading.older
    count = len(older) + reading.older_unread
    if not count:
        return ""
    plural = "s" if count != 1 else ""
    link = f" (from {thread_link(motion.pk, older[0].pk)})" if older else ""
    shown = f"({count} earlier post{plural} not shown{link}.)"
    if not older or not summarize or not small_model_available(agent):
        return shown
    summary = digest(motion, agent, older, dials.dials)
    if not summary:
        return shown
    indented = "\n".join(f"    {line}" for line in defuse(summary).splitlines())
    return f"({count} earlier post{plural}{link}, summarized:)\n{indented}"


def render(
    motion: Motion,
    agent: Agent,
    reason: str,
    opening: str,
    reading: Reading,
    dials: Resolved,
    *,
    heading: str,
    linked: tuple[Motion, Reading] | None = None,
    extra: str = "",
    summarize: bool = True,
    tail: str = "",
    ask: str = "",
) -> str:
    """The framed prompt (before the footer, which finalize_prompt adds), within its bound; `ask`
    in place of the reason's own (ASKS)."""
    cap = dials.dials.read_post_chars
    older = older_part(motion, agent, reading, dials, summarize=summarize)

    def is_new(post: Message) -> bool:
        return reading.new_since is None or post.created_at > reading.new_since

    def kept_before_older(posts: list[Message]) -> int:
        limit = reading.older[0].created_at if reading.older else None
        count = 0
        for post in posts:
            if post.pk not in reading.kept or (limit is not None and post.created_at >= limit):
                break
            count += 1
        return count if count < len(posts) else 0

    def build(lead: list[Message], posts: list[Message], dropped: int) -> str:
        lines = [f'<{FRAME} motion="{motion.pk}" reason="{reason}">', opening]
        if motion.description.strip():
            lines += ["", f"About this Motion: {defuse(motion.description.strip())[:2000]}"]
        if extra:
            lines += ["", extra]
        lines += ["", heading]
        if dropped:
            lines.append(
                f"({dropped} older post{'s' if dropped != 1 else ''} left out to keep this prompt short.)"
            )
        # Kept mentions older than the posts not shown come before the line that counts those.
        head = kept_before_older(posts) if older and not dropped else 0
        if older and not dropped and not head:
            lines.append(older)
        lines += [quote(p, cap, new=False) for p in lead]
        for index, post in enumerate(posts):
            if head and index == head:
                lines.append(older)
            lines.append(quote(post, cap, new=is_new(post)))
        if not lead and not posts:
            lines.append("(nothing)")
        if linked is not None:
            where, read = linked
            lines += ["", f"A post links a message in “{where}”; the record from there, oldest first:"]
            lines += [quote(p, cap, new=False) for p in read.posts]
        if tail:
            lines += ["", tail]
        lines += [f"</{FRAME}>", "", (ask or ASKS.get(reason, ASKS["mention"])) + " " + SILENT_HINT]
        return "\n".join(lines)

    lead, posts, dropped = list(reading.lead_in), list(reading.posts), 0
    bound = dials.dials.prompt_max_chars - 4000  # room for the footer and the loop note

    def droppable() -> int | None:
        """The oldest post the bound may drop: never a kept one, never the last one."""
        return next((i for i, post in enumerate(posts[:-1]) if post.pk not in reading.kept), None)

    text = build(lead, posts, dropped)
    while len(text) > bound and (lead or droppable() is not None):
        if lead:
            lead.pop(0)
        else:
            posts.pop(droppable())
            dropped += 1
        text = build(lead, posts, dropped)
    reading.dropped = dropped
    return text


def who(posts: list[Message]) -> str:
    names: list[str] = []
    for post in posts:
        if post.sender not in names:
            names.append(post.sender)
    return ", ".join(names) or "someone"


def mention_prompt(
    motion: Motion, agent: Agent, mentions: list[Message], *, why: str = "", summarize: bool = True
) -> str:
    """Everything said since the agent last spoke (before the first mention), the mentions among
    it, marked ►, and the record from a message a mention links. `summarize=False` for the prompt
    a queued turn holds until it starts (the one built then is summarized, and paid for, once)."""
    dials = resolve(motion.pk, agent.pk)
    first = min(m.created_at for m in mentions) if mentions else None
    since = last_word_at(motion.pk, agent, before=first + timedelta(microseconds=1) if first else None)
    reading = read_since(motion.pk, agent, dials, since=since, keep=mentions)
    count = len(mentions)
    opening = (
        f"{who(mentions)} mentioned you (@{agent.name}) in the Motion “{motion}”"
        + (f" ({count} mentions, answered together in this one turn)" if count > 1 else "")
        + (f": {why}." if why else ".")
    )
    return render(
        motion,
        agent,
        "mention",
        opening,
        reading,
        dials,
        heading="What was said here since you last spoke, newest last; ► marks it:",
        linked=linked_reading(mentions, motion, agent, dials),
        summarize=summarize,
    )


def new_posts_prompt(
    motion: Motion, agent: Agent, posts: list[Message], previous_through=None, *, summarize: bool = True
) -> str:
    """Posts since the agent last spoke, ► on those new to this consideration, with lead-in.
    `summarize=False` where nothing may be spent (the wakes preview page)."""
    dials = resolve(motion.pk, agent.pk)
    since = last_word_at(motion.pk, agent)
    through = posts[-1].created_at if posts else None
    reading = read_since(motion.pk, agent, dials, since=since, through=through)
    if previous_through is not None and (since is None or previous_through > since):
        reading.new_since = previous_through
    # A mention this consideration carries (one the chain guard held, or one already woken and now
    # read again among new posts): say who asked rather than 'Nobody asked you anything'.
    asking = [post for post in posts if agent.name in mentioned_names(post.text, [agent.name])]
    if asking:
        opening = (
            f"{who(asking)} mentioned you (@{agent.name}) in the Motion “{motion}”. This is what was said "
            "since you last spoke, newest last; ► marks what was posted since you last looked."
        )
    else:
        opening = (
            f"Nobody asked you anything in the Motion “{motion}”. This is what was said since you last "
            "spoke, newest last; ► marks what was posted since you last looked."
        )
    return render(
        motion,
        agent,
        "new_posts",
        opening,
        reading,
        dials,
        heading="The Motion lately:",
        linked=linked_reading(posts, motion, agent, dials),
        summarize=summarize,
        ask=ASKS["new_posts_mentioned"] if asking else "",
    )


def quiet_prompt(motion: Motion, agent: Agent, quiet_for: str) -> str:
    """The last turns of a Motion that has been quiet."""
    dials = resolve(motion.pk, agent.pk)
    reading = Reading(new_since=clock.now())  # nothing is new
    last = list(posts_of(motion.pk).order_by("-created_at", "-id")[:QUIET_TURNS])
    reading.posts = list(reversed(last))
    return render(
        motion,
        agent,
        "quiet",
        f"Nothing has been said in the Motion “{motion}” for {quiet_for}.",
        reading,
        dials,
        heading="Its last turns, newest last:",
    )


def watch_prompt(motion: Motion, agent: Agent, line: Message, prompt: str | None) -> str:
    """A watch whose policy is `always`: what was said since the agent last spoke, then what the
    watchlist wrote (the watched content quoted as data) last in the frame, so nothing from the
    source follows it but the runner's own words."""
    dials = resolve(motion.pk, agent.pk)
    reading = read_since(motion.pk, agent, dials, since=last_word_at(motion.pk, agent))
    reading.posts = [p for p in reading.posts if p.pk != line.pk]
    body = prompt or f"A watch in the Motion “{motion}” saw a change:\n{line.text}"
    return render(
        motion,
        agent,
        "watch",
        f"A watch in the Motion “{motion}” saw a change (its line: #m-{line.pk}); it is quoted below.",
        reading,
        dials,
        heading="What was said here since you last spoke, newest last; ► marks it:",
        tail=defuse(body),
    )
