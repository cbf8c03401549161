"""`@agent /context`, `/usage`, `/compact` for an agent whose CLI has no such command headless.

Claude Code runs them as the prompt of a maintenance turn (commands.py). `codex exec` and `pi -p`
pass a leading slash to the model as words, so for Codex and Pi the runner answers from its own
record instead, costing nothing: /context is how full the agent's newest session here is (its
newest API call's input against WAKES_CONTEXT_WINDOW_TOKENS, as the thread's menu shows it);
/usage is its turns here, today and in all, from the turns' own costs (the ledger's). /compact is
refused with why: both CLIs compact a full context themselves.
"""

from __future__ import annotations

from decimal import Decimal

from django.db.models import Count, Sum
from django.utils import timezone

from motion_runner.lib.ids import system_uuid
from motion_runner.models import Agent, Message, Turn
from motion_runner.runner.post_answers import Line

CLI_NAMES = {"codex": "Codex", "pi": "Pi"}


def runs_in_the_cli(agent: Agent) -> bool:
    return agent.harness not in CLI_NAMES


def context_line(agent: Agent, cli: str, fullness: dict | None) -> str:
    """`fullness`: the pair's context reading as the menus say it (runner/resume.context_fullness, read with the post)."""
    if fullness is None:
        return f"@{agent.name} /context: no session of @{agent.name} here yet, so nothing is in its context."
    percent = f" ({fullness['percent']}%)" if fullness["percent"] is not None else ""
    return (
        f"@{agent.name} /context: {fullness['tokens']:,} of {fullness['window']:,} tokens{percent}, "
        f"as its newest turn here read them ({cli} has no /context headless: this is the runner's reading)."
    )


def usage_line(message: Message, agent: Agent, cli: str) -> str:
    turns = Turn.objects.filter(motion_id=message.motion_id, agent=agent, ended_at__isnull=False)
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    every = turns.aggregate(n=Count("pk"), usd=Sum("cost_usd"))
    since = turns.filter(ended_at__gte=today).aggregate(n=Count("pk"), usd=Sum("cost_usd"))
    return (
        f"@{agent.name} /usage here: today {since['n']} turn{'s' if since['n'] != 1 else ''}, "
        f"${since['usd'] or Decimal(0):.2f}; in all {every['n']} turn{'s' if every['n'] != 1 else ''}, "
        f"${every['usd'] or Decimal(0):.2f} (from the turns' own costs; {cli} has no /usage headless)."
    )


def compact_line(agent: Agent, cli: str) -> str:
    return (
        f"@{agent.name} /compact was not run: {cli} has no /compact headless (the words would reach the "
        f"model as a question); {cli} compacts a full context by itself."
    )


def answer_here(message: Message, agent: Agent, command: str, context: dict | None) -> Line:
    """The thread's answer to the command (`context`: the pair's fullness, read with the post)."""
    cli = CLI_NAMES[agent.harness]
    if command == "context":
        text = context_line(agent, cli, context)
    elif command == "usage":
        text = usage_line(message, agent, cli)
    else:
        text = compact_line(agent, cli)
    return Line(text, system_uuid("command-answered", message.pk, agent.pk), agent)
