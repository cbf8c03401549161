"""What the loop would wake now, and why, without waking anything (`manage.py would_wake`).

The loop's own decision (`loop.decide`, which `loop.evaluate` acts on), with no write: no claim,
no reschedule, no reservation. What the budget and the screen would then say is not asked (the screen costs
money); the line says that they decide next.

For one post (`--post`), the mention path's own verdict for each agent it names
(`mention_path.mention_facts` and `mention_verdict.decide_mention`, which
`mention_path.act` acts on), with no write either. For a watch line whose policy is `always`,
the watch path's verdict for each agent of the Motion (`watch_path.gather_watch_facts`, the day
not locked, and `watch_verdict.decide_watch`, which `watch_path.act_watch` acts on).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from motion_runner.models import Message, Source

from ..decision.steering import mentions_held, scram_holds, steering_for
from ..models import Dials, ListenState, MentionWake, clock
from ..turn.wake import human_duration
from .loop import Decision, decide, due_mention_wakes
from .mention_path import mention_facts, mentioned_agents
from .mention_verdict import Command, Hold, Ignore, Refuse, Wake, decide_mention
from .mention_verdict import Verdict as MentionVerdict
from .watch_path import gather_watch_facts
from .watch_verdict import decide_watch


@dataclass
class Verdict:
    motion: str
    agent: str
    wakes: bool
    why: str

    def __str__(self) -> str:
        return f"{'WAKE' if self.wakes else 'no  '}  {self.motion} @{self.agent}: {self.why}"


def why_not_listening(state: ListenState) -> str:
    if not state.agent.listening:
        return "not listening anywhere (the admin's switch)"
    steering = steering_for(state.motion_id, state.agent_id)
    if steering.archived:
        return "the Motion is archived (mentions are still answered)"
    if steering.listening != "on":
        return f"the room set its listening here to {steering.listening}"
    return "not an agent of this Motion any more (or memory-lane's poller wakes it)"


def explain(state: ListenState, now: datetime, dials: Dials) -> Verdict:
    """The loop's own decision (`loop.decide`), said in a sentence."""
    decision = decide(state, now, dials)
    action = decision.action

    def verdict(wakes: bool, why: str) -> Verdict:
        return Verdict(state.motion_id, state.agent.name, wakes, why)

    if action == Decision.NOT_LISTENING:
        return verdict(False, why_not_listening(state))
    if action == Decision.BUSY:
        return verdict(False, "a turn of it is queued or running here")
    if action == Decision.WAIT_POSTS and decision.typing_until:
        return verdict(
            False, f"new posts, but someone is typing (until {decision.typing_until:%H:%M:%S} UTC)"
        )
    if action == Decision.WAIT_POSTS:
        return verdict(False, f"new posts; the quiet ends in {human_duration(decision.due_at - now)}")
    if action == Decision.NEW_POSTS:
        return verdict(True, "a consideration of the new posts (the budget and the screen decide next)")
    if action == Decision.RESTED:
        return verdict(False, "resting: no person for a long while; a person's post wakes it")
    if action == Decision.REST_NOW:
        return verdict(False, "would go to rest now (no person posted for a long while)")
    if action == Decision.LATER:
        return verdict(False, f"nothing new; a long-quiet look in {human_duration(decision.due_at - now)}")
    return verdict(
        True,
        f"a long-quiet consideration: nothing said for {human_duration(decision.quiet_for)} (the budget decides)",
    )


def would_wake(*, every_pair: bool = False, now: datetime | None = None) -> list[Verdict]:
    now = now or clock.now()
    if scram_holds():
        return [Verdict("*", "*", False, "a scram holds: nothing wakes until it is lifted")]
    dials = Dials.load()
    states = ListenState.objects.select_related("agent").order_by("due_at", "motion_id", "agent__name")
    if not every_pair:
        states = states.filter(due_at__lte=now)[: dials.look_batch]
    verdicts = [explain(state, now, dials) for state in states]
    for record in due_mention_wakes(now).select_related("message", "agent"):
        verdicts.append(
            Verdict(
                record.message.motion_id,
                record.agent.name,
                True,
                f"a terminal mention by {record.message.sender}, unless answered meanwhile",
            )
        )
    held = MentionWake.objects.filter(status=MentionWake.Status.HELD).select_related("message", "agent")
    for record in held:
        releasable = mentions_held(record.message.motion_id, record.agent_id) is None
        verdicts.append(
            Verdict(
                record.message.motion_id,
                record.agent.name,
                releasable,
                f"a mention by {record.message.sender} held while its listening was off"
                + (" (listening again: answered now)" if releasable else " (still off)"),
            )
        )
    return verdicts


def said(verdict: MentionVerdict) -> tuple[bool, str]:
    """(wakes, why) for a mention's verdict."""
    match verdict:
        case Wake(after=None, reason=reason):
            return True, f"{reason} (the hourly cap and a running turn decide when it starts)"
        case Wake(after=due, reason=reason):
            return True, f"{reason}: due at {due:%H:%M:%S} UTC"
        case Command(name=name, rule=rule):
            return True, f"/{name} would be run ({rule})"
        case Hold(kind=kind, reason=reason):
            return False, f"held ({kind}): {reason}"
        case Refuse(kind=kind, reason=reason, command=name):
            return False, f"/{name} refused ({kind}): {reason}"
        case Ignore(reason=reason):
            return False, reason
    raise ValueError(f"no words for the verdict {verdict!r}")


def watch_said(verdict: MentionVerdict) -> tuple[bool, str]:
    """(wakes, why) for a watch line's verdict."""
    match verdict:
        case Wake(reason=reason):
            return True, f"{reason} (a look-only turn now, counted in the day's ledger)"
        case Refuse(kind=kind, reason=reason):
            return False, f"refused ({kind}): {reason}; mentions still wake it"
        case Ignore(reason=reason):
            return False, reason
    raise ValueError(f"no words for the watch verdict {verdict!r}")


def would_watch_wake(post: Message) -> list[Verdict]:
    """What an `always` watch line would wake now, agent by agent (as watchlist's `wake_for` asks:
    every agent of the Motion). Nothing written: the day is not locked."""
    now = clock.now()
    verdicts = []
    for agent in post.motion.agents.all():
        wakes, why = watch_said(decide_watch(post, agent, gather_watch_facts(post, agent, now, lock=False)))
        verdicts.append(Verdict(post.motion_id, agent.name, wakes, why))
    return verdicts


def would_answer(message_id: str) -> list[Verdict]:
    """What the mention path would decide for the post's mentions now, agent by agent; for an
    `always` watch line, what the watch path would."""
    post = Message.objects.select_related("motion").get(pk=message_id)
    if post.source == Source.WATCH and (post.raw or {}).get("wake") == "always":
        return would_watch_wake(post)
    if "@" not in post.text:
        return []
    verdicts = []
    scram = scram_holds()
    for agent in mentioned_agents(post):
        wakes, why = said(decide_mention(post, agent, mention_facts(post, agent, scram=scram)))
        verdicts.append(Verdict(post.motion_id, agent.name, wakes, why))
    return verdicts
