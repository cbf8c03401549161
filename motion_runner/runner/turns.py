"""Run one Turn: claim it, launch its harness, write every event as it comes, end it clearly."""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from .. import signals
from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..harnesses import Event, EventKind, HarnessError, get_adapter
from ..harnesses.base import HarnessAdapter, LaunchSpec
from ..harnesses.policy import ToolPolicy
from ..ingest.sessions import recorded_turn_ends
from ..ingest.system_lines import post_system_message
from ..ingest.writer import EventWriter, IngestContext
from ..lib.ids import system_uuid
from ..models import (
    Agent,
    EndedBy,
    Kind,
    Message,
    Motion,
    MotionSession,
    Scram,
    Turn,
    TurnStatus,
)
from ..signals import prompt_builders, prompt_finalizers, turn_retried
from ..thread.bell import ring_on_commit
from .ending import end_queued, fail_before_launch, finish_turn, judge_run
from .limits import limits_for
from .process import TURN_MARKER, Limits, Outcome, ProcessResult, run_streaming
from .record_watch import record_watches
from .resume import choose_session, mark_inherited_taint
from .routing import send_turn
from .stop_bell import StopBell
from .turn_run import TurnRun, while_database_away

log = logging.getLogger(__name__)


# The Celery task that runs a queued turn (runner/tasks.py), by its name: see lib/tasks.py.
RUN_TURN = "motion_runner.run_turn"


def enqueue_turn(
    motion: Motion,
    agent: Agent,
    prompt: str,
    *,
    reason: str = "manual",
    reason_detail: str = "",
    mode: str = "look",
    mode_rule: str = "",
    effort: str = "",
    model: str = "",
    max_budget_usd: Decimal | None = None,
    woken_by=None,
    ability: dict | None = None,
    dispatch: bool = True,
    resume_after_look_only: bool = False,
    start_after: float = 0,
    queued_at: datetime | None = None,
) -> Turn:
    """Queue a turn; its task is sent only once the row is committed. The row is the record of
    what is owed: if the broker cannot take the task, that is logged (robust) and the sweep sends
    it later, rather than failing the post that woke it.

    `ability`: the one extra ability this wake's reason grants, fixed here by the runner and
    acted on by the runner after the turn (wakes/abilities), e.g. replying on one wiki page.
    `resume_after_look_only`: a full-tools turn resumes a session a look-only wake ran in
    (runner/resume.py); by default it starts a fresh one. `turn.session_note` says which.
    `start_after`: seconds before its task runs (a mention waits a moment for the rest of a
    person's quick run of mentions to join it).
    `queued_at`: the caller's now, when it keeps its own clock (the wake rules' clock, driven by
    their tests and the replay bench): a turn is stamped on the clock its post was written on."""
    for finalize in prompt_finalizers:
        prompt = finalize(prompt, motion, agent, mode, reason)
    choice = choose_session(motion, agent, mode, resume_after_look_only=resume_after_look_only)
    turn = Turn.objects.create(
        resume_after_look_only=resume_after_look_only,
        session_note=choice.note[:300],
        motion=motion,
        agent=agent,
        prompt=prompt,
        reason=reason,
        reason_detail=reason_detail,
        mode=mode,
        mode_rule=mode_rule[:200],
        effort=effort,
        model=model,
        max_budget_usd=max_budget_usd,
        woken_by=woken_by,
        ability=ability or {},
        queued_at=queued_at or timezone.now(),
    )
    if dispatch:  # to the queue of the machine holding its sessions (runner/routing.py)
        transaction.on_commit(lambda: send_turn(turn, countdown=start_after), robust=True)
    return turn


def turn_marker(turn_id: int) -> str:
    """What a turn's processes carry in TURN_MARKER: the database too, so the reaper of one
    deployment (or test run) never takes another's turn 5 for its own."""
    return f"{connection.settings_dict['NAME']}/{turn_id}"


def claim_turn(turn_id: int) -> Turn | None:
    """queued → running, at most once, and never beside another running turn of the pair."""
    now = timezone.now()
    try:
        with transaction.atomic():
            claimed = Turn.objects.filter(pk=turn_id, status=TurnStatus.QUEUED).update(
                status=TurnStatus.RUNNING,
                started_at=now,
                heartbeat_at=now,
                lease_until=now + timedelta(seconds=settings.RUNNER_LEASE_SECONDS),
                runner_host=socket.gethostname(),
            )
    except IntegrityError:
        return None  # one_running_turn_per_motion_agent: it waits for the running one
    if claimed != 1:
        return None
    turn = Turn.objects.select_related("motion", "agent").get(pk=turn_id)
    ring_on_commit(turn.motion_id)  # the thread shows it running (■) before it says anything
    return turn


def execute_turn(turn_id: int, *, on_event: Callable[[Event], None] | None = None) -> Turn | None:
    if (scram := Scram.holding()) is not None:  # nothing starts while a scram holds
        queued = Turn.objects.select_related("motion", "agent").filter(pk=turn_id, status=TurnStatus.QUEUED)
        if (turn := queued.first()) is not None:
            end_queued(turn, f"{scram.raised_by} (scram: {scram.reason})")
        return None
    turn = claim_turn(turn_id)
    if turn is None:
        return None
    try:
        return _execute_claimed(turn, on_event)
    finally:
        start_next_queued(turn.motion_id, turn.agent_id)


def _execute_claimed(turn: Turn, on_event: Callable[[Event], None] | None) -> Turn:
    build_prompt_at_start(turn)
    try:
        adapter = get_adapter(turn.agent.harness)
        resume = session_for_launch(turn)
        policy = policy_for(turn)
        launch = adapter.build_launch(turn, resume_session=resume, policy=policy)
    except HarnessError as exc:
        fail_before_launch(turn, str(exc))
        return Turn.objects.get(pk=turn.pk)
    try:  # no pass file (0600, holding the record's pass) outlives the launch, even one never made
        run = new_run(turn, adapter, launch, resume, on_event)
        run.monitors += record_watches(turn, policy)
        limits = limits_for(turn)
        try:
            result = run_harness(run, launch, limits)
        except OSError as exc:  # the binary could not be executed at all
            fail_before_launch(turn, f"{launch.argv[0]}: {exc}")
            return Turn.objects.get(pk=turn.pk)
    finally:
        for path in launch.temp_files:
            path.unlink(missing_ok=True)
    keep_what_it_said(run, result)
    status, error, ended_by = judge_run(run, result, limits.timeout)
    if resume and status == TurnStatus.FAILED and session_is_gone(result, run):
        return after_a_lost_session(run, result, adapter, resume, status)
    return while_database_away(run, lambda: finish_turn(turn, run, result, status, error, ended_by))


def new_run(turn: Turn, adapter: HarnessAdapter, launch: LaunchSpec, resume: str | None, on_event) -> TurnRun:
    """The turn's run: its writer, its parser (knowing the session's recorded ends) and monitors."""
    agent = turn.agent
    context = IngestContext(
        motion=turn.motion,
        agent=agent,
        harness=agent.harness,
        source="runner",
        turn=turn,
        session_id=resume or "",
        effort=turn.effort,
        cwd=launch.cwd or "",
    )
    parser = adapter.new_parser(resume or "", turn=turn, recorded_ends=recorded_turn_ends(resume or ""))
    # Kept before the launch: a turn that never prints its result line (killed, lost worker)
    # is costed by how far the harness's running total grew past it.
    turn.harness_total_before = parser.baseline_usd
    Turn.objects.filter(pk=turn.pk).update(harness_total_before=parser.baseline_usd)
    return TurnRun(
        turn=turn,
        writer=EventWriter(context),
        parser=parser,
        on_event=on_event,
        monitors=[factory(turn) for factory in signals.monitor_factories],
        price=adapter.streamed_cost,
    )


def run_harness(run: TurnRun, launch: LaunchSpec, limits: Limits) -> ProcessResult:
    """Launch the harness and stream it into the run, its stop bell listening meanwhile."""
    run.bell = StopBell(run.turn.pk)
    try:
        return run_streaming(
            launch.argv,
            env={**launch.env, TURN_MARKER: turn_marker(run.turn.pk)},
            cwd=launch.cwd,
            limits=limits,
            listener=run,
            stdin=launch.stdin.encode() if launch.stdin is not None else None,
        )
    finally:
        run.bell.close()


def keep_what_it_said(run: TurnRun, result: ProcessResult) -> None:
    """The harness is done: its last unterminated line and the parser's owed events go in, and
    everything waits for the database as long as it must (the clocks end at its newest post)."""
    if result.unterminated_tail.strip():
        run.on_lines([result.unterminated_tail])
    if not run.failure or run.keep_printed:
        for event in run.parser.finish():
            run.emit(event)
    # Stopped mid-reply (■, a guard): the words already shown stay, as the turn's partial reply
    # (they vanished on a ■: issue 43.4). Redacted on the write path as any reply.
    if result.outcome != Outcome.EXITED and (words := run.live.unsaid()):
        run.emit(Event(EventKind.TEXT, uuid=system_uuid("stopped-words", run.turn.pk), text=words + " …"))
    run.live.clear()  # the harness is done: what it typed is said in full, or not at all
    try:
        while_database_away(run, run.store_backlog)
    finally:
        run.announcer.flush()
    while_database_away(run, lambda: run.flush_activity(force=True))


def after_a_lost_session(
    run: TurnRun, result: ProcessResult, adapter: HarnessAdapter, resume: str, status: str
) -> Turn:
    """The session it resumed is gone: ended, and the wake runs once more in a fresh session."""
    turn, agent = run.turn, run.turn.agent
    if adapter.holds_session(agent, resume) is False:
        # Not here: another machine (the agent's own container) may well hold it. It is kept,
        # never replaced, and this wake runs once more in a fresh session here.
        error = (
            f"its session {resume} is not on this machine (another machine may hold it; it is "
            "kept, not replaced): woke again once in a fresh session here"
        )
        finished = while_database_away(
            run, lambda: finish_turn(turn, run, result, status, error, EndedBy.SESSION_ELSEWHERE)
        )
        post_system_message(  # said here whatever the harness's own error line said
            turn.motion,
            f"@{agent.name}: {error}",
            kind=Kind.WAKE,
            message_id=system_uuid("session-elsewhere", turn.pk),
            turn=finished,
            agent=agent,
        )
        retire_and_wake_again(finished, resume, retire=False)
        return finished
    error = f"its session {resume} is gone from {agent.harness}; retired it and woke again in a new session"
    finished = while_database_away(
        run, lambda: finish_turn(turn, run, result, status, error, EndedBy.SESSION_GONE)
    )
    retire_and_wake_again(finished, resume)
    return finished


def policy_for(turn: Turn) -> ToolPolicy:
    """What the turn may use, asked once a launch of the one answer the setting
    `signals.tool_policy` names (wakes'; without wakes, the harness layer's most closed policy).
    The adapter is handed it and never asks itself."""
    return signals.tool_policy(turn)


def build_prompt_at_start(turn: Turn) -> None:
    """A prompt built from the record as it stands now (`signals.prompt_builders`: a mention's,
    answering every mention that joined it while it was queued), kept on the row."""
    for build in prompt_builders:
        try:
            prompt = build(turn)
        except Exception:  # a builder's bug must not lose the turn: it runs with the queued prompt
            log.exception("a prompt builder failed for turn %s", turn.pk)
            continue
        if prompt:
            turn.prompt = prompt
            Turn.objects.filter(pk=turn.pk).update(prompt=prompt)
            return


def wake_line_id(turn_id: int) -> str:
    """The id of the line that says why a turn woke (wakes/ posts it), so it is posted once."""
    return system_uuid("wake", turn_id)


FRESH_SESSION_OPENING = "(A fresh session:"


def session_for_launch(turn: Turn) -> str | None:
    """The session to resume, chosen again now (a look-only wake may have run in it since the
    turn was queued). The thread is told unless its wake line already said the same (a turn
    queued without one, by `manage.py wake` or a retry, is told here). A turn to `start_fresh`
    resumes none."""
    if turn.start_fresh:
        return None
    choice = choose_session(
        turn.motion,
        turn.agent,
        turn.mode,
        resume_after_look_only=turn.resume_after_look_only,
        turn_id=turn.pk,
    )
    mark_inherited_taint(turn, choice.session_id)
    already_said = (
        choice.note[:300] == turn.session_note
        and Message.objects.filter(pk=wake_line_id(turn.pk), text__contains=turn.session_note).exists()
    )
    if choice.fresh_because and not turn.prompt.startswith(FRESH_SESSION_OPENING):
        # The agent is told too: it would otherwise take the missing context for a lapse of its own.
        turn.prompt = (
            f"{FRESH_SESSION_OPENING} your latest session here had {choice.fresh_because}, and what a "
            "look-only wake read is not carried into a turn with full tools. Nothing of that session "
            f"is in your context; what was said here is below.)\n\n{turn.prompt}"
        )
        Turn.objects.filter(pk=turn.pk).update(prompt=turn.prompt)
    if choice.note and not already_said:
        Turn.objects.filter(pk=turn.pk).update(session_note=choice.note[:300])
        post_system_message(
            turn.motion,
            f"@{turn.agent.name}'s full-tools turn: {choice.note}",
            kind=Kind.WAKE,
            message_id=system_uuid("session-choice", turn.pk),
            turn=turn,
            agent=turn.agent,
        )
    return choice.session_id


# What each harness says when asked to resume a session it no longer has (recorded: Claude
# Code's result `errors`, Codex's and Pi's stderr).
SESSION_GONE = re.compile(
    r"No conversation found with session ID|no rollout found for thread id|No session found matching",
    re.IGNORECASE,
)


def session_is_gone(result: ProcessResult, run: TurnRun) -> bool:
    said = [result.stderr_tail, run.turn_end.text if run.turn_end else ""]
    return any(SESSION_GONE.search(text or "") for text in said)


def retire_and_wake_again(turn: Turn, session_id: str, *, retire: bool = True) -> Turn:
    """A session the harness lost would fail every later wake: retire it, and run the same
    wake once more in a fresh session (a new Turn, so its events get ids of their own).
    `retire=False`: a session held on another machine is kept; the wake again starts fresh
    (`start_fresh`), so however many such sessions the Motion has, it is one fresh start."""
    if retire:
        MotionSession.objects.filter(pk=session_id).update(retired_at=timezone.now())
    retry = Turn.objects.create(
        motion=turn.motion,
        agent=turn.agent,
        prompt=turn.prompt,
        reason=turn.reason,
        reason_detail=f"{turn.reason_detail} (again after session {session_id} was gone)".strip(),
        mode=turn.mode,
        mode_rule=turn.mode_rule,
        resume_after_look_only=turn.resume_after_look_only,
        effort=turn.effort,
        model=turn.model,
        ability=turn.ability,
        max_budget_usd=turn.max_budget_usd,
        woken_by=turn.woken_by,
        start_fresh=not retire,
    )
    for _receiver, error in turn_retried.send_robust(sender=Turn, failed=turn, retry=retry):
        if isinstance(error, Exception):
            log.error("a turn_retried receiver failed for turn %s: %r", retry.pk, error)
    return retry


def start_next_queued(motion_id: str, agent_id: int) -> None:
    """Hand the pair's oldest waiting turn to a worker once this one has ended."""
    next_id = (
        Turn.objects.filter(motion_id=motion_id, agent_id=agent_id, status=TurnStatus.QUEUED)
        .order_by("queued_at", "pk")
        .values_list("pk", flat=True)
        .first()
    )
    if next_id is not None:
        transaction.on_commit(lambda: send_turn(next_id), robust=True)
