"""A whole room, simulated (issue 39, item 5): seeded, deterministic, in-process.

Two or three people and two or three agents in two Motions (room-one everyone's, room-two its
members': every agent and every person but the last). Each step the seed picks an action (a post,
a mention, a command, a ■ stop, a scram or its lift, a listening change, an agent key posting
outside a turn, a worker killed, a database blip, a post taken back, a handoff asked for); the
turns it queues are run as a worker runs
them (`execute_turn`: the real claim, prompt, parser, writer, monitors, ending, ledger), with
the harness replaced by a script played straight into the run's write path (`FakeHarness`, no
subprocess). After every step `Room.check` holds the invariants; the first broken one raises
`InvariantBroken` naming the seed, the step and how to replay it.

Time is the wakes' fake clock, and Django's `timezone.now` (and every model's `default=now`)
reads it too, so a run's posts, turns and holds share one clock and a seed replays exactly.
The caller gives the database (one test transaction, rolled back after the seed).
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from django.apps import apps
from django.db import OperationalError, transaction
from django.db.models import Sum
from django.test import TestCase
from django.utils import timezone

from motion_runner import retract
from motion_runner.harnesses import pricing
from motion_runner.ingest import writer as ingest_writer
from motion_runner.ingest.redaction import redact
from motion_runner.models import Kind, Message, Scram, Source, Turn, Visibility
from motion_runner.runner import reclaim, stopping, turn_run, turns
from motion_runner.runner.process import Outcome, ProcessResult
from motion_runner.signals import message_created
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from wakes.models import Dials, MentionWake
from wakes.models import clock as wake_clock
from wakes.notices import answers

ACTIONS = (
    ("post", 14),
    ("mention", 22),
    ("agent_mention", 6),
    ("command", 6),
    ("stop", 5),
    ("scram", 3),
    ("lift", 4),
    ("listening", 4),
    ("key_post", 6),
    ("worker_killed", 3),
    ("db_blip", 4),
    ("delete", 4),  # a post taken back (motion_runner/retract.py), by its author or staff
    ("handoff", 6),  # a person asks an agent to take the talk to the other Motion, or bring it here
)

# What an agent's harness does in a turn (its script picks one a turn).
BEHAVIOURS = ("answer", "mention", "silent", "loop", "secret")
# Who reads which Motion: room-one is everyone's (signed in), room-two its members' (every agent
# and every person but the last), so the last person must never be shown room-two's words.

# A secret an agent's harness prints: it must be [REDACTED] wherever it is stored or shown.
SECRET = "sk-ant-api03-" + "Zq7" * 12
MODEL = "claude-sonnet-4-5"
# What each API message of a fake turn uses; the streamed line shows the message_start snapshot
# (output 1, stop_reason null) as the real CLI does, the result line the whole.
USAGE = {"input_tokens": 1200, "output_tokens": 400, "cache_read_input_tokens": 3000}
# A message cut off before its message_delta is charged output at this many UTF-8 bytes a token of
# what it streamed (docs/money.md, "A message cut off"); the room's own copy of the rule.
BYTES_PER_TOKEN = 3
LOOP_CALLS = 6  # a looping harness repeats the same Read this often (the guard stops it at 3)
MARK = re.compile(r"\[(?:L|P)\d+\]")


def replay_command(seed: int) -> str:
    return f"ROOM_SEED={seed} pytest tests/room -k replay"


class InvariantBroken(AssertionError):
    def __init__(self, seed: int, step: int, action: str, what: str):
        self.seed, self.step, self.action, self.what = seed, step, action, what
        super().__init__(f"seed {seed}, step {step} ({action}): {what}\n  replay: {replay_command(seed)}")


class WorkerKilled(BaseException):
    """The worker running a turn died mid-way (not an Exception: nothing in the runner catches it)."""


def message_cost(usage: dict) -> Decimal:
    return pricing.anthropic_cost(MODEL, usage)


# --- the clock --------------------------------------------------------------------------


class SimClock:
    """The wakes' clock, and Django's `timezone.now` reading it (so does every model field whose
    default is `timezone.now`): one time for the whole room, moved only by the simulation."""

    def __init__(self, start: datetime):
        self.moment = start
        wake_clock.set_now(start)

    def now(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> datetime:
        self.moment += timedelta(seconds=seconds)
        wake_clock.set_now(self.moment)
        return self.moment

    @contextmanager
    def installed(self) -> Iterator[SimClock]:
        real = timezone.now
        fields = [
            f
            for model in apps.get_models()
            for f in model._meta.concrete_fields
            if getattr(f, "default", None) is real
        ]
        fake = lambda: wake_clock.now()  # noqa: E731 (a fresh function: `default is real` stays False)
        timezone.now = fake
        for f in fields:
            f.default = fake
            f.__dict__.pop("_get_default", None)
        # The writer builds a Message from defaults it took at import (ingest.writer.new_message):
        # without this the runner's lines were stamped with the real clock, a day from the room's.
        columns = ingest_writer._COLUMNS
        ingest_writer._COLUMNS = tuple(
            (name, fake if default is real else default, called) for name, default, called in columns
        )
        try:
            yield self
        finally:
            ingest_writer._COLUMNS = columns
            timezone.now = real
            for f in fields:
                f.default = real
                f.__dict__.pop("_get_default", None)
            wake_clock.set_now(None)


# --- the fake harness ----------------------------------------------------------------------


@dataclass
class Printed:
    """What a fake run printed: its API messages' true cost and whether its result line went out."""

    cost: Decimal = Decimal(0)
    result: bool = False
    behaviour: str = ""


@dataclass
class Handoff:
    """A reply's handoff block, as the harness wrote it: from where to where, and the people whose
    posts woke its turn (a `to:` goes only where each of them may post)."""

    origin: str
    dest: str
    pulled: bool
    authors: set[str]


class FakeHarness:
    """Replaces `turns.run_harness`: plays the agent's script into the run (its parser, writer
    and monitors), line by line, as the select loop would, and answers as a process would."""

    def __init__(self, room: Room):
        self.room = room
        self.session_totals: dict[str, Decimal] = {}  # what each session's result lines said
        self.heard: dict[str, set[str]] = {}  # the marks each session's context holds (its prompts)
        # write index -> what the sweep charges a message cut before that write above the runner
        self.cut_estimates: dict[int, Decimal] = {}

    def __call__(self, run, launch, limits) -> ProcessResult:
        room, turn = self.room, run.turn
        for path in launch.temp_files:
            path.unlink(missing_ok=True)
        room.started.append((turn.pk, room.step, Scram.holding() is not None))
        behaviour = room.behaviour_for(turn)
        printed = room.printed[turn.pk] = Printed(behaviour=behaviour)
        resumed = launch.argv[launch.argv.index("--resume") + 1] if "--resume" in launch.argv else None
        session = str(uuid.UUID(int=room.rng.getrandbits(128)))
        # Each run forks a session of its own (as --fork-session does): its context is the resumed
        # one's and this prompt. Resuming one that holds words taken back is kept for the check.
        heard = self.heard.get(resumed, set()) if resumed else set()
        if kept := room.deleted.intersection(heard):
            room.resumed_taken_back.append((turn.pk, room.step, sorted(kept)))
        self.heard[session] = heard | set(MARK.findall(turn.prompt))
        writes = self.writes(turn, behaviour, session)
        hazard = room.armed.pop(0) if room.armed else None
        # A take-back lands before the init line names the session (after it, the session is one
        # of those the take-back retires); the others between two writes.
        hazard_at = (0 if hazard == "delete" else room.rng.randrange(1, len(writes))) if hazard else -1
        if reason := run.on_ring():
            return self.stopped(reason, 0)
        count = 0
        for index, (lines, cost) in enumerate(writes):
            if index == hazard_at:
                if hazard == "worker_killed":  # the sweep estimates a cut message from its rows
                    printed.cost += self.cut_estimates.get(index, Decimal(0))
                if reason := self.hazard(hazard, run, turn):
                    return self.stopped(reason, count)
            room.clock.advance(0.5)
            printed.cost += cost  # the API bills a message once it is made, read or not
            for at, line in enumerate(lines):
                if line.get("type") == "result":
                    before = self.session_totals.get(resumed, Decimal(0)) if resumed else Decimal(0)
                    total = before + printed.cost
                    line["total_cost_usd"] = float(total)
                    self.session_totals[session] = total
                    printed.result = True
                run.on_lines([json.dumps(line).encode()])
                count += 1
                if reason := run.stop_reason():
                    # Killed: the rest of this write is already in the pipe, and the runner
                    # reads it to its end (process.drain_after_stop).
                    rest = [json.dumps(later).encode() for later in lines[at + 1 :]]
                    if rest:
                        run.on_lines(rest)
                    return self.stopped(reason, count + len(rest))
        if room.db_away:
            self.database_back(run)
        return ProcessResult(outcome=Outcome.EXITED, returncode=0, stderr_tail="", lines=count)

    def handoff_reply(self, turn: Turn) -> str:
        """A reply with a ```handoff block: `to:` the other Motion (carrying the newest post here)
        or `from:` it (bringing its newest post here). Who woke the turn is kept, to judge after
        whether the handoff line may exist (handoff_allowed)."""
        room = self.room
        other = next(m.pk for m in room.motions if m.pk != turn.motion_id)
        pull = room.rng.random() < 0.5
        origin = other if pull else turn.motion_id
        carried = [
            text
            for motion_id, text in room.said
            if motion_id == origin and not room.deleted.intersection(MARK.findall(text))
        ][-1:]  # what still stands: words taken back are not the agent's to carry on
        woken = [turn.woken_by] if turn.woken_by_id else []
        woken += [wake.message for wake in turn.mention_wakes.select_related("message")]
        field_line = f"from: {other}" if pull else f"to: {other}"
        mark = room.mark("L")
        room.written[mark] = turn.motion_id
        room.handoffs[mark] = Handoff(
            origin=origin,
            dest=turn.motion_id if pull else other,
            pulled=pull,
            authors={post.sender for post in woken if post.agent_id is None},
        )
        return (
            f"taking it over\n```handoff\n{field_line}\nabout: where we are (handoff {mark[1:-1]})\n---\n"
            + "\n".join(carried or ["nothing yet"])
            + "\n```"
        )

    def stopped(self, reason: str, count: int) -> ProcessResult:
        if self.room.db_away:
            self.database_back(self.room.current_run)
        return ProcessResult(
            outcome=Outcome.STOPPED, returncode=-15, stderr_tail="", detail=reason, lines=count
        )

    def hazard(self, hazard: str, run, turn: Turn) -> str | None:
        room = self.room
        room.current_run = run
        if hazard == "stop":
            stopping.stop_turns(turn.motion, room.rng.choice(room.people).username, agents=[turn.agent])
            return run.on_ring()
        if hazard == "scram":
            room.raise_scram()
            return run.on_ring()
        if hazard == "worker_killed":
            raise WorkerKilled(turn.pk)
        if hazard == "db_blip":
            self.database_away(run)
        if hazard == "delete":
            room.take_back(room.rng, read=turn.prompt)  # most often what this turn is reading
        return None

    def database_away(self, run) -> None:
        """The next writes fail as a dropped connection does; the run keeps them in memory."""
        room = self.room
        room.db_away = True
        real = run.writer.write_many

        def refuse(events):
            if room.db_away:
                raise OperationalError("server closed the connection unexpectedly")
            return real(events)

        run.writer.write_many = refuse

    def database_back(self, run) -> None:
        self.room.db_away = False
        run.next_try = 0.0
        run.on_tick()

    def writes(self, turn: Turn, behaviour: str, session: str) -> list[tuple[list[dict], Decimal]]:
        """The run's stdout as the harness writes it, each write with what it cost: an API
        message's lines go out together as the API streams them (message_start, its assistant
        line with the message_start usage, output a placeholder, then message_delta with the
        whole usage and message_stop), so a stop lands between messages, and a stop the runner
        asks for on one of its lines finds the rest of that message in the pipe. Each message is
        two writes, so a hazard (■, a scram, a worker killed) or the loop guard can cut it off
        after its message_start, deltas and assistant line but before its message_delta: the API
        billed output the harness never reported, and the runner charges it an estimate from
        what it streamed (docs/money.md, "A message cut off"). The first write's cost is that
        estimate, the second's the rest of the message's whole cost (`cut_estimates` holds what
        the sweep, reading the stored and so redacted rows, estimates instead)."""
        room = self.room
        init = {"type": "system", "subtype": "init", "session_id": session, "tools": ["Read"], "model": MODEL}
        out: list[tuple[list[dict], Decimal]] = [([init], Decimal(0))]
        calls: list[str] = []  # the API messages made
        self.cut_estimates = {}

        def stream_event(event: dict) -> dict:
            return {"type": "stream_event", "session_id": session, "uuid": room.uuid(), "event": event}

        def api_message(block: dict) -> None:
            message_id = f"msg_{room.rng.getrandbits(64):016x}"
            started = {**USAGE, "output_tokens": 1}
            message = {
                "id": message_id,
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "stop_reason": None,
                "usage": started,
            }
            start = {"type": "message_start", "message": {**message, "content": []}}
            if block["type"] == "text":
                typed, kind, key = block["text"], "text_delta", "text"
                stored = redact(typed)  # what the row keeps, and the sweep reads
            else:
                typed, kind, key = json.dumps(block["input"]), "input_json_delta", "partial_json"
                stored = typed
            opened = {"type": "content_block_start", "index": 0, "content_block": {**block, key: ""}}
            halves = (typed[: len(typed) // 2], typed[len(typed) // 2 :])
            deltas = [
                {"type": "content_block_delta", "index": 0, "delta": {"type": kind, key: half}}
                for half in halves
            ]
            delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": dict(USAGE)}
            line = {"type": "assistant", "session_id": session, "uuid": room.uuid(), "message": message}
            first = [stream_event(start), stream_event(opened), *map(stream_event, deltas), line]
            # Cut off after `first`: message_start usage, output at the estimate rule (written
            # here from the bytes typed, not asked of the runner's code).
            estimate = message_cost({**USAGE, "output_tokens": -(-len(typed.encode()) // BYTES_PER_TOKEN)})
            swept = message_cost({**USAGE, "output_tokens": -(-len(stored.encode()) // BYTES_PER_TOKEN)})
            out.append((first, estimate))
            self.cut_estimates[len(out)] = swept - estimate  # killed before the next write
            out.append(
                (
                    [stream_event(delta), stream_event({"type": "message_stop"})],
                    message_cost(USAGE) - estimate,
                )
            )
            calls.append(message_id)

        def text(words: str) -> None:
            mark = room.mark("L")
            room.written[mark] = turn.motion_id
            api_message({"type": "text", "text": f"{words} {mark}"})

        if behaviour == "answer":
            text(f"{turn.agent.name} answering in {turn.motion_id}")
        elif behaviour == "mention":
            other = room.rng.choice([a for a in room.agents if a.pk != turn.agent_id])
            text(f"@{other.name} over to you")
        elif behaviour == "handoff":
            api_message({"type": "text", "text": self.handoff_reply(turn)})
        elif behaviour == "secret":
            text(f"the key is {SECRET}, do not share it")
        elif behaviour == "loop":
            for n in range(LOOP_CALLS):
                tool_id = f"toolu_{room.rng.getrandbits(48):012x}"
                api_message({"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": "/x"}})
                result = {"type": "tool_result", "tool_use_id": tool_id, "content": f"same {n}"}
                user = {
                    "type": "user",
                    "session_id": session,
                    "uuid": room.uuid(),
                    "message": {"role": "user", "content": [result]},
                }
                out.append(([user], Decimal(0)))
        # "silent": one API call that says nothing (its cost is known from the result line alone)
        usage = {key: value * (len(calls) or 1) for key, value in USAGE.items()}
        result = {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "session_id": session,
            "total_cost_usd": 0.0,
            "usage": usage,
            "uuid": room.uuid(),
        }
        out.append(([result], message_cost(USAGE) if behaviour == "silent" else Decimal(0)))
        return out


# --- the room ---------------------------------------------------------------------------


@dataclass
class Room:
    seed: int
    steps: int = 40
    check: Callable[[Room], None] | None = None  # the invariants (default: check_invariants)
    rng: random.Random = field(init=False)
    step: int = 0
    action: str = "setup"
    queue: list[int] = field(default_factory=list)  # turns sent to a worker, in order
    started: list[tuple[int, int, bool]] = field(default_factory=list)  # (turn, step, scram held)
    printed: dict[int, Printed] = field(default_factory=dict)
    armed: list[str] = field(default_factory=list)  # hazards for the next turn that runs
    db_away: bool = False
    current_run: object = None
    counter: int = 0
    asked: list[tuple] = field(default_factory=list)  # a person's mentions to be answered
    said: list[tuple[str, str]] = field(default_factory=list)  # (Motion, text) of every post the room wrote
    written: dict[str, str] = field(default_factory=dict)  # mark -> the Motion it was first written in
    deleted: set[str] = field(default_factory=set)  # marks of posts taken back
    # (turn, step, marks): a turn that resumed a session whose context holds words taken back
    resumed_taken_back: list[tuple[int, int, list[str]]] = field(default_factory=list)
    handoffs: dict[str, Handoff] = field(default_factory=dict)  # the reply's mark -> its block
    wants: dict[int, str] = field(default_factory=dict)  # agent -> what a person asked of its next turn
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    # ids and marks, all from the seed
    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128)))

    def mark(self, kind: str) -> str:
        self.counter += 1
        return f"[{kind}{self.counter}]"

    # --- setup --------------------------------------------------------------------------
    def setup(self) -> None:
        workspace = tempfile.gettempdir()
        n_people, n_agents = self.rng.choice((2, 3)), self.rng.choice((2, 3))
        self.people = [UserFactory(username=name) for name in ("justin", "rosemary", "dana")[:n_people]]
        type(self.people[0]).objects.filter(pk=self.people[0].pk).update(is_staff=True)
        self.people[0].is_staff = True  # staff signed in with their key: may take back anyone's words
        self.ssh = {p.username: self.rng.random() < 0.7 for p in self.people}
        self.ssh[self.people[0].username] = True
        names = ("abot", "bbot", "cbot")[:n_agents]
        self.agents = [AgentFactory(name=name, listening=False, binary="/bin/true") for name in names]
        self.scripts = {
            a.pk: [self.rng.choice(BEHAVIOURS) for _ in range(4)] + ["answer", "mention"] for a in self.agents
        }
        self.motions = [
            MotionFactory(slug="room-one", workspace=workspace, visibility=Visibility.SIGNED_IN),
            MotionFactory(slug="room-two", workspace=workspace, visibility=Visibility.MEMBERS),
        ]
        self.motions[1].people.add(*self.people[:-1])
        for motion in self.motions:
            motion.agents.add(*self.agents)
        self.dial = Dials.load().agent_chain_turns

    def readers(self, motion_id: str) -> set[str]:
        """The people who may read (and post in) a Motion, by the room's own table."""
        people = self.people if motion_id == "room-one" else self.people[:-1]
        return {p.username for p in people}

    def behaviour_for(self, turn: Turn) -> str:
        if turn.reason == "mention" and (wanted := self.wants.pop(turn.agent_id, None)):
            return wanted
        if turn.reason == "command":
            return "answer"
        if turn.reason == "compact":
            return "loop" if "loop" in self.scripts[turn.agent_id] else "answer"
        return self.rng.choice(self.scripts[turn.agent_id])

    # --- actions ------------------------------------------------------------------------
    def person_says(self, person, motion, text: str, source: str = "web") -> Message:
        message = MessageFactory(
            motion=motion,
            sender=person.username,
            author=person,
            source=source,
            sign_in="ssh" if self.ssh[person.username] else "password",
            text=text,
            created_at=self.clock.now(),
        )
        self.note_said(motion, text)
        for agent in self.agents:
            if re.search(rf"@{agent.name}\b", text):
                self.asked.append((message.pk, agent, text, person.username))
        message_created.send(sender=Message, message=message)
        return message

    def note_said(self, motion, text: str) -> None:
        self.said.append((motion.pk, text))
        for mark in MARK.findall(text):
            self.written.setdefault(mark, motion.pk)

    def agent_posts(self, agent, motion, text: str) -> Message:
        """An agent's key posting through the API, outside any turn."""
        self.note_said(motion, text)
        message = MessageFactory(
            motion=motion,
            sender=agent.name,
            agent=agent,
            source="api",
            text=text,
            created_at=self.clock.now(),
        )
        message_created.send(sender=Message, message=message)
        return message

    def raise_scram(self) -> None:
        if Scram.holding() is None:
            stopping.raise_scram(self.rng.choice(self.people).username, f"drill {self.mark('S')}")

    def act(self, action: str) -> None:
        rng, motion = self.rng, self.rng.choice(self.motions)
        readers = self.readers(motion.pk)
        person = rng.choice([p for p in self.people if p.username in readers])
        agent = rng.choice(self.agents)
        if action == "post":
            self.person_says(person, motion, f"a thought {self.mark('P')}")
        elif action == "mention":
            named = rng.sample(self.agents, rng.choice((1, 1, 1, 2)))
            self.person_says(
                person, motion, " ".join(f"@{a.name}" for a in named) + f" what now? {self.mark('P')}"
            )
        elif action == "agent_mention":
            other = rng.choice([a for a in self.agents if a.pk != agent.pk])
            self.agent_posts(agent, motion, f"@{other.name} your turn {self.mark('P')}")
        elif action == "key_post":
            self.agent_posts(agent, motion, f"a note from my key {self.mark('P')}")
        elif action == "command":
            self.person_says(person, motion, f"@{agent.name} /{rng.choice(('context', 'usage', 'compact'))}")
        elif action == "stop":
            if self.queue and rng.random() < 0.5:
                self.armed.append("stop")
            else:
                if rng.random() < 0.5:  # asked from a terminal (it waits to see if answered), then ■
                    asker = rng.choice([p for p in self.people if p.username in readers])
                    self.person_says(
                        asker, motion, f"@{agent.name} one more thing {self.mark('P')}", source="terminal"
                    )
                stopping.stop_turns(motion, person.username)
        elif action == "scram":
            self.armed.append("scram") if self.queue else self.raise_scram()
        elif action == "lift":
            stopping.lift_scram(person.username)
        elif action == "listening":
            from wakes.decision.steering import change

            value = rng.choice(("off", "on", "mentions", ""))
            until = (
                self.clock.now() + timedelta(minutes=rng.choice((2, 10)))
                if value == "off" and rng.random() < 0.5
                else None
            )
            change(motion, agent, "listening", value, until, person)
        elif action in ("worker_killed", "db_blip"):
            self.armed.append(action)
        elif action == "delete":
            if rng.random() < 0.5:  # now, or while the turn a mention wakes runs (hazard "delete")
                self.take_back(rng)
            else:
                self.armed.append("delete")
                self.person_says(person, motion, f"@{agent.name} what did I say? {self.mark('P')}")
        elif action == "handoff":
            self.wants[agent.pk] = "handoff"
            self.person_says(person, motion, f"@{agent.name} take this where it belongs {self.mark('P')}")

    def take_back(self, rng: random.Random, read: str = "") -> None:
        """A post the room wrote, taken back through the one door (retract.take_back_as): by its
        author, or by staff signed in with their key (anyone's words, an agent's too). `read`: a
        running turn's prompt, whose marks are chosen first."""
        marks = [m for _, text in self.said for m in MARK.findall(text) if m not in self.deleted]
        marks += [m for m in self.written if m.startswith("[L") and m not in self.deleted]
        if (reading := [m for m in marks if m in MARK.findall(read)]) and rng.random() < 0.8:
            marks = reading
        if not marks:
            return
        mark = rng.choice(sorted(set(marks), key=lambda m: (m[1], int(m[2:-1]))))
        message = (
            Message.objects.filter(
                motion__in=self.motions, text__contains=mark, kind__in=retract.TAKABLE_KINDS
            )
            .exclude(source=Source.SYSTEM)
            .exclude(text__contains="```handoff")  # a reply quoting it: the post itself is wanted
            .order_by("created_at")
            .first()
        )
        if message is None:  # never stored (its turn was stopped first), or a handoff line's copy
            return
        by = next((p for p in self.people if p.pk == message.author_id), self.people[0])
        taker = retract.Taker(by, sign_in="ssh" if self.ssh[by.username] else "password")
        try:
            retract.take_back_as(message, taker)
        except retract.Refused:
            return
        old = message.text  # this copy still holds what it said
        self.deleted.update(MARK.findall(old))

    # --- the worker ------------------------------------------------------------------------
    def run_workers(self, limit: int = 6) -> None:
        """Run what was sent, in order, as a worker would; a killed worker's turn is swept up
        once its lease has lapsed."""
        ran = 0
        while self.queue and ran < limit:
            turn_id = self.queue.pop(0)
            self.clock.advance(1)
            try:
                turns.execute_turn(turn_id)
            except WorkerKilled:
                self.db_away = False
                from motion_runner.conf import app_settings

                self.clock.advance(app_settings.RUNNER_LEASE_SECONDS + 1)
                reclaim.reclaim_lapsed_turns(self.clock.now())
            ran += 1
        self.armed.clear()

    # --- the run ----------------------------------------------------------------------------
    def run(self) -> Room:
        start = datetime(2026, 12, 7, 9, 0, tzinfo=timezone.get_current_timezone())
        self.clock = SimClock(start)
        with ExitStack() as stack:
            stack.enter_context(self.clock.installed())
            stack.enter_context(
                patched(
                    turns, "send_turn", lambda turn, countdown=0: self.queue.append(getattr(turn, "pk", turn))
                )
            )
            stack.enter_context(patched(turns, "run_harness", FakeHarness(self)))
            stack.enter_context(patched(turn_run, "connection", _NoClose(turn_run.connection)))
            stack.enter_context(patched(turn_run, "database_answers", lambda: True))
            stack.enter_context(patched(answers, "send_when_broker_answers", lambda *args, **kwargs: True))
            with TestCase.captureOnCommitCallbacks(execute=True):
                self.setup()
            check = self.check or check_invariants
            for step in range(1, self.steps + 1):
                self.step = step
                self.action = self.rng.choices([a for a, _ in ACTIONS], [w for _, w in ACTIONS])[0]
                self.clock.advance(self.rng.choice((2, 5, 20, 60)))
                with TestCase.captureOnCommitCallbacks(execute=True):
                    self.act(self.action)
                with TestCase.captureOnCommitCallbacks(execute=True):
                    self.run_workers()
                self.log.append(f"{self.step} {self.action}")
                check(self)
        return self

    def broken(self, what: str) -> InvariantBroken:
        return InvariantBroken(self.seed, self.step, self.action, what)


class _NoClose:
    """The runner closes its connection when the database drops it; in the simulation the
    connection is the test's transaction, so the close is a no-op (the blip is simulated).
    Everything else is the real connection's (the runner asks its vendor, sets its bounds)."""

    def __init__(self, real) -> None:
        self._real = real

    def close(self) -> None:
        pass

    def __getattr__(self, name: str):
        return getattr(self._real, name)


@contextmanager
def patched(owner, name: str, value) -> Iterator[None]:
    real = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, real)


# --- the invariants -----------------------------------------------------------------------
# A few queries a step (the room's rows are read once and every invariant looks at them).


@dataclass
class Snapshot:
    messages: list[tuple]  # (motion_id, text, author_id, agent_id, kind, created_at)
    turns: list[dict]
    wakes: list[tuple]  # (message_id, agent_id, turn_id, status, hold, asked by an agent)
    handed: list[
        tuple
    ]  # (motion_id, raw) of the runner's handoff lines (read only once a handoff was written)


def snapshot(room: Room) -> Snapshot:
    motions = [m.pk for m in room.motions]
    messages = list(
        Message.objects.filter(motion_id__in=motions).values_list(
            "motion_id", "text", "author_id", "agent_id", "kind", "created_at"
        )
    )
    turns = list(
        Turn.objects.filter(motion_id__in=motions)
        .annotate(spent=Sum("spend__amount"))
        .values(
            "pk",
            "motion_id",
            "reason",
            "reason_detail",
            "status",
            "ended_by",
            "ended_at",
            "started_at",
            "cost_usd",
            "cost_source",
            "prompt",
            "spent",
        )
    )
    wakes = list(
        MentionWake.objects.filter(message__motion_id__in=motions).values_list(
            "message_id", "agent_id", "turn_id", "status", "hold", "message__agent_id"
        )
    )
    handed = (
        list(
            Message.objects.filter(
                motion_id__in=motions, source=Source.SYSTEM, raw__has_key="handoff"
            ).values_list("motion_id", "raw")
        )
        if room.handoffs
        else []
    )
    return Snapshot(messages, turns, wakes, handed)


def check_invariants(room: Room) -> None:
    seen = snapshot(room)
    for check in INVARIANTS:
        check(room, seen)


def chain_bounded(room: Room, seen: Snapshot) -> None:
    """No agent-woken run longer than the dial without a person's post (in the Motion)."""
    for motion in room.motions:
        people = [
            at
            for m, _, author, agent, kind, at in seen.messages
            if m == motion.pk and author and agent is None and kind == Kind.TEXT
        ]
        since = max(people, default=None)
        started = {
            t["pk"]
            for t in seen.turns
            if t["motion_id"] == motion.pk
            and t["reason"] == "mention"
            and t["started_at"] is not None
            and (since is None or t["started_at"] > since)
        }
        by_people = {turn for _, _, turn, _, _, asker in seen.wakes if turn in started and asker is None}
        woken = {turn for _, _, turn, _, _, _ in seen.wakes if turn in started} - by_people
        if len(woken) > room.dial:
            raise room.broken(
                f"{len(woken)} agent-woken turns in {motion.pk} with no person's post between (dial {room.dial})"
            )


def mentions_answered(room: Room, seen: Snapshot) -> None:
    """Every person's mention answered (a turn) or held with a reason shown, once nothing waits
    (while a scram holds, its line in every thread is the reason)."""
    if room.queue or Scram.holding() is not None:
        return
    records = {(message, agent): (turn, status, hold) for message, agent, turn, status, hold, _ in seen.wakes}
    for message_id, agent, text, sender in room.asked:
        record = records.get((message_id, agent.pk))
        if record is None:
            raise room.broken(f"{sender}'s mention of @{agent.name} ({text!r}) was never answered")
        turn, status, hold = record
        if turn is None and not hold and status != "woken":
            raise room.broken(f"{sender}'s mention of @{agent.name} is {status} with no reason shown")
        if turn is None and status == "let_go" and not said_to(seen, message_id, sender, agent.name):
            raise room.broken(f"{sender}'s mention of @{agent.name} is let go and the thread never says so")
    room.asked.clear()


def said_to(seen: Snapshot, message_id, sender: str, agent: str) -> bool:
    """A wake line in the post's Motion, from its time on, naming who asked and the agent."""
    post = Message.objects.filter(pk=message_id).values("motion_id", "created_at").first()
    if post is None:
        return True  # the post itself was taken back: nothing is owed on it
    return (
        Message.objects.filter(
            motion_id=post["motion_id"],
            kind=Kind.WAKE,
            created_at__gte=post["created_at"],
            text__contains=sender,
        )
        .filter(text__contains=f"@{agent}")
        .exists()
    )


def carries_a_copy(text: str) -> bool:
    """A handoff reply or the runner's handoff line: it quotes posts, which are then in the thread
    twice by design (what stored_once counts is each line the room wrote)."""
    return "```handoff" in text or text.startswith(("↪ Handed over", "↩ Brought in"))


def stored_once(room: Room, seen: Snapshot) -> None:
    """No line stored twice: every mark the room wrote is in each Motion's thread at most once."""
    marks: set[tuple[str, str]] = set()
    for motion_id, text, *_ in seen.messages:
        if carries_a_copy(text):
            continue
        for mark in MARK.findall(text):
            if (motion_id, mark) in marks:
                raise room.broken(f"{mark} is stored twice in {motion_id}")
            marks.add((motion_id, mark))


def ledger_is_usage_times_price(room: Room, seen: Snapshot) -> None:
    """Each ended turn's ledger is its cost, and its cost is what its harness used × the price."""
    for turn in seen.turns:
        if turn["ended_at"] is None:
            continue
        cost, spent = turn["cost_usd"] or Decimal(0), turn["spent"] or Decimal(0)
        if spent != cost:
            raise room.broken(
                f"turn {turn['pk']} ({turn['reason']}) costs ${cost} but the ledger has ${spent}"
            )
        printed = room.printed.get(turn["pk"])
        expected = printed.cost if printed else Decimal(0)
        if cost != expected:
            raise room.broken(
                f"turn {turn['pk']} ({turn['reason']}, {printed.behaviour if printed else 'never ran'}, "
                f"{turn['status']}, ended by {turn['ended_by']}) is priced ${cost} from "
                f"{turn['cost_source']!r}; its harness used ${expected} (usage × price)"
            )


def nothing_unreadable(room: Room, seen: Snapshot) -> None:
    """No secret stored unredacted, nor in any wake; no wake carries the other Motion's words."""
    if any(SECRET in text for _, text, *_ in seen.messages) or any(SECRET in t["prompt"] for t in seen.turns):
        raise room.broken("the secret is stored unredacted")
    marks: dict[str, set[str]] = defaultdict(set)
    for motion_id, text, *_ in seen.messages:
        marks[motion_id].update(MARK.findall(text))
    for turn in seen.turns:
        here = marks[turn["motion_id"]]
        elsewhere = set().union(*(v for k, v in marks.items() if k != turn["motion_id"]))
        leaked = (set(MARK.findall(turn["prompt"])) & elsewhere) - here
        if leaked:
            raise room.broken(
                f"turn {turn['pk']}'s wake in {turn['motion_id']} carries {sorted(leaked)} from the other Motion"
            )


def taken_back_gone(room: Room, seen: Snapshot) -> None:
    """No words taken back are stored anywhere any more: not in a line (the post's own row, a
    handoff line that carried them) and not in any wake's prompt (stored prompts are scrubbed, and
    a later wake reads the record as it now stands)."""
    if not room.deleted:
        return
    for motion_id, text, *_ in seen.messages:
        if kept := room.deleted.intersection(MARK.findall(text)):
            raise room.broken(
                f"taken back {sorted(kept)} still stored in a line of {motion_id}: {text[:120]!r}"
            )
    for turn in seen.turns:
        if kept := room.deleted.intersection(MARK.findall(turn["prompt"])):
            raise room.broken(f"turn {turn['pk']}'s wake still carries {sorted(kept)}, taken back")


def taken_back_never_resumed(room: Room, seen: Snapshot) -> None:
    """After a take-back, no turn resumes a session whose context holds the words (a turn that
    read them, or one forked from it; its id named by the harness before or after the take-back)."""
    for turn_id, step, kept in room.resumed_taken_back:
        raise room.broken(f"turn {turn_id} (step {step}) resumed a session that read {kept}, taken back")


def handoff_allowed(room: Room, seen: Snapshot) -> None:
    """Nothing a reader may not read reaches a wake through a handoff: a `to:` block lands only
    where every person whose post woke its turn may post; a `from:` block brings words in only
    when every reader here may read where they came from."""
    for motion_id, raw in seen.handed:
        # the reply's mark, bare in its `about:` (a bracketed mark would count as a line of its own)
        marks = [f"[{m}]" for m in re.findall(r"\(handoff (L\d+)\)", raw["handoff"].get("about", ""))]
        block = room.handoffs.get(marks[0]) if marks else None
        if block is None or block.dest != motion_id:
            raise room.broken(f"a handoff line in {motion_id} that no reply of the room sent there: {raw}")
        readers = room.readers(motion_id)
        if block.pulled and not readers <= room.readers(block.origin):
            raise room.broken(
                f"{marks[0]} brought into {motion_id} from {block.origin}, which "
                f"{sorted(readers - room.readers(block.origin))} may not read"
            )
        if not block.pulled and (outsiders := block.authors - readers):
            raise room.broken(
                f"{marks[0]} handed over to {motion_id}, where {sorted(outsiders)} (who woke it) may not post"
            )


def no_turn_in_a_scram(room: Room, seen: Snapshot) -> None:
    for turn_id, step, held in room.started:
        if held:
            raise room.broken(f"turn {turn_id} started at step {step} while a scram held")


def compaction_bounded(room: Room, seen: Snapshot) -> None:
    """A compaction never queues another."""
    compactions = {t["pk"] for t in seen.turns if t["reason"] == "compact"}
    for turn in seen.turns:
        match = (
            re.match(r"compacting after turn (\d+)", turn["reason_detail"])
            if turn["reason"] == "compact"
            else None
        )
        if match and int(match[1]) in compactions:
            raise room.broken(f"compaction turn {turn['pk']} was queued after compaction turn {match[1]}")


INVARIANTS = (
    chain_bounded,
    mentions_answered,
    stored_once,
    ledger_is_usage_times_price,
    nothing_unreadable,
    no_turn_in_a_scram,
    compaction_bounded,
    taken_back_gone,
    taken_back_never_resumed,
    handoff_allowed,
)


def run_room(room: Room) -> Room:
    """One room, in a savepoint rolled back after it (so many seeds share one test's database)."""
    with transaction.atomic():
        try:
            return room.run()
        finally:
            transaction.set_rollback(True)


def run_seed(seed: int, steps: int = 40, check=None) -> Room:
    return run_room(Room(seed, steps=steps, check=check))
