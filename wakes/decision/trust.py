"""Who can grant full tools (seed 001, "Who can grant full tools").

A wake is full-tools only when the post that woke it was typed into the Motion by a person
signed in with an SSH key; or typed by a person the admin named in `full_tools_for`, however they
signed in (the admin's word for that person: their password is then a full-tools credential,
which the sign-in's lockout guards); or it was written by an agent that was itself woken with
full tools, so a chain started by a trusted person keeps its tools. `full_tools_for` names a
person, not a key: a post by API key never vouches, whatever name it carries, and a post written
by a look-only turn never vouches either: trust comes from the post's source and the mode of the
turn that wrote it. Everything else (a wiki sign-in, an agent woken look-only, a terminal
session's turn, a watch line, a post by API key, no post at all) wakes look-only. The rule that
decided is kept on the Turn, so the thread can say why (docs/security.md, "Decisions").
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from motion_runner.models import HOST_POST_SOURCE_FILE

from ..models.dials import current_dials

LOOK = "look"
FULL = "full"


@dataclass(frozen=True)
class Decision:
    mode: str
    rule: str


def full_tools_for() -> set[str]:
    names = current_dials().get("full_tools_for") or getattr(settings, "WAKE_FULL_TOOLS_FOR", [])
    # Compared as the user model compares usernames (exactly): a separate account whose name
    # differs only in case is another person.
    return {name.strip() for name in names if name and name.strip()}


def decide(message, trusted_names: set[str] | None = None) -> Decision:
    """The mode a wake gets from the post that woke it (None: no post, e.g. a long quiet)."""
    if message is None:
        return Decision(LOOK, "no waking post")
    source = message.source
    if source == "watch":
        return Decision(LOOK, "a watch line")
    if source == "system":
        return Decision(LOOK, "a system line")
    if source == "terminal":
        return Decision(LOOK, "a terminal session's turn")
    if message.turn_id is not None and message.turn.mode != FULL:
        # Whatever the author's name: a look-only turn may be repeating what it read.
        return Decision(LOOK, "written by an agent woken look-only")
    if source == "api":
        return Decision(LOOK, "posted with an API key")  # a key is no person, named or not
    trusted_names = full_tools_for() if trusted_names is None else trusted_names
    # A person's post here has its author; one typed on the host's page (memory-lane's composer)
    # has no user of ours, but the sign-in its device vouched for (motion_runner/memory_lane/signin.py).
    if source == "web" and (message.author_id is not None or message.source_file == HOST_POST_SOURCE_FILE):
        # A host post is a person's only when memory-lane vouched a person typed it.
        person = message.author_id is not None or bool(message.sign_in)
        if person and message.sender and message.sender in trusted_names:
            return Decision(FULL, f"author {message.sender} is in full_tools_for")
        if message.sign_in == "ssh":
            return Decision(FULL, "typed by a person signed in with an SSH key")
        return Decision(LOOK, f"typed by a person signed in with {message.sign_in or 'no known sign-in'}")
    if source == "runner" and message.turn_id is not None:
        return Decision(FULL, "written by an agent woken with full tools")
    return Decision(LOOK, f"a {source} post")


def decide_burst(posts) -> Decision:
    """Several posts woke the turn together: full tools only if each one alone would."""
    trusted_names = full_tools_for()  # once for the burst, not once a post
    decisions = [decide(post, trusted_names) for post in posts]
    for decision in decisions:
        if decision.mode != FULL:
            if len(decisions) == 1:
                return decision
            return Decision(LOOK, f"{decision.rule} (one of {len(decisions)} new posts)")
    return decisions[-1] if decisions else decide(None)
