"""After the loop guard stops a turn, its session is compacted once, so the next wake does not
resume straight into the loop it was stopped in."""

from __future__ import annotations

from motion_runner.harnesses import get_adapter
from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.models import EndedBy, Kind, Turn, TurnStatus
from motion_runner.runner.turns import enqueue_turn


def compact_after_loop(sender, turn: Turn, **kwargs) -> Turn | None:
    if turn.status != TurnStatus.KILLED or turn.ended_by != EndedBy.LOOP_GUARD or not turn.session_id:
        return None
    prompt = get_adapter(turn.agent.harness).compact_prompt
    if not prompt:
        post_system_message(
            turn.motion,
            f"@{turn.agent.name}'s {turn.agent.harness} session cannot be compacted headless; "
            "the next wake is told why it was stopped.",
            kind=Kind.TEXT,
            message_id=system_uuid("no-compaction", turn.pk),
            turn=turn,
        )
        return None
    return enqueue_turn(
        turn.motion,
        turn.agent,
        prompt,
        reason="compact",
        reason_detail=f"compacting after turn {turn.pk}: {turn.error}",
        mode="look",
        mode_rule="the runner's own compaction",
        effort="low",
    )
