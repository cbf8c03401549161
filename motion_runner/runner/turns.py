"""Run one Turn: claim it, launch its harness, write every event as it comes, end it clearly."""

from __future__ import annotations

import logging
import re
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import TypeVar

from django.db import DatabaseError, IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from ..announcing import Announcer
from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..db_retry import database_answers, is_outage, retry_outages
from ..harnesses import Event, EventKind, HarnessError, StreamParser, get_adapter
from ..harnesses.base import json_object
from ..ingest import EventWriter, IngestContext
from ..lib.ids import system_uuid
from ..models import Agent, Kind, Message, Motion, MotionSession, Scram, Turn, TurnStatus, recorded_turn_ends
from ..redaction import redact
from ..sessions import SessionConflict
from ..signals import (
    monitor_factories,
    prompt_builders,
    prompt_finalizers,
    turn_finished,
    turn_repriced,
    turn_retried,
)
from ..system_lines import post_system_message
from .limits import limits_for
from .process import TURN_MARKER, Outcome, ProcessResult, run_streaming
from .routing import send_turn
from .sessions import choose_session
from .stop_bell import StopBell

log = logging.getLogger(__name__)

T = TypeVar("T")

# The Celery task that runs a queued turn (runner/tasks.py), by its name: see lib/tasks.py.
RUN_TURN = "motion_runner.run_turn"


def _announce_end(turn: Turn) -> None:
    """turn_finished, each receiver once; one that failed because the database was away is run
    again until it lands (RUNNER_END_RETRY_SECONDS): the ledger's settle must not wait for the
    settle job. Receivers are idempotent (conditional updates, rows with fixed keys)."""
    for receiver, error in turn_finished.send_robust(sender=Turn, turn=turn):
        if isinstance(error, DatabaseError) and is_outage(error):
            try:
                retry_outages(
                    lambda receiver=receiver: receiver(signal=turn_finished, sender=Turn, turn=turn),
                    seconds=settings.RUNNER_END_RETRY_SECONDS,
                    what=f"turn {turn.pk}'s end ({getattr(receiver, '__name__', receiver)})",
                )
                continue
            except Exception as again:
                error = again
        if isinstance(error, Exception):
            log.error("a turn_finished receiver failed for turn %s: %r", turn.pk, error)


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
) -> Turn:
    """Queue a turn; its task is sent only once the row is committed. The row is the record of
    what is owed: if the broker cannot take the task, that is logged (robust) and the sweep sends
    it later, rather than failing the post that woke it.

    `ability`: the one extra ability this wake's reason grants, fixed here by the runner and
    acted on by the runner after the turn (wakes/abilities), e.g. replying on one wiki page.
    `resume_after_look_only`: a full-tools turn resumes a session a look-only wake ran in
    (runner/sessions.py); by default it starts a fresh one. `turn.session_note` says which.
    `start_after`: seconds before its task runs (a mention waits a moment for the rest of a
    person's quick run of mentions to join it)."""
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
    return Turn.objects.select_related("motion", "agent").get(pk=turn_id)


class TurnMonitor:
    """Watches a turn's events as they are written; a non-empty stop_reason ends the turn.

    wakes/ adds the tool-loop guard through `signals.monitor_factories`.
    """

    def __init__(self, turn: Turn):
        self.turn = turn
        self.stop_reason: str | None = None

    def observe(self, event: Event) -> None:
        pass


@dataclass
class TurnRun:
    turn: Turn
    writer: EventWriter
    parser: StreamParser | None = None
    on_event: Callable[[Event], None] | None = None
    monitors: list[TurnMonitor] = field(default_factory=list)
    turn_end: Event | None = None
    bad_lines: int = 0
    line_no: int = 0
    # Set when writing an event failed: the harness is stopped (its output would have
    # nowhere to go) and the turn fails with this, instead of staying "running".
    failure: str | None = None
    # Events parsed but not yet stored because the database did not answer: kept in order and
    # written first once it does (a blip of a few seconds loses nothing and stops nothing).
    backlog: list[Event] = field(default_factory=list)
    outage_since: float | None = None
    # The failure is the outage bound or a lost lease: what the harness printed before its stop
    # is still kept (and written once the database is back), only nothing more is asked of it.
    keep_printed: bool = False
    next_try: float = 0.0
    lease_renewed: float = field(default_factory=time.monotonic)
    # Every Message announced once, after commit; the batches within NOTE_SECONDS together.
    announcer: Announcer = field(default_factory=Announcer)
    # A person (or a scram) stopped it: `failure` holds who, and the turn ends killed, not failed.
    stopped: bool = False

    def __post_init__(self) -> None:
        self.writer.announce = self.announcer

    def on_lines(self, lines: list[bytes]) -> None:
        """run_streaming's callback. Lines that arrived together are parsed, then written in
        one transaction (one commit a burst). While the database is away they wait in memory
        (`drain`). If a write fails otherwise, each event is written on its own, so what can
        be kept is kept; an event that cannot be written ends the turn, and the error never
        escapes the runner."""
        if self.failure and not self.keep_printed:
            return
        events = [event for line in lines for event in self.events_for_line(line)]
        for event in events:
            self.observe(event)
        self.backlog.extend(events)
        self.drain()

    def on_tick(self) -> str | None:
        """run_streaming's clock (twice a second): retry buffered writes, renew the lease; a
        failure (the outage outlasted its bound, the lease was taken) stops the harness."""
        if self.backlog and not self.failure:
            self.drain()
        if self.outage_since is not None:
            self.check_outage_bound(time.monotonic())
        if self.outage_since is None:  # its receivers query: what waits, waits for the database
            self.announcer.flush_due()
        self.keep_lease()
        return self.failure

    def database_away(self, exc: BaseException | str) -> None:
        """The database dropped us: reconnect on the next try, after a back-off (0.1 s doubling
        to 2 s), and give up once it has been away longer than RUNNER_DB_OUTAGE_SECONDS."""
        now = time.monotonic()
        try:
            connection.close()  # the next query opens a fresh connection
        except DatabaseError:
            pass
        if self.outage_since is None:
            self.outage_since = now
            log.warning("turn %s: the database is away (%s); keeping lines in memory", self.turn.pk, exc)
        away = now - self.outage_since
        self.next_try = now + min(2.0, 0.1 * 2 ** min(5, int(away)))
        self.check_outage_bound(now)

    def check_outage_bound(self, now: float) -> None:
        """The bound, on this runner's own clock (every tick), not only when a query fails: a try
        may wait in the pool's getconn far longer than the bound."""
        away = now - self.outage_since if self.outage_since is not None else 0.0
        if away > settings.RUNNER_DB_OUTAGE_SECONDS and not self.failure:
            self.failure = f"the database did not answer for {away:.0f} s, so the harness was stopped"
            self.keep_printed = True

    def may_try(self) -> bool:
        """Whether to ask the database now: not while backing off, and during an outage only
        once a probe on a connection of its own answers (the pool would hold the try)."""
        if self.outage_since is None:
            return True
        if time.monotonic() < self.next_try:
            return False
        if not database_answers():
            self.database_away("no answer yet")
            return False
        return True

    def drain(self) -> None:
        """Write the backlog, oldest first, unless we are backing off from an outage."""
        if not self.backlog or not self.may_try():
            return
        try:
            self.store_backlog()
            self.writer.flush_activity()
        except DatabaseError as exc:
            if is_outage(exc):
                self.database_away(exc)
                return
            raise
        self.database_back()

    def database_back(self) -> None:
        if self.outage_since is not None:
            log.warning(
                "turn %s: the database is back after %.1f s",
                self.turn.pk,
                time.monotonic() - self.outage_since,
            )
        self.outage_since = None

    def store_backlog(self) -> None:
        """Write the whole backlog now; an outage error is raised with the backlog kept."""
        if self.backlog:
            events = list(self.backlog)
            self.write_events(events)
            del self.backlog[: len(events)]

    def keep_lease(self) -> None:
        """Renew the lease (a third of it is left to spare). The row no longer running means the
        turn was reclaimed as lost while we could not renew: stop, someone else ended it."""
        if time.monotonic() - self.lease_renewed < settings.RUNNER_LEASE_SECONDS / 3:
            return
        if not self.may_try():
            return
        now = timezone.now()
        try:
            held = Turn.objects.filter(pk=self.turn.pk, status=TurnStatus.RUNNING).update(
                lease_until=now + timedelta(seconds=settings.RUNNER_LEASE_SECONDS), heartbeat_at=now
            )
        except DatabaseError as exc:
            if is_outage(exc):
                self.database_away(exc)
                return
            raise
        self.lease_renewed = time.monotonic()
        if not self.backlog:  # with a backlog, the database is back once it is written
            self.database_back()
        if not held and not self.failure:
            self.failure = "its lease lapsed and the turn was ended as lost"
            self.keep_printed = True
        if held and not self.failure and (reason := self.stop_asked()):
            # A ring lost with a dropped connection: the flag stays, and is read here.
            self.failure, self.stopped = reason, True

    def stop_asked(self) -> str | None:
        """Someone stopped this turn (runner/stop_bell.py): the reason the thread gives."""
        row = Turn.objects.filter(pk=self.turn.pk).values("stop_requested_at", "stopped_by").first()
        if row is None or row["stop_requested_at"] is None:
            return None
        return f"{row['stopped_by'] or 'someone'} stopped it"

    def on_ring(self) -> str | None:
        """run_streaming's bell: a stop was rung for this turn (once at the start too)."""
        try:
            reason = self.stop_asked()
        except DatabaseError as exc:
            if is_outage(exc):
                self.database_away(exc)
                return None
            raise
        if reason and not self.failure:
            self.failure = reason
            self.stopped = True
        return reason

    def write_events(self, events: list[Event]) -> None:
        try:
            with transaction.atomic():
                self.write_many(events)
        except DatabaseError as exc:
            if is_outage(exc):
                raise
            self.write_one_by_one(events)
        except Exception:
            self.write_one_by_one(events)

    def write_one_by_one(self, events: list[Event]) -> None:
        """Each event in its own transaction, so one that cannot be written costs no other."""
        log.exception(
            "turn %s: a batch of %d events could not be written together", self.turn.pk, len(events)
        )
        for event in events:
            try:
                with transaction.atomic():
                    self.write(event)
            except SessionConflict as exc:
                self.failure = f"its session is not this Motion's: {exc}"
            except DatabaseError as exc:
                if is_outage(exc):
                    raise
                log.exception("turn %s: could not write an event", self.turn.pk)
                self.failure = f"the runner could not write an event ({type(exc).__name__}: {exc})"
            except Exception as exc:
                log.exception("turn %s: could not write an event", self.turn.pk)
                self.failure = f"the runner could not write an event ({type(exc).__name__}: {exc})"

    def handle_line(self, line: bytes) -> None:
        """One line, written and observed (for callers outside the streaming loop)."""
        self.on_lines([line])

    def events_for_line(self, line: bytes) -> list[Event]:
        self.line_no += 1
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return []
        try:
            obj = json_object(text)
        except ValueError as exc:
            self.bad_lines += 1
            return [
                Event(
                    EventKind.ERROR,
                    uuid=system_uuid("bad-line", self.turn.pk, self.line_no),
                    text=f"the harness printed a line that is not a JSON event ({exc}): {text[:300]}",
                    raw={"line": text[:4000]},
                )
            ]
        try:
            return self.parser.feed(obj)
        except Exception as exc:  # an adapter bug must not lose the rest of the turn
            log.exception("adapter failed on a line of turn %s", self.turn.pk)
            return [
                Event(
                    EventKind.ERROR,
                    uuid=system_uuid("adapter-error", self.turn.pk, self.line_no),
                    text=f"could not read a {obj.get('type', '?')} line: {exc}",
                    raw=obj,
                )
            ]

    def write(self, event: Event) -> None:
        self.write_many([event])

    def write_many(self, events: list[Event]) -> None:
        """One INSERT … ON CONFLICT DO NOTHING for the batch (ingest.EventWriter.write_many)."""
        outcome = self.writer.write_many(events)
        if outcome.turn_end is not None:
            self.turn_end = outcome.turn_end
        for error in outcome.errors:  # a malformed event is said, never fatal to the turn
            self.writer.write_many(
                [
                    Event(
                        EventKind.ERROR,
                        uuid=system_uuid("bad-event", self.turn.pk, error),
                        text=f"an event could not be stored: {error}",
                    )
                ]
            )

    def observe(self, event: Event) -> None:
        for monitor in self.monitors:
            monitor.observe(event)
        if self.on_event:
            self.on_event(event)

    def emit(self, event: Event) -> None:
        self.observe(event)
        self.backlog.append(event)
        self.drain()

    def stop_reason(self) -> str | None:
        if self.failure:
            return self.failure
        for monitor in self.monitors:
            if monitor.stop_reason:
                return monitor.stop_reason
        return None


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def judge(result: ProcessResult, turn_end: Event | None, timeout: float | None) -> tuple[str, str]:
    """The turn's status and, when it did not end well, a sentence for the thread."""
    if result.outcome == Outcome.TIMED_OUT:
        return (
            TurnStatus.TIMED_OUT,
            f"stopped: the turn ran past its {timeout or 0:g} s limit ({result.detail})",
        )
    if result.outcome == Outcome.SILENT:
        return TurnStatus.TIMED_OUT, f"stopped: the harness went silent, its silence limit ({result.detail})"
    if result.outcome == Outcome.FLOODED:
        return TurnStatus.FAILED, f"stopped: the harness flooded its output ({result.detail})"
    if result.outcome == Outcome.STOPPED:
        return TurnStatus.KILLED, f"stopped: {result.detail}"
    if result.outcome == Outcome.LINGERED and turn_end is not None:
        # It had said everything: stopping the lingering process loses nothing.
        log.warning("harness %s: %s; stopped it", result.pid, result.detail)
        if turn_end.is_error:
            return TurnStatus.FAILED, f"the turn ended with an error ({turn_end.subtype}): {turn_end.text}"
        return TurnStatus.FINISHED, ""
    code = result.returncode
    if code is not None and code < 0:
        return TurnStatus.KILLED, f"the harness was killed by {_signal_name(code)}"
    if turn_end is not None and turn_end.is_error:
        detail = turn_end.text or turn_end.subtype
        return TurnStatus.FAILED, f"the turn ended with an error ({turn_end.subtype}): {detail}"
    if code not in (0, None):
        last = result.stderr_tail.strip().splitlines()[-1:] or ["no stderr"]
        without = "" if turn_end is not None else " without a result event"
        return TurnStatus.FAILED, f"the harness exited with code {code}{without}: {last[0][:300]}"
    if turn_end is None:
        return TurnStatus.FAILED, "the harness exited without a result event"
    return TurnStatus.FINISHED, ""


def fail_before_launch(turn: Turn, message: str) -> None:
    message = redact(message)
    now = timezone.now()
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.FAILED, ended_at=now, error=message, activity="")
    post_system_message(
        turn.motion,
        f"@{turn.agent.name} could not start: {message}",
        message_id=system_uuid("turn-error", turn.pk),
        turn=turn,
    )
    turn.refresh_from_db()
    _announce_end(turn)


def end_queued(turn: Turn, stopped_by: str) -> bool:
    """A queued turn that will never start (someone stopped it, or a scram holds): ended killed,
    its line said, its ledger settled."""
    error = f"{stopped_by} stopped it before it started"
    now = timezone.now()
    with transaction.atomic():
        if not Turn.objects.filter(pk=turn.pk, status=TurnStatus.QUEUED).update(
            status=TurnStatus.KILLED,
            ended_at=now,
            stop_requested_at=now,
            stopped_by=stopped_by[:200],
            error=error,
        ):
            return False  # a worker claimed it meanwhile: its runner hears the flag instead
        post_system_message(
            turn.motion,
            f"@{turn.agent.name}'s turn killed: {error}",
            message_id=system_uuid("turn-error", turn.pk),
            turn=turn,
            kind=Kind.ERROR,
        )
    turn.refresh_from_db()
    _announce_end(turn)
    return True


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
    agent, motion = turn.agent, turn.motion
    build_prompt_at_start(turn)
    try:
        adapter = get_adapter(agent.harness)
        resume = session_for_launch(turn)
        launch = adapter.build_launch(turn, resume_session=resume)
    except HarnessError as exc:
        fail_before_launch(turn, str(exc))
        return Turn.objects.get(pk=turn.pk)
    context = IngestContext(
        motion=motion,
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
    run = TurnRun(
        turn=turn,
        writer=EventWriter(context),
        parser=parser,
        on_event=on_event,
        monitors=[factory(turn) for factory in monitor_factories],
    )
    limits = limits_for(turn)

    def on_start(pid: int) -> None:
        # Its own session: the group id is the leader's pid (what a reaper kills).
        Turn.objects.filter(pk=turn.pk).update(
            pid=pid, pgid=pid, runner_host=socket.gethostname(), activity=f"{agent.name}: starting…"
        )

    env = {**launch.env, TURN_MARKER: turn_marker(turn.pk)}
    bell = StopBell(turn.pk)

    try:
        result = run_streaming(
            launch.argv,
            env=env,
            cwd=launch.cwd,
            limits=limits,
            on_lines=run.on_lines,
            on_start=on_start,
            should_stop=run.stop_reason,
            # Its last word said, and no background task of its own still running.
            ended=lambda: run.turn_end is not None and not getattr(run.parser, "background_tasks", None),
            on_tick=run.on_tick,
            stdin=launch.stdin.encode() if launch.stdin is not None else None,
            bell=bell,
            on_ring=run.on_ring,
        )
    except OSError as exc:  # the binary could not be executed at all
        fail_before_launch(turn, f"{launch.argv[0]}: {exc}")
        return Turn.objects.get(pk=turn.pk)
    finally:
        bell.close()
        for path in launch.temp_files:
            path.unlink(missing_ok=True)
    if result.unterminated_tail.strip():
        run.on_lines([result.unterminated_tail])
    if not run.failure or run.keep_printed:
        for event in run.parser.finish():
            run.emit(event)
    try:
        while_database_away(run, run.store_backlog)  # the harness is done; what it said is kept
    finally:
        run.announcer.flush()  # the clocks end at its newest post
    while_database_away(run, lambda: run.writer.flush_activity(force=True))
    if run.stopped:
        status, error = TurnStatus.KILLED, run.failure
    elif run.failure:
        status, error = TurnStatus.FAILED, f"stopped: {run.failure}"
    else:
        status, error = judge(result, run.turn_end, limits.timeout)
    if resume and status == TurnStatus.FAILED and session_is_gone(result, run):
        if adapter.holds_session(agent, resume) is False:
            # Not here: another machine (the agent's own container) may well hold it. It is kept,
            # never replaced, and this wake runs once more in a fresh session here.
            error = (
                f"its session {resume} is not on this machine (another machine may hold it; it is "
                "kept, not replaced): woke again once in a fresh session here"
            )
            finished = while_database_away(run, lambda: finish_turn(turn, run, result, status, error))
            post_system_message(  # said here whatever the harness's own error line said
                motion,
                f"@{agent.name}: {error}",
                kind=Kind.WAKE,
                message_id=system_uuid("session-elsewhere", turn.pk),
                turn=finished,
                agent=agent,
            )
            retire_and_wake_again(finished, resume, retire=False)
            return finished
        error = (
            f"its session {resume} is gone from {agent.harness}; retired it and woke again in a new session"
        )
        finished = while_database_away(run, lambda: finish_turn(turn, run, result, status, error))
        retire_and_wake_again(finished, resume)
        return finished
    return while_database_away(run, lambda: finish_turn(turn, run, result, status, error))


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


def while_database_away(run: TurnRun, work: Callable[[], T]) -> T:
    """Run `work` (idempotent: conditional updates, messages with fixed ids), again after a
    back-off while the database is away. The harness is done by now and what it printed is held
    here, so this waits for the database as long as RUNNER_END_RETRY_SECONDS, renewing the lease
    first each time it answers; past that the error is raised, the lease lapses and the sweep
    ends the turn (recovering what it can from a transcript): it never stays `running`."""
    give_up = time.monotonic() + max(settings.RUNNER_END_RETRY_SECONDS, settings.RUNNER_DB_OUTAGE_SECONDS)
    while True:
        if not run.may_try():
            if time.monotonic() > give_up:
                raise OperationalError(f"turn {run.turn.pk}: the database did not come back")
            time.sleep(max(0.05, run.next_try - time.monotonic()))
            continue
        try:
            run.keep_lease()
            return work()
        except DatabaseError as exc:
            if not is_outage(exc) or time.monotonic() > give_up:
                raise
            run.database_away(exc)


def wake_line_id(turn_id: int) -> str:
    """The id of the line that says why a turn woke (wakes/ posts it), so it is posted once."""
    return system_uuid("wake", turn_id)


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
    already_said = (
        choice.note[:300] == turn.session_note
        and Message.objects.filter(pk=wake_line_id(turn.pk), text__contains=turn.session_note).exists()
    )
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


def _said_by_turn_end(result: ProcessResult, end: Event | None) -> bool:
    """The harness ended with an error result (API failure, budget cap): its turn_end Message
    already says so in the thread, and a second message would say it twice."""
    if end is None or not end.is_error:
        return False
    return result.outcome == Outcome.LINGERED or (
        result.outcome == Outcome.EXITED and (result.returncode or 0) >= 0
    )


def finish_turn(turn: Turn, run: TurnRun, result: ProcessResult, status: str, error: str) -> Turn:
    end = run.turn_end
    fields = {
        "status": status,
        "ended_at": timezone.now(),
        "exit_code": result.returncode,
        "stderr_tail": redact(result.stderr_tail),
        "error": redact(error),
        "activity": "",
    }
    if end is not None:
        fields["usage"] = end.usage
        fields["result_subtype"] = end.subtype
        fields["cost_usd"] = end.cost_usd if end.cost_usd is not None else Decimal(0)
        fields["cost_source"] = (end.cost_source or "the result line")[:120]
    else:
        cost, source = cost_without_result(turn)
        fields["cost_usd"], fields["cost_source"] = cost, source[:120]
    error = redact(error)
    # The row and its line in the thread together or not at all, so a retry after the database
    # came back (while_database_away) finds either both or neither.
    with transaction.atomic():
        ended_here = Turn.objects.filter(pk=turn.pk, status=TurnStatus.RUNNING).update(**fields)
        if ended_here and error and not _said_by_turn_end(result, end):
            post_system_message(
                turn.motion,
                f"@{turn.agent.name}'s turn {status.replace('_', ' ')}: {error}",
                message_id=system_uuid("turn-error", turn.pk),
                turn=turn,
                kind=Kind.ERROR,
            )
    turn.refresh_from_db()
    # (A retry after this commit finds the row as this call wrote it: still ours to announce.)
    if not ended_here and (turn.status, turn.error) != (status, error):
        # Ended meanwhile by the sweep (our lease lapsed while the database was away): it has
        # said so in the thread and settled the turn; a second end would say it twice. But what
        # we stored since may show more spent than it charged.
        return charge_what_was_stored(turn)
    _announce_end(turn)
    return turn


def cost_without_result(turn: Turn) -> tuple[Decimal, str]:
    """What a turn that printed no result line (stopped, timed out, its worker lost) cost: the
    growth of the harness's own running total where it keeps one (Claude Code writes its
    cost-state to the transcript even when stopped), or its streamed API messages priced from
    their usage, whichever is more: a call stopped mid-answer is billed by the API but missing
    from the harness's total, and the streamed figure counts its input."""
    adapter = get_adapter(turn.agent.harness)
    session = turn.session_id or Turn.objects.filter(pk=turn.pk).values_list("session_id", flat=True).first()
    grown: Decimal | None = None
    before = turn.harness_total_before
    if before is not None and session:
        now_total = adapter.session_running_total(turn.agent, session)
        if now_total is not None and now_total >= before:
            grown = now_total - before
    by_message: dict[str, Decimal] = {}
    for message in turn.messages.exclude(harness_message_id=""):
        cost = adapter.message_cost(message)
        if cost is not None:
            key = message.harness_message_id
            by_message[key] = max(by_message.get(key, Decimal(0)), cost)
    streamed = sum(by_message.values(), Decimal(0)) if by_message else None
    if grown is not None and (streamed is None or grown >= streamed):
        return grown, "the harness's transcript (its running total grew by this)"
    if streamed is not None:
        return streamed, "streamed usage × price (no result line)"
    return Decimal(0), "no result line and no streamed usage"


def dead_turn_cost(turn: Turn) -> dict:
    """What a turn whose runner died cost, as Turn fields: its result line's figure if it printed
    one before the runner died, else what its transcript or its streamed usage shows
    (cost_without_result)."""
    end = turn.messages.filter(kind=Kind.TURN_END).order_by("-created_at").first()
    if end is None or end.cost_usd is None:
        cost, source = cost_without_result(turn)
        return {"cost_usd": cost, "cost_source": source[:120]}
    fields = {"cost_usd": end.cost_usd, "cost_source": "its result line (the worker died after it)"}
    raw = end.raw if isinstance(end.raw, dict) else {}
    if isinstance(raw.get("usage"), dict):
        fields["usage"] = raw["usage"]
    if end.stop_reason:
        fields["result_subtype"] = end.stop_reason[:64]
    return fields


def charge_what_was_stored(turn: Turn) -> Turn:
    """A turn the sweep ended (and charged from what was stored then) whose runner stored more
    after: charged again from its lines if they show more (never less), and the ledger told
    through turn_repriced."""
    fields = dead_turn_cost(turn)
    charged = turn.cost_usd or Decimal(0)
    if fields["cost_usd"] <= charged:
        return turn
    if not Turn.objects.filter(pk=turn.pk, cost_usd=turn.cost_usd).update(**fields):
        return Turn.objects.get(pk=turn.pk)  # charged again meanwhile by someone else
    turn.refresh_from_db()
    log.warning(
        "turn %s: charged $%s, not $%s, for what its runner stored after it ended",
        turn.pk,
        turn.cost_usd,
        charged,
    )
    for _receiver, error in turn_repriced.send_robust(sender=Turn, turn=turn, was=charged):
        if isinstance(error, Exception):
            log.error("a turn_repriced receiver failed for turn %s: %r", turn.pk, error)
    return turn


def cost_note(turn: Turn) -> str:
    return f"it cost ${turn.cost_usd:.4f}, from {turn.cost_source}" if turn.cost_usd is not None else ""


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
