"""A page per Motion (`/motions/<slug>/wakes/`): what each kind of wake would tell each agent now,
footer included, without waking anyone. The prompts are built as a wake builds them
(wakes/turn/context.py), never summarized here (nothing is spent), and passed through the
runner's prompt finalizers, as `enqueue_turn` passes them."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import render

from motion_runner.models import Agent, Message, Motion
from motion_runner.people.access import access, readable_motion
from motion_runner.people.context import sign_in_of
from motion_runner.signals import prompt_finalizers

from ..consider_loop.considering import new_posts
from ..decision.steering import wake_settings
from ..decision.trust import decide, decide_burst
from ..models import Consideration, Dials, ListenState, clock
from ..models.in_force import resolve
from ..models.listening import WakeKind
from ..turn.context import mention_prompt, new_posts_prompt, quiet_prompt
from ..turn.wake import human_duration


def finalized(prompt: str, motion: Motion, agent: Agent, mode: str, reason: str) -> str:
    for finalize in prompt_finalizers:
        prompt = finalize(prompt, motion, agent, mode, reason)
    return prompt


def previews_for(motion: Motion, agent: Agent, reader, sign_in: str) -> list[dict]:
    now = clock.now()
    dials = Dials.load()
    resolved = resolve(motion.pk, agent.pk, dials)
    state = ListenState.objects.filter(motion=motion, agent=agent).first()
    kinds = []

    sample = Message(
        motion=motion,
        sender=reader.get_username(),
        author=reader,
        sign_in=sign_in,
        source="web",
        text=f"@{agent.name} (your mention would be here)",
        created_at=now,
    )
    mode = decide(sample).mode
    effort, model = wake_settings(motion.pk, agent.pk, "mention", resolved.mention_effort)
    kinds.append(
        {
            "kind": "a mention by you",
            "mode": mode,
            "effort": effort,
            "model": model or agent.model or "the harness's default",
            "prompt": finalized(
                mention_prompt(motion, agent, [sample], summarize=False), motion, agent, mode, "mention"
            ),
        }
    )

    through = state.last_post_at if state is not None and state.pending else None
    posts = []
    if through is not None:
        posts = new_posts(
            Consideration(
                motion_id=motion.pk,
                agent_id=agent.pk,
                through=through,
                previous_through=state.considered_through,
            )
        )
    mode = decide_burst(posts).mode if posts else "look"
    effort, model = wake_settings(motion.pk, agent.pk, WakeKind.NEW_POSTS, resolved.consider_effort)
    previous = state.considered_through if state is not None else None
    body = new_posts_prompt(motion, agent, posts, previous, summarize=False) if posts else ""
    kinds.append(
        {
            "kind": "new posts" + ("" if posts else " (none are waiting now: nothing would be quoted)"),
            "mode": mode,
            "effort": effort,
            "model": model or agent.model or "the harness's default",
            "prompt": finalized(body, motion, agent, mode, WakeKind.NEW_POSTS) if posts else "",
        }
    )

    quiet_since = (state.last_said_at or state.created_at) if state is not None else now
    effort, model = wake_settings(motion.pk, agent.pk, WakeKind.QUIET, resolved.consider_effort)
    kinds.append(
        {
            "kind": "a long quiet",
            "mode": "look",
            "effort": effort,
            "model": model or agent.model or "the harness's default",
            "prompt": finalized(
                quiet_prompt(motion, agent, human_duration(now - quiet_since)),
                motion,
                agent,
                "look",
                WakeKind.QUIET,
            ),
        }
    )
    return kinds


def wake_preview(request, slug: str):
    """For people who may post in the Motion (the prompts show its rules and footers)."""
    motion = readable_motion(request.user, slug)
    if not request.user.is_authenticated or not access().can_post(request.user, motion):
        raise PermissionDenied("Only a person who may post in this Motion sees what its wakes would say.")
    sign_in = sign_in_of(request)
    agents = [
        {"agent": agent, "kinds": previews_for(motion, agent, request.user, sign_in)}
        for agent in motion.agents.order_by("name")
    ]
    return render(request, "motion_runner/wake_preview.html", {"motion": motion, "agents": agents})
