"""End to end: what the real Claude Code CLI receives when a wake starts, as the fake model server
records it. People and another agent post, then a mention: the model reads every post since the
agent last spoke, marked, inside the frame, with the footer last; a 1 MB post wakes cleanly.

With WRITE_WAKE_PROMPTS=1, `test_one_real_prompt_of_each_wake_kind` writes docs/wake-prompts.md
from what the CLI received."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from motion_runner.models import Message, Turn, TurnStatus
from motion_runner.runner.turns import execute_turn
from motion_runner.signals import message_created
from tests.factories import MessageFactory, MotionFactory, UserFactory
from tests.fakes.anthropic_api import Reply, Text
from tests.paths import ROOT
from tests.wakes_support import clock, dials, finish, room, say
from wakes.consider_loop.handlers import wake_for_watch
from wakes.models import WakeRequest
from wakes.turn.context import new_posts_prompt, quiet_prompt
from wakes.turn.footer import wake_footer
from wakes.turn.wake import wake

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

DOC = ROOT / "docs" / "wake-prompts.md"


@pytest.fixture
def workroom(room, tmp_path):
    room.motion.workspace = str(tmp_path)
    room.motion.title = "Cryptograss"
    room.motion.description = "Merch and posters for the spring tour."
    room.motion.save()
    room.magent.harness = "claude-code"
    room.magent.save()
    return room


def received(fake) -> str:
    """The prompt as the model got it: the CLI's last user message."""
    return fake.message_requests()[-1].last_user_text()


def run(turn: Turn) -> Turn:
    ran = execute_turn(turn.pk)
    assert ran is not None and ran.status == TurnStatus.FINISHED, ran and ran.error
    return ran


def mention(room, clock, text: str, who=None) -> Turn:
    say(room.motion, who or room.rosemary, text, clock.advance(1) and clock)
    return Turn.objects.filter(agent=room.magent, reason="mention").latest("pk")


def test_a_mention_gives_the_model_every_post_since_the_agent_last_spoke(
    claude_binary, claude_on_fake, workroom, clock
):
    claude_on_fake.script(Reply(Text("Forty shirts, blue.")))
    room = workroom
    say(room.motion, room.magent, "I will count the shirts.", clock)
    say(room.motion, room.justin, "The shirts came in blue.", clock.advance(1) and clock)
    say(room.motion, room.codey, "I counted forty of them.", clock.advance(1) and clock)
    say(room.motion, room.justin, "Posters are late.", clock.advance(1) and clock)

    run(mention(room, clock, "@magent so how many shirts, and what colour?"))

    prompt = received(claude_on_fake)
    assert prompt.startswith('<motion-wake motion="cryptograss" reason="mention">')
    new = [line for line in prompt.splitlines() if line.startswith("► ")]
    assert len(new) == 4
    for text in (
        "The shirts came in blue.",
        "I counted forty of them.",
        "Posters are late.",
        "how many shirts",
    ):
        assert any(text in line for line in new), text
    assert "I will count the shirts." in prompt and not any("I will count" in line for line in new)
    assert (
        prompt.index("how many shirts")
        < prompt.index("</motion-wake>")
        < prompt.index("This wake is look-only")
    )
    assert prompt.rstrip().endswith(wake_footer("look").rstrip())


def test_a_megabyte_post_wakes_cleanly(claude_binary, claude_on_fake, workroom, clock):
    claude_on_fake.script(Reply(Text("That is a long one.")))
    room = workroom
    say(room.motion, room.justin, "log: " + "x" * (1024 * 1024), clock)

    turn = run(mention(room, clock, "@magent what does that log say?"))

    prompt = received(claude_on_fake)
    assert "what does that log say?" in prompt and "more characters]" in prompt
    assert turn.prompt.rstrip() == prompt.rstrip()


class RealTime:
    """The wall clock, as `say` takes a clock: the runner writes the agent's own words at the
    real time, so the record the prompts are read from is in one time."""

    def now(self):
        return timezone.now()

    def advance(self, seconds: float = 0):
        return True


def test_one_real_prompt_of_each_wake_kind(claude_binary, claude_on_fake, workroom):
    clock = RealTime()
    claude_on_fake.default = Reply(Text("<silent>nothing to add</silent>"))
    room = workroom
    kinds: dict[str, str] = {}
    say(room.motion, room.justin, "The shirts came in blue.", clock)
    say(room.motion, room.codey, "I counted forty of them.", clock.advance(1) and clock)
    run(mention(room, clock, "@magent so how many shirts, and what colour?"))
    kinds["mention"] = received(claude_on_fake)

    posts = [
        say(
            room.motion,
            room.rosemary,
            "Posters are late, the printer says Friday.",
            clock.advance(60) and clock,
        )
    ]
    prompt = new_posts_prompt(room.motion, room.magent, posts)
    run(
        wake(
            room.motion,
            room.magent,
            prompt=prompt,
            reason="new_posts",
            why="1 new post",
            effort="medium",
            cap=None,
            woken_by=posts[-1],
            dispatch=False,
            posts=posts,
        )
    )
    kinds["new_posts (a consideration)"] = received(claude_on_fake)

    prompt = quiet_prompt(room.motion, room.magent, "50 min")
    run(
        wake(
            room.motion,
            room.magent,
            prompt=prompt,
            reason="quiet",
            why="a long quiet",
            effort="medium",
            cap=None,
            woken_by=None,
            dispatch=False,
        )
    )
    kinds["quiet"] = received(claude_on_fake)

    line = say(
        room.motion,
        room.justin,
        "PickiPedia: Talk:Merch was edited by Ada (+120 bytes)",
        clock.advance(60) and clock,
        source="watch",
        kind="watch",
    )
    run(wake_for_watch(line, room.magent, dispatch=False))
    kinds["watch"] = received(claude_on_fake)

    ada = UserFactory(username="ada")
    say(room.motion, ada, "See you after the tour!", BackThen(timezone.now() - timedelta(days=3)))
    say(room.motion, ada, "Back from the tour: did the posters make it?", clock)
    run(Turn.objects.get(motion=room.motion, reason="arrival"))
    kinds["arrival (someone back after the gap)"] = received(claude_on_fake)

    handed_over_from_jams(room, clock)
    card = MessageFactory(
        motion=room.motion, sender="magent", agent=room.magent, source="system", kind="request"
    )
    WakeRequest.objects.create(
        motion=room.motion, agent=room.magent, message=card, kind="merge", to="merge the poster PR #7"
    )
    run(mention(room, clock, "@magent what did jams settle?"))
    kinds["mention, with a handoff carried and an open to-do"] = received(claude_on_fake)

    for kind, prompt in kinds.items():
        # The agent's first wake here opens with where it is and the letter (wakes/turn/wake_lines.py).
        assert re.match(
            r'(<new-motion motion="cryptograss">.*?</new-motion>\n\n)?<motion-wake motion="cryptograss" '
            r'reason="\w+">',
            prompt,
            re.DOTALL,
        )
        assert prompt.startswith("<new-motion") == (kind == "mention")
        assert prompt.rstrip().endswith(wake_footer("look").rstrip())
    assert "merge for @magent" in prompt and "Settled: open with Salt Creek." in prompt
    if os.environ.get("WRITE_WAKE_PROMPTS") == "1":
        write_doc(kinds)


class BackThen(RealTime):
    def __init__(self, moment):
        self.moment = moment

    def now(self):
        return self.moment


def handed_over_from_jams(room, clock) -> None:
    """@magent, asked in "jams", hands the setlist over to "cryptograss" (wakes/turn/handoff.py)."""
    jams = MotionFactory(slug="jams", title="Jams")
    jams.agents.add(room.magent)
    ask = say(jams, room.justin, "@magent take the setlist to cryptograss", clock)
    turn = Turn.objects.get(motion=jams, reason="mention")
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.FINISHED, woken_by=ask)
    reply = MessageFactory(
        motion=jams,
        sender="magent",
        agent=room.magent,
        source="runner",
        turn=turn,
        text="Taking it over.\n\n```handoff\nto: cryptograss\nabout: the Saturday setlist\n---\n"
        "Settled: open with Salt Creek. Open: who brings the banjo.\n```",
    )
    message_created.send(sender=Message, message=reply)


def write_doc(kinds: dict[str, str]) -> None:
    parts = [
        "# What a woken agent reads",
        "",
        "One real prompt of each wake kind, as the Claude Code CLI received it (recorded at the fake",
        "model server by `tests/e2e/test_e2e_wake_prompts.py`; `WRITE_WAKE_PROMPTS=1` writes this file",
        "again). The Motion, its people (justin, rosemary), another agent (codey) and the posts are the",
        "test's; the times are its clock's. The frame, the marks, the footer and its safety lines are",
        "exactly what the runner sends (`wakes/turn/context.py`, `wakes/turn/footer.py`, the dials).",
        "An agent's first wake in a Motion opens with where it is and the letter (`<new-motion>`); every",
        "wake carries the greeting guidance and the handoff how-to, and, when there are any, the context",
        "other Motions handed over and the open to-dos (`wakes/turn/wake_lines.py`, `wakes/turn/handoff.py`);",
        "someone back after `greet_gap_hours` wakes one agent to greet them (`wakes/consider_loop/arrivals.py`).",
        "",
    ]
    for kind, prompt in kinds.items():
        parts += [f"## {kind}", "", "````text", prompt.rstrip(), "````", ""]
    DOC.write_text("\n".join(parts))
