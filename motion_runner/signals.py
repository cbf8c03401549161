"""Every seam between the runner (motion_runner) and the apps above it (wakes), in one place.

The runner never imports wakes: it sends these signals and calls these hooks, and wakes/
connects its receivers and registers its hooks in `WakesConfig.ready()`. A host project (or a
test) can listen to the same seams. pretix's `base/signals.py` is the model: each seam is
declared here with its arguments, and the sender imports it from here, never declares its own.

Signals (django.dispatch) tell; hooks (plain registries) answer, where the runner needs a value
back (a prompt, a turn monitor, what the thread page shows), in the order they were registered.
Where exactly one answer counts (a turn's tool policy, its clocks), the seam is a dotted-path
setting instead (`ChosenBySetting`, as Django's EMAIL_BACKEND): it names the answer, so the runner
calls wakes' code without importing it, and `manage.py check` refuses a path that does not load.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, NamedTuple

from django.dispatch import Signal
from django.utils.module_loading import import_string

if TYPE_CHECKING:  # annotations only: this module imports nothing of the runner at run time
    from datetime import datetime

    from django.http import HttpRequest

    from .models import Agent, Motion, Turn
    from .runner.monitor import TurnMonitor

# --- Signals ----------------------------------------------------------------------------------

message_created = Signal()
"""
Arguments: ``message`` (a ``motion_runner.models.Message``), ``newest_of_batch`` (bool; may be
absent, meaning True).

Sent after commit for every Message that was really inserted (never for a skipped duplicate),
with ``sender=Message``, by the writer in ``motion_runner/ingest/writer.py``. ``newest_of_batch`` is
True on one of the messages one write inserted together (one Motion, one speaker; the runner
announces what it committed within 0.25 s together, motion_runner/ingest/announcing.py): the newest post among
them (``message_fit.is_post``), or the last message when none is a post. A receiver can do
per-batch work once instead of once a line, off the runner's hot path. wakes/ listens for
mentions and the consider loop (``wakes.consider_loop.handlers.on_message_created``).
"""

turn_finished = Signal()
"""
Arguments: ``turn`` (the ended ``motion_runner.models.Turn``, its row saying how it ended).

Sent robustly (a receiver's error is logged, never raised) with ``sender=Turn`` by
``motion_runner/runner/ending.py`` once a turn has ended. wakes/ listens: dots for silent turns,
the spend ledger, the loop's backoff, request cards, the compaction after a loop-guard stop,
and the turn's ability.
"""

turn_repriced = Signal()
"""
Arguments: ``turn`` (an ended Turn whose ``cost_usd`` was raised), ``was`` (what it was charged).

Sent robustly with ``sender=Turn`` by ``motion_runner/runner/ending.py`` when the sweep ended a
turn as lost and its runner, alive after all, stored lines after that show more spent. wakes/
listens: the ledger's row takes the new cost.
"""

turn_retried = Signal()
"""
Arguments: ``failed`` (the Turn whose session was gone), ``retry`` (the Turn queued again in a
fresh session).

Sent robustly with ``sender=Turn`` by ``motion_runner/runner/turns.py`` when a wake is queued
again after its session was gone. wakes/ gives the retry its place in the ledger.
"""

turns_stopped = Signal()
"""
Arguments: ``motion`` (the ``Motion``), ``agent_names`` (list of names, or None for every agent of
the Motion), ``by`` (who stopped them, as the thread says it), ``at`` (when: a datetime).

Sent robustly with ``sender=Turn`` by ``motion_runner/runner/stopping.py`` once a person (or a
scram) has stopped turns. wakes/ lets go of what was owed before ``at``: the agents' mentions
waiting or held, and the posts the consider loop had not yet considered.
"""

hold_changed = Signal()
"""
Arguments: ``motion`` (the ``Motion``), ``agent`` (the held ``Agent``), ``hold`` (``{agent, reason,
until, at}``: ``until`` an ISO time or None, ``at`` when it was said; None when it is lifted),
``lasts`` (seconds it stands unless said again; 0 when lifted).

Sent robustly with ``sender=Motion`` whenever an agent's next turn in a Motion is held or let go:
by ``wakes/holds.py`` (a mention waiting on a turn under way, the hourly cap, listening off; renewed
every 30 s while it holds) and by memory-lane's runner through ``POST …/held/``
(``motion_runner/memory_lane/routes.py``). Whoever shows holds listens: memory-lane's clients'
``GET …/held/`` (``motion_runner/memory_lane/held.py``, connected in ``MotionRunnerConfig.ready``)
and, under the ``memory_lane`` binding, memory-lane's own page (``MemoryLaneRecord.connect``). A
receiver's failure loses neither the hold nor the mention or stop its sender is in the middle of.
"""

host_post_made = Signal()
"""
Arguments: ``message`` (the apps' ``Message`` for the post, built but not yet fitted or saved).

Sent with ``sender=Message`` by a record binding (``motion_runner/memory_lane/binding.py``) for a
post made in the host's own record by anything but the binding (memory-lane's composer, its own
transcript watcher). The write path listens (``motion_runner.ingest.writer.insert_one``: fitted,
redacted, inserted once, ``message_created`` after commit; connected in
``MotionRunnerConfig.ready()``) and answers True when it inserted the post, so the binding never
imports the write path. With no receiver, such a post stays in the host's record alone.
"""

host_stop_pressed = Signal()
"""
Arguments: ``motion`` (the ``Motion``), ``agent_name`` (the agent the host's page stopped), ``by``
(who pressed it, as the host names them).

Sent with ``sender=Motion`` by a record binding when a person stops an agent on the host's own
page (memory-lane's ■ writes an ``interrupt`` row naming the agent and who): the runner listens
(``runner.stopping.stop_for_host``, connected in ``MotionRunnerConfig.ready()``) and stops that
agent's running and queued turns in the Motion as the thread's ■ stops them.
"""

scram_changed = Signal()
"""
Arguments: ``scram`` (the ``Scram`` row), ``holds`` (True: raised; False: lifted), ``by`` (who).

Sent robustly with ``sender=Scram`` by ``runner.stopping.raise_scram`` and ``lift_scram`` after the
row is written, whoever pressed it (the API, the button, the admin, ``manage.py scram``). Under the
``memory_lane`` binding its record shows it as memory-lane shows its own AZ5: a ``scram`` settings
row (``motion_runner/memory_lane/steering.py``).
"""

host_scram_pressed = Signal()
"""
Arguments: ``holds`` (True: memory-lane's AZ5 raised; False: lifted), ``by`` (who, as the host
names them), ``reason`` (its note), ``refused`` (why the row is not obeyed: written by someone the
host itself would not let write it; then nothing changes and every thread says so), ``ref`` (the
row's id there, so it is said once).

Sent with ``sender=Scram`` by a record binding when the host's own page raised or lifted its scram
(memory-lane's admin writes a ``scram`` settings row): the runner listens
(``runner.stopping.scram_from_host``, connected in ``MotionRunnerConfig.ready()``) and raises or
lifts this project's scram, so the two are one.
"""

host_signed_in = Signal()
"""
Arguments: ``user`` (the person here, by the name the host signed in).

Sent by a record binding when a person signed in on the host's own page in a way Django's
``user_logged_in`` never hears (memory-lane's device cookie: a new ``Device`` row,
``memory_lane/signin.py``). The wakes app greets it as a sign-in here (``arrivals.on_host_signed_in``).
"""

host_steering_changed = Signal()
"""
Arguments: ``motion`` (the ``Motion``), ``agent`` (the ``Agent``, or None for every agent of it),
``setting`` (the menus' name of it: ``listening``, ``archived``, …), ``record`` (the change as a
``SteerRecord``, or None when it is not the Motion's own: a row for every Mood at once, which is
looked at again but said in no thread).

Sent robustly with ``sender=Motion`` by a record binding when the host's own page changed a
setting the room's steering reads from there (``steering_source``). wakes/ listens: it says the
change in the thread and looks again at once (the loop's pairs, mentions held while listening
was off), so the change counts from the next tick.
"""

message_taken_back = Signal()
"""
Arguments: ``message`` (the ``Message`` as it now stands: ``text`` ``[deleted]`` or the new words),
``change`` (its ``TakenBack`` row: ``kind`` deleted or edited, ``by``, ``at``), ``gone`` (the lines
of what it said that it no longer says: what a copy elsewhere must lose).

Sent robustly with ``sender=Message`` by ``motion_runner/retract.py`` (``take_back``, the one place
a post is taken back: the thread's control, ``DELETE``/``PATCH /api/messages/<id>/``, memory-lane's
own retract under the binding) after the apps' copies are scrubbed (the row, stored prompts and
their digests, handoff and wake lines), in the same transaction. Whoever keeps another copy
listens: under the ``memory_lane`` binding, memory-lane's own row and the wake prompts its record
echoes (``MemoryLaneRecord.connect``).
"""

host_post_taken_back = Signal()
"""
Arguments: ``message_id`` (the post's id, the same in both records), ``kind`` (``deleted`` or
``edited``; ``restored`` when the host put it back), ``text`` (what the host's row says now),
``by`` (who, as the host names them).

Sent with ``sender=Message`` by a record binding when the host's own page took a post back
(memory-lane's ``services/retract.py``: a queryset update, then a ``MessageChange`` row): the
runner listens (``motion_runner.retract.take_back_for_host``, connected in
``MotionRunnerConfig.ready()``) and takes the apps' copy back as its own control does, so the binding
never imports the write path.
"""

handoff_refused = Signal()
"""
Arguments: ``message`` (the agent's reply carrying the block), ``name`` (the Motion the block named,
as written: its ``to:``, or its ``from:`` when ``pulled``), ``pulled`` (a ``from:`` block).

Sent robustly with ``sender=Message`` by wakes/turn/handoff.py when it refuses a block (nothing
posted there, a line back in the reply's thread). A record that carries handoffs by rules of its
own listens: under the ``memory_lane`` binding, memory-lane's own hook (its
``signals.handoffs_carried``) made the block's events from the binding's copy of the reply, and
they go (``MemoryLaneRecord.withdraw_handoff``), so the apps' refusal holds in both records.
"""

# --- Seams with one answer, chosen by a dotted-path setting -------------------------------------


class TurnClocks(NamedTuple):
    """A turn's clocks in seconds: `wall` from its start, `silence` without a line; None: none."""

    wall: float | None
    silence: float | None


class ChosenBySetting:
    """A seam with exactly one answer: the callable at the dotted path the setting names.

    The setting names it (`import_string`), so the runner calls the app above it without importing
    it: the import contracts still hold (wakes -> motion_runner only). Unset, `default` answers when
    wakes is installed and `standalone` (the runner's own) when it is not. Read at every call, so
    `override_settings` works; `motion_runner.checks.seams_chosen_by_setting` refuses at startup a
    path that does not load or is not callable.
    """

    def __init__(self, setting: str, *, default: str, standalone: str):
        self.setting = setting
        self.default = default
        self.standalone = standalone

    def default_path(self) -> str:
        from django.apps import apps  # at the call: the registry is ready by then

        return self.default if apps.is_installed("wakes") else self.standalone

    def path(self) -> str:
        from django.conf import settings  # at the call, so `override_settings` is heard

        return getattr(settings, self.setting, None) or self.default_path()

    def load(self) -> Callable[..., Any]:
        return import_string(self.path())

    def __call__(self, *args: Any) -> Any:
        return self.load()(*args)

    def __repr__(self) -> str:
        return f"<ChosenBySetting {self.setting}>"


turn_clocks = ChosenBySetting(
    "MOTION_RUNNER_TURN_CLOCKS",
    default="wakes.turn.tool_policy.full_tools_clocks",
    standalone="motion_runner.runner.limits.settings_clocks",
)
"""
Called as ``turn_clocks(turn) -> TurnClocks`` by the runner (``runner/limits.py``) for a full-tools
turn as it launches. wakes/ gives its dials (``full_tools_silence_seconds``,
``full_tools_timeout_seconds``); without wakes, the runner's settings answer
(RUNNER_FULL_TOOLS_TIMEOUT_SECONDS, None, and RUNNER_SILENCE_SECONDS). A look-only turn always keeps
RUNNER_TURN_TIMEOUT_SECONDS and asks nothing.
"""

tool_policy = ChosenBySetting(
    "MOTION_RUNNER_TOOL_POLICY",
    default="wakes.turn.tool_policy.policy_for_turn",
    standalone="motion_runner.harnesses.policy.closed_policy",
)
"""
Called as ``tool_policy(turn) -> ToolPolicy`` by the runner once a launch, before the adapter
builds the turn's command line (``motion_runner.runner.turns.policy_for``, which hands the answer
to the adapter). wakes/ computes the policy from its shared tool list, its dials and the wake
footer; without wakes, a turn gets the harness layer's most closed policy (local reads only, no MCP
server).
"""

steering_source = ChosenBySetting(
    "MOTION_RUNNER_STEERING_SOURCE",
    default="motion_runner.record.steering_source",
    standalone="motion_runner.record.steering_source",
)
"""
Called as ``steering_source() -> SteeringSource or None`` by wakes/ at every read and write of the
room's settings (``wakes/decision/steering.py``, the ``reads`` dial). By default the configured
record binding answers (``RecordBinding.steering_source``): None for the apps' own record (wakes'
``Steer`` table keeps them), memory-lane's own settings rows under its binding
(``motion_runner/memory_lane/steering.py``): one source of truth, never two that disagree. wakes asks
through this seam because it never imports the record itself (import-linter).
"""

SEAMS_CHOSEN_BY_SETTING = (turn_clocks, tool_policy, steering_source)

# --- Hooks ------------------------------------------------------------------------------------

PromptBuilder = Callable[["Turn"], "str | None"]
prompt_builders: list[PromptBuilder] = []
"""
Called as ``build(turn) -> prompt or None`` by the runner once it has claimed a turn, before its
command line is built; the first that answers with a prompt replaces the turn's (and it is saved
on the row). wakes/ builds a mention's prompt here, from the record as it stands when the turn
starts, so mentions coalesced into a queued turn are all in it.
"""

PromptFinalizer = Callable[[str, "Motion", "Agent", str, str], str]
prompt_finalizers: list[PromptFinalizer] = []
"""
Called as ``finalize(prompt, motion, agent, mode, reason) -> prompt`` by ``enqueue_turn``, each
on the previous one's result, before the Turn row is written. wakes/ appends the footer that
tells every wake what its mode allows, and the loop guard's note.
"""

MonitorFactory = Callable[["Turn"], "TurnMonitor"]
monitor_factories: list[MonitorFactory] = []
"""
Called as ``factory(turn) -> TurnMonitor`` once per run of a turn; each monitor ``observe``s
every event as it is written, and a non-empty ``stop_reason`` ends the turn; the monitor's
``stop_cause`` (a ``motion_runner.models.EndedBy`` value) becomes the turn's ``ended_by``, which
code reads instead of the error's words. wakes/ adds the tool-loop guard and the spend guard.
"""

FencedAgentProvider = Callable[[], "set[str]"]
fenced_agent_providers: list[FencedAgentProvider] = []
"""
Called as ``provider() -> set of agent names`` by wakes/ each time it decides whom a mention or
the consider loop may wake; the names of every provider together are woken by no one here
(another decider wakes them). The runner registers its record's fence
(``motion_runner.memory_lane.fence.poller_fenced_agents``: under a binding that shares memory-lane's record,
the ``POLLER_AGENTS`` memory-lane's poller still wakes) in ``MotionRunnerConfig.ready``, so wakes
reads the fence without importing the storage.
"""


class SteerRecord(NamedTuple):
    """One setting of the room as a steering source holds it: ``agent_id`` None for the whole
    Motion (every agent of it, or the Motion's own rules and archived); ``value`` as the menus
    write it; ``until`` when it ends by itself; ``by_name`` and ``at``: who set it and when;
    ``ref``: the row's own id there; ``refused``: why the row does not count (a row the host's
    page wrote that its writer may not make count here), said instead of the change."""

    motion_id: str
    agent_id: int | None
    setting: str
    value: str
    until: datetime | None
    by_name: str
    at: datetime
    ref: str
    refused: str = ""


class SteeringRefused(ValueError):
    """A change a steering source cannot keep (said back to the person; nothing written)."""


class SteeringSource:
    """Where the room's settings are kept when not in wakes' own ``Steer`` table."""

    def candidates(
        self, pairs: list[tuple[str, int | None]]
    ) -> dict[tuple[str, int | None], list[SteerRecord]]:
        """For each (Motion id, agent id) pair asked (agent None: the Motion's own settings), every
        row that may be in force, the one to take first first (the source's own precedence)."""
        raise NotImplementedError

    def write(
        self, motion: Motion, agent: Agent | None, setting: str, value: str, until, by_name: str
    ) -> SteerRecord:
        """Keep one change from this project's menus; returns it as kept."""
        raise NotImplementedError

    def history(self, motion: Motion, limit: int) -> list[SteerRecord]:
        """The Motion's newest changes, newest first (the menus' list)."""
        raise NotImplementedError

    def timing(
        self, motion_id: str, agent_id: int | None, tick_seconds: float
    ) -> dict[str, tuple[Any, bool]]:
        """The timing dials (quiet_seconds, idle_looks, considerations_per_hour) the source keeps in
        force for the pair (agent None: every agent of the Motion): {dial: (value, the Motion's
        own)}; a dial it keeps nothing for is absent, and the admin's dials stand."""
        return {}

    def write_timing(self, motion: Motion, dial: str, value: Any, tick_seconds: float, by_name: str) -> None:
        """Keep one change of the timing API (value None: the default); SteeringRefused if it cannot."""
        raise SteeringRefused("this steering source keeps no timing")

    def daily_budget(self) -> Any:
        """The global consider budget in dollars a day the source keeps, or None (the dials' stands)."""
        return None

    def reads_once(self, pairs: list[tuple[str, int | None]]) -> AbstractContextManager:
        """Within it, `candidates`, `timing` and `daily_budget` for these pairs answer from what was
        read once for all of them (a tick's due pairs); by default nothing is read ahead."""
        return nullcontext()

    def write_daily_budget(self, value: Any, by_name: str) -> None:
        raise SteeringRefused("this steering source keeps no budget")


# --- Hooks of the thread page and its poll (motion_runner/thread/views.py, motion_runner/api/views.py) -

ThreadPageContext = Callable[["HttpRequest", "Motion"], dict[str, Any]]
thread_page_context: list[ThreadPageContext] = []
"""
Called as ``provide(request, motion) -> dict`` by the thread page for a signed-in reader; each
dict is merged into the template context, in order. wakes/ gives ``can_grant`` (may this reader
answer a request card) and ``wake_mode``/``wake_rule`` (what this reader's posts would wake an
agent with, and why). Without one, the page says the reader can grant nothing.
"""

ThreadPollFields = Callable[["Motion", "str | None"], dict[str, Any]]
thread_poll_fields: list[ThreadPollFields] = []
"""
Called as ``provide(motion, reader) -> dict`` by every read of the thread's messages
(``GET …/messages/``), ``reader`` the signed-in username or None; each dict's keys are added to
the answer after ``activity``, in order. wakes/ adds ``requests``, ``answered_requests`` and
``typing``.
"""

MAX_SHOWN_TYPING = 50
"""At most this many names a poll says it shows typing (``thread_poll_news``'s ``shown``, refused
past it by ``motion_runner/api/bounds.py``), so a receiver names back at most this many typing."""

ThreadPollNews = Callable[["Motion", "datetime", "str | None", "list[str] | None"], bool]
thread_poll_news: list[ThreadPollNews] = []
"""
Called as ``news(motion, since, reader, shown) -> bool`` while a long poll of the thread waits:
True answers the poll at once, as a new message does. ``shown`` is who the reader shows typing
(the poll's ``typing``), or None when it did not say; with it, the first look asks too. wakes/
says whether who is typing (but the reader) differs from ``shown``; without it, whether someone
other than the reader pinged since the wait began.
"""
