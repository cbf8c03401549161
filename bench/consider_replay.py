"""A 7-day replay of a synthetic but realistic Motion trace through the real consider loop.

The trace (seeded): three Motions, one listening agent (@magent), people who talk in bursts on
weekday working hours, less in the evening, almost never at night, a little at weekends; they
type before they post (typing pings every 3 s), sometimes pause mid-thought; some posts
@mention the agent from the web, a few from a terminal session; some bursts are for the agent,
most are people talking among themselves.

The loop, the budgets and the ledger are the real code (wakes/consider_loop/ and
wakes/money/budget.py) on a dedicated PostgreSQL database, driven by the injectable clock on the 3-second tick grid (ticks
where nothing can be due are skipped: the look would return nothing). The screen and the turns
are simulated with the same cost model for every policy:
  - a turn reads its session cold ($1.25) if the agent's last turn there ended over an hour ago,
    warm ($0.10-0.20) otherwise; it speaks when the burst was for it, else stays silent;
  - a screen costs what Haiku 4.5 charges for ~3,500 tokens in and ~15 out (~$0.004); it
    dismisses 80 % of the bursts that are not for the agent and never one that is.

Beside it, in the same run, two naive policies over the same trace: a consideration after every
post, and a fixed 50-minute timer (no screen, no budgets, so their dollars are what they would
ask for). Mentions wake the agent in every policy and are reported apart.

    .venv/bin/python bench/consider_replay.py [--days 7] [--seed 7]
"""

from __future__ import annotations

import argparse
import heapq
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from _setup import setup

URL = setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db.models import Min, Sum  # noqa: E402
from django.utils import timezone  # noqa: E402

from motion_runner.models import Agent, Message, Motion, Turn, TurnStatus  # noqa: E402
from motion_runner.signals import turn_finished  # noqa: E402
from wakes.consider_loop.considering import run_consideration  # noqa: E402
from wakes.consider_loop.handlers import check_mentions, handle_message  # noqa: E402
from wakes.consider_loop.loop import tick  # noqa: E402
from wakes.models import Consideration, Dials, ListenState, Spend, TypingPing, clock  # noqa: E402
from wakes.turn.screen import ScreenResult, price  # noqa: E402

TICK = 3.0
COLD, WARM = Decimal("1.25"), (Decimal("0.10"), Decimal("0.20"))
START = datetime(2026, 11, 2, 0, 0, tzinfo=timezone.get_current_timezone())  # a Monday
PEOPLE = ["justin", "rosemary", "jake", "skyler"]


# --- the trace --------------------------------------------------------------------------------


@dataclass(order=True)
class Event:
    at: datetime
    seq: int
    kind: str = field(compare=False)  # "post" | "ping"
    motion: str = field(compare=False)
    who: str = field(compare=False)
    text: str = field(compare=False, default="")
    source: str = field(compare=False, default="web")
    for_agent: bool = field(compare=False, default=False)


def bursts_per_hour(moment: datetime) -> float:
    weekend = moment.weekday() >= 5
    hour = moment.hour
    if 0 <= hour < 7:
        return 0.01
    if weekend:
        return 0.25 if 10 <= hour < 20 else 0.03
    if 9 <= hour < 18:
        return 1.1
    if 18 <= hour < 23:
        return 0.35
    return 0.05


def make_trace(rng: random.Random, days: int, motions: list[str]) -> list[Event]:
    events: list[Event] = []
    seq = 0
    for motion in motions:
        liveliness = rng.uniform(0.6, 1.4)
        moment = START
        end = START + timedelta(days=days)
        while moment < end:
            minute_rate = bursts_per_hour(moment) * liveliness / 60
            if rng.random() >= minute_rate:
                moment += timedelta(minutes=1)
                continue
            # a burst
            people = rng.sample(PEOPLE, rng.choice([1, 1, 2, 2, 3]))
            for_agent = rng.random() < 0.35
            mention = rng.random() < 0.12
            terminal = rng.random() < 0.05
            at = moment + timedelta(seconds=rng.uniform(0, 59))
            for n in range(rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 8])):
                who = rng.choice(people)
                composing = rng.uniform(4, 40)
                if rng.random() < 0.1:
                    composing += rng.uniform(15, 60)  # a pause mid-thought, still typing
                if rng.random() < 0.7:  # the web composer pings while typing
                    t = at
                    while t < at + timedelta(seconds=composing):
                        seq += 1
                        events.append(Event(t, seq, "ping", motion, who))
                        t += timedelta(seconds=3)
                at += timedelta(seconds=composing)
                text = f"post {seq}"
                if n == 0 and mention:
                    text = f"@magent {text}"
                seq += 1
                events.append(
                    Event(
                        at,
                        seq,
                        "post",
                        motion,
                        who,
                        text,
                        "terminal" if (mention and terminal) else "web",
                        for_agent,
                    )
                )
            moment = at + timedelta(minutes=1)
    return sorted(events)


# --- cost model -------------------------------------------------------------------------------


class Costs:
    """Cold or warm read, per (policy, Motion): the same model for every policy."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.last_end: dict[tuple[str, str], datetime] = {}

    def turn(self, policy: str, motion: str, at: datetime, duration: float = 60) -> Decimal:
        last = self.last_end.get((policy, motion))
        cold = last is None or at - last > timedelta(hours=1)
        self.last_end[(policy, motion)] = at + timedelta(seconds=duration)
        if cold:
            return COLD
        return (WARM[0] + (WARM[1] - WARM[0]) * Decimal(str(round(self.rng.random(), 3)))).quantize(
            Decimal("0.0001")
        )


# --- the real loop, driven --------------------------------------------------------------------


@dataclass
class Running:
    ends: datetime
    turn_id: int
    speaks: bool
    cost: Decimal


class Replay:
    def __init__(
        self,
        trace: list[Event],
        rng: random.Random,
        costs: Costs,
        *,
        policy: str = "loop",
        daily_cap: Decimal | None = None,
    ):
        self.policy = policy
        self.daily_cap = daily_cap
        self.trace = trace
        self.rng = rng
        self.costs = costs
        self.running: list[tuple[datetime, int, Running]] = []
        self.for_agent: dict[int, bool] = {}  # message id → was it for the agent
        self.hourly: Counter = Counter()
        self.screens = 0
        self.dismissed = 0

    def reset(self) -> None:
        call_command("flush", interactive=False, verbosity=0)
        dials = Dials.load()
        if self.daily_cap is not None:
            dials.daily_budget_usd = self.daily_cap
            dials.save()
        self.agent = Agent.objects.create(name="magent")
        self.users = {name: get_user_model().objects.create(username=name) for name in PEOPLE}
        for slug in sorted({e.motion for e in self.trace}):
            motion = Motion.objects.create(slug=slug, title=slug, created_at=START)
            motion.agents.add(self.agent)

    def screen(self, motion, agent, posts, dials) -> ScreenResult:
        self.screens += 1
        wanted = any(self.for_agent.get(p.pk, True) for p in posts)
        usage = {"input_tokens": 3400 + 40 * len(posts), "output_tokens": 15}
        dismiss = not wanted and self.rng.random() < 0.8
        self.dismissed += dismiss
        return ScreenResult(
            "DISMISS" if dismiss else "PASS",
            "sim",
            cost=price(usage, dials),
            input_tokens=usage["input_tokens"],
            output_tokens=15,
            answered=True,
        )

    def post(
        self,
        motion_id: str,
        text: str,
        *,
        who: str | None = None,
        turn: Turn | None = None,
        source: str = "web",
        for_agent: bool = False,
    ) -> Message:
        now = clock.now()
        if turn is not None:
            message = Message.objects.create(
                motion_id=motion_id,
                sender="magent",
                agent=self.agent,
                source="runner",
                turn=turn,
                text=text,
                created_at=now,
            )
        else:
            message = Message.objects.create(
                motion_id=motion_id,
                sender=who,
                author=self.users[who],
                source=source,
                text=text,
                created_at=now,
            )
            self.for_agent[message.pk] = for_agent
        handle_message(message, dispatch=False)
        return message

    def start_queued(self) -> None:
        for turn in Turn.objects.filter(status=TurnStatus.QUEUED).order_by("queued_at"):
            if any(r.turn_id == turn.pk for _, _, r in self.running):
                continue
            now = clock.now()
            duration = self.rng.uniform(20, 120)
            if turn.reason == "mention":
                speaks = True
            elif turn.reason == "quiet":
                speaks = self.rng.random() < 0.1
            else:
                woken_by = turn.woken_by_id
                speaks = self.for_agent.get(woken_by, False) if woken_by else False
            cost = self.costs.turn(self.policy, turn.motion_id, now, duration)
            if turn.max_budget_usd is not None:
                cost = min(cost, turn.max_budget_usd)
            Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.RUNNING, started_at=now)
            if turn.reason != "mention":
                self.hourly[(turn.motion_id, now.replace(minute=0, second=0))] += 1
            heapq.heappush(
                self.running,
                (now + timedelta(seconds=duration), turn.pk, Running(now, turn.pk, speaks, cost)),
            )

    def finish_due(self) -> None:
        now = clock.now()
        while self.running and self.running[0][0] <= now:
            _, _, run = heapq.heappop(self.running)
            turn = Turn.objects.get(pk=run.turn_id)
            if run.speaks:
                self.post(turn.motion_id, "a reply", turn=turn)
            Turn.objects.filter(pk=turn.pk).update(
                status=TurnStatus.FINISHED, cost_usd=run.cost, ended_at=now
            )
            turn.refresh_from_db()
            turn_finished.send_robust(sender=Turn, turn=turn)

    def next_due(self) -> datetime | None:
        return ListenState.objects.aggregate(due=Min("due_at"))["due"]

    def run(self, days: int) -> None:
        self.reset()
        end = START + timedelta(days=days)
        events = list(self.trace)
        i = 0
        now = START
        last_mention_check = START
        while now < end:
            clock.set_now(now)
            while i < len(events) and events[i].at <= now:
                e = events[i]
                i += 1
                if e.kind == "ping":
                    TypingPing.objects.update_or_create(motion_id=e.motion, who=e.who, defaults={"at": e.at})
                else:
                    self.post(e.motion, e.text, who=e.who, source=e.source, for_agent=e.for_agent)
            self.finish_due()
            for c in tick(dispatch=False):
                run_consideration(c.pk, dispatch=False, screen=self.screen)
            if now - last_mention_check >= timedelta(seconds=30):
                check_mentions(dispatch=False)
                last_mention_check = now
            self.start_queued()
            # Jump to the next moment anything can happen, on the tick grid.
            candidates = [end]
            if i < len(events):
                candidates.append(events[i].at)
            if self.running:
                candidates.append(self.running[0][0])
            if (due := self.next_due()) is not None:
                candidates.append(due)
            candidates.append(
                last_mention_check + timedelta(seconds=30)
            ) if self._mentions_waiting() else None
            target = max(min(candidates), now + timedelta(seconds=TICK))
            steps = -(-(target - START).total_seconds() // TICK)
            now = START + timedelta(seconds=steps * TICK)
        clock.set_now(None)

    def _mentions_waiting(self) -> bool:
        from wakes.models import MentionWake

        return MentionWake.objects.filter(status="waiting").exists()


# --- naive policies ----------------------------------------------------------------------------


def naive_every_post(trace: list[Event], costs: Costs) -> tuple[int, Decimal, int]:
    count, dollars, hourly = 0, Decimal(0), Counter()
    for e in trace:
        if e.kind != "post" or e.text.startswith("@magent"):
            continue
        count += 1
        dollars += costs.turn("every-post", e.motion, e.at)
        hourly[(e.motion, e.at.replace(minute=0, second=0, microsecond=0))] += 1
    return count, dollars, max(hourly.values(), default=0)


def naive_timer(trace: list[Event], costs: Costs, days: int, minutes: int = 50) -> tuple[int, Decimal, int]:
    count, dollars, hourly = 0, Decimal(0), Counter()
    for motion in sorted({e.motion for e in trace}):
        at = START + timedelta(minutes=minutes)
        while at < START + timedelta(days=days):
            count += 1
            dollars += costs.turn("timer", motion, at)
            hourly[(motion, at.replace(minute=0, second=0, microsecond=0))] += 1
            at += timedelta(minutes=minutes)
    return count, dollars, max(hourly.values(), default=0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--motions", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    motions = [f"motion-{n}" for n in range(args.motions)]
    trace = make_trace(rng, args.days, motions)
    posts = [e for e in trace if e.kind == "post"]
    mentions = [e for e in posts if e.text.startswith("@magent")]
    print(f"database: {URL}")
    print(
        f"trace: {args.days} days from {START:%a %Y-%m-%d}, {len(motions)} Motions, {len(posts)} posts "
        f"({sum(e.for_agent for e in posts)} in bursts for the agent), {len(mentions)} @mentions "
        f"({sum(e.source == 'terminal' for e in mentions)} from a terminal), "
        f"{sum(e.kind == 'ping' for e in trace)} typing pings; seed {args.seed}"
    )
    costs = Costs(random.Random(args.seed + 1))
    rows = []
    for policy, cap in (
        ("consider loop (this code)", None),
        ("consider loop, no daily cap", Decimal("100000")),
    ):
        replay = Replay(trace, random.Random(args.seed + 2), costs, policy=policy, daily_cap=cap)
        replay.run(args.days)
        rows.append(summarize(policy, replay))
    every_n, every_usd, every_peak = naive_every_post(trace, costs)
    timer_n, timer_usd, timer_peak = naive_timer(trace, costs, args.days)

    print()
    print(f"{'policy':<30} {'considerations':>14} {'screens':>8} {'dollars':>9} {'peak/h':>7} {'max day':>8}")
    for row in rows:
        print(
            f"{row['policy']:<30} {row['full']:>14} {row['screens']:>8} {row['dollars']:>9.2f} "
            f"{row['peak']:>7} {row['max_day']:>8.2f}"
        )
    print(f"{'naive: after every post':<30} {every_n:>14} {0:>8} {every_usd:>9.2f} {every_peak:>7} {'':>8}")
    print(f"{'naive: every 50 minutes':<30} {timer_n:>14} {0:>8} {timer_usd:>9.2f} {timer_peak:>7} {'':>8}")
    print("(dollars: screens + considerations, mentions apart; the naive policies have no screen and no cap)")
    for row in rows:
        print()
        print(
            f"{row['policy']}: {row['by_kind'].get('new_posts', 0)} on new posts, "
            f"{row['by_kind'].get('quiet', 0)} on a long quiet ({row['night_quiet']} of them between 22:00 and "
            f"07:00); {row['dismissed']} screened out; outcomes {row['statuses']}"
        )
        print(f"  screens ${row['screen_dollars']:.2f}; per-day spend {row['days']}")
        print(f"  mentions (not budgeted): {row['mentions']} wakes, ${row['mention_dollars']:.2f}")
        print(
            f"  ledger: {row['turns']} turns, {row['turn_rows']} turn rows; ${row['ledger_turns']:.2f} in "
            f"the rows = ${row['turns_total']:.2f} in the turns"
        )
    base = rows[1]
    for name, n, usd in (("after every post", every_n, every_usd), ("every 50 minutes", timer_n, timer_usd)):
        print(
            f"ratio naive {name} / loop without cap: considerations {n / max(base['full'], 1):.1f}×, "
            f"dollars {usd / max(base['dollars'], Decimal('0.01')):.1f}×"
        )


def summarize(policy: str, replay: Replay) -> dict:
    turns = Turn.objects.exclude(reason="mention")
    counted = Spend.objects.filter(counted=True)
    per_day = counted.values("day").annotate(total=Sum("amount")).order_by("day")
    night_quiet = sum(
        1
        for at in Consideration.objects.filter(kind="quiet", turn__isnull=False).values_list(
            "created_at", flat=True
        )
        if at.hour >= 22 or at.hour < 7
    )
    return {
        "policy": policy,
        "full": turns.count(),
        "by_kind": Counter(turns.values_list("reason", flat=True)),
        "night_quiet": night_quiet,
        "statuses": dict(Counter(Consideration.objects.values_list("status", flat=True))),
        "screens": replay.screens,
        "dismissed": replay.dismissed,
        "dollars": counted.aggregate(total=Sum("amount"))["total"] or Decimal(0),
        "screen_dollars": Spend.objects.filter(kind="screen").aggregate(total=Sum("amount"))["total"]
        or Decimal(0),
        "mentions": Turn.objects.filter(reason="mention").count(),
        "mention_dollars": Spend.objects.filter(kind="mention").aggregate(total=Sum("amount"))["total"]
        or Decimal(0),
        "days": ", ".join(f"{row['total']:.2f}" for row in per_day),
        "max_day": max((row["total"] for row in per_day), default=Decimal(0)),
        "peak": max(replay.hourly.values(), default=0),
        # Every turn has one ledger row and the rows add up to the turns' own costs.
        "turns": Turn.objects.count(),
        "turn_rows": Spend.objects.exclude(turn=None).count(),
        "ledger_turns": Spend.objects.exclude(turn=None).aggregate(total=Sum("amount"))["total"]
        or Decimal(0),
        "turns_total": Turn.objects.aggregate(total=Sum("cost_usd"))["total"] or Decimal(0),
    }


if __name__ == "__main__":
    main()
