"""`@agent /compact [what to keep]`, `@agent /context`, `@agent /usage` (or `/cost`) from the thread
(issue 24).

A person who may grant full tools (signed in with an SSH key, or named in `full_tools_for`)
runs the command as the whole prompt of a maintenance turn in the agent's session: no footer,
no steering, nothing else (the CLI reads a leading slash as its own command). The CLI's answer
lands in the thread as any turn's words do (Claude Code answers /context and /usage with one
synthetic assistant message, recorded). So may the first run's account while DEBUG is on
(motion_runner/people/first_run.py). Anyone else is told who may, and nothing wakes: a command,
run or refused, is no post for the consider loop either (consider_loop/handlers.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from motion_runner.models import Agent, Message
from motion_runner.runner.post_answers import Line, TurnOrder

from ..decision.trust import decide
from .commands_elsewhere import answer_here, runs_in_the_cli
from .wake import shadowed

COMMANDS = ("compact", "context", "usage")
# Said as memory-lane's poller took them: /cost is /usage.
ALIASES = {"cost": "usage"}
# Only /compact takes words after it (what to keep); "@magent /usage of the word banjo?" is a
# question for the agent, not the command.
TAKES_ARGUMENT = ("compact",)
COMMAND_REASON = "command"
# "@magent /compact keep the tour dates" — the command right after the agent's name, alone in
# the post (what follows it is the command's argument).
COMMAND = re.compile(
    r"^\s*@(?P<name>[\w.-]+)\s+/(?P<command>[a-z]+)\b(?P<rest>.*)\Z", re.DOTALL | re.IGNORECASE
)


def command_in(message: Message, agent: Agent) -> tuple[str, str] | None:
    """(command, argument) when the post is `@agent /command …` for this agent."""
    match = COMMAND.match(message.text or "")
    if match is None or match["name"].rstrip(".-").lower() != agent.name.lower():
        return None
    command = match["command"].lower()
    command = ALIASES.get(command, command)
    if command not in COMMANDS:
        return None
    rest = match["rest"].strip()
    if command not in TAKES_ARGUMENT and rest.strip(".!;:"):
        return None
    return command, rest


def is_command_post(message: Message, agents: Iterable[Agent]) -> bool:
    """Whether the post is `@agent /command` for one of these agents: run or refused, the whole
    post, and no post for any agent's loop (README, the thread's commands)."""
    return any(command_in(message, agent) is not None for agent in agents)


def first_run_asked(message: Message) -> bool:
    """Typed in the web by a signed-in account: whether it is the first run's account
    (motion_runner/people/first_run.py) is read with the post's facts."""
    return message.source == "web" and message.author_id is not None


def may_run(message: Message, first_run: bool) -> tuple[bool, str]:
    """(whether the post may run a command, the trust rule that says so). `first_run`: the post
    was typed in the web by the first run's account."""
    decision = decide(message)
    if decision.mode == "full":
        return True, decision.rule
    if first_run and first_run_asked(message):
        return True, f"{message.sender} is the first run's account (local only)"
    return False, decision.rule


def refusal(message: Message, agent: Agent, command: str) -> str:
    """The thread's line for a command by someone who may not grant full tools."""
    return (
        f"@{agent.name} /{command} was not run: commands are for people who may grant full tools "
        f"(signed in with an SSH key, or named in full_tools_for); {message.sender}'s post is not. "
        "Nothing woke."
    )


def run_command(
    message: Message, agent: Agent, command: str, argument: str, rule: str, context: dict | None
) -> tuple[list[Line], TurnOrder | None]:
    """A command the post may run (`may_run`, asked before): what the core writes for it (the
    mention path's `act` hands it over): a line answering it here, or a maintenance turn.
    `context`: the pair's context fullness, read with the post (a Codex or Pi /context)."""
    if not runs_in_the_cli(agent):  # Codex, Pi: answered from the record, or refused with why
        return [answer_here(message, agent, command, context)], None
    why = f"/{command} asked by {message.sender} (maintenance)"
    if shadowed(message.motion, agent, message, kind=COMMAND_REASON, mode="look", rule=rule, why=why):
        return [], None  # shadow mode: decided and recorded, nothing run
    prompt = f"/{command} {argument}".strip() if command == "compact" else f"/{command}"
    # Look-only: ultracode, which rides full-tools mentions only (turn/ultracode.py), never rides it.
    return [], TurnOrder(
        agent=agent,
        prompt=prompt,
        reason=COMMAND_REASON,
        reason_detail=f"/{command} asked by {message.sender}",
        mode="look",
        mode_rule=f"a maintenance command by {message.sender} ({rule})",
        effort="low",
        why=why,
    )
