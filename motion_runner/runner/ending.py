"""How a turn ends: its status judged from the process, its row and its line in the thread written
together, what it cost when it printed no result line, and turn_finished sent."""

from __future__ import annotations

import logging
import signal
from collections.abc import Mapping
from decimal import Decimal

from django.db import DatabaseError, transaction
from django.utils import timezone

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..harnesses import Event, get_adapter
from ..ingest.redaction import redact
from ..ingest.system_lines import STOPPED, post_system_message
from ..lib.ids import system_uuid
from ..models import EndedBy, Kind, Turn, TurnStatus
from ..signals import turn_finished, turn_repriced
from ..thread.bell import ring_on_commit
from .db_retry import is_outage, retry_outages
from .process import Outcome, ProcessResult
from .turn_run import TurnRun

log = logging.getLogger(__name__)


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


def judge_run(run: TurnRun, result: ProcessResult, timeout: float | None) -> tuple[str, str, str]:
    """The turn's status, its sentence for the thread and what ended it, from its run and process.

    A turn whose harness printed its result line before the outage bound (or a lost lease)
    stopped it has ended by its own word: it is judged by that line, as a harness that lingered
    after it is, never failed for the stop."""
    if run.stopped:
        return TurnStatus.KILLED, run.failure or "", EndedBy.HARNESS
    if run.failure and run.keep_printed and run.turn_end is not None:
        log.warning("turn %s: stopped after its result line (%s)", run.turn.pk, run.failure)
        if run.turn_end.is_error:
            detail = run.turn_end.text or run.turn_end.subtype
            error = f"the turn ended with an error ({run.turn_end.subtype}): {detail}"
            return TurnStatus.FAILED, error, EndedBy.HARNESS
        return TurnStatus.FINISHED, "", EndedBy.HARNESS
    if run.failure:
        return TurnStatus.FAILED, f"stopped: {run.failure}", EndedBy.HARNESS
    status, error = judge(result, run.turn_end, timeout)
    if result.outcome == Outcome.STOPPED and run.stopped_by is not None:
        return status, error, run.stopped_by.stop_cause
    return status, error, EndedBy.HARNESS


def fail_before_launch(turn: Turn, message: str) -> None:
    message = redact(message)
    now = timezone.now()
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.FAILED, ended_at=now, error=message, activity="")
    ring_on_commit(turn.motion_id)  # its ■ goes at once
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
            stop_reason=STOPPED,
            cost_usd=Decimal(0),
            message_id=system_uuid("turn-error", turn.pk),
            turn=turn,
            kind=Kind.ERROR,
        )
    turn.refresh_from_db()
    _announce_end(turn)
    return True


def _said_by_turn_end(result: ProcessResult, end: Event | None) -> bool:
    """The harness ended with an error result (API failure, budget cap): its turn_end Message
    already says so in the thread, and a second message would say it twice."""
    if end is None or not end.is_error:
        return False
    return result.outcome == Outcome.LINGERED or (
        result.outcome == Outcome.EXITED and (result.returncode or 0) >= 0
    )


def finish_turn(
    turn: Turn, run: TurnRun, result: ProcessResult, status: str, error: str, ended_by: str = EndedBy.HARNESS
) -> Turn:
    end = run.turn_end
    fields = {
        "status": status,
        "ended_by": ended_by,
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
        cut = run.parser.cut_message() if run.parser is not None else None
        cost, source = cost_without_result(turn, streamed=run.streamed, cut=cut)
        fields["cost_usd"], fields["cost_source"] = cost, source[:120]
        if cut is not None and "estimated" in source:
            fields["usage"] = {"cut_message": cut.message_id, **cut.usage}
    error = redact(error)
    # The row and its line in the thread together or not at all, so a retry after the database
    # came back (while_database_away) finds either both or neither.
    with transaction.atomic():
        ended_here = Turn.objects.filter(pk=turn.pk, status=TurnStatus.RUNNING).update(**fields)
        if ended_here:
            ring_on_commit(turn.motion_id)  # its ■ goes at once, even when it said nothing
        if ended_here and error and not _said_by_turn_end(result, end):
            # A person's stop (or a scram's) is a stop, not a crash: its line says what it cost.
            stopped = run.stopped and status == TurnStatus.KILLED
            post_system_message(
                turn.motion,
                f"@{turn.agent.name}'s turn {status.replace('_', ' ')}: {error}",
                message_id=system_uuid("turn-error", turn.pk),
                turn=turn,
                kind=Kind.ERROR,
                stop_reason=STOPPED if stopped else "",
                cost_usd=fields["cost_usd"] if stopped else None,
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


ESTIMATED = "streamed usage × price (no result line), {} output tokens of a message cut off before its final count estimated"


def cost_without_result(
    turn: Turn, streamed: Mapping[str, Decimal] | None = None, cut: Event | None = None
) -> tuple[Decimal, str]:
    """What a turn that printed no result line (stopped, timed out, its worker lost) cost: the
    growth of the harness's own running total where it keeps one (Claude Code writes its
    cost-state to the transcript even when stopped), or its streamed API messages priced from
    their usage, whichever is more: a call stopped mid-answer is billed by the API but missing
    from the harness's total, and the streamed figure counts its input.

    `streamed`: what its runner priced each API message at as it streamed (TurnRun.streamed),
    output counted where the stream gave it; the stored rows hold only the message_start
    snapshot (no output), so without it (a lost worker) the streamed figure is a lower bound.
    Each message counts once, at the most either says.

    `cut`: the API message the process ended in the middle of (its parser's cut_message), never
    one whose final usage came: charged its message_start usage and its output estimated from
    what it streamed, in place of the lower bound its assistant lines gave (docs/money.md)."""
    adapter = get_adapter(turn.agent.harness)
    grown = transcript_growth(turn, adapter)
    by_message: dict[str, Decimal] = {}
    rows: dict[str, list] = {}
    for message in turn.messages.exclude(harness_message_id="").order_by("created_at", "id"):
        rows.setdefault(message.harness_message_id, []).append(message)
        cost = adapter.message_cost(message)
        if cost is not None:
            key = message.harness_message_id
            by_message[key] = max(by_message.get(key, Decimal(0)), cost)
    for key, cost in (streamed or {}).items():
        by_message[key] = max(by_message.get(key, Decimal(0)), cost)
    # Cut off: the message the runner's parser was in when its process ended; with no runner to
    # ask (a dead worker: `streamed` is None), each message whose rows never got a final count.
    cuts = [cut] if cut is not None else []
    if streamed is None:
        cuts = [found for lines in rows.values() if (found := adapter.cut_from_rows(lines)) is not None]
    estimated = charge_cut_messages(adapter, cuts, by_message)
    priced = sum(by_message.values(), Decimal(0)) if by_message else None
    if grown is not None and (priced is None or grown >= priced):
        return grown, "the harness's transcript (its running total grew by this)"
    if priced is not None and estimated:
        return priced, ESTIMATED.format(estimated)
    if priced is not None:
        return priced, "streamed usage × price (no result line)"
    return Decimal(0), "no result line and no streamed usage"


def transcript_growth(turn: Turn, adapter) -> Decimal | None:
    """How much the harness's own running total for the turn's session grew during the turn
    (Claude Code's cost-state), when it keeps one and the turn knew where it started."""
    session = turn.session_id or Turn.objects.filter(pk=turn.pk).values_list("session_id", flat=True).first()
    before = turn.harness_total_before
    if before is None or not session:
        return None
    now_total = adapter.session_running_total(turn.agent, session)
    if now_total is not None and now_total >= before:
        return now_total - before
    return None


def charge_cut_messages(adapter, cuts: list[Event], by_message: dict[str, Decimal]) -> int:
    """Each cut message charged its estimate where that is more than its rows or stream gave
    (in `by_message`, each message once); the output tokens so estimated."""
    estimated = 0
    for found in cuts:
        cost = adapter.streamed_cost(found)
        if cost is not None and cost > by_message.get(found.message_id, Decimal(0)):
            by_message[found.message_id] = cost
            estimated += int(found.usage.get("output_tokens_estimated") or 0)
    return estimated


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
