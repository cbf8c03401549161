"""Which session a turn resumes, and how much of it the resuming wake reads (session_context).

A turn resumes its agent's latest session in the Motion, except that a full-tools turn does not
silently resume a session a look-only wake ran in: that wake was look-only because what woke it
was not trusted (a watch line, a wiki sign-in, another agent's look-only words), and what it read
is still in the session's context, where it could steer a turn that can now write. Such a turn
starts a fresh session unless the turn says to resume it (the `full_tools_after_look_only` dial,
read by wakes/ when it queues the turn); either way `note` says which and why, for the thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..harnesses.claude_code import SYNTHETIC_MODEL
from ..ingest.sessions import latest_session
from ..models import Agent, Kind, Message, Motion, Turn

FULL = "full"
LOOK = "look"
# Look-only turns that read nothing new do not taint a session: the runner's own compaction, and
# a command a trusted person asked for (wakes/turn/commands.py's COMMAND_REASON: its prompt is only the
# command). Otherwise `@magent /compact` would make the next trusted wake drop what it kept.
UNTAINTING_REASONS = ("compact", "command")


@dataclass(frozen=True)
class SessionChoice:
    session_id: str | None  # None: a fresh session
    note: str  # "" when there was nothing to choose
    fresh_because: str = ""  # why a fresh session and not the latest (for the agent's prompt)


def look_only_wake_in(session_id: str, exclude_turn: int | None = None) -> Turn | None:
    """The latest look-only wake that ran in this session, if any: a maintenance turn counts only
    when the session it resumed was tainted (`carries_taint`: its fork holds what that read)."""
    turns = Turn.objects.filter(session_id=session_id, mode=LOOK).exclude(
        reason__in=UNTAINTING_REASONS, carries_taint=False
    )
    if exclude_turn is not None:
        turns = turns.exclude(pk=exclude_turn)
    return turns.order_by("-queued_at", "-pk").first()


def choose_session(
    motion: Motion, agent: Agent, mode: str, *, resume_after_look_only: bool, turn_id: int | None = None
) -> SessionChoice:
    latest = latest_session(motion, agent)
    if latest is None or mode != FULL:
        return SessionChoice(latest, "")
    tainting = look_only_wake_in(latest, exclude_turn=turn_id)
    if tainting is None:
        return SessionChoice(latest, "")
    why = f"a look-only wake (turn {tainting.pk}: {tainting.mode_rule or tainting.reason}) ran in it"
    if resume_after_look_only:
        return SessionChoice(
            latest,
            f"resumes session {latest[:8]}… though {why} (dial full_tools_after_look_only: resume)",
        )
    return SessionChoice(None, f"a fresh session, not {latest[:8]}…: {why}", fresh_because=why)


def mark_inherited_taint(turn: Turn, resumed: str | None) -> None:
    """A maintenance turn about to resume a session a look-only wake ran in carries that taint
    into the session it forks (Claude Code's `--fork-session` gives it an id of its own)."""
    if turn.reason not in UNTAINTING_REASONS or not resumed or turn.carries_taint:
        return
    if look_only_wake_in(resumed, exclude_turn=turn.pk) is not None:
        turn.carries_taint = True
        Turn.objects.filter(pk=turn.pk).update(carries_taint=True)


@dataclass(frozen=True)
class SessionContext:
    """What the agent's newest API call in its newest session of a Motion read."""

    tokens: int
    model: str


READ = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _newest_call(motion_id: str, agent_id: int) -> dict | None:
    return (
        Message.objects.filter(motion_id=motion_id, agent_id=agent_id, input_tokens__isnull=False)
        .exclude(session_id="")
        .exclude(model_backend=SYNTHETIC_MODEL)
        .exclude(kind=Kind.TURN_END, model_backend="")
        .order_by("-created_at", "-id")
        .values("created_at", "model_backend", *READ)
        .first()
    )


def session_context(motion_id: str, agent_id: int) -> SessionContext | None:
    """The input (fresh, cached and cache-written tokens) of the pair's newest API call here: the
    context its next wake resumes (what the budget reserves for). Not Claude Code's result
    line (it names no model, and its usage sums the turn's calls), nor the answer of a local
    command such as /context (`<synthetic>`: no call at all)."""
    latest = _newest_call(motion_id, agent_id)
    if latest is None:
        return None
    return SessionContext(sum(latest[key] or 0 for key in READ), latest["model_backend"])


@dataclass(frozen=True)
class ContextReading:
    """How full the pair's context is, as last read: tokens of a window (None: nothing said it)."""

    tokens: int
    window: int | None


def percent_full(tokens: int, window: int) -> int:
    """The one "how full" figure the thread's menus and every /context answer say: whole percent,
    half up, as Claude Code's /context rounds (12,372 of 1,000,000 tokens: 1 %)."""
    return (200 * tokens + window) // (2 * window)


def context_fullness(motion_id: str, agent_id: int, default_window: int | None) -> dict | None:
    """How full the pair's context is here, as the menus and a Codex or Pi /context say it: the
    newest reading (`context_reading`), against `default_window` when the reading named no window
    (wakes' WAKES_CONTEXT_WINDOW_TOKENS); the percent is `percent_full`'s, the one figure."""
    reading = context_reading(motion_id, agent_id)
    if reading is None:
        return None
    window = reading.window or default_window
    used = reading.tokens
    return {"tokens": used, "window": window, "percent": percent_full(used, window) if window else None}


def context_reading(motion_id: str, agent_id: int) -> ContextReading | None:
    """The newest reading of how full the pair's context is here. Claude Code's own /context
    answer when it is the newest (its synthetic line's `context_usage`: the system prompt, tools
    and messages as the CLI counted them, of the window it named), so the menu says what /context
    just said (issue 43.7: the stand-in reports no input, so its calls read 0 % while /context
    counted 1 %); else the newest API call's input (session_context), of its model's window."""
    call = _newest_call(motion_id, agent_id)
    answered = (
        Message.objects.filter(
            motion_id=motion_id,
            agent_id=agent_id,
            model_backend=SYNTHETIC_MODEL,
            raw__has_key="context_usage",
        )
        .order_by("-created_at", "-id")
        .values("created_at", "raw")
        .first()
    )
    if answered is not None and (call is None or answered["created_at"] >= call["created_at"]):
        usage = answered["raw"]["context_usage"]
        tokens, window = (
            usage.get(key) if isinstance(usage, dict) else None for key in ("total_tokens", "raw_max_tokens")
        )
        if isinstance(tokens, int) and isinstance(window, int) and tokens >= 0 and window > 0:
            return ContextReading(tokens, window)
    if call is None:
        return None
    model = call["model_backend"]
    window = context_window(motion_id, agent_id, model) if model else None
    return ContextReading(sum(call[key] or 0 for key in READ), window)


# Claude Code's `[1m]` suffix asks for the one-million-token window (harnesses/pricing.py ignores it).
LONG_WINDOW_SUFFIX = "[1m]"
LONG_WINDOW_TOKENS = 1_000_000


def context_window(motion_id: str, agent_id: int, model: str) -> int | None:
    """The model's own window, as the harness said it: Claude Code's result line names each
    model's `contextWindow` in `modelUsage` (the newest turn end of the pair here that does), else
    a `[1m]` model's million; None when nothing says (the caller's setting answers)."""
    ends = (
        Message.objects.filter(motion_id=motion_id, agent_id=agent_id, kind=Kind.TURN_END, raw__isnull=False)
        .order_by("-created_at", "-id")
        .values_list("raw", flat=True)[:5]
    )
    bare = model.removesuffix(LONG_WINDOW_SUFFIX)
    for raw in ends:
        usage = raw.get("modelUsage") if isinstance(raw, dict) else None
        if not isinstance(usage, dict):
            continue
        said = (
            usage.get(model) or usage.get(bare) or (next(iter(usage.values())) if len(usage) == 1 else None)
        )
        window = said.get("contextWindow") if isinstance(said, dict) else None
        if isinstance(window, int) and window > 0:
            return window
    return LONG_WINDOW_TOKENS if model.endswith(LONG_WINDOW_SUFFIX) else None
