from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from motion_runner.models import Agent, Message, Motion, Turn

from . import clock
from . import dials as wake_texts


class WakeRequest(models.Model):
    """An agent's ask that only a person can answer: full tools, a merge, a deploy."""

    class Kind(models.TextChoices):
        TOOLS = "tools"
        MERGE = "merge"
        DEPLOY = "deploy"

    class Status(models.TextChoices):
        OPEN = "open"
        GRANTED = "granted"
        DECLINED = "declined"
        DONE = "done"

    motion = models.ForeignKey("motion_runner.Motion", on_delete=models.CASCADE, related_name="requests")
    agent = models.ForeignKey("motion_runner.Agent", on_delete=models.CASCADE, related_name="requests")
    turn = models.ForeignKey("motion_runner.Turn", null=True, blank=True, on_delete=models.SET_NULL)
    message = models.OneToOneField(
        "motion_runner.Message",
        on_delete=models.CASCADE,
        related_name="wake_request",
        help_text="The request card in the thread.",
    )
    kind = models.CharField(max_length=8, choices=Kind.choices)
    to = models.TextField(help_text="What the agent says it needs it for.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    granted_turn = models.ForeignKey(
        "motion_runner.Turn", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["motion", "status"])]

    def __str__(self) -> str:
        return f"{self.kind} request by @{self.agent.name} ({self.status})"


class AbilityRun(models.Model):
    """The runner acting on a finished turn's one extra ability (wakes/abilities), at most once.

    One row per turn (the OneToOne is the idempotency key: turn_finished delivered twice finds
    it); a worker acts only after claiming it with a conditional UPDATE (`claim`), so two
    workers racing on the same turn cannot both post.
    """

    class Status(models.TextChoices):
        PENDING = "pending"  # waiting for its first try
        RUNNING = "running"  # claimed by a worker until claimed_until
        WAITING = "waiting"  # the other side asked us to come back at next_attempt_at
        DONE = "done"
        FAILED = "failed"  # gave up; the thread says why
        SKIPPED = "skipped"  # nothing to do (a silent turn, a turn that did not finish)

    turn = models.OneToOneField("motion_runner.Turn", on_delete=models.CASCADE, related_name="ability_run")
    kind = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    payload = models.TextField(blank=True, help_text="What the runner acts with (the reply it posts).")
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True, help_text="e.g. the new revision and its link.")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"{self.kind} for turn {self.turn_id} ({self.status})"


"""Who is woken, when, and what it may spend.

- `Dials`: the one row of global defaults (every number in the wake rules), edited in the admin.
- `DialOverride`: per Motion, per agent, or per pair; blank fields inherit.
- `ListenState`: one row per (Motion, listening agent): the consider loop's whole memory.
  `due_at` is the only column the loop looks at (indexed): it holds the earliest moment the
  pair may need attention, NULL when nothing can be owed (resting). The loop's look is
  `due_at <= now`, so its cost follows the Motions that are active, not all of them.
- `Consideration`: one per claimed consideration (audit; dots and backoff hang on it).
- `MentionWake`: one per (message, mentioned agent): idempotent mention wakes.
- `Spend`: the ledger. Each screen and each turn a row with its dollars; a reservation is a row
  whose amount is what it may still spend until its turn settles it.
- `BudgetDay`: one row per day, locked by every reservation so a check and its spend are atomic.
- `TypingPing`: who is typing where (expires after a dial's seconds).
"""


DEFAULT_SCREEN_PROMPT = (
    "You screen posts in a shared thread for an AI agent named @{agent}. Decide whether the new "
    "posts might need the agent's attention. Answer DISMISS only when they are plainly not for "
    "the agent (people chatting among themselves about something it has no part in, a thank-you, "
    "a greeting between others). In doubt, answer PASS. Reply with one line: PASS or DISMISS, "
    "a colon, and a few words of reason."
)


class Effort(models.TextChoices):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    XHIGH = "xhigh"
    MAX = "max"


class SessionAfterLookOnly(models.TextChoices):
    FRESH = "fresh", "start a fresh session"
    RESUME = "resume", "resume it"


class Dials(models.Model):
    """Global defaults for every wake rule. One row (pk=1); `Dials.load()` creates it."""

    # The loop
    tick_seconds = models.FloatField(
        default=3.0,
        help_text="Seconds per look of the consider loop, used here to count looks (beat's own schedule "
        "is WAKES_TICK_SECONDS). Default: 3.",
    )
    quiet_seconds = models.FloatField(
        default=10.0,
        help_text="Seconds with no post and nobody typing before the listening agents consider the new "
        "posts. Default: 10.",
    )
    typing_ttl_seconds = models.FloatField(
        default=6.0, help_text="Seconds a typing ping keeps the thread 'someone is typing'. Default: 6."
    )
    idle_looks = models.PositiveIntegerField(
        default=1000,
        help_text="Looks without a post before a long-quiet consideration (× tick_seconds ≈ 50 min); "
        "doubled after each silent one. Default: 1000.",
    )
    rest_after_hours = models.FloatField(
        default=12.0,
        help_text="Hours without a person's post after which the Motion rests: no more long quiets until "
        "a person posts. Default: 12.",
    )
    look_batch = models.PositiveIntegerField(
        default=200, help_text="Due (Motion, agent) pairs one look handles at most. Default: 200."
    )
    budget_retry_seconds = models.FloatField(
        default=60.0,
        help_text="Refused by the daily cap while reservations are in flight: look again after this many "
        "seconds (else at midnight). Default: 60.",
    )
    backfill_horizon_minutes = models.FloatField(
        default=60.0,
        help_text="Posts written longer ago than this when they arrive (late imports) wake nobody. "
        "Default: 60.",
    )
    prompt_max_posts = models.PositiveIntegerField(
        default=30, help_text="New posts quoted in a consideration's prompt (the newest). Default: 30."
    )
    # What a wake reads (wakes/context.py)
    reads = models.PositiveIntegerField(
        default=10_000,
        help_text="Tokens (about 4 characters each) of what was said since the agent last spoke that a "
        "wake quotes word for word, newest first; the older part is summarized by the screen's model "
        "(or, with no screen key, said as 'N earlier posts not shown' with a link). Default: 10000.",
    )
    read_post_chars = models.PositiveIntegerField(
        default=8_000, help_text="Characters of any one post a wake quotes word for word. Default: 8000."
    )
    prompt_max_chars = models.PositiveIntegerField(
        default=200_000,
        help_text="The most characters a wake prompt may have: past it, the oldest quoted posts are "
        "dropped first, and the prompt says so. Default: 200000.",
    )
    mention_wakes_per_hour = models.PositiveIntegerField(
        default=30,
        help_text="Mention turns per agent and Motion per hour; a mention past it is held until the next "
        "slot, and the thread says when. Default: 30.",
    )
    mention_gather_seconds = models.FloatField(
        default=3.0,
        help_text="A web mention's turn starts this many seconds after it is queued, so a person's quick "
        "run of mentions is answered in one turn (mentions that come before it starts join it). "
        "Default: 3.",
    )
    full_tools_silence_seconds = models.FloatField(
        null=True,
        blank=True,
        help_text="A full-tools turn that prints nothing for this many seconds is ended (a hung pipe, a "
        "tool that never returns); blank: the setting RUNNER_SILENCE_SECONDS (1500). Default: blank.",
    )
    full_tools_timeout_seconds = models.FloatField(
        null=True,
        blank=True,
        help_text="A wall clock for full-tools turns, in seconds; blank: the setting "
        "RUNNER_FULL_TOOLS_TIMEOUT_SECONDS, none unless set (real work takes as long as it takes; the "
        "silence limit, the spend and loop guards and a stop still end it). Default: blank.",
    )
    # Mentions
    terminal_mention_delay_seconds = models.FloatField(
        default=600.0,
        help_text="A terminal post's @mention wakes the agent only if nobody answered it within this many "
        "seconds. Default: 600.",
    )
    mention_effort = models.CharField(
        max_length=8,
        choices=Effort.choices,
        default=Effort.HIGH,
        help_text="The reasoning effort a mention wakes with. Default: high.",
    )
    mention_cap_usd = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="Dollars one mention's turn may spend; blank: no cap (mentions are not budgeted). "
        "Default: blank.",
    )
    # Budgets and effort
    considerations_per_hour = models.PositiveIntegerField(
        default=6, help_text="Full considerations per Motion (and agent) per hour. Default: 6."
    )
    daily_budget_usd = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        default=Decimal("10.00"),
        help_text="Dollars all considerations, screens and watch wakes may spend in a day (UTC), all "
        "Motions together; no wake starts that could cross it. Default: $10.",
    )
    consideration_cap_usd = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=Decimal("3.00"),
        help_text="Dollars one consideration's turn may spend (reserved before it starts). Default: $3.",
    )
    min_consideration_usd = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=Decimal("1.50"),
        help_text="Never start a consideration with less than this left of the day (a cold read is "
        "~$1.25). Default: $1.5.",
    )
    consider_effort = models.CharField(
        max_length=8,
        choices=Effort.choices,
        default=Effort.MEDIUM,
        help_text="The reasoning effort a consideration (and a watch wake) runs with. Default: medium.",
    )
    quiet_budget_share = models.DecimalField(
        max_digits=3,
        decimal_places=2,
        default=Decimal("0.50"),
        help_text="Long-quiet considerations may spend at most this share of the daily budget (1 = no "
        "limit), so quiet nights cannot spend the day's money before anyone is up. Default: 0.5.",
    )
    # The screen
    screen_enabled = models.BooleanField(
        default=True,
        help_text="Screen new posts with a small model before a consideration wakes the agent (without a "
        "screen API key every post passes). Default: on.",
    )
    screen_model = models.CharField(
        max_length=100,
        default="claude-haiku-4-5",
        help_text="The model the screen asks. Default: claude-haiku-4-5.",
    )
    screen_system_prompt = models.TextField(
        default=DEFAULT_SCREEN_PROMPT,
        help_text="What the screen is told; {agent} is the agent's name. Default: the PASS/DISMISS prompt "
        "in wakes/models.py.",
    )
    screen_max_tokens = models.PositiveIntegerField(
        default=60, help_text="The most tokens the screen may answer with. Default: 60."
    )
    screen_timeout_seconds = models.FloatField(
        default=15.0,
        help_text="Seconds to wait for the screen; on timeout the posts pass to the agent. Default: 15.",
    )
    screen_reserve_usd = models.DecimalField(
        max_digits=8,
        decimal_places=4,
        default=Decimal("0.0100"),
        help_text="Dollars reserved for a screen before it runs. Default: $0.01.",
    )
    screen_price_in = models.DecimalField(
        max_digits=8,
        decimal_places=4,
        default=Decimal("1.00"),
        help_text="The screen model's price, $ per million input tokens. Default: $1.",
    )
    screen_price_out = models.DecimalField(
        max_digits=8,
        decimal_places=4,
        default=Decimal("5.00"),
        help_text="The screen model's price, $ per million output tokens. Default: $5.",
    )
    screen_price_cache_write = models.DecimalField(
        max_digits=8,
        decimal_places=4,
        default=Decimal("1.25"),
        help_text="The screen model's price, $ per million cache-write tokens. Default: $1.25.",
    )
    screen_price_cache_read = models.DecimalField(
        max_digits=8,
        decimal_places=4,
        default=Decimal("0.10"),
        help_text="The screen model's price, $ per million cache-read tokens. Default: $0.1.",
    )
    # Wake modes (seed 001): what each mode is told, who may grant full tools, the loop guard
    look_only_footer = models.TextField(
        default=wake_texts.LOOK_ONLY_FOOTER,
        help_text="The last thing in every look-only wake prompt: what the turn may do and how to ask "
        "for more. Default: the text in wakes/dials.py.",
    )
    full_tools_footer = models.TextField(
        default=wake_texts.FULL_TOOLS_FOOTER,
        help_text="The last thing in every full-tools wake prompt: the standing orders. Default: the "
        "text in wakes/dials.py.",
    )
    safety_lines = models.TextField(
        default=wake_texts.SAFETY_LINES,
        help_text="Said in every wake's footer, whatever its mode. Default: the text in wakes/dials.py.",
    )
    after_loop_note = models.TextField(
        default=wake_texts.AFTER_LOOP_NOTE,
        help_text="Told to the next wake after the loop guard stopped a turn; {reason} is filled in. "
        "Default: the text in wakes/dials.py.",
    )
    full_tools_for = models.JSONField(
        default=list,
        blank=True,
        help_text='Names (people or agents) whose posts wake with full tools, as a list: ["justin"]. An '
        "agent's post counts only from a full-tools turn. Default: none ([]).",
    )
    full_tools_after_look_only = models.CharField(
        max_length=8,
        choices=SessionAfterLookOnly.choices,
        default=SessionAfterLookOnly.FRESH,
        help_text="When a full-tools wake finds that a look-only wake ran in the agent's latest session "
        "(it may have read untrusted watched content): start a fresh session, or resume it anyway. "
        "The wake line says which and why. Default: fresh.",
    )
    loop_same_call_in_a_row = models.PositiveIntegerField(
        default=3,
        help_text="The loop guard ends a turn that makes the same tool call (same input) this many times "
        "in a row. Default: 3.",
    )
    loop_same_call_window = models.PositiveIntegerField(
        default=10,
        help_text="How many of a turn's latest tool calls the guard looks at for repeats. Default: 10.",
    )
    loop_same_call_in_window = models.PositiveIntegerField(
        default=5,
        help_text="The loop guard ends a turn when one call appears this many times among its latest "
        "loop_same_call_window calls. Default: 5.",
    )
    loop_max_calls_per_turn = models.PositiveIntegerField(
        default=50, help_text="The loop guard ends a turn at this many tool calls. Default: 50."
    )
    scram_for = models.JSONField(
        default=list,
        blank=True,
        help_text="People besides staff who may raise and lift a scram (stop every agent), as a list: "
        '["justin"]. Default: none ([]).',
    )

    class Meta:
        verbose_name = verbose_name_plural = "dials"

    def __str__(self) -> str:
        return "Wake dials"

    def save(self, *args, **kwargs):
        self.pk = 1
        super().save(*args, **kwargs)

    @classmethod
    def load(cls) -> Dials:
        dials, _ = cls.objects.get_or_create(pk=1)
        return dials


OVERRIDABLE = (
    "quiet_seconds",
    "idle_looks",
    "considerations_per_hour",
    "consideration_cap_usd",
    "consider_effort",
    "mention_effort",
    "screen_enabled",
    "reads",
    "mention_wakes_per_hour",
)


class DialOverride(models.Model):
    """Overrides for one Motion, one agent, or one pair. Blank fields inherit.

    Replacing dials resolve global → Motion → agent → pair. `daily_budget_usd` is different:
    the global one caps the whole day's spend; one set here adds a narrower cap on this
    scope's own spend (a Motion's, an agent's, a pair's).
    """

    motion = models.ForeignKey(
        Motion, null=True, blank=True, on_delete=models.CASCADE, related_name="dial_overrides"
    )
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="dial_overrides"
    )
    quiet_seconds = models.FloatField(null=True, blank=True)
    idle_looks = models.PositiveIntegerField(null=True, blank=True)
    considerations_per_hour = models.PositiveIntegerField(null=True, blank=True)
    daily_budget_usd = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    consideration_cap_usd = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    consider_effort = models.CharField(max_length=8, choices=Effort.choices, blank=True)
    mention_effort = models.CharField(max_length=8, choices=Effort.choices, blank=True)
    screen_enabled = models.BooleanField(null=True, blank=True)
    reads = models.PositiveIntegerField(null=True, blank=True)
    mention_wakes_per_hour = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(motion__isnull=False) | Q(agent__isnull=False), name="override_names_a_scope"
            ),
            models.UniqueConstraint(
                fields=["motion"], condition=Q(agent__isnull=True), name="one_override_per_motion"
            ),
            models.UniqueConstraint(
                fields=["agent"], condition=Q(motion__isnull=True), name="one_override_per_agent"
            ),
            models.UniqueConstraint(fields=["motion", "agent"], name="one_override_per_pair"),
        ]

    def __str__(self) -> str:
        return f"override {self.motion_id or '*'} / {self.agent or '*'}"


@dataclass
class Resolved:
    """The dials in force for one (Motion, agent)."""

    dials: Dials
    quiet_seconds: float
    idle_looks: int
    considerations_per_hour: int
    consideration_cap_usd: Decimal
    consider_effort: str
    mention_effort: str
    screen_enabled: bool
    reads: int
    mention_wakes_per_hour: int
    # (scope, limit) pairs: "all", "motion", "agent", "pair"
    daily_caps: list[tuple[str, Decimal]]

    @property
    def idle_seconds(self) -> float:
        return self.idle_looks * self.dials.tick_seconds


def overrides_for(motion_id: str, agent_ids: Collection[int]) -> list[DialOverride]:
    """Every override that applies to one of these agents in this Motion, in one query (resolve's
    `overrides`, for a Motion's listening agents together)."""
    return list(
        DialOverride.objects.filter(
            Q(motion_id=motion_id, agent__isnull=True)
            | Q(agent_id__in=agent_ids, motion__isnull=True)
            | Q(motion_id=motion_id, agent_id__in=agent_ids)
        )
    )


def resolve(
    motion_id: str,
    agent_id: int,
    dials: Dials | None = None,
    overrides: Iterable[DialOverride] | None = None,
    *,
    steered: bool = True,
) -> Resolved:
    """`overrides`: a superset of the pair's, read already (overrides_for); else they are asked.
    Then the room's `reads` from the thread (wakes/steering.py's order: dials → overrides → the
    thread); `steered=False` skips that query where `reads` is not used (the loop's schedule)."""
    dials = dials or Dials.load()
    values = {name: getattr(dials, name) for name in OVERRIDABLE}
    caps: list[tuple[str, Decimal]] = [("all", dials.daily_budget_usd)]
    if overrides is None:
        overrides = overrides_for(motion_id, [agent_id])
    rows = [
        row
        for row in overrides
        if (row.motion_id, row.agent_id) in ((motion_id, None), (None, agent_id), (motion_id, agent_id))
    ]

    def rank(row: DialOverride) -> int:
        return 2 if row.motion_id and row.agent_id else (1 if row.agent_id else 0)

    for row in sorted(rows, key=rank):
        for name in OVERRIDABLE:
            value = getattr(row, name)
            if value is not None and value != "":
                values[name] = value
        if row.daily_budget_usd is not None:
            caps.append((("motion", "agent", "pair")[rank(row)], row.daily_budget_usd))
    if steered and (tokens := room_reads(motion_id, agent_id)) is not None:
        values["reads"] = tokens
    return Resolved(dials=dials, daily_caps=caps, **values)


def room_reads(motion_id: str, agent_id: int) -> int | None:
    """The `reads` the room set in the thread's menu: its newest row while its "until" lasts;
    None when none is in force (blank is "the default", and a word from before the menu offered
    token budgets means nothing here)."""
    row = (
        Steer.objects.filter(motion_id=motion_id, agent_id=agent_id, setting=Steer.Setting.READS)
        .order_by("-at", "-pk")
        .values("value", "until")
        .first()
    )
    if row is None or (row["until"] is not None and row["until"] <= clock.now()):
        return None
    return int(row["value"]) if row["value"].isdigit() else None


class ListenState(models.Model):
    """The consider loop's memory of one (Motion, listening agent)."""

    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="listen_states")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="listen_states")
    # Newest post by someone else (a person, another agent, a watch): what a new-posts
    # consideration is about. `considered_through` is the cursor: posts up to it were considered.
    last_post_at = models.DateTimeField(null=True, blank=True)
    considered_through = models.DateTimeField(null=True, blank=True)
    # Newest thing said by anyone, this agent included: the long-quiet clock.
    last_said_at = models.DateTimeField(null=True, blank=True)
    last_person_at = models.DateTimeField(null=True, blank=True)
    idle_level = models.PositiveSmallIntegerField(default=0, help_text="Silent long quiets in a row.")
    rested = models.BooleanField(default=False)
    busy_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="A wake of this pair is in flight; re-checked at this time if not ended.",
    )
    due_at = models.DateTimeField(null=True, blank=True, help_text="When the loop looks at this pair next.")
    considered_at = models.DateTimeField(null=True, blank=True)
    version = models.PositiveIntegerField(
        default=0, help_text="Bumped by every write: claims are conditional on it."
    )
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["motion", "agent"], name="one_listen_state_per_pair")]
        indexes = [
            models.Index(fields=["due_at"], name="listen_due", condition=Q(due_at__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.agent} in {self.motion_id}"

    @property
    def pending(self) -> bool:
        """New posts since the last consideration."""
        return self.last_post_at is not None and (
            self.considered_through is None or self.last_post_at > self.considered_through
        )


class WakeKind(models.TextChoices):
    NEW_POSTS = "new_posts", "new posts"
    QUIET = "quiet", "long quiet"
    MENTION = "mention"
    WATCH = "watch"


class Consideration(models.Model):
    class Status(models.TextChoices):
        CLAIMED = "claimed"
        RUNNING = "running"  # reserving, screening, waking
        REFUSED = "refused"  # a budget stopped it
        SCREENED = "screened"  # the screen dismissed it
        WOKEN = "woken"  # a turn was queued
        SPOKE = "spoke"
        SILENT = "silent"
        FAILED = "failed"

    state = models.ForeignKey(ListenState, on_delete=models.CASCADE, related_name="considerations")
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="considerations")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="considerations")
    kind = models.CharField(max_length=16, choices=WakeKind.choices)
    claim_version = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.CLAIMED)
    through = models.DateTimeField(null=True, blank=True, help_text="Posts up to here are covered.")
    previous_through = models.DateTimeField(null=True, blank=True)
    quiet_seconds = models.FloatField(
        null=True, blank=True, help_text="For a long quiet: how long it had been."
    )
    screen_verdict = models.CharField(max_length=16, blank=True)
    screen_reason = models.CharField(max_length=300, blank=True)
    turn = models.OneToOneField(
        Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="consideration"
    )
    detail = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField()
    resent_at = models.DateTimeField(
        null=True, blank=True, help_text="Claimed but not started in time: its task was sent again (once)."
    )
    started_at = models.DateTimeField(
        null=True, blank=True, help_text="When a worker started it; one not woken soon after lost its worker."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["state", "claim_version"], name="one_consideration_per_claim")
        ]
        indexes = [
            models.Index(fields=["motion", "agent", "created_at"]),
            # What the tick's recovery looks at: the few considerations still in flight.
            models.Index(
                fields=["created_at"],
                name="consideration_in_flight",
                condition=Q(status__in=["claimed", "running"]),
            ),
        ]


class MentionWake(models.Model):
    class Status(models.TextChoices):
        WAITING = "waiting"  # a terminal mention, waiting to see if it is answered
        WOKEN = "woken"
        ANSWERED = "answered"  # answered before the wait ran out: no wake
        HELD = "held"  # the agent's listening here is off: woken when it is back (wakes/steering.py)
        LET_GO = "let_go"  # posted before someone stopped the agent's turns: never woken

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="mention_wakes")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="mention_wakes")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WAITING)
    due_at = models.DateTimeField()
    # Several mentions owed to one agent in one Motion are answered by one turn (coalesced).
    turn = models.ForeignKey(
        Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="mention_wakes"
    )
    created_at = models.DateTimeField()
    # Why it has not started yet ("a turn is under way here; this one is next", "the hourly cap:
    # next slot at …"), and until when if known; cleared when its turn starts.
    hold = models.CharField(max_length=300, blank=True)
    hold_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["message", "agent"], name="one_wake_per_mention")]
        indexes = [
            models.Index(fields=["due_at"], name="mention_waiting_due", condition=Q(status="waiting")),
            # Held while the agent's listening is off: due at its "until" (wakes/steering.py).
            models.Index(fields=["due_at"], name="mention_held_due", condition=Q(status="held")),
        ]


class Spend(models.Model):
    """The ledger: today's spend is `Sum(amount)` over the day's counted rows."""

    class Kind(models.TextChoices):
        SCREEN = "screen"
        CONSIDERATION = "consideration"  # an envelope reserved, then the turn's real cost
        MENTION = "mention"  # not counted against budgets; kept for the audit
        WATCH = "watch"
        GRANT = "grant"  # a person granted full tools: not counted, like a mention
        MANUAL = "manual"  # `manage.py wake` or another operator's wake: not counted
        COMPACTION = "compaction"  # the runner's own turn: counted like the turn it follows

    kind = models.CharField(max_length=16, choices=Kind.choices)
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="spend")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="spend")
    consideration = models.ForeignKey(
        Consideration, null=True, blank=True, on_delete=models.SET_NULL, related_name="spend"
    )
    turn = models.ForeignKey(Turn, null=True, blank=True, on_delete=models.SET_NULL, related_name="spend")
    day = models.DateField()
    at = models.DateTimeField()
    amount = models.DecimalField(
        max_digits=12, decimal_places=6, help_text="Dollars: real when settled, else reserved."
    )
    reserved = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal("0"))
    settled = models.BooleanField(default=False)
    counted = models.BooleanField(default=True, help_text="Counts against the daily cap.")
    full = models.BooleanField(
        default=False, help_text="A full consideration: counts against the hourly limit."
    )
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    note = models.CharField(max_length=300, blank=True)

    class Meta:
        verbose_name = "ledger entry"
        verbose_name_plural = "ledger"
        indexes = [
            models.Index(fields=["day", "counted"]),
            models.Index(fields=["motion", "agent", "at"]),
        ]

    def __str__(self) -> str:
        return f"{self.kind} ${self.amount} {self.motion_id}/{self.agent_id}"


class BudgetDay(models.Model):
    """The lock every reservation of a day takes first (an UPDATE on this row)."""

    day = models.DateField(primary_key=True)
    reservations = models.PositiveIntegerField(default=0)


class TypingPing(models.Model):
    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="typing")
    who = models.CharField(max_length=150)
    at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["motion", "who"], name="one_ping_per_person")]


def current_dials() -> dict[str, Any]:
    """wakes/dials.py's defaults merged with the admin-edited row (when the table is there)."""
    values = dict(wake_texts.DEFAULTS)
    try:
        row = Dials.objects.first()
    except Exception:  # not migrated yet: the defaults stand
        return values
    if row is not None:
        for key in wake_texts.DEFAULTS:
            value = getattr(row, key, None)
            if value not in (None, ""):
                values[key] = value
    return values


class Steer(models.Model):
    """One change the room made to how its agents wake (wakes/steering.py): append-only, with who
    and when. The newest row of a (Motion, agent, setting) is in force until its `until`;
    `agent` is blank for the Motion's own settings (rules, archived)."""

    class Setting(models.TextChoices):
        LISTENING = "listening"  # on / mentions / off
        MODEL = "model"
        MENTION_EFFORT = "mention_effort"
        CONSIDER_EFFORT = "consider_effort"
        READS = "reads"
        DISCRETION = "discretion"  # reserved / normal / chatty
        VERBOSITY = "verbosity"  # terse / normal / full
        RULES = "rules"  # the Motion's
        ARCHIVED = "archived"  # the Motion's: "yes" / "no"

    motion = models.ForeignKey(Motion, on_delete=models.CASCADE, related_name="steers")
    agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="steers")
    setting = models.CharField(max_length=20, choices=Setting.choices)
    value = models.TextField(blank=True, help_text="Blank: back to what the admin's dials say.")
    until = models.DateTimeField(
        null=True, blank=True, help_text="After this the setting is back to its default."
    )
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    by_name = models.CharField(max_length=150)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["motion", "setting", "at"])]

    def __str__(self) -> str:
        whose = f"@{self.agent.name}" if self.agent_id else self.motion_id
        return f"{whose} {self.setting}={self.value!r} by {self.by_name}"
