"""The lines issue 33 added to wakes (finalize_prompt puts them in, wakes/turn/footer.py):

- a Motion's first wake of an agent (no session of it here yet, no word of it) opens with where it is and the
  letter: the Motion's own (its menus' `letter`), else the `first_session_letter` dial. Only that
  wake: the letter is not in the agent's system prompt, which every wake would carry;
- the context other Motions handed to it here since it last spoke (wakes/turn/handoff.py);
- a to-do line when the Motion has open to-dos. memory-lane's to-dos are its people's list on
  PickiPedia (a review, a merge, a deploy someone was left to do); this project has no such list,
  and its smallest honest form is the one it keeps already: the open request cards (tools, merge,
  deploy) only a person can answer;
- greeting guidance and the handoff how-to, in every wake (dials; blank turns each off).
"""

from __future__ import annotations

from motion_runner.models import Agent, Message, Motion, MotionSession, Source

from ..decision.quoting import defuse, inline_quote
from ..decision.steering import steering_for
from ..models import Dials, Greeting, WakeRequest
from .context import last_word_at
from .handoff import handed_over
from .wake import human_duration

TODOS_SHOWN = 5


def new_here(motion: Motion, agent: Agent) -> bool:
    """No session of the agent is here and it has said nothing here (a line the runner said for
    it, its wake line, does not count)."""
    return not (
        MotionSession.objects.filter(motion=motion, agent=agent).exists()
        or Message.objects.filter(motion=motion, agent=agent).exclude(source=Source.SYSTEM).exists()
    )


def first_session_opening(motion: Motion, agent: Agent) -> str | None:
    """The opening of the agent's first wake in this Motion; None once it has been here."""
    if not new_here(motion, agent):
        return None
    letter = steering_for(motion.pk, None).letter.strip() or Dials.load().first_session_letter.strip()
    lines = [
        f'<new-motion motion="{motion.pk}">',
        f"You are in the Motion “{defuse(motion.title)}” (/motions/{motion.pk}/), and it is new to you: no "
        "session of yours has been here, so this one has just started, with none of your history in it."
        + (
            " Before you answer, read the letter below, left for exactly this. Then answer what was asked."
            if letter
            else ""
        ),
    ]
    if letter:
        lines += ["", defuse(letter)]
    lines.append("</new-motion>")
    return "\n".join(lines)


def handed_here(motion: Motion, agent: Agent) -> str | None:
    return handed_over(motion, agent, last_word_at(motion.pk, agent))


def todo_line(motion: Motion) -> str | None:
    """The Motion's open to-dos: its request cards still waiting on a person."""
    open_requests = WakeRequest.objects.filter(motion=motion, status=WakeRequest.Status.OPEN)
    count = open_requests.count()
    if not count:
        return None
    shown = [
        f"{r.kind} for @{r.agent.name}: {inline_quote(r.to, 120)}"
        for r in open_requests.select_related("agent").order_by("created_at")[:TODOS_SHOWN]
    ]
    more = f" and {count - len(shown)} more" if count > len(shown) else ""
    return (
        f"This Motion has {count} open to-do{'s' if count != 1 else ''} for its people (request cards only a "
        f"person can answer): {'; '.join(shown)}{more}. Do not ask again for what is already open; when one "
        "is done, say so."
    )


def todo_list_where(dials: Dials, motion: Motion) -> str | None:
    """The dial `todo_list_line` (issue 40, item 4): where the Motion's people keep their to-do
    list, `{slug}` its slug; None when blank."""
    text = (dials.todo_list_line or "").strip()
    return text.replace("{slug}", motion.pk) if text else None


def guidance(motion: Motion | None = None) -> list[str]:
    """Where the people's to-do list is (for a Motion), greeting guidance and the handoff how-to
    (dials, read once; blank: not said)."""
    dials = Dials.load()
    where = todo_list_where(dials, motion) if motion is not None else None
    return [
        text.strip() for text in (where or "", dials.greeting_guidance, dials.handoff_how) if text.strip()
    ]


# --- arrivals (wakes/consider_loop/arrivals.py) ------------------------------------------------


def why(greeting: Greeting) -> str:
    """Why the greeter was asked: who arrived, how, after how long away."""
    name = greeting.person.get_username()
    came = "signed in" if greeting.how == Greeting.How.SIGNED_IN else "posted"
    if greeting.away_since is None:
        return f"{name} {came}; they have not said anything in a Motion yet"
    away = greeting.at - greeting.away_since
    said = f"{away.days} days" if away.days >= 2 else human_duration(away)
    return f"{name} {came} after {said} away"


def arrival_note(motion: Motion, agent: Agent, reason: str) -> str | None:
    """In the greeter's wake a mention brought (and any wake of it here before it speaks): who
    arrived, and the ask. An arrival's own wake says it in its frame."""
    if reason == "arrival":
        return None
    greetings = Greeting.objects.filter(motion=motion, agent=agent, turn__isnull=True)
    if (since := last_word_at(motion.pk, agent)) is not None:
        greetings = greetings.filter(at__gt=since)
    greeting = greetings.select_related("person").order_by("-at").first()
    if greeting is None:
        return None
    ask = Dials.load().arrival_ask.strip()
    return f"An arrival: {why(greeting)}. You are the one agent asked to greet them. {ask}".strip()
